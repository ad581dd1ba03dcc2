/**
 * `npm run bench`: starts the Worker with `wrangler dev` on a free port and a
 * temporary D1, seeds it (admin CLI, bulk SQL, the tools), loads it with
 * autocannon in both protocol eras with 1k and then 100k tasks in the account,
 * counts D1 round trips, sizes the bundle, prints one table and writes
 * bench/results.json. Stops everything it started, also on failure.
 *
 * Options: --seconds N (5, per request, split over --rounds 5) --warmup N (1) --connections N (10)
 *          --small N (1000) --large N (100000) --keep (leave the temporary directory)
 *          --only a,b (load only these rows: tools/list and tool names; /health and /ready always;
 *                      `tenancy` and/or `shards` alone: only those parts, bench/tenancy.ts and bench/shards.ts)
 *          --skip-catalog (leave out the D1 count of every tool)
 *          --others N (100: accounts beside the measured one in the tenancy part, each with --small tasks)
 *          --tenancy-calls N (20: sequential calls per tool, database and round in the tenancy part)
 *          --shard-samples N (11: cold and warm resolutions per credential in the shards part)
 *          --tree-sizes a,b,c (250,1000,10000: subtasks of the root in the tree part, bench/tree.ts; `--only tree` runs it alone)
 *          --tree-samples N (1: timed calls per size and kind in the tree part, median)
 *          `--only claims`: only the claims part (claim_task by id against the next ready task, 1 and 8 agents; bench/claims.ts)
 *          `--only layer`: only the layer part (each read's tools/call over its floor, 1 and 10 connections, now beside a base commit; bench/layer.ts)
 *          --base REF (the layer part's base commit: HEAD when the working tree has changes, else HEAD~1)
 *          --layer-calls N (40: calls per request and round in the layer part with 1 connection; 3 × N with 10)
 */
