/**
 * The claims part of `npm run bench` (alone: `--only claims`): claim_task
 * without task_id (the next ready task) against claim_task by id, with 1 and
 * with 8 agents calling at once. One account holds CLAIM_TASKS open tasks
 * (priorities and due times mixed; every fourth with a scope, beside
 * CLAIM_HELD tasks another agent holds with scopes of their own, one of which
 * each scoped open task overlaps half the time) so the pick reads what a busy
 * account has. Each agent claims CLAIM_CALLS tasks one call after the other;
 * every claim is checked (8 agents: all distinct, no error). Target: the
 * next-ready claim reaches NEXT_READY_TARGET of the by-id rate with as many agents.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { applySchemaFile } from "../scripts/lib/d1.ts";
import { mcpRequest, probe } from "./mcp.ts";
import { accountSql, asBenchSeed, tokenSql } from "./seed.ts";
import { ROOT, startDev } from "./worker.ts";

export const CLAIM_TASKS = 2000;
export const CLAIM_HELD = 20;
/** Claims per agent and measurement. */
export const CLAIM_CALLS = 25;
/** The next-ready claim's rate at least this share of the by-id claim's, with as many agents. */
export const NEXT_READY_TARGET = 0.5;
const AGENTS = 8;

export interface ClaimsRow {
  agents: number;
  byIdPerSecond: number;
  nextPerSecond: number;
  ok: boolean;
}

export interface ClaimsReport {
  rows: ClaimsRow[];
  ok: boolean;
}

const q = (s: string) => `'${s.replace(/'/g, "''")}'`;

async function call(base: string, secret: string, args: Record<string, unknown>): Promise<any> {
  const p = await probe(base, mcpRequest("modern", secret, "tools/call", "claim_task", args));
  const r = p.body?.result;
  if (p.status !== 200 || p.body?.error || r?.isError) throw new Error(`claims: claim_task failed: HTTP ${p.status} ${JSON.stringify(p.body).slice(0, 300)}`);
  return r.structuredContent;
}

/** `agents` loops of CLAIM_CALLS claims at once; claims per second, and the ids claimed. */
async function rate(agents: string[], next: (agent: number, i: number) => Record<string, unknown>, base: string): Promise<{ perSecond: number; ids: string[] }> {
  const start = performance.now();
  const ids = await Promise.all(
    agents.map(async (secret, a) => {
      const got: string[] = [];
      for (let i = 0; i < CLAIM_CALLS; i++) {
        const r = await call(base, secret, next(a, i));
        if (!r.task) throw new Error("claims: the next-ready claim found nothing ready");
        got.push(r.task.id);
      }
      return got;
    }),
  );
  return { perSecond: (agents.length * CLAIM_CALLS) / ((performance.now() - start) / 1000), ids: ids.flat() };
}

