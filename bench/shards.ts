/**
 * The shards part of `npm run bench` (alone: `--only shards`), on local
 * deployments of 1, 2 and 4 D1 databases (bench/shard-setup.ts), each served by
 * one `wrangler dev` with a generated configuration:
 *  1. write throughput (create_task spread over the accounts' tokens, accounts
 *     spread evenly over the databases), in interleaved rounds;
 *  2. D1 round trips per call on an account in the second database, cold (the
 *     token's and the account's first request in the isolate) and warm, for
 *     each form of token;
 *  3. the directory lookup's cost: D1 calls and time of resolving a token or a
 *     session cold and warm, median of `samples`.
 */
import { cpus } from "node:os";
import { type Era, ERAS, failure, mcpRequest, probe, type HttpRequest, type Probe } from "./mcp.ts";
import { emptySamples, measureInto, summarize, type LoadResult, type LoadSettings } from "./load.ts";
import { directoryCounts, FORM_LABEL, generateConfig, Seed, TOKEN_FORMS, type Deployment, type TokenForm } from "./shard-setup.ts";
import { median } from "./tenancy.ts";
import { startDev, type DevServer } from "./worker.ts";

export const DATABASE_COUNTS = [1, 2, 4];
/** Accounts that share the write load, spread evenly over the databases. */
const WRITE_ACCOUNTS = 8;
/** Throughput with more databases at least this share of one database's: the routing costs nothing measurable. */
export const THROUGHPUT_TARGET = 0.9;
export const WARM_TARGET = 2;
export const COLD_TARGET: Record<TokenForm, number> = { hinted: 2, "no-hint": 3, "account-less": 3 };
const SECOND = "DB_1";

type Call = { tool: string; args: (taskId: string) => Record<string, unknown> };
const WRITE_ARGS = { title: "Shard bench task", notes: "written by npm run bench" };
const CALLS: Call[] = [
  { tool: "whoami", args: () => ({}) },
  { tool: "get_task", args: (task_id) => ({ task_id }) },
  { tool: "list_tasks", args: () => ({}) },
  { tool: "search_tasks", args: () => ({ query: "invoice" }) },
  { tool: "create_task", args: () => WRITE_ARGS },
  { tool: "update_task", args: (task_id) => ({ task_id, title: "Renamed by the bench", priority: "high" }) },
  { tool: "comment_on_task", args: (task_id) => ({ task_id, body: "Progress from the bench." }) },
];

export interface ShardsOptions extends LoadSettings {
  /** Cold and warm resolutions per credential for the directory's cost (medians). */
  samples: number;
  log(msg: string): void;
  devLog: { write(s: string): void };
}

export interface ThroughputRow {
  databases: number;
  accountsPerDatabase: number[];
  d1PerWrite: number | null;
  load: LoadResult;
}
export interface RoundTripRow {
  tool: string;
  era: Era;
  form: TokenForm;
  cold: number | null;
  warm: number | null;
}
export interface LookupRow {
  credential: string;
  cold: { calls: number | null; ms: number; d1Ms: number | null };
  warm: { calls: number | null; ms: number; d1Ms: number | null };
}
export interface ShardsReport {
  throughput: ThroughputRow[];
  roundTrips: RoundTripRow[];
  lookups: LookupRow[];
  ok: boolean;
}


async function ok(base: string, req: HttpRequest, what: string): Promise<Probe> {
  const p = await probe(base, req);
  const problem = failure(p);
  if (problem) throw new Error(`shards: ${what} failed: ${problem}`);
  return p;
}

/** A signed-in page (the settings page) with a session cookie. */
const sessionPage = (secret: string): HttpRequest => ({ method: "GET", path: "/settings", headers: { cookie: `tg_session=${secret}` } });

interface Planned {
  d: Deployment;
  writers: HttpRequest[];
  placed: Map<string, number>;
}

/** What the 2-database deployment also holds, in its second database: a fresh account per cold measurement. */
interface SecondDb {
  roundTrips: { call: Call; era: Era; form: TokenForm; secret: string; taskId: string }[];
  lookups: Map<string, { cold: HttpRequest[]; warm: HttpRequest }>;
  warmup: HttpRequest[];
}

