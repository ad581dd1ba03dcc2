/**
 * Runs SQL against the Worker's D1 through wrangler: local (the database
 * `wrangler dev` uses, optionally under --persist-to DIR) or --remote.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { FILLING_ROWS_SQL, type DatabaseUse, type Sql } from "../../src/db/provisioning.ts";
import { sharedDatabaseIdProblem } from "./database-ids.ts";
import { FENCE_MESSAGE } from "../../src/db/move-account.ts";
import { appliedMigrations, type AppliedMigrations } from "./migration-report.ts";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
/** wrangler run by the same Node as this script (npm puts the pinned Node 22 first). */
const WRANGLER = join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js");

export interface Target {
  remote: boolean;
  persistTo?: string;
  /** A wrangler configuration other than wrangler.toml (`npm run deploy` writes wrangler.deploy.toml with the real ids). */
  config?: string;
  /** A wrangler executable to run instead of the project's own (the one `npm run deploy` found on PATH). */
  wrangler?: string;
  /** Which database: a binding of the configuration (DB, DB_1, …); the first (`taskgate`) when absent. */
  database?: string;
}

/** The databases of the configuration, in order: DB, then DB_1, DB_2, … (src/db/shards.ts reads the same bindings). */
export function databasesOf(target: Target): string[] {
  const file = target.config ? resolve(ROOT, target.config) : join(ROOT, "wrangler.toml");
  const text = readFileSync(file, "utf8");
  const shared = sharedDatabaseIdProblem(text, target.config ?? "wrangler.toml");
  if (shared) throw new Error(shared);
  const bound = new Set([...text.matchAll(/^\s*binding\s*=\s*"(DB(?:_[1-9][0-9]*)?)"/gm)].map((m) => m[1]));
  const out = ["DB"];
  for (let i = 1; bound.has(`DB_${i}`); i++) out.push(`DB_${i}`);
  return out;
}

/** The same target in another of its databases. */
export function inDatabase(target: Target, database: string): Target {
  return { ...target, database: database === "DB" ? undefined : database };
}

const nameOf = (target: Target) => target.database ?? "taskgate";

/** The target in the database the directory names for this account (the first when it names none or has one database). */
export function accountTarget(target: Target, accountId: string): Target {
  if (databasesOf(target).length === 1) return target;
  const rows = query<{ shard: string }>(target, { sql: "SELECT shard FROM directory_accounts WHERE account_id = ?", params: [accountId] });
  return inDatabase(target, rows[0]?.shard ?? "DB");
}

/**
 * The first row a query finds, and the database it was found in: the target's
 * own database first, then every other of the deployment. For commands that
 * name a record by its id alone (remove-webhook, revoke-token), wherever its
 * account lives.
 */
export function findInDatabases<T>(target: Target, s: Sql): { target: Target; row: T } | null {
  const own = target.database ?? "DB";
  for (const database of [own, ...databasesOf(target).filter((d) => d !== own)]) {
    const here = inDatabase(target, database);
    const rows = query<T>(here, s);
    if (rows.length > 0) return { target: here, row: rows[0] };
  }
  return null;
}

/**
 * Each database's use, one query apiece: its size in bytes as D1 reports it
 * (remote D1 does; a local `d1 execute` reports none) and the rows that fill it,
 * so that the roomiest can be told locally too (roomiestOf).
 */
export function databaseUses(target: Target): DatabaseUse[] {
  return databasesOf(target).map((name) => {
    const out = wrangler(inDatabase(target, name), ["--json", "--command", render(FILLING_ROWS_SQL)]);
    const parsed = JSON.parse(out.slice(out.indexOf("["))) as { results?: { rows: number }[]; meta?: { size_after?: number } }[];
    const size = Number(parsed[0]?.meta?.size_after ?? 0);
    return { name, bytes: size > 0 ? size : null, rows: Number(parsed[0]?.results?.[0]?.rows ?? 0) };
  });
}

/** A literal for wrangler's SQL text: strings quoted, '' doubled. */
function literal(v: string | number | null): string {
  if (v === null) return "NULL";
  if (typeof v === "number") {
    if (!Number.isFinite(v)) throw new Error("non-finite number in SQL");
    return String(v);
  }
  return `'${v.replace(/'/g, "''")}'`;
}

