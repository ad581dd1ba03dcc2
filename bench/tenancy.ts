/**
 * The tenancy part of `npm run bench` (alone: `--only tenancy`): every list
 * and search tool on an account of `tasks` tasks, in a database of its own
 * and in a copy of that database that also holds `others` accounts ×
 * `tasks` tasks (every one of their tasks holds the searched word), both
 * served at once by two `wrangler dev` and called in interleaved rounds, so
 * noise on a shared machine falls on both alike. Also the search statement
 * itself on both databases, at the SQLite level (node:sqlite on the files),
 * and the growth figures of growth.ts on the first database.
 */
import { cpSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { applySchemaFile } from "../scripts/lib/d1.ts";
import { searchSql } from "../src/db/search-sql.ts";
import { accountKey, searchWords } from "../src/domain/search-terms.ts";
import { TOOL_NAMES, type ToolName } from "../src/catalog/effects.ts";
import { CATALOG_CALLS, type Fixture } from "./catalog-calls.ts";
import { measureGrowth, type Growth } from "./growth.ts";
import { callOk, failure, mcpRequest, probe, type HttpRequest } from "./mcp.ts";
import { accountSql, asBenchSeed, projectInserts, runInserts, SEARCH_WORD, taskIdAt, taskInserts, tokenSql } from "./seed.ts";
import { ROOT, startDev, type DevServer } from "./worker.ts";

export const TENANCY_TARGET = 1.3;
const AGENT = "bench-agent";

/** The list and search tools: what one account reads in pages. */
export const TENANCY_TOOLS = TOOL_NAMES.filter(
  (n) => (n.startsWith("list_") || n === "search_tasks" || n === "fleet_status" || n === "get_task_history" || n === "export_project") && n !== "search_context",
);

export interface TenancyOptions {
  tasks: number;
  others: number;
  /** Sequential calls per tool and database in each round. */
  calls: number;
  rounds: number;
  log(msg: string): void;
  devLog: { write(s: string): void };
}

export interface TenancyRow {
  tool: string;
  aloneMs: number;
  sharedMs: number;
  /** The median of the paired ratios (beside ÷ alone, calls made back to back). */
  ratio: number;
  aloneD1: number | null;
  sharedD1: number | null;
}

export interface TenancyReport {
  rows: TenancyRow[];
  sqlite: { query: string; aloneMs: number; sharedMs: number; ratio: number }[];
  growth: Growth;
  seedSeconds: number;
  ok: boolean;
}

/** The D1 file of a --persist-to directory. */
export function d1File(persist: string): string {
  const dir = join(persist, "v3", "d1", "miniflare-D1DatabaseObject");
  const name = readdirSync(dir).find((f) => f.endsWith(".sqlite") && f !== "metadata.sqlite");
  if (!name) throw new Error(`no D1 database under ${dir}`);
  return join(dir, name);
}

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)] : NaN;
};

function sqlFile(dir: string, name: string, statements: string[]): string {
  const file = join(dir, name);
  writeFileSync(file, asBenchSeed(statements).join("\n") + "\n");
  return file;
}

/**
 * One other account: its tasks (every one holding the searched word) with
 * their index rows, and made from them by the database: an activity entry per
 * task, a comment (indexed) on every second, a run with three events on every twentieth.
 */
function otherAccountSql(n: number, tasks: number, nowIso: string, baseMs: number): string[] {
  const planned = accountSql(`Neighbour ${n}`, nowIso);
  const a = planned.id;
  const k = accountKey(a);
  const agentId = `agt_${a.slice(4)}`;
  return [
    ...planned.sql,
    `INSERT INTO agents (id, account_id, name, created_at) VALUES ('${agentId}', '${a}', '${AGENT}', '${nowIso}');`,
    ...taskInserts({ accountId: a, from: 0, count: tasks, agentName: AGENT, agentEvery: 5, projectIds: [], baseMs, searchEvery: 1 }),
    `INSERT INTO activity (id, account_id, token_id, actor, tool, target_id, summary, created_at)
       SELECT 'act_' || substr(id, 5), account_id, 'tok_neighbour', 'human', 'create_task', id, 'created task "' || title || '"', created_at FROM tasks WHERE account_id = '${a}';`,
    `INSERT INTO comments (id, account_id, task_id, author_token_id, author, body, created_at, updated_at)
       SELECT 'cmt_' || substr(id, 5), account_id, id, 'tok_neighbour', 'human', 'A ${SEARCH_WORD} note on ' || title, created_at, created_at
         FROM tasks WHERE account_id = '${a}' AND rid % 2 = 0;`,
    `INSERT INTO comment_search (rowid, body)
       SELECT c.rowid, '${k}_A ${k}_${SEARCH_WORD} ${k}_note ${k}_on ' || f.title
         FROM comments c JOIN tasks t ON t.id = c.task_id JOIN task_search f ON f.rowid = t.rid WHERE c.account_id = '${a}';`,
    `INSERT INTO runs (id, account_id, task_id, agent_id, status, summary, started_at, finished_at, last_event_at)
       SELECT 'run_' || substr(id, 5), account_id, id, '${agentId}', CASE WHEN rid % 3 = 0 THEN 'running' ELSE 'succeeded' END, NULL, created_at,
              CASE WHEN rid % 3 = 0 THEN NULL ELSE created_at END, created_at
         FROM tasks WHERE account_id = '${a}' AND rid % 20 = 0;`,
    `INSERT INTO run_events (id, account_id, run_id, kind, message, created_at)
       SELECT 'evt_' || substr(r.id, 5) || e.column1, r.account_id, r.id, 'progress', 'step ' || e.column1, r.started_at
         FROM runs r, (VALUES (1), (2), (3)) e WHERE r.account_id = '${a}';`,
  ];
}