import { createWriteStream, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { gzipSync } from "node:zlib";
import { applySchemaFile } from "../scripts/lib/d1.ts";
import { emptySamples, measureInto, summarize, type LoadSettings, type Samples } from "./load.ts";
import { ERAS, failure, floorRequest, get, mcpRequest, probe, type Era, type HttpRequest } from "./mcp.ts";
import { buildReport, type Bundle, type Row, type RowKind } from "./report.ts";
import { formatToolBytes, measureTools, type ListedTool } from "./tool-bytes.ts";
import { accountSql, asBenchSeed, projectInserts, runInserts, SEARCH_WORD, taskIdAt, taskInserts, tokenSql } from "./seed.ts";
import { admin, ROOT, runQuiet, startDev, WRANGLER, type DevServer } from "./worker.ts";
import { runTenancy, tenancyMarkdown } from "./tenancy.ts";
import { growthMarkdown } from "./growth.ts";
import { runShards, shardsMarkdown } from "./shards.ts";
import { catalogTable, countCatalog, planCatalogAccount, type CatalogCount } from "./catalog-run.ts";
import { runTree, TREE_SIZES, treeMarkdown } from "./tree.ts";
import { claimsMarkdown, runClaims } from "./claims.ts";
import { layerMarkdown, runLayer, seedReadTask } from "./layer.ts";

const { values: opts } = parseArgs({
  options: {
    seconds: { type: "string", default: "5" },
    warmup: { type: "string", default: "1" },
    rounds: { type: "string", default: "5" },
    connections: { type: "string", default: "10" },
    small: { type: "string", default: "1000" },
    large: { type: "string", default: "100000" },
    keep: { type: "boolean", default: false },
    only: { type: "string", default: "" },
    "skip-catalog": { type: "boolean", default: false },
    others: { type: "string", default: "100" },
    "tenancy-calls": { type: "string", default: "20" },
    "shard-samples": { type: "string", default: "11" },
    "tree-sizes": { type: "string", default: TREE_SIZES.join(",") },
    "tree-samples": { type: "string", default: "1" },
    base: { type: "string", default: "" },
    "layer-calls": { type: "string", default: "40" },
  },
});
const ONLY = new Set(opts.only.split(",").map((s) => s.trim()).filter(Boolean));
const loads = (name: string) => ONLY.size === 0 || ONLY.has(name);
/** The parts measured on deployments of their own; `--only` with nothing else runs just them. */
const PARTS = ["tenancy", "shards", "tree", "claims", "layer"];
const PARTS_ONLY = ONLY.size > 0 && [...ONLY].every((name) => PARTS.includes(name));
const load: LoadSettings = {
  seconds: Number(opts.seconds),
  warmupSeconds: Number(opts.warmup),
  connections: Number(opts.connections),
  rounds: Math.max(1, Math.round(Number(opts.rounds))),
};
const OTHERS = Number(opts.others);
const TENANCY_CALLS = Number(opts["tenancy-calls"]);
const SHARD_SAMPLES = Math.max(1, Math.round(Number(opts["shard-samples"])));
const TREE_SAMPLES = Math.max(1, Math.round(Number(opts["tree-samples"])));
const LAYER_CALLS = Math.max(1, Math.round(Number(opts["layer-calls"])));
const TREE_SIZES_RUN = opts["tree-sizes"].split(",").map((s) => Math.round(Number(s.trim())));
if (TREE_SIZES_RUN.some((n) => !Number.isFinite(n) || n < 1)) {
  console.error("--tree-sizes must be positive numbers, e.g. 250,1000,10000");
  process.exit(2);
}
for (const [name, value] of Object.entries({ ...load, small: Number(opts.small), large: Number(opts.large), others: OTHERS, "tenancy-calls": TENANCY_CALLS, "shard-samples": SHARD_SAMPLES, "layer-calls": LAYER_CALLS })) {
  if (!Number.isFinite(value) || value < 0) {
    console.error(`--${name} must be a non-negative number`);
    process.exit(2);
  }
}
const SMALL = Number(opts.small);
const LARGE = Number(opts.large);
const AGENT = "bench-agent";

type Who = "human" | "agent" | "writer";
interface ToolSpec {
  tool: string;
  kind: Exclude<RowKind, "route" | "list-tools">;
  scaled: boolean;
  who: Who;
  args: () => Record<string, unknown>;
}

let targetTaskId = "";
const ALL_SPECS: ToolSpec[] = [
  { tool: "whoami", kind: "read", scaled: false, who: "human", args: () => ({}) },
  { tool: "get_task", kind: "read", scaled: false, who: "human", args: () => ({ task_id: targetTaskId }) },
  { tool: "list_tasks", kind: "read", scaled: true, who: "human", args: () => ({}) },
  { tool: "search_tasks", kind: "read", scaled: true, who: "human", args: () => ({ query: SEARCH_WORD }) },
  { tool: "list_my_tasks", kind: "read", scaled: true, who: "agent", args: () => ({}) },
  { tool: "fleet_status", kind: "read", scaled: true, who: "human", args: () => ({}) },
  { tool: "create_task", kind: "write", scaled: false, who: "writer", args: () => ({ title: "Benchmark task", notes: "written by npm run bench" }) },
];
const TOOL_SPECS = ALL_SPECS.filter((s) => loads(s.tool));
for (const name of ONLY) {
  if (name !== "tools/list" && !PARTS.includes(name) && !ALL_SPECS.some((s) => s.tool === name)) {
    console.error(`--only: ${name} is not a row of the benchmark (tools/list, ${PARTS.join(", ")}, ${ALL_SPECS.map((s) => s.tool).join(", ")})`);
    process.exit(2);
  }
}

/** The Worker serves the benchmark's floor (src/mcp/floor.ts) only with this variable, which only this bench sets. */
const FLOOR_VAR = ["--var", "BENCH_FLOOR:1"];

const log = (msg: string) => console.error(`[bench] ${msg}`);
const elapsed = (start: number) => `${((performance.now() - start) / 1000).toFixed(1)} s`;

function writeSql(dir: string, name: string, statements: string[]): string {
  const file = join(dir, name);
  writeFileSync(file, asBenchSeed(statements).join("\n") + "\n");
  return file;
}

function bundleSize(dir: string): Bundle {
  const out = runQuiet(WRANGLER, ["deploy", "--dry-run", "--outdir", dir]);
  let raw = 0;
  let gzip = 0;
  for (const name of readdirSync(dir)) {
    if (!/\.(m?js|wasm)$/.test(name)) continue;
    const bytes = readFileSync(join(dir, name));
    raw += bytes.length;
    gzip += gzipSync(bytes, { level: 9 }).length;
  }
  const m = /gzip:\s*([\d.]+)\s*KiB/.exec(out);
  return { rawKiB: raw / 1024, gzipKiB: gzip / 1024, wranglerGzipKiB: m ? Number(m[1]) : null };
}

interface Secrets {
  human: string;
  agent: string;
  writer: string;
  /** Never-used tokens, one per tool call and era, for the cold D1 count. */
  cold: Map<string, string>;
}

async function main(): Promise<void> {
  const t0 = performance.now();
  const tmp = mkdtempSync(join(tmpdir(), "taskgate-bench-"));
  const persist = join(tmp, "state");
  const logPath = join(tmp, "wrangler-dev.log");
  const devLog = createWriteStream(logPath);
  let dev: DevServer | null = null;
  let failed = false;
  const tenancy = () =>
    runTenancy(tmp, { tasks: SMALL, others: OTHERS, calls: TENANCY_CALLS, rounds: load.rounds, log, devLog }).then((t) => {
      console.log(`\n${tenancyMarkdown(t, { tasks: SMALL, others: OTHERS })}\n\n${growthMarkdown(t.growth)}`);
      console.log(`Tenancy targets met: ${t.ok ? "yes ✓" : "no (see ✗ above)"}; the other accounts were seeded in ${t.seedSeconds.toFixed(0)} s.`);
      return t;
    });
  const shards = () =>
    runShards(tmp, { ...load, samples: SHARD_SAMPLES, log, devLog }).then((r) => {
      console.log(`\n${shardsMarkdown(r, { ...load, samples: SHARD_SAMPLES })}`);
      console.log(`Shard targets met: ${r.ok ? "yes ✓" : "no (see ✗ above)"}.`);
      return r;
    });
  const tree = () =>
    runTree(tmp, { sizes: TREE_SIZES_RUN, samples: TREE_SAMPLES, log, devLog }).then((r) => {
      console.log(`\n${treeMarkdown(r)}`);
      console.log(`Tree targets met: ${r.ok ? "yes ✓" : "no (see ✗ above)"}.`);
      return r;
    });
  const claims = () =>
    runClaims(tmp, { log, devLog }).then((r) => {
      console.log(`\n${claimsMarkdown(r)}`);
      console.log(`Claims targets met: ${r.ok ? "yes ✓" : "no (see ✗ above)"}.`);
      return r;
    });
  const layer = () =>
    runLayer(tmp, { calls: LAYER_CALLS, rounds: load.rounds, tasks: SMALL, base: opts.base, log, devLog }).then((r) => {
      console.log(`\n${layerMarkdown(r)}`);
      console.log(`Layer targets met: ${r.ok ? "yes ✓" : "no (see ✗ above)"}.`);
      return r;
    });
  try {
    if (PARTS_ONLY) {
      // The other figures of bench/results.json stay; only the parts measured now are replaced.
      const parts: Record<string, unknown> = {};
      if (ONLY.has("tenancy")) parts.tenancy = await tenancy();
      if (ONLY.has("shards")) parts.shards = await shards();
      if (ONLY.has("tree")) parts.tree = await tree();
      if (ONLY.has("claims")) parts.claims = await claims();
      if (ONLY.has("layer")) parts.layer = await layer();
      const file = join(ROOT, "bench", "results.json");
      const before = existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>) : {};
      writeFileSync(file, JSON.stringify({ ...before, ...parts }, null, 2) + "\n");
      log(`total time ${elapsed(t0)}; ${Object.keys(parts).join(" and ")} written into bench/results.json`);
      return;
    }
    log(`bundle: wrangler deploy --dry-run`);
    const bundle = bundleSize(join(tmp, "bundle"));

    log(`schema and accounts in ${persist}`);
    applySchemaFile({ remote: false, persistTo: persist }, join(ROOT, "schema.sql"));
    const account = admin(persist, ["create-account", "--name", "Benchmark"]);
    const human = admin(persist, ["create-token", "--account", account.id, "--kind", "human", "--scope", "write", "--label", "bench human"]);
    const agent = admin(persist, ["create-token", "--account", account.id, "--kind", "agent", "--scope", "write", "--agent", AGENT]);

    const now = new Date();
    const nowIso = now.toISOString();
    const baseMs = now.getTime() - (LARGE + 86_400) * 1000;
    const writer = accountSql("Benchmark writes", nowIso);
    const writerToken = await tokenSql({ accountId: writer.id, kind: "human", scope: "write" }, nowIso);
    const secrets: Secrets = { human: human.token, agent: agent.token, writer: writerToken.secret, cold: new Map() };
    const extra: string[] = [...writer.sql, ...writerToken.sql];
    const catalog = opts["skip-catalog"] ? null : await planCatalogAccount(nowIso, AGENT);
    if (catalog) extra.push(...catalog.sql);
    for (const era of ERAS) {
      for (const spec of [{ tool: "tools/list", who: "human" as Who }, ...TOOL_SPECS]) {
        const req =
          spec.who === "writer"
            ? { accountId: writer.id, kind: "human" as const, scope: "write" as const }
            : spec.who === "agent"
              ? { accountId: account.id, kind: "agent" as const, scope: "write" as const, agent: AGENT }
              : { accountId: account.id, kind: "human" as const, scope: "write" as const };
        const t = await tokenSql({ ...req, label: `cold ${spec.tool} ${era}` }, nowIso);
        extra.push(...t.sql);
        secrets.cold.set(`${spec.tool}/${era}`, t.secret);
      }
    }
    const projects = ["prj_benchproject0001", "prj_benchproject0002", "prj_benchproject0003"];
    const seedStart = performance.now();
    const tasks = taskInserts({ accountId: account.id, from: 0, count: SMALL, agentName: AGENT, agentEvery: 5, projectIds: projects, baseMs });
    const runs = runInserts(account.id, AGENT, [0, 5, 10, 15, 20, 25].map((i) => taskIdAt(account.id, i)), now.getTime());
    applySchemaFile({ remote: false, persistTo: persist }, writeSql(tmp, "small.sql", [...extra, ...projectInserts(account.id, projects, nowIso), ...tasks, ...runs]));
    log(`seeded ${SMALL} tasks in ${elapsed(seedStart)}`);

    dev = await startDev(persist, devLog, FLOOR_VAR);
    log(`wrangler dev on ${dev.base}`);
    const listed = await listTools(dev.base, secrets.human);
    const available = new Set(listed.map((t) => t.name));
    const toolBytes = measureTools(listed);
    targetTaskId = await seedReadTask(dev.base, secrets.human, projects[0], AGENT, (tool) => available.has(tool));
    let catalogCounts: CatalogCount[] = [];
    if (catalog) {
      const catalogStart = performance.now();
      catalogCounts = await countCatalog(dev.base, catalog.account, log);
      log(`D1 round trips of every tool counted in ${elapsed(catalogStart)}`);
    }

    const rows = new Map<string, Row>();
    const health: Row = { label: "GET /health", era: null, kind: "route", scaled: false, small: null, large: null, d1Warm: null, d1Cold: null };
    const ready: Row = { label: "GET /ready", era: null, kind: "route", scaled: false, small: null, large: null, d1Warm: null, d1Cold: null };
    rows.set("health", health);
    rows.set("ready", ready);
    for (const spec of TOOL_SPECS.filter((s) => s.kind === "read")) {
      const row: Row = { label: `floor ${spec.tool} (no SDK)`, era: null, kind: "floor", scaled: false, small: null, large: null, d1Warm: null, d1Cold: null };
      if (!available.has(spec.tool)) row.missing = "not built yet";
      rows.set(`floor:${spec.tool}`, row);
    }
    for (const era of ERAS) {
      if (loads("tools/list")) {
        rows.set(`tools/list/${era}`, { label: "tools/list", era, kind: "list-tools", scaled: false, small: null, large: null, d1Warm: null, d1Cold: null });
      }
      for (const spec of TOOL_SPECS) {
        const row: Row = { label: `tools/call ${spec.tool}`, era, kind: spec.kind, scaled: spec.scaled, small: null, large: null, d1Warm: null, d1Cold: null };
        if (!available.has(spec.tool)) row.missing = "not built yet";
        rows.set(`${spec.tool}/${era}`, row);
      }
    }

    const secretOf = (who: Who) => (who === "agent" ? secrets.agent : who === "writer" ? secrets.writer : secrets.human);
    const requestOf = (key: string, era: Era, secret: string): HttpRequest => {
      if (key === "tools/list") return mcpRequest(era, secret, "tools/list");
      const spec = TOOL_SPECS.find((s) => s.tool === key) as ToolSpec;
      return mcpRequest(era, secret, "tools/call", spec.tool, spec.args());
    };

    /** The request behind a row; on the first phase also its D1 counts (cold token, then warm). Null when it cannot run. */
    async function prepare(key: string, phase: "small" | "large"): Promise<HttpRequest | null> {
      const row = rows.get(key) as Row;
      if (row.missing) return null;
      if (key === "health") return get("/health");
      if (key === "ready") return get("/ready");
      if (key.startsWith("floor:")) {
        const spec = TOOL_SPECS.find((s) => `floor:${s.tool}` === key) as ToolSpec;
        const req = floorRequest(secretOf(spec.who), spec.tool, spec.args());
        const p = await probe(dev!.base, req);
        const problem = failure(p);
        if (problem) {
          row.missing = `failed: ${problem.slice(0, 120)}`;
          log(`${row.label} ${row.missing}`);
          return null;
        }
        row.d1Warm = p.d1Calls;
        return req;
      }
      const [name, era] = [key.slice(0, key.lastIndexOf("/")), key.slice(key.lastIndexOf("/") + 1) as Era];
      const who = name === "tools/list" ? "human" : (TOOL_SPECS.find((s) => s.tool === name) as ToolSpec).who;
      const req = requestOf(name, era, secretOf(who));
      if (phase === "small") {
        const cold = await probe(dev!.base, requestOf(name, era, secrets.cold.get(`${name}/${era}`) as string));
        const problem = failure(cold) ?? failure(await probe(dev!.base, req));
        if (problem) {
          row.missing = `failed: ${problem.slice(0, 120)}`;
          log(`${row.label} (${era}) ${row.missing}`);
          return null;
        }
        row.d1Cold = cold.d1Calls;
        row.d1Warm = (await probe(dev!.base, req)).d1Calls;
      }
      if (row.scaled) row[phase === "small" ? "d1MsSmall" : "d1MsLarge"] = await medianD1Ms(dev!.base, req);
      return req;
    }

    /** Interleaved rounds over all keys: each gets `seconds` in total, warmed up once before its first round. */
    async function measureAll(keys: string[], phase: "small" | "large"): Promise<void> {
      const requests = new Map<string, HttpRequest>();
      for (const key of keys) {
        const req = await prepare(key, phase);
        if (req) requests.set(key, req);
      }
      const samples = new Map([...requests.keys()].map((k) => [k, emptySamples()]));
      for (let round = 0; round < load.rounds; round++) {
        for (const [key, req] of requests) {
          await measureInto(samples.get(key) as Samples, dev!.base, req, load.connections, load.seconds / load.rounds, round === 0 ? load.warmupSeconds : 0);
        }
        log(`${phase}: round ${round + 1}/${load.rounds} done`);
      }
      for (const [key, s] of samples) {
        const row = rows.get(key) as Row;
        const result = summarize(s);
        row[phase] = result;
        log(`${phase} ${row.label}${row.era ? ` (${row.era})` : ""}: ${result.rps.toFixed(0)} req/s, p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms${result.failed ? `, ${result.failed} failed` : ""}`);
      }
    }

    const readKeys = (era: Era) => TOOL_SPECS.filter((s) => s.kind === "read").map((s) => `${s.tool}/${era}`);
    const writeKeys = (era: Era) => TOOL_SPECS.filter((s) => s.kind === "write").map((s) => `${s.tool}/${era}`);
    const listKeys = (era: Era) => (loads("tools/list") ? [`tools/list/${era}`] : []);
    const floorKeys = TOOL_SPECS.filter((s) => s.kind === "read").map((s) => `floor:${s.tool}`);
    await measureAll(["health", "ready", ...floorKeys, ...ERAS.flatMap((era) => [...listKeys(era), ...readKeys(era), ...writeKeys(era)])], "small");
    // Each read call beside its floor: what the protocol layer itself adds.
    for (const era of ERAS) for (const key of readKeys(era)) (rows.get(key) as Row).floor = rows.get(`floor:${key.slice(0, key.lastIndexOf("/"))}`)?.small ?? null;

    await dev.stop();
    dev = null;
    if (LARGE > SMALL) {
      const bigStart = performance.now();
      const more = taskInserts({ accountId: account.id, from: SMALL, count: LARGE - SMALL, agentName: AGENT, agentEvery: 5, projectIds: projects, baseMs });
      applySchemaFile({ remote: false, persistTo: persist }, writeSql(tmp, "large.sql", more));
      rmSync(join(tmp, "large.sql"));
      log(`seeded ${LARGE - SMALL} more tasks (${LARGE} in the account) in ${elapsed(bigStart)}`);
      dev = await startDev(persist, devLog, FLOOR_VAR);
      await probe(dev.base, mcpRequest("modern", secrets.human, "tools/list"));
      await measureAll(["health", "ready", ...ERAS.flatMap(readKeys)], "large");
      await dev.stop();
      dev = null;
    }

    const tenancyReport = ONLY.size === 0 ? await tenancy() : null;
    const shardsReport = ONLY.size === 0 ? await shards() : null;
    const treeReport = ONLY.size === 0 ? await tree() : null;
    const claimsReport = ONLY.size === 0 ? await claims() : null;
    const layerReport = ONLY.size === 0 ? await layer() : null;
    const catalogReport = catalog ? catalogTable(catalogCounts) : null;
    const report = buildReport(
      [...rows.values()],
      bundle,
      { ...load, small_tasks: SMALL, large_tasks: LARGE, node: process.version, cpus: cpus().length, cpu: cpus()[0]?.model ?? "" },
      SMALL,
      LARGE,
    );
    console.log(
      `\nTaskgate benchmark: ${load.connections} connections, ${load.seconds} s per request in ${load.rounds} interleaved rounds (after ${load.warmupSeconds} s warm-up), ${SMALL} → ${LARGE} tasks\n`,
    );
    console.log(report.markdown);
    console.log(`\n${formatToolBytes(toolBytes)}`);
    if (catalogReport) {
      console.log(`\nD1 round trips of every tool of the catalog (auth included; warm: a token the Worker resolved a moment ago, cold: a token's first request):\n`);
      console.log(catalogReport.markdown);
    }
    const allOk = report.allOk && (catalogReport?.allOk ?? true) && (tenancyReport?.ok ?? true) && (shardsReport?.ok ?? true) && (treeReport?.ok ?? true) && (claimsReport?.ok ?? true) && (layerReport?.ok ?? true) && toolBytes.ok.total && toolBytes.ok.model && toolBytes.ok.meta;
    console.log(
      `\nD1 calls: x-d1-calls per request, auth included; "cold" is a token's first request (the token lookup, with its last-used bookkeeping in the same batch).` +
        `\nAll targets met: ${allOk ? "yes ✓" : "no (see ✗ above)"}. Total time ${elapsed(t0)}. JSON: bench/results.json`,
    );
    writeFileSync(
      join(ROOT, "bench", "results.json"),
      JSON.stringify({ ...report.json, tool_bytes: toolBytes, catalog_d1_calls: catalogReport?.json ?? null, tenancy: tenancyReport, shards: shardsReport, tree: treeReport, claims: claimsReport, layer: layerReport, all_targets_met: allOk }, null, 2) + "\n",
    );
  } catch (e) {
    failed = true;
    console.error(`\nBenchmark failed: ${(e as Error).stack ?? e}`);
    try {
      const tail = readFileSync(logPath, "utf8").trim().split("\n").slice(-15).join("\n");
      if (tail) console.error(`\nLast lines of wrangler dev:\n${tail}`);
    } catch {
      /* no log */
    }
  } finally {
    if (dev) await dev.stop();
    devLog.end();
    if (opts.keep) log(`kept ${tmp}`);
    else rmSync(tmp, { recursive: true, force: true });
  }
  process.exitCode = failed ? 1 : 0;
}

/** The median D1 time (Server-Timing) of single calls, one after another. */
async function medianD1Ms(base: string, req: HttpRequest): Promise<number | null> {
  const times: number[] = [];
  for (let i = 0; i < 15; i++) {
    const p = await probe(base, req);
    if (p.d1Ms !== null) times.push(p.d1Ms);
  }
  times.sort((a, b) => a - b);
  return times.length ? times[Math.floor(times.length / 2)] : null;
}

/** The tools/list answer of a token, as a 2026-07-28 client receives it. */
async function listTools(base: string, secret: string): Promise<ListedTool[]> {
  const p = await probe(base, mcpRequest("modern", secret, "tools/list"));
  const problem = failure(p);
  if (problem) throw new Error(`tools/list failed: ${problem}`);
  return p.body.result.tools as ListedTool[];
}

await main();
