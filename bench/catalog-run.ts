/**
 * The D1 round trips of every tool of the catalog, over real HTTP in both
 * protocol eras: each tool's call from catalog-calls.ts, once with a token the
 * Worker resolved a moment ago (warm) and once as a token's first request
 * (cold). A separate account keeps these writes out of the load-tested one.
 */
import { TOOL_NAMES, type ToolName } from "../src/catalog/effects.ts";
import { CATALOG_CALLS, ROUND_TRIP_EXCEPTIONS, ROUND_TRIP_LIMIT, type Fixture } from "./catalog-calls.ts";
import { callOk, ERAS, failure, mcpRequest, probe, type Era } from "./mcp.ts";
import { accountSql, tokenSql } from "./seed.ts";

export interface CatalogAccount {
  accountId: string;
  human: string;
  agent: string;
  agentName: string;
  /** Never-used tokens, one per tool and era, for the cold count. */
  cold: Map<string, string>;
  /** Token ids no measured call uses, for revoke_token. */
  spares: string[];
}

/** The account, its tokens and a task search_tasks finds, as SQL for `wrangler d1 execute`. */
export async function planCatalogAccount(nowIso: string, agentName: string): Promise<{ account: CatalogAccount; sql: string[] }> {
  const planned = accountSql("Benchmark catalog", nowIso);
  const sql = [...planned.sql];
  const token = async (kind: "human" | "agent", label: string, scope: "read" | "write" = "write") => {
    const t = await tokenSql({ accountId: planned.id, kind, scope, label, ...(kind === "agent" ? { agent: agentName } : {}) }, nowIso);
    sql.push(...t.sql);
    return t;
  };
  const human = await token("human", "catalog human");
  const agent = await token("agent", "catalog agent");
  const cold = new Map<string, string>();
  for (const era of ERAS) {
    for (const name of TOOL_NAMES) cold.set(`${name}/${era}`, (await token(CATALOG_CALLS[name].who, `cold ${name} ${era}`)).secret);
  }
  const spares: string[] = [];
  for (let i = 0; i < 2 * ERAS.length; i++) spares.push((await token("human", `spare ${i}`, "read")).id);
  return { account: { accountId: planned.id, human: human.secret, agent: agent.secret, agentName, cold, spares }, sql };
}

export interface CatalogCount {
  tool: ToolName;
  era: Era;
  warm: number | null;
  cold: number | null;
  /** How the call ended: ok, or the error it met (as expected where no app is connected). */
  outcome: string;
}

/** Counts every tool's round trips, warm and cold, in both eras. */
export async function countCatalog(base: string, acc: CatalogAccount, log: (msg: string) => void): Promise<CatalogCount[]> {
  const spares = [...acc.spares];
  const f: Fixture = {
    human: (name, args) => callOk(base, acc.human, name, args),
    agent: (name, args) => callOk(base, acc.agent, name, args),
    agentName: acc.agentName,
    searchWord: "quarterly",
    spareTokenId: async () => spares.shift() as string,
    connectors: false,
  };
  await f.human("create_task", { title: "The quarterly report" });
  const out: CatalogCount[] = [];
  for (const era of ERAS) {
    for (const tool of TOOL_NAMES) {
      const spec = CATALOG_CALLS[tool];
      const secret = spec.who === "agent" ? acc.agent : acc.human;
      const measure = async (who: string, warmUp: boolean) => {
        const args = await spec.prepare(f);
        if (warmUp) await probe(base, mcpRequest(era, who, "tools/list"));
        const p = await probe(base, mcpRequest(era, who, "tools/call", tool, args));
        await spec.after?.(f);
        const problem = failure(p);
        return { calls: p.d1Calls, problem: problem && !(spec.expectError?.(f) && problem.startsWith("tool error")) ? problem : null, error: problem };
      };
      const warm = await measure(secret, true);
      const cold = await measure(acc.cold.get(`${tool}/${era}`) as string, false);
      const problem = warm.problem ?? cold.problem;
      const outcome = problem ? `failed: ${problem.slice(0, 100)}` : warm.error ? "not connected (no app in the benchmark)" : "ok";
      if (problem) log(`${tool} (${era}) ${outcome}`);
      out.push({ tool, era, warm: warm.calls, cold: cold.calls, outcome });
    }
    log(`D1 round trips of all ${TOOL_NAMES.length} tools counted (${era})`);
  }
  return out;
}

/** The table of every tool's counts, each judged against the limit (or its stated exception). */
export function catalogTable(counts: CatalogCount[]): { markdown: string; allOk: boolean; json: unknown[] } {
  const lines = ["| tool | 2026-07-28 warm / cold | legacy warm / cold | limit warm / cold | target |", "|---|---|---|---|---|"];
  const json: unknown[] = [];
  let allOk = true;
  for (const tool of TOOL_NAMES) {
    const rows = ERAS.map((era) => counts.find((c) => c.tool === tool && c.era === era));
    const limit = ROUND_TRIP_EXCEPTIONS[tool] ?? { warm: ROUND_TRIP_LIMIT, cold: ROUND_TRIP_LIMIT };
    const ok = rows.every((r) => r && !r.outcome.startsWith("failed") && r.warm !== null && r.cold !== null && r.warm <= limit.warm && r.cold <= limit.cold);
    allOk &&= ok;
    const cell = (r: CatalogCount | undefined) => (r ? `${r.warm ?? "—"} / ${r.cold ?? "—"}${r.outcome === "ok" ? "" : ` (${r.outcome})`}` : "—");
    lines.push(`| \`${tool}\` | ${cell(rows[0])} | ${cell(rows[1])} | ${limit.warm} / ${limit.cold}${"why" in limit ? ` (${limit.why})` : ""} | ${ok ? "✓" : "✗"} |`);
    json.push({ tool, limit, ok, counts: rows });
  }
  return { markdown: lines.join("\n"), allOk, json };
}
