/**
 * The layer part of `npm run bench` (alone: `--only layer`): what the MCP
 * layer costs over its floor, now and at a base commit, in the same run. For
 * each read tool and each protocol era, the p50 of its tools/call beside the
 * p50 of the same call at the floor (`/mcp/bench-floor`: the same edge, token
 * lane and registry without the SDK), with 1 connection and with 10.
 *
 * The base is the commit `base` (default: `HEAD` when the working tree has
 * changes, else `HEAD~1`), exported with `git archive` into the part's
 * temporary directory (node_modules linked to this checkout's) and served by
 * a second `wrangler dev` with BENCH_FLOOR=1 on a copy of the same seeded
 * database. Both Workers are measured in the same interleaved rounds, so
 * the machine's load falls on both alike; the checkout is removed at the
 * end, also on failure or Ctrl-C.
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { applySchemaFile } from "../scripts/lib/d1.ts";
import { emptySamples, measureInto, summarize, type Samples } from "./load.ts";
import { callOk, failure, floorRequest, mcpRequest, probe, type Era, type HttpRequest } from "./mcp.ts";
import { accountSql, asBenchSeed, projectInserts, runInserts, SEARCH_WORD, taskIdAt, taskInserts, tokenSql } from "./seed.ts";
import { atExit, ROOT, startDev, type DevServer } from "./worker.ts";

/** tools/call over its floor, p50 against p50: at most this with 1 connection and with 10. */
export const LAYER_TARGETS: Record<number, number> = { 1: 1.05, 10: 1.1 };
export const LAYER_CONNECTIONS = [1, 10];
const ERA_NAMES: Record<Era, string> = { modern: "2026-07-28", legacy: "legacy" };
const AGENT = "bench-agent";

export interface LayerOptions {
  /** Requests per request kind (each Worker, era or floor, tool) and round with 1 connection; with 10, three times as many. */
  calls: number;
  rounds: number;
  /** Tasks in the account. */
  tasks: number;
  /** A git revision; "" for the default (HEAD when the working tree has changes, else HEAD~1). */
  base: string;
  log(msg: string): void;
  devLog: { write(s: string): void };
}

type Who = "human" | "agent";
/** The read tools the part measures, with who calls them and their arguments (get_task's task is made through the tools). */
const READS: { tool: string; who: Who; args: (taskId: string) => Record<string, unknown> }[] = [
  { tool: "whoami", who: "human", args: () => ({}) },
  { tool: "get_task", who: "human", args: (id) => ({ task_id: id }) },
  { tool: "list_tasks", who: "human", args: () => ({}) },
  { tool: "search_tasks", who: "human", args: () => ({ query: SEARCH_WORD }) },
  { tool: "list_my_tasks", who: "agent", args: () => ({}) },
  { tool: "fleet_status", who: "human", args: () => ({}) },
];

export interface LayerSide {
  callMs: number;
  floorMs: number;
  ratio: number;
}

export interface LayerRow {
  era: Era;
  connections: number;
  tool: string;
  base: LayerSide;
  now: LayerSide;
  target: number;
  ok: boolean;
}

export interface LayerSummary {
  era: Era;
  connections: number;
  /** The median over the tools' ratios: what the target judges. */
  baseMedian: number;
  nowMedian: number;
  baseWorst: number;
  nowWorst: number;
  target: number;
  ok: boolean;
}

export interface LayerReport {
  base: { ref: string; commit: string; why: string };
  now: { commit: string; dirty: boolean };
  calls: number;
  rounds: number;
  loadAverage: { before: number[]; after: number[] };
  rows: LayerRow[];
  summary: LayerSummary[];
  ok: boolean;
}