/** Median milliseconds of a statement over `times` runs (after one warm-up). */
function timeStatement(db: DatabaseSync, sql: string, binds: unknown[], times = 31): number {
  const st = db.prepare(sql);
  st.all(...(binds as never[]));
  const t: number[] = [];
  for (let i = 0; i < times; i++) {
    const s = performance.now();
    st.all(...(binds as never[]));
    t.push(performance.now() - s);
  }
  return median(t);
}

/** The app's search statement (a page of 20, every task column), as it sends it to D1. */
function searchStatement(accountId: string, query: string): { sql: string; binds: unknown[] } {
  return searchSql({ accountId, words: searchWords(query), offset: 0, limit: 20 }, "t.*");
}

export async function runTenancy(tmp: string, o: TenancyOptions): Promise<TenancyReport> {
  const alone = join(tmp, "tenancy-alone");
  const shared = join(tmp, "tenancy-shared");
  const now = new Date();
  const nowIso = now.toISOString();
  const baseMs = now.getTime() - (o.tasks + 86_400) * 1000;

  const subject = accountSql("Tenancy subject", nowIso);
  const human = await tokenSql({ accountId: subject.id, kind: "human", scope: "write", label: "tenancy human" }, nowIso);
  const agent = await tokenSql({ accountId: subject.id, kind: "agent", scope: "write", agent: AGENT, label: "tenancy agent" }, nowIso);
  const projects = ["prj_tenancyproject01", "prj_tenancyproject02"];
  applySchemaFile({ remote: false, persistTo: alone }, join(ROOT, "schema.sql"));
  applySchemaFile(
    { remote: false, persistTo: alone },
    sqlFile(tmp, "tenancy-subject.sql", [
      ...subject.sql, ...human.sql, ...agent.sql, ...projectInserts(subject.id, projects, nowIso),
      ...taskInserts({ accountId: subject.id, from: 0, count: o.tasks, agentName: AGENT, agentEvery: 5, projectIds: projects, baseMs }),
      ...runInserts(subject.id, AGENT, [0, 5, 10, 15].map((i) => taskIdAt(subject.id, i)), now.getTime()),
    ]),
  );

  // Growth first, on its own account, then the arguments of every measured call (made through the tools, so both copies hold them).
  const growth = await measureGrowth(alone, tmp, nowIso, o);
  let dev: DevServer | null = await startDev(alone, o.devLog);
  const args = new Map<ToolName, Record<string, unknown>>();
  try {
    const f: Fixture = {
      human: (name, a) => callOk(dev!.base, human.secret, name, a),
      agent: (name, a) => callOk(dev!.base, agent.secret, name, a),
      agentName: AGENT,
      searchWord: SEARCH_WORD,
      spareTokenId: async () => human.id,
      connectors: false,
    };
    for (const tool of TENANCY_TOOLS) args.set(tool, await CATALOG_CALLS[tool].prepare(f));
  } finally {
    await dev.stop();
    dev = null;
  }

  const seedStart = performance.now();
  cpSync(alone, shared, { recursive: true });
  const others: string[] = [];
  for (let n = 0; n < o.others; n++) others.push(...otherAccountSql(n, o.tasks, nowIso, baseMs));
  applySchemaFile({ remote: false, persistTo: shared }, sqlFile(tmp, "tenancy-others.sql", others));
  const seedSeconds = (performance.now() - seedStart) / 1000;
  o.log(`tenancy: ${o.others} accounts × ${o.tasks} tasks beside the subject in ${seedSeconds.toFixed(1)} s`);

  const sqlite = [SEARCH_WORD, "inv", "review invoice"].map((query) => {
    const { sql, binds } = searchStatement(subject.id, query);
    const [aloneMs, sharedMs] = [alone, shared].map((p) => {
      const db = new DatabaseSync(d1File(p));
      try {
        return timeStatement(db, sql, binds);
      } finally {
        db.close();
      }
    });
    return { query, aloneMs, sharedMs, ratio: sharedMs / aloneMs };
  });

  const devs: DevServer[] = [];
  try {
    devs.push(await startDev(alone, o.devLog), await startDev(shared, o.devLog));
    const samples = new Map<string, { ms: number[]; d1: number[] }[]>();
    /** Per pair of calls (one on each database, back to back): beside ÷ alone. */
    const pairs = new Map<string, number[]>();
    const requests = TENANCY_TOOLS.map((tool) => {
      const who = CATALOG_CALLS[tool].who === "agent" ? agent.secret : human.secret;
      return [tool, mcpRequest("modern", who, "tools/call", tool, args.get(tool))] as [ToolName, HttpRequest];
    });
    for (const [tool, req] of requests) {
      for (const d of devs) {
        const p = await probe(d.base, req);
        const problem = failure(p);
        if (problem) throw new Error(`tenancy: ${tool} failed: ${problem}`);
      }
      samples.set(tool, [{ ms: [], d1: [] }, { ms: [], d1: [] }]);
      pairs.set(tool, []);
    }
    for (let round = 0; round < o.rounds; round++) {
      for (const [tool, req] of requests) {
        // One call on each database in turn (which goes first alternates), so both see the same moments of the machine.
        for (let i = 0; i < o.calls; i++) {
          for (const side of (round + i) % 2 === 0 ? [0, 1] : [1, 0]) {
            const s = samples.get(tool)![side];
            const start = performance.now();
            const p = await probe(devs[side].base, req);
            s.ms.push(performance.now() - start);
            if (p.d1Ms !== null) s.d1.push(p.d1Ms);
          }
          const [a, b] = samples.get(tool)!;
          pairs.get(tool)!.push(b.ms[b.ms.length - 1] / a.ms[a.ms.length - 1]);
        }
      }
      o.log(`tenancy: round ${round + 1}/${o.rounds} done`);
    }
    const rows: TenancyRow[] = requests.map(([tool]) => {
      const [a, b] = samples.get(tool)!;
      const aloneMs = median(a.ms);
      const sharedMs = median(b.ms);
      return { tool, aloneMs, sharedMs, ratio: median(pairs.get(tool)!), aloneD1: a.d1.length ? median(a.d1) : null, sharedD1: b.d1.length ? median(b.d1) : null };
    });
    const ok = rows.every((r) => r.ratio <= TENANCY_TARGET) && sqlite.every((s) => s.ratio <= TENANCY_TARGET);
    return { rows, sqlite, growth, seedSeconds, ok };
  } finally {
    for (const d of devs) await d.stop();
  }
}