export async function runClaims(tmp: string, o: { log(msg: string): void; devLog: { write(s: string): void } }): Promise<ClaimsReport> {
  const persist = join(tmp, "claims");
  const nowIso = new Date().toISOString();
  const account = accountSql("Claims", nowIso);
  const a = account.id;
  const key = a.slice(4, 12);
  const tokens = [];
  for (let i = 0; i < AGENTS; i++) tokens.push(await tokenSql({ accountId: a, kind: "agent", scope: "write", agent: `claimer-${i}`, label: `claimer ${i}` }, nowIso));
  const holder = await tokenSql({ accountId: a, kind: "agent", scope: "write", agent: "holder", label: "holder" }, nowIso);
  const area = (i: string) => `json_array(json_object('a', 'src/m' || ${i} || '/**', 'k', 'g', 'p', 'src/m' || ${i} || '/', 'g', 'src/m' || ${i} || '/*', 's', -1))`;
  const sql = [
    ...account.sql, ...holder.sql, ...tokens.flatMap((t) => t.sql),
    `INSERT INTO tasks (id, account_id, title, priority, due_at, created_by, created_at, updated_at, scope)
       WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${CLAIM_TASKS - 1})
       SELECT 'tsk_${key}' || printf('%08d', i), ${q(a)}, 'Open ' || i, i % 4,
              CASE WHEN i % 3 = 0 THEN strftime('%Y-%m-%dT%H:%M:%fZ', ${q(nowIso)}, '+' || (i % 97) || ' hours') END,
              'human', ${q(nowIso)}, ${q(nowIso)},
              CASE WHEN i % 4 = 0 THEN ${area(`(i % ${2 * CLAIM_HELD})`)} END
         FROM n;`,
    `INSERT INTO tasks (id, account_id, title, status, assignee, claim_lease_minutes, claim_expires_at, created_by, created_at, updated_at, scope)
       WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${CLAIM_HELD - 1})
       SELECT 'tsk_${key}h' || printf('%07d', i), ${q(a)}, 'Held ' || i, 'in_progress', 'holder', 1440,
              strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '+1 day'), 'human', ${q(nowIso)}, ${q(nowIso)}, ${area("i")}
         FROM n;`,
  ];
  applySchemaFile({ remote: false, persistTo: persist }, join(ROOT, "schema.sql"));
  const file = join(tmp, "claims.sql");
  writeFileSync(file, asBenchSeed(sql).join("\n") + "\n");
  applySchemaFile({ remote: false, persistTo: persist }, file);
  o.log(`claims: ${CLAIM_TASKS} open tasks and ${CLAIM_HELD} held ones seeded`);

  const dev = await startDev(persist, o.devLog);
  const rows: ClaimsRow[] = [];
  try {
    const secrets = tokens.map((t) => t.secret);
    // Untimed: each agent's token and the Worker warm.
    for (const s of secrets) await probe(dev.base, mcpRequest("modern", s, "tools/call", "whoami", {}));
    // By id: priority-1 tasks (i % 4 = 1, no scope) from the end; the next-ready claims take the urgent ones (i % 4 = 3) first.
    let nextById = CLAIM_TASKS - 1;
    const byIdTask = () => {
      while (nextById % 4 !== 1) nextById--;
      return `tsk_${key}${String(nextById--).padStart(8, "0")}`;
    };
    for (const n of [1, AGENTS]) {
      const agents = secrets.slice(0, n);
      const byId = await rate(agents, () => ({ task_id: byIdTask() }), dev.base);
      const next = await rate(agents, () => ({}), dev.base);
      if (new Set(next.ids).size !== next.ids.length) throw new Error(`claims: ${n} agents' next-ready claims were not all distinct`);
      const ok = next.perSecond >= NEXT_READY_TARGET * byId.perSecond;
      rows.push({ agents: n, byIdPerSecond: byId.perSecond, nextPerSecond: next.perSecond, ok });
      o.log(`claims: ${n} agent(s): by id ${byId.perSecond.toFixed(1)}/s, next ready ${next.perSecond.toFixed(1)}/s`);
    }
  } finally {
    await dev.stop();
  }
  return { rows, ok: rows.every((r) => r.ok) };
}

/** The table of the claims part, as printed by the benchmark. */
export function claimsMarkdown(r: ClaimsReport): string {
  return [
    `claim_task, claims per second (each agent ${CLAIM_CALLS} calls one after the other, all agents at once; ${CLAIM_TASKS} open tasks, ${CLAIM_HELD} held with scopes);`,
    `target: the next ready task at ≥ ${NEXT_READY_TARGET * 100}% of the rate by id:\n`,
    "| agents | by id | next ready | next ready ÷ by id | target |",
    "|---|---:|---:|---:|---|",
    ...r.rows.map(
      (row) =>
        `| ${row.agents} | ${row.byIdPerSecond.toFixed(1)} | ${row.nextPerSecond.toFixed(1)} | ${(row.nextPerSecond / row.byIdPerSecond).toFixed(2)} | ≥ ${NEXT_READY_TARGET} ${row.ok ? "✓" : "✗"} |`,
    ),
  ].join("\n");
}