function git(args: string[]): string {
  const res = spawnSync("git", args, { cwd: ROOT, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
  if (res.status !== 0) throw new Error(`git ${args.join(" ")} failed: ${res.stderr.trim()}`);
  return res.stdout.trim();
}

/** The base revision: the one asked for, or HEAD when the working tree has changes (HEAD is then not the code measured), else HEAD~1. */
export function chooseBase(asked: string): { ref: string; commit: string; why: string; dirty: boolean } {
  const dirty = git(["status", "--porcelain", "--untracked-files=no"]).length > 0;
  const ref = asked || (dirty ? "HEAD" : "HEAD~1");
  const why = asked
    ? "--base"
    : dirty
      ? "the working tree has changes, so HEAD is the last commit"
      : "the working tree is clean, so HEAD is the code measured and the base is the commit before it";
  return { ref, commit: git(["rev-parse", "--verify", `${ref}^{commit}`]), why, dirty };
}

/** The tree of `commit` in `dir` (git archive: nothing is registered in the repository), with this checkout's node_modules. */
function exportCommit(commit: string, dir: string): void {
  mkdirSync(dir, { recursive: true });
  const archive = spawnSync("git", ["archive", "--format=tar", commit], { cwd: ROOT, maxBuffer: 1024 * 1024 * 1024 });
  if (archive.status !== 0) throw new Error(`git archive ${commit} failed: ${archive.stderr.toString().trim()}`);
  const untar = spawnSync("tar", ["-x", "-C", dir], { input: archive.stdout });
  if (untar.status !== 0) throw new Error(`tar -x into ${dir} failed: ${untar.stderr.toString().trim()}`);
  symlinkSync(realpathSync(join(ROOT, "node_modules")), join(dir, "node_modules"));
}

/** The task get_task reads, made through the tools: steps, comments and labels. */
export async function seedReadTask(base: string, secret: string, projectId: string, assignee: string, has: (tool: string) => boolean = () => true): Promise<string> {
  const { task } = await callOk(base, secret, "create_task", {
    title: `Prepare the ${SEARCH_WORD} report`,
    notes: "Numbers from finance, charts from the dashboard.",
    project_id: projectId,
    priority: "high",
    assignee,
  });
  if (has("add_steps")) await callOk(base, secret, "add_steps", { task_id: task.id, steps: ["Collect numbers", "Draw charts", "Write summary", "Review", "Send"] });
  if (has("comment_on_task")) {
    for (const body of ["Finance sent the numbers.", "Charts look good.", "Please add last year's figures."]) await callOk(base, secret, "comment_on_task", { task_id: task.id, body });
  }
  if (has("label_task")) await callOk(base, secret, "label_task", { task_id: task.id, labels: ["reports", "finance"] });
  return task.id as string;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : NaN;
};

export async function runLayer(tmp: string, o: LayerOptions): Promise<LayerReport> {
  const chosen = chooseBase(o.base);
  const now = { commit: git(["rev-parse", "HEAD"]), dirty: chosen.dirty };
  o.log(`layer: base ${chosen.ref} (${chosen.commit.slice(0, 10)}: ${chosen.why}); now ${now.commit.slice(0, 10)}${now.dirty ? " with the working tree's changes" : ""}`);
  const dir = join(tmp, "layer");
  const checkout = join(dir, "base-checkout");
  const removeCheckout = atExit(() => rmSync(checkout, { recursive: true, force: true }));
  const devs: DevServer[] = [];
  try {
    exportCommit(chosen.commit, checkout);

    const persistNow = join(dir, "state-now");
    const persistBase = join(dir, "state-base");
    const nowIso = new Date().toISOString();
    const baseMs = Date.now() - (o.tasks + 86_400) * 1000;
    const account = accountSql("Layer", nowIso);
    const human = await tokenSql({ accountId: account.id, kind: "human", scope: "write", label: "layer human" }, nowIso);
    const agent = await tokenSql({ accountId: account.id, kind: "agent", scope: "write", agent: AGENT, label: "layer agent" }, nowIso);
    const projects = ["prj_layerproject0001", "prj_layerproject0002"];
    applySchemaFile({ remote: false, persistTo: persistNow }, join(ROOT, "schema.sql"));
    const file = join(dir, "seed.sql");
    writeFileSync(
      file,
      asBenchSeed([
        ...account.sql, ...human.sql, ...agent.sql, ...projectInserts(account.id, projects, nowIso),
        ...taskInserts({ accountId: account.id, from: 0, count: o.tasks, agentName: AGENT, agentEvery: 5, projectIds: projects, baseMs }),
        ...runInserts(account.id, AGENT, [0, 5, 10].map((i) => taskIdAt(account.id, i)), Date.now()),
      ]).join("\n") + "\n",
    );
    applySchemaFile({ remote: false, persistTo: persistNow }, file);
    const seeding = await startDev(persistNow, o.devLog);
    let taskId: string;
    try {
      taskId = await seedReadTask(seeding.base, human.secret, projects[0], AGENT);
    } finally {
      await seeding.stop();
    }
    cpSync(persistNow, persistBase, { recursive: true });

    const floorVar = ["--var", "BENCH_FLOOR:1"];
    devs.push(await startDev(persistBase, o.devLog, floorVar, checkout), await startDev(persistNow, o.devLog, floorVar));
    const [baseDev, nowDev] = devs;
    o.log(`layer: base on ${baseDev.base}, now on ${nowDev.base}`);

    const secret = (who: Who) => (who === "agent" ? agent.secret : human.secret);
    type Key = string; // `${side}|${c}|${tool}|${era or floor}`
    const requests = new Map<Key, { dev: DevServer; req: HttpRequest; c: number }>();
    const samples = new Map<Key, Samples>();
    for (const c of LAYER_CONNECTIONS) {
      for (const r of READS) {
        const args = r.args(taskId);
        for (const [side, dev] of [["base", baseDev], ["now", nowDev]] as const) {
          requests.set(`${side}|${c}|${r.tool}|floor`, { dev, c, req: floorRequest(secret(r.who), r.tool, args) });
          for (const era of ["modern", "legacy"] as Era[]) requests.set(`${side}|${c}|${r.tool}|${era}`, { dev, c, req: mcpRequest(era, secret(r.who), "tools/call", r.tool, args) });
        }
      }
    }
    // Each request answers correctly, and is warm (20 calls one after the other) before it is measured.
    for (const [key, { dev, req }] of requests) {
      if (key.split("|")[1] !== String(LAYER_CONNECTIONS[0])) continue;
      for (let i = 0; i < 20; i++) {
        const problem = failure(await probe(dev.base, req));
        if (problem) throw new Error(`layer: ${key} failed: ${problem}`);
      }
    }
    for (const key of requests.keys()) samples.set(key, emptySamples());

    const loadBefore = loadavg();
    /** Requests per run: autocannon stops after an amount (a duration it rounds up to whole seconds). */
    const amount = (c: number) => ({ amount: c === 1 ? o.calls : 3 * o.calls });
    for (let round = 0; round < o.rounds; round++) {
      for (const c of LAYER_CONNECTIONS) {
        for (const r of READS) {
          // The two Workers take turns going first; each measures floor and both eras back to back, in an order that turns each round.
          const sides = (round + READS.indexOf(r)) % 2 === 0 ? ["base", "now"] : ["now", "base"];
          const kinds = ["floor", "modern", "legacy"];
          const turned = [...kinds.slice(round % 3), ...kinds.slice(0, round % 3)];
          for (const side of sides) {
            for (const kind of turned) {
              const key = `${side}|${c}|${r.tool}|${kind}`;
              const { dev, req } = requests.get(key)!;
              await measureInto(samples.get(key)!, dev.base, req, c, amount(c), 0);
            }
          }
        }
      }
      o.log(`layer: round ${round + 1}/${o.rounds} done (load average ${loadavg()[0].toFixed(2)})`);
    }
    const loadAfter = loadavg();

    const p50 = (key: Key) => {
      const s = samples.get(key)!;
      const r = summarize(s);
      if (r.failed) throw new Error(`layer: ${key}: ${r.failed} requests failed`);
      return r.p50;
    };
    const side = (s: string, c: number, tool: string, era: Era): LayerSide => {
      const callMs = p50(`${s}|${c}|${tool}|${era}`);
      const floorMs = p50(`${s}|${c}|${tool}|floor`);
      return { callMs, floorMs, ratio: callMs / floorMs };
    };
    const rows: LayerRow[] = [];
    const summary: LayerSummary[] = [];
    for (const era of ["modern", "legacy"] as Era[]) {
      for (const c of LAYER_CONNECTIONS) {
        const target = LAYER_TARGETS[c];
        const these = READS.map((r) => {
          const now = side("now", c, r.tool, era);
          return { era, connections: c, tool: r.tool, base: side("base", c, r.tool, era), now, target, ok: now.ratio <= target };
        });
        rows.push(...these);
        const nowMedian = median(these.map((x) => x.now.ratio));
        summary.push({
          era,
          connections: c,
          baseMedian: median(these.map((x) => x.base.ratio)),
          nowMedian,
          baseWorst: Math.max(...these.map((x) => x.base.ratio)),
          nowWorst: Math.max(...these.map((x) => x.now.ratio)),
          target,
          ok: nowMedian <= target,
        });
      }
    }
    return {
      base: { ref: chosen.ref, commit: chosen.commit, why: chosen.why },
      now,
      calls: o.calls,
      rounds: o.rounds,
      loadAverage: { before: loadBefore, after: loadAfter },
      rows,
      summary,
      ok: summary.every((s) => s.ok),
    };
  } finally {
    for (const d of devs) await d.stop();
    removeCheckout();
  }
}

/** The part's tables, as the benchmark prints them. */
export function layerMarkdown(r: LayerReport): string {
  const f = (x: number) => x.toFixed(3);
  const ms = (s: LayerSide) => `${s.callMs.toFixed(2)} / ${s.floorMs.toFixed(2)}`;
  const la = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(", ");
  return [
    `The MCP layer over its floor (tools/call p50 ÷ the same call's p50 at /mcp/bench-floor), base ${r.base.ref} (${r.base.commit.slice(0, 10)}) beside now ` +
      `(${r.now.commit.slice(0, 10)}${r.now.dirty ? " + working tree" : ""}), both Workers in the same ${r.rounds} interleaved rounds of ${r.calls} calls a request with 1 connection and ${3 * r.calls} with 10; ` +
      `load average ${la(r.loadAverage.before)} before, ${la(r.loadAverage.after)} after:\n`,
    "| era | connections | tool | base ms call / floor | now ms call / floor | base ratio | now ratio | target | |",
    "|---|---|---|---|---|---|---|---|---|",
    ...r.rows.map((x) => `| ${ERA_NAMES[x.era]} | ${x.connections} | ${x.tool} | ${ms(x.base)} | ${ms(x.now)} | ${f(x.base.ratio)} | ${f(x.now.ratio)} | ≤ ${x.target} | ${x.ok ? "✓" : "✗"} |`),
    "\nBy era and connections (the target judges the median over the six tools; the worst is shown beside it):\n",
    "| era | connections | base median | now median | base worst | now worst | target | |",
    "|---|---|---|---|---|---|---|---|",
    ...r.summary.map((s) => `| ${ERA_NAMES[s.era]} | ${s.connections} | ${f(s.baseMedian)} | ${f(s.nowMedian)} | ${f(s.baseWorst)} | ${f(s.nowWorst)} | ≤ ${s.target} | ${s.ok ? "✓" : "✗"} |`),
  ].join("\n");
}