export function render(s: Sql): string {
  let i = 0;
  const text = s.sql.replace(/\?/g, () => {
    if (i >= s.params.length) throw new Error("more placeholders than parameters");
    return literal(s.params[i++]);
  });
  if (i !== s.params.length) throw new Error("more parameters than placeholders");
  return text.trim().replace(/;$/, "");
}

function where(target: Target): string[] {
  const config = target.config ? ["--config", target.config] : [];
  return target.remote ? ["--remote", ...config] : ["--local", ...(target.persistTo ? ["--persist-to", target.persistTo] : []), ...config];
}

/**
 * A local database is one SQLite file that a running `wrangler dev` also
 * writes; a write that meets its lock fails whole with SQLITE_BUSY, so it is
 * run again after a pause. Remote D1 never answers this way.
 */
const BUSY = /SQLITE_BUSY|database is locked/;
const BUSY_RETRIES = 6;

function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function runD1(target: Target, command: string[], env: NodeJS.ProcessEnv): string {
  for (let attempt = 1; ; attempt++) {
    try {
      return runD1Once(target, command, env);
    } catch (e) {
      if (!(e instanceof BusyError) || attempt > BUSY_RETRIES) throw e;
      pause(150 * attempt);
    }
  }
}

class BusyError extends Error {}

function runD1Once(target: Target, command: string[], env: NodeJS.ProcessEnv): string {
  const [file, args] = target.wrangler ? [target.wrangler, ["d1", ...command]] : [process.execPath, [WRANGLER, "d1", ...command]];
  const res = spawnSync(file, args, {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", NO_D1_WARNING: "true", CI: process.env.CI ?? "", ...env },
    maxBuffer: 64 * 1024 * 1024,
  });
  if (res.status !== 0) {
    const lines = (res.stderr || res.stdout || "").split("\n").filter((l) => l.trim());
    const errors = lines.filter((l) => /error|✘|requires/i.test(l));
    const detail = (errors.length ? errors : lines.slice(-3)).slice(0, 5).join("\n");
    // The databases' fence (schema.sql): the account is moving, and the whole file was refused.
    if ((res.stderr + res.stdout).includes(FENCE_MESSAGE)) {
      throw new Error("This account is moving to another database (move-account), so nothing was written; try again shortly, once the move has finished.");
    }
    const message = `wrangler d1 ${command[0]} failed${detail ? `:\n${detail}` : ""}`;
    throw BUSY.test(res.stderr + res.stdout) && command.includes("--local") ? new BusyError(message) : new Error(message);
  }
  return res.stdout;
}

function wrangler(target: Target, args: string[]): string {
  return runD1(target, ["execute", nameOf(target), ...where(target), "--yes", ...args], {});
}

/**
 * Applies the files of migrations/ that a database has not recorded in
 * d1_migrations yet (schema.sql records every migration it contains), without
 * a prompt, to every database of the configuration (or only target.database).
 * This is how a database made by an older checkout catches up.
 */
export function applyMigrations(target: Target): AppliedMigrations[] {
  return (target.database ? [target.database] : databasesOf(target)).map((database) => {
    const out = runD1(target, ["migrations", "apply", nameOf(inDatabase(target, database)), ...where(target)], { CI: "1" });
    return { database, applied: appliedMigrations(out) };
  });
}

/** Runs statements as one file (atomic in D1). */
export function execute(target: Target, statements: Sql[]): void {
  const dir = mkdtempSync(join(tmpdir(), "taskgate-sql-"));
  try {
    const file = join(dir, "batch.sql");
    writeFileSync(file, statements.map((s) => render(s) + ";").join("\n"));
    wrangler(target, ["--file", file]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function applySchemaFile(target: Target, file: string): void {
  wrangler(target, ["--file", file]);
}

/** Runs one query and returns its rows. */
export function query<T = Record<string, unknown>>(target: Target, s: Sql): T[] {
  const out = wrangler(target, ["--json", "--command", render(s)]);
  const start = out.indexOf("[");
  const parsed = JSON.parse(out.slice(start)) as { results: T[] }[];
  return parsed[0]?.results ?? [];
}