async function planSecond(seed: Seed, samples: number): Promise<SecondDb> {
  const fresh = async (form: TokenForm, label: string) => {
    const id = seed.account(`Shard ${label}`, SECOND);
    return { id, secret: await seed.token(id, SECOND, form), taskId: seed.tasks(id, SECOND, 3) };
  };
  const out: SecondDb = { roundTrips: [], lookups: new Map(), warmup: [] };
  for (const db of ["DB", SECOND]) {
    const id = seed.account(`Shard warm-up ${db}`, db);
    out.warmup.push(mcpRequest("modern", await seed.token(id, db, "hinted"), "tools/call", "whoami"), sessionPage(await seed.session(id, db)));
  }
  for (const call of CALLS) {
    for (const era of ERAS) {
      for (const form of TOKEN_FORMS) {
        const a = await fresh(form, `${call.tool} ${era} ${form}`);
        out.roundTrips.push({ call, era, form, secret: a.secret, taskId: a.taskId });
      }
    }
  }
  for (const form of TOKEN_FORMS) {
    const cold: HttpRequest[] = [];
    for (let i = 0; i <= samples; i++) cold.push(mcpRequest("modern", (await fresh(form, `lookup ${form} ${i}`)).secret, "tools/call", "whoami"));
    out.lookups.set(FORM_LABEL[form], { cold: cold.slice(1), warm: cold[0] });
  }
  const sessions: HttpRequest[] = [];
  for (let i = 0; i <= samples; i++) {
    const id = seed.account(`Shard session ${i}`, SECOND);
    sessions.push(sessionPage(await seed.session(id, SECOND)));
  }
  out.lookups.set("session cookie (carries its account, not its database): GET /settings", { cold: sessions.slice(1), warm: sessions[0] });
  return out;
}

async function measureLookup(base: string, cold: HttpRequest[], warm: HttpRequest): Promise<LookupRow["cold"][]> {
  const timed = async (req: HttpRequest) => {
    const start = performance.now();
    const p = await probe(base, req);
    const ms = performance.now() - start;
    const problem = failure(p);
    if (problem) throw new Error(`shards: ${req.path} failed: ${problem}`);
    return { p, ms };
  };
  const summary = (xs: { p: Probe; ms: number }[]) => {
    const d1 = xs.map((x) => x.p.d1Ms).filter((x): x is number => x !== null);
    return { calls: median(xs.map((x) => x.p.d1Calls ?? NaN)), ms: median(xs.map((x) => x.ms)), d1Ms: d1.length ? median(d1) : null };
  };
  const colds = [];
  for (const req of cold) colds.push(await timed(req));
  await timed(warm);
  const warms = [];
  for (let i = 0; i < cold.length; i++) warms.push(await timed(warm));
  return [summary(colds), summary(warms)];
}

