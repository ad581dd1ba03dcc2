/**
 * `move-account --account ID --to DB_n`: moves an account with all of its rows
 * to another database of the deployment, through wrangler (local or --remote),
 * with the steps of src/db/move-account.ts. Safe to run again after a failure.
 */
import { join } from "node:path";
import { DEFAULT_ROUTE_LIFETIME_MS, hasAccount, moveAccount, type Row, type SqlDb } from "../src/db/move-account.ts";
import type { Sql } from "../src/db/provisioning.ts";
import { databasesOf, execute, inDatabase, query, ROOT, type Target } from "./lib/d1.ts";
import { required, UsageError, type Values } from "./lib/cli.ts";

function wranglerDb(target: Target): SqlDb {
  return {
    all: async (s) => query<Row>(target, s),
    batch: async (statements) => {
      if (statements.length) execute(target, statements);
    },
  };
}

/** What the move uses of a local D1 binding. */
interface LocalD1 {
  prepare(sql: string): { bind(...params: unknown[]): { all(): Promise<{ results: Row[] }> } };
  batch(statements: unknown[]): Promise<unknown>;
}

/** A write that meets the lock a running `wrangler dev` holds is run again after a pause, as scripts/lib/d1.ts does. */
async function retryBusy<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (e) {
      if (!/SQLITE_BUSY|database is locked/.test(String((e as Error).message)) || attempt > 6) throw e;
      await new Promise((r) => setTimeout(r, 150 * attempt));
    }
  }
}

function localDb(db: LocalD1): SqlDb {
  const bound = (s: Sql) => db.prepare(s.sql).bind(...s.params);
  return {
    all: (s) => retryBusy(async () => (await bound(s).all()).results),
    batch: async (statements) => {
      if (statements.length) await retryBusy(() => db.batch(statements.map(bound)));
    },
  };
}

/**
 * The local databases as the Worker's own D1 bindings (wrangler's platform
 * proxy on the same --persist-to state), so that the move's few hundred
 * statements take milliseconds each rather than a `wrangler d1 execute` apiece.
 */
async function localDatabases(target: Target): Promise<{ db(name: string): SqlDb; dispose(): Promise<void> }> {
  // Loaded here, not at the top: every other admin command starts without wrangler's module.
  const { getPlatformProxy } = await import("wrangler");
  const proxy = await getPlatformProxy<Record<string, LocalD1>>({
    configPath: target.config ?? join(ROOT, "wrangler.toml"),
    persist: { path: join(target.persistTo ?? join(ROOT, ".wrangler", "state"), "v3") },
    remoteBindings: false,
  });
  return { db: (name) => localDb(proxy.env[name]), dispose: () => proxy.dispose() };
}

/** How long routes cached at the edge may live: an account's database (SHARD_CACHE_SECONDS, 60) and a token's resolution (AUTH_CACHE_SECONDS, 5). */
const SETTLE_SECONDS = DEFAULT_ROUTE_LIFETIME_MS / 1000;

export async function moveAccountCommand(values: Values, target: Target): Promise<unknown> {
  const accountId = required(values, "account");
  const to = required(values, "to");
  const names = databasesOf(target);
  if (!names.includes(to)) throw new UsageError(`--to must name a database of the configuration: ${names.join(", ")}`);
  const settleSeconds = typeof values.settle === "string" ? Number(values.settle) : SETTLE_SECONDS;
  if (!Number.isFinite(settleSeconds) || settleSeconds < 0) throw new UsageError("--settle must be a number of seconds");
  if (target.remote) return move(accountId, to, names, (name) => wranglerDb(inDatabase(target, name)), settleSeconds, target.database ?? "DB");
  const local = await localDatabases(target);
  try {
    return await move(accountId, to, names, local.db, settleSeconds, target.database ?? "DB");
  } finally {
    await local.dispose();
  }
}

async function move(accountId: string, to: string, names: string[], db: (name: string) => SqlDb, settleSeconds: number, placed: string): Promise<unknown> {
  // `placed` is the account's database as the directory names it; after a switch that is `to`, and the rows to delete are elsewhere.
  let from = placed;
  if (from === to) {
    const others = names.filter((n) => n !== to);
    const holding: string[] = [];
    for (const n of others) if (await hasAccount(db(n), accountId)) holding.push(n);
    if (others.length === 0) throw new UsageError("The deployment has one database; add one before moving an account.");
    if (holding.length === 0) {
      // A finished move leaves the account in `to`, unmarked, and nowhere else: running it again changes nothing.
      const [row] = await db(to).all({ sql: "SELECT moving_to FROM accounts WHERE id = ?", params: [accountId] });
      if (row && row.moving_to === null) {
        console.error(`Account ${accountId} is already in ${to}; nothing to move.`);
        return { account: accountId, from: null, to, steps: [], moved: false };
      }
    }
    from = holding[0] ?? others[0];
  }
  return moveAccount({
    accountId,
    from: { name: from, db: db(from) },
    to: { name: to, db: db(to) },
    directory: db("DB"),
    all: names.map((name) => ({ name, db: db(name) })),
    lifetimeMs: settleSeconds * 1000,
    sleep: async (ms) => {
      console.error(`Waiting ${Math.ceil(ms / 1000)} s for routes cached at the edge before the switch to lapse…`);
      await new Promise((r) => setTimeout(r, ms));
    },
    after: (step) => console.error(`${step}: done`),
  });
}