/** The tables of the tenancy part, as printed by the benchmark. */
export function tenancyMarkdown(r: TenancyReport, o: { tasks: number; others: number }): string {
  const mark = (x: number) => (x <= TENANCY_TARGET ? "✓" : "✗");
  const f = (x: number | null) => (x === null ? "—" : x.toFixed(2));
  const lines = [
    `One account of ${o.tasks} tasks, alone in its database and beside ${o.others} accounts × ${o.tasks} tasks (every one of theirs holds "${SEARCH_WORD}"); calls one at a time, alternating between the two, 2026-07-28 era, p50 ms:\n`,
    `| tool | alone | beside ${o.others} accounts | ratio (median of paired calls) | D1 ms alone / beside | target ≤ ${TENANCY_TARGET}× |`,
    "|---|---|---|---|---|---|",
    ...r.rows.map((x) => `| \`${x.tool}\` | ${x.aloneMs.toFixed(2)} | ${x.sharedMs.toFixed(2)} | ${x.ratio.toFixed(2)}× | ${f(x.aloneD1)} / ${f(x.sharedD1)} | ${mark(x.ratio)} |`),
    `\nThe search statement itself at the SQLite level (node:sqlite on the same two files, median of 31):\n`,
    "| query | alone ms | beside ms | ratio | target |",
    "|---|---|---|---|---|",
    ...r.sqlite.map((s) => `| "${s.query}" | ${s.aloneMs.toFixed(3)} | ${s.sharedMs.toFixed(3)} | ${s.ratio.toFixed(2)}× | ${mark(s.ratio)} |`),
  ];
  return lines.join("\n");
}