export async function runShards(tmp: string, o: ShardsOptions): Promise<ShardsReport> {
  const nowIso = new Date().toISOString();
  const seedStart = performance.now();
  const planned: Planned[] = [];
  let second: SecondDb | null = null;
  for (const count of DATABASE_COUNTS) {
    const d = generateConfig(tmp, count);
    const seed = new Seed(d, nowIso);
    const writers: HttpRequest[] = [];
    const placed = new Map<string, number>();
    for (let i = 0; i < WRITE_ACCOUNTS; i++) {
      const db = d.databases[i % count];
      const id = seed.account(`Shard writer ${i}`, db);
      placed.set(db, (placed.get(db) ?? 0) + 1);
      writers.push(mcpRequest("modern", await seed.token(id, db, "hinted"), "tools/call", "create_task", WRITE_ARGS));
    }
    if (count === 2) second = await planSecond(seed, o.samples);
    seed.apply(tmp);
    planned.push({ d, writers, placed });
  }
  o.log(`shards: ${DATABASE_COUNTS.join(", ")} databases seeded in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`);

  const devs: DevServer[] = [];
  try {
    for (const p of planned) devs.push(await startDev(p.d.persistTo, o.devLog, ["--config", p.d.config]));
    const two = devs[DATABASE_COUNTS.indexOf(2)];
    const s = second as SecondDb;
    for (const req of s.warmup) await ok(two.base, req, `warm-up ${req.path}`);
    // A session the Worker did not find would be sent on to /signin (which fetch follows): it must be the page itself.
    const page = await fetch(two.base + s.warmup[3].path, { headers: s.warmup[3].headers, redirect: "manual" });
    await page.text();
    if (page.status !== 200) throw new Error(`shards: a session in ${SECOND} was not signed in (HTTP ${page.status})`);

    // 2. Round trips per call in the second database, before any load.
    const roundTrips: RoundTripRow[] = [];
    for (const r of s.roundTrips) {
      const req = mcpRequest(r.era, r.secret, "tools/call", r.call.tool, r.call.args(r.taskId));
      const cold = await ok(two.base, req, `${r.call.tool} (${r.form}, cold)`);
      await ok(two.base, req, `${r.call.tool} (${r.form})`);
      const warm = await ok(two.base, req, `${r.call.tool} (${r.form}, warm)`);
      roundTrips.push({ tool: r.call.tool, era: r.era, form: r.form, cold: cold.d1Calls, warm: warm.d1Calls });
    }
    // 3. The directory lookup's cost.
    const lookups: LookupRow[] = [];
    for (const [credential, l] of s.lookups) {
      const [cold, warm] = await measureLookup(two.base, l.cold, l.warm);
      lookups.push({ credential, cold, warm });
    }
    o.log(`shards: round trips and directory lookups measured`);

    // 1. Throughput, in interleaved rounds over the deployments.
    const samples = planned.map(() => emptySamples());
    const d1PerWrite: (number | null)[] = [];
    for (const [i, p] of planned.entries()) {
      const placedByDirectory = directoryCounts(p.d);
      for (const [db, n] of p.placed) {
        if ((placedByDirectory.get(db) ?? 0) < n) throw new Error(`shards: the directory places ${placedByDirectory.get(db) ?? 0} accounts in ${db}, expected ${n}`);
      }
      // Every writer's token once (each answers), then one warm write's D1 calls.
      for (const req of p.writers) await ok(devs[i].base, req, "create_task");
      d1PerWrite.push((await ok(devs[i].base, p.writers[0], "create_task")).d1Calls);
    }
    for (let round = 0; round < o.rounds; round++) {
      for (const [i, p] of planned.entries()) {
        await measureInto(samples[i], devs[i].base, p.writers, o.connections, o.seconds / o.rounds, round === 0 ? o.warmupSeconds : 0);
      }
      o.log(`shards: round ${round + 1}/${o.rounds} done`);
    }
    const throughput: ThroughputRow[] = planned.map((p, i) => ({
      databases: p.d.databases.length,
      accountsPerDatabase: p.d.databases.map((db) => p.placed.get(db) ?? 0),
      d1PerWrite: d1PerWrite[i],
      load: summarize(samples[i]),
    }));
    const report = { throughput, roundTrips, lookups, ok: true };
    report.ok = targetsMet(report);
    return report;
  } finally {
    for (const d of devs) await d.stop();
  }
}

const mark = (good: boolean) => (good ? "✓" : "✗");

function throughputOk(r: ThroughputRow, base: ThroughputRow): boolean {
  return r.d1PerWrite === base.d1PerWrite && r.load.failed === 0 && r.load.rps >= THROUGHPUT_TARGET * base.load.rps;
}
const tripOk = (r: RoundTripRow) => r.warm !== null && r.warm <= WARM_TARGET && r.cold !== null && r.cold <= COLD_TARGET[r.form];

function targetsMet(r: ShardsReport): boolean {
  return r.throughput.every((t) => throughputOk(t, r.throughput[0])) && r.roundTrips.every(tripOk);
}

/** The tables of the shards part, as printed by the benchmark. */
export function shardsMarkdown(r: ShardsReport, o: { connections: number; seconds: number; samples: number }): string {
  const base = r.throughput[0];
  const f = (x: number | null, d = 2) => (x === null || Number.isNaN(x) ? "—" : x.toFixed(d));
  const lines = [
    `Writes (create_task, 2026-07-28 era, ${o.connections} connections, ${o.seconds} s each in interleaved rounds) with ${WRITE_ACCOUNTS} accounts spread evenly over 1, 2 and 4 local D1 databases, each connection cycling through the accounts' tokens:\n`,
    `| databases | accounts per database | D1 calls per write | req/s | p50 ms | p99 ms | vs 1 database | target: same D1 calls, ≥ ${THROUGHPUT_TARGET}× req/s |`,
    "|---|---|---|---|---|---|---|---|",
    ...r.throughput.map(
      (t) =>
        `| ${t.databases} | ${t.accountsPerDatabase.join(" / ")} | ${f(t.d1PerWrite, 0)} | ${t.load.rps.toFixed(0)} | ${t.load.p50.toFixed(2)} | ${t.load.p99.toFixed(2)} | ${(t.load.rps / base.load.rps).toFixed(2)}× | ${mark(throughputOk(t, base))} |`,
    ),
    `\nLocally every D1 database is a SQLite file behind one workerd process on this machine's ${cpus().length} cores; a real D1 database runs one query at a time, and that per-database limit (about 1,000 queries/s for 1 ms queries) is what more databases lift. The local runtime does not reproduce it, so this table shows what the routing costs (a token that names its database: no extra round trip, the same D1 calls per write), not the scale-out.`,
    `\nD1 round trips per call on an account in the second database (${SECOND}), auth included; cold: the token's and the account's first request in this isolate, warm: a request a moment later:\n`,
    `| call | era | ${TOKEN_FORMS.map((form) => `${form} cold / warm`).join(" | ")} | target: warm ≤ ${WARM_TARGET}; cold ≤ ${TOKEN_FORMS.map((form) => COLD_TARGET[form]).join(" / ")} |`,
    `|---|---|${TOKEN_FORMS.map(() => "---|").join("")}---|`,
  ];
  for (const call of CALLS) {
    for (const era of ERAS) {
      const rows = TOKEN_FORMS.map((form) => r.roundTrips.find((x) => x.tool === call.tool && x.era === era && x.form === form) as RoundTripRow);
      lines.push(`| \`${call.tool}\` | ${era} | ${rows.map((x) => `${f(x.cold, 0)} / ${f(x.warm, 0)}`).join(" | ")} | ${mark(rows.every(tripOk))} |`);
    }
  }
  lines.push(
    `\nToken forms: ${TOKEN_FORMS.map((form) => `${form}: ${FORM_LABEL[form]}`).join("; ")}. A token that names its database is looked up there: one round trip, then the call's own. One that names only its account asks the directory once (where the account lives, cached for a minute), hence ≤ 3 cold. One without its account (from before secrets carried one) is looked up in the first database, where every account from before the directory lives, with the directory asked in the same batch; only when its account has moved is it looked up once more there: also ≤ 3 cold. Warm, none of them asks anything but the call's own queries.`,
    `\nThe directory lookup's cost: resolving a credential of an account in ${SECOND}, cold (a new credential and account each time) and warm (the same credential again), whoami or the settings page, median of ${o.samples}:\n`,
    "| credential | cold D1 calls | cold ms | cold D1 ms | warm D1 calls | warm ms | warm D1 ms |",
    "|---|---|---|---|---|---|---|",
    ...r.lookups.map((l) => `| ${l.credential} | ${f(l.cold.calls, 0)} | ${f(l.cold.ms)} | ${f(l.cold.d1Ms)} | ${f(l.warm.calls, 0)} | ${f(l.warm.ms)} | ${f(l.warm.d1Ms)} |`),
  );
  const [hinted, noHint] = [r.lookups.find((l) => l.credential === FORM_LABEL.hinted), r.lookups.find((l) => l.credential === FORM_LABEL["no-hint"])];
  if (hinted && noHint) {
    lines.push(
      `\nThe directory lookup itself (account without database − account and database, cold): +${f((noHint.cold.calls ?? 0) - (hinted.cold.calls ?? 0), 0)} D1 call, +${f(noHint.cold.ms - hinted.cold.ms)} ms per request (+${f((noHint.cold.d1Ms ?? 0) - (hinted.cold.d1Ms ?? 0))} ms of D1 time); warm: +${f((noHint.warm.calls ?? 0) - (hinted.warm.calls ?? 0), 0)} calls.`,
    );
  }
  return lines.join("\n");
}
