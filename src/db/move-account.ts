/**
 * Moves an account with all of its rows from one database (shard) to another:
 * check what the target needs (emails free across the deployment, every
 * reference inside the account), mark it moving (the databases' fence refuses
 * every write of its rows, see schema.sql), replace the target's copy wholesale,
 * verify by counts and checksums, switch the directory, wait until no route
 * cached at the edge can still name the old database, delete the old rows,
 * clear the mark. Every step is idempotent and the state is read from the
 * databases themselves, so a run that stopped at any point completes when run
 * again; a copy that cannot be made equal is undone (the target's copy removed,
 * the mark cleared) so the account takes writes again where it was.
 *
 * The steps run over `SqlDb`, which the Worker's D1 (src/db/move-account-d1.ts)
 * and the admin CLI's wrangler runner (scripts/admin-move.ts) both provide.
 */
import { indexText } from "../domain/search-terms.ts";
import type { Sql } from "./provisioning.ts";
import { SERVER_WRITERS, serverBatchId, serverSql } from "./server-caller.ts";

type Value = string | number | null;
export type Row = Record<string, Value>;

export interface SqlDb {
  all(s: Sql): Promise<Row[]>;
  /** The statements as one transaction. */
  batch(statements: Sql[]): Promise<void>;
}

/**
 * Every table that holds an account's rows (each has account_id; `accounts`
 * is keyed by id), parents before children. The full-text tables are rebuilt
 * from tasks and comments in the target.
 */
export const ACCOUNT_TABLES = [
  "accounts", "agents", "tokens", "projects", "tasks", "task_dependencies", "steps", "comments", "labels", "task_labels",
  "runs", "run_events", "approvals", "pending_actions", "calendar_links", "connectors", "trash", "activity", "idempotency_keys",
  "webhooks", "webhook_deliveries", "stale_run_notices", "claim_lapse_notices", "people", "setup_links", "sessions",
  "push_subscriptions", "push_deliveries", "read_bookmarks",
] as const;

/**
 * Tables whose rows name states of the database that holds them (a D1
 * bookmark means nothing in another): deleted with the account, never
 * copied, so the account's callers start afresh in the target.
 */
const OF_THIS_DATABASE: ReadonlySet<string> = new Set(["read_bookmarks"]);
/** Every table of ACCOUNT_TABLES but those: what a move copies and verifies. */
export const COPIED_TABLES = ACCOUNT_TABLES.filter((t) => !OF_THIS_DATABASE.has(t));

/** Columns left out of the copy (a database's own row numbers) and of the checksum (touched by reads while the account moves). */
const OWN_ROWID: Record<string, string> = { tasks: "rid" };
const VOLATILE = new Set([
  "tokens.last_used_at", "agents.last_seen_at", "accounts.moving_to",
  "push_subscriptions.last_delivered_at", "push_subscriptions.last_failure_at", "push_subscriptions.last_error",
]);

/** D1 binds at most 100 parameters a statement; a batch stays well under its limits. */
const MAX_PARAMS = 100;
const PAGE = 200;
const BATCH_STATEMENTS = 50;

export const MOVE_STEPS = ["mark", "copy", "verify", "switch", "delete", "finish"] as const;

/** How long the edge keeps a route by default: an account's database (SHARD_CACHE_SECONDS, 60) and a token's resolution (AUTH_CACHE_SECONDS, 5). */
export const DEFAULT_ROUTE_LIFETIME_MS = 65_000;

/** The message of the databases' fence (schema.sql): a write of a moving account's rows, refused. */
export const FENCE_MESSAGE = "account moving: try again shortly";

/** Whether an error is the fence refusing a write because the account is moving. */
export function isFenced(e: unknown): boolean {
  return String(e instanceof Error ? e.message : e).includes(FENCE_MESSAGE);
}

/**
 * For the statements of jobs that span accounts (purges, notices): the rows of
 * accounts that are moving are left for the next run, so the fence never
 * refuses a job's batch and the copy is not changed under the move. Qualify
 * `account_id` with the alias the statement needs.
 */
export function notMoving(column = "account_id"): string {
  return `${column} NOT IN (SELECT id FROM accounts WHERE moving_to IS NOT NULL)`;
}

/** A pre-condition of the move does not hold: nothing was marked or changed. */
export class MoveRefused extends Error {}

/**
 * The move's own statements pass the fence: the permit row lives only inside
 * their transaction. They are the server's writer `server:move` for the
 * consent rules (which refuse a batch with no caller), recorded the same way.
 */
const PERMIT_IN: Sql = { sql: "INSERT INTO move_permit (held) VALUES (1)", params: [] };
const PERMIT_OUT: Sql = { sql: "DELETE FROM move_permit", params: [] };
const permitted = (statements: Sql[]): Sql[] => {
  const caller = serverSql(SERVER_WRITERS.move, serverBatchId("mov"));
  return [PERMIT_IN, caller.in, ...statements, caller.out, PERMIT_OUT];
};
export type MoveStep = (typeof MOVE_STEPS)[number];

export interface MoveOptions {
  accountId: string;
  /** The database the account is in (the directory's word) and its handle. */
  from: { name: string; db: SqlDb };
  to: { name: string; db: SqlDb };
  /** The first database, which keeps the directory. */
  directory: SqlDb;
  /** Every database of the deployment (emails must be free in each); from, to and the directory when absent. */
  all?: { name: string; db: SqlDb }[];
  /**
   * How long the edge may keep a route (an account's database, a token's
   * resolution): the old rows are deleted only this long after the switch,
   * so no cached route can reach an emptied database. Default 65 s.
   */
  lifetimeMs?: number;
  /** How the move waits (a test's clock may be faster). */
  sleep?: (ms: number) => Promise<void>;
  /** Called after each step; a test throws here to fail the move between steps. */
  after?: (step: MoveStep) => void | Promise<void>;
  now?: () => string;
}

export interface TableReport {
  table: string;
  rows: number;
  checksum: string;
}

export interface MoveReport {
  account: string;
  from: string;
  to: string;
  steps: MoveStep[];
  tables: TableReport[];
}

const keyOf = (table: string) => (table === "accounts" ? "id" : "account_id");

async function columnsOf(db: SqlDb, table: string): Promise<string[]> {
  const rows = await db.all({ sql: `SELECT name FROM pragma_table_info('${table}') ORDER BY cid`, params: [] });
  return rows.map((r) => r.name as string);
}

/** An account's rows of one table, a page at a time, in the database's row order. */
async function* pagesOf(db: SqlDb, table: string, accountId: string): AsyncGenerator<Row[]> {
  let after = -1;
  for (;;) {
    const rows = await db.all({
      sql: `SELECT rowid AS _rowid_, * FROM ${table} WHERE ${keyOf(table)} = ? AND rowid > ? ORDER BY rowid LIMIT ${PAGE}`,
      params: [accountId, after],
    });
    if (rows.length === 0) return;
    yield rows;
    after = rows[rows.length - 1]._rowid_ as number;
    if (rows.length < PAGE) return;
  }
}

async function runInBatches(db: SqlDb, statements: Sql[], permit = false): Promise<void> {
  for (let i = 0; i < statements.length; i += BATCH_STATEMENTS) {
    const chunk = statements.slice(i, i + BATCH_STATEMENTS);
    await db.batch(permit ? permitted(chunk) : chunk);
  }
}

/** Inserts of one page (the target holds none of the account's rows: the copy cleared them), with the full-text rows of tasks and comments. */
function copyStatements(table: string, columns: string[], rows: Row[], accountId: string): Sql[] {
  const cols = columns.filter((c) => c !== OWN_ROWID[table]);
  const perStatement = Math.max(1, Math.floor(MAX_PARAMS / cols.length));
  const out: Sql[] = [];
  for (let i = 0; i < rows.length; i += perStatement) {
    const chunk = rows.slice(i, i + perStatement);
    out.push({
      sql: `INSERT INTO ${table} (${cols.join(", ")}) VALUES ${chunk.map(() => `(${cols.map(() => "?").join(", ")})`).join(", ")}`,
      params: chunk.flatMap((r) => cols.map((c) => r[c] ?? null)),
    });
  }
  for (const r of rows) {
    if (table === "tasks") {
      out.push({
        sql: "INSERT OR REPLACE INTO task_search (rowid, title, notes) SELECT rid, ?, ? FROM tasks WHERE id = ? AND account_id = ?",
        params: [indexText(accountId, r.title as string), indexText(accountId, r.notes as string), r.id, accountId],
      });
    } else if (table === "comments") {
      out.push({
        sql: "INSERT OR REPLACE INTO comment_search (rowid, body) SELECT rowid, ? FROM comments WHERE id = ? AND account_id = ?",
        params: [indexText(accountId, r.body as string), r.id, accountId],
      });
    }
  }
  return out;
}

/**
 * The target's copy replaced wholesale: whatever an earlier run left there
 * (missing, extra or changed rows) is removed, then every row is copied again,
 * so each run converges on the source as it is now.
 */
async function copyAccount(o: MoveOptions): Promise<void> {
  await deleteAccountRows(o.to.db, o.accountId);
  for (const table of COPIED_TABLES) {
    const columns = await columnsOf(o.from.db, table);
    for await (const rows of pagesOf(o.from.db, table, o.accountId)) await runInBatches(o.to.db, copyStatements(table, columns, rows, o.accountId), true);
  }
}

async function rowDigest(row: Row, columns: string[]): Promise<bigint> {
  const text = JSON.stringify(columns.map((c) => row[c] ?? null));
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  let n = 0n;
  for (let i = 0; i < 8; i++) n = (n << 8n) | BigInt(d[i]);
  return n;
}

/** Rows and an order-free checksum (the sum of each row's SHA-256 prefix) of an account's rows of one table, row numbers and read-touched columns left out. */
async function summarize(db: SqlDb, table: string, accountId: string, columns: string[]): Promise<TableReport> {
  const cols = columns.filter((c) => c !== OWN_ROWID[table] && !VOLATILE.has(`${table}.${c}`));
  let rows = 0;
  let sum = 0n;
  for await (const page of pagesOf(db, table, accountId)) {
    rows += page.length;
    for (const r of page) sum = (sum + (await rowDigest(r, cols))) & 0xffffffffffffffffn;
  }
  return { table, rows, checksum: sum.toString(16).padStart(16, "0") };
}

async function searchRows(db: SqlDb, accountId: string): Promise<number> {
  const [t] = await db.all({ sql: "SELECT count(*) AS n FROM task_search WHERE rowid IN (SELECT rid FROM tasks WHERE account_id = ?)", params: [accountId] });
  return Number(t.n);
}

class CopyDiffers extends Error {}

/** Counts and checksums of every table in both databases; throws naming each table that differs. */
export async function verifyCopy(o: Pick<MoveOptions, "accountId" | "from" | "to">): Promise<TableReport[]> {
  const out: TableReport[] = [];
  const differ: string[] = [];
  for (const table of COPIED_TABLES) {
    const columns = await columnsOf(o.from.db, table);
    const [a, b] = [await summarize(o.from.db, table, o.accountId, columns), await summarize(o.to.db, table, o.accountId, columns)];
    if (a.rows !== b.rows || a.checksum !== b.checksum) differ.push(`${table} (${a.rows} rows ${a.checksum} in ${o.from.name}, ${b.rows} rows ${b.checksum} in ${o.to.name})`);
    out.push(a);
  }
  const tasks = out.find((t) => t.table === "tasks")!.rows;
  const indexed = await searchRows(o.to.db, o.accountId);
  if (indexed !== tasks) differ.push(`task_search (${indexed} of ${tasks} tasks indexed in ${o.to.name})`);
  if (differ.length) throw new CopyDiffers(`The copy in ${o.to.name} differs from ${o.from.name}: ${differ.join("; ")}.`);
  return out;
}

async function deleteAccountRows(db: SqlDb, accountId: string): Promise<void> {
  // Children first, the account's own row last, so a failure leaves it marked as moving.
  for (const table of [...ACCOUNT_TABLES].reverse()) {
    for (;;) {
      const [left] = await db.all({ sql: `SELECT count(*) AS n FROM ${table} WHERE ${keyOf(table)} = ?`, params: [accountId] });
      if (Number(left.n) === 0) break;
      await db.batch(permitted([{ sql: `DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE ${keyOf(table)} = ? LIMIT 500)`, params: [accountId] }]));
    }
  }
}

export async function hasAccount(db: SqlDb, accountId: string): Promise<boolean> {
  return (await db.all({ sql: "SELECT 1 AS x FROM accounts WHERE id = ?", params: [accountId] })).length > 0;
}

/**
 * What the target needs, checked before anything is marked: every email of the
 * account's people is free in every other database (in another account an
 * email would collide on the copy and sign in ambiguously), and every
 * reference of the account's rows names a row of the same account (the
 * target's foreign keys would refuse it). Throws MoveRefused naming each.
 */
export async function checkMove(o: Pick<MoveOptions, "accountId" | "from" | "to" | "all">): Promise<void> {
  const problems: string[] = [];
  const emails = (await o.from.db.all({ sql: "SELECT email FROM people WHERE account_id = ?", params: [o.accountId] })).map((r) => r.email as string);
  const elsewhere = (o.all ?? [o.to]).filter((d) => d.name !== o.from.name);
  for (let i = 0; i < emails.length; i += 50) {
    const chunk = emails.slice(i, i + 50);
    for (const d of elsewhere) {
      const taken = await d.db.all({
        sql: `SELECT email, account_id FROM people WHERE email IN (${chunk.map(() => "?").join(", ")}) AND account_id != ?`,
        params: [...chunk, o.accountId],
      });
      for (const t of taken) problems.push(`the email ${t.email} belongs to account ${t.account_id} in ${d.name}`);
    }
  }
  for (const table of ACCOUNT_TABLES) {
    if (table === "accounts") continue;
    const keys = await o.from.db.all({ sql: `SELECT "table" AS parent, "from" AS col, "to" AS ref FROM pragma_foreign_key_list('${table}')`, params: [] });
    for (const k of keys) {
      const parent = k.parent as string;
      if (parent === "accounts" || !(ACCOUNT_TABLES as readonly string[]).includes(parent)) continue;
      const [n] = await o.from.db.all({
        sql: `SELECT count(*) AS n FROM ${table} c WHERE c.account_id = ? AND c.${k.col} IS NOT NULL
                AND NOT EXISTS (SELECT 1 FROM ${parent} p WHERE p.${k.ref ?? "id"} = c.${k.col} AND p.account_id = ?)`,
        params: [o.accountId, o.accountId],
      });
      if (Number(n.n) > 0) problems.push(`${n.n} ${table} row(s) name a ${parent} row (${k.col}) that is not the account's`);
    }
  }
  if (problems.length) {
    throw new MoveRefused(`Account ${o.accountId} cannot move to ${o.to.name}: ${problems.join("; ")}. Nothing was marked or copied; fix these first.`);
  }
}

async function directoryShard(o: MoveOptions): Promise<{ shard: string; updated_at: string } | undefined> {
  const [placed] = await o.directory.all({ sql: "SELECT shard, updated_at FROM directory_accounts WHERE account_id = ?", params: [o.accountId] });
  return placed as { shard: string; updated_at: string } | undefined;
}

/**
 * Undoes a move that has not switched: the target's copy removed, the mark
 * cleared, so the account takes writes again in the database it never left.
 */
export async function undoMove(o: Pick<MoveOptions, "accountId" | "from" | "to" | "directory">): Promise<void> {
  const placed = await directoryShard(o as MoveOptions);
  if (placed?.shard === o.to.name) throw new Error(`Account ${o.accountId} has switched to ${o.to.name} already; run the move again to finish it.`);
  await deleteAccountRows(o.to.db, o.accountId);
  await o.from.db.batch(permitted([{ sql: "UPDATE accounts SET moving_to = NULL WHERE id = ?", params: [o.accountId] }]));
}

/** How many times the copy is made again when the verification finds a difference, before the move is undone. */
const COPY_ATTEMPTS = 3;

/**
 * Moves the account (see the file's comment). Where a previous run stopped is
 * read from the directory and both databases: a switched directory goes on
 * with the deletion, otherwise the checks and the copy start again.
 */
export async function moveAccount(o: MoveOptions): Promise<MoveReport> {
  const now = o.now ?? (() => new Date().toISOString());
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const lifetime = o.lifetimeMs ?? DEFAULT_ROUTE_LIFETIME_MS;
  const done: MoveStep[] = [];
  const step = async (name: MoveStep, work: () => Promise<void>) => {
    await work();
    done.push(name);
    await o.after?.(name);
  };
  /** A step of an unswitched move that fails on its own (not a stop from outside): undone, so the account is writable where it was. */
  const orUndo = (work: () => Promise<void>) => async () => {
    try {
      await work();
    } catch (e) {
      await undoMove(o);
      throw new Error(`${(e as Error).message} The move was undone: account ${o.accountId} stays in ${o.from.name} and takes writes again.`);
    }
  };
  if (o.from.name === o.to.name) throw new Error(`Account ${o.accountId} is already in ${o.to.name}.`);
  const placed = await directoryShard(o);
  let switchedAt = placed?.shard === o.to.name ? Date.parse(placed.updated_at) : null;
  let tables: TableReport[] = [];
  if (switchedAt === null) {
    if (!(await hasAccount(o.from.db, o.accountId))) throw new Error(`Account ${o.accountId} is not in ${o.from.name}.`);
    await step("mark", async () => {
      try {
        await checkMove(o);
      } catch (e) {
        // A run that marked it before these checks existed, or before the collision arose: leave it writable.
        if (e instanceof MoveRefused) await undoMove(o);
        throw e;
      }
      await o.from.db.batch(permitted([{ sql: "UPDATE accounts SET moving_to = ? WHERE id = ?", params: [o.to.name, o.accountId] }]));
    });
    await step("copy", orUndo(() => copyAccount(o)));
    await step(
      "verify",
      orUndo(async () => {
        for (let attempt = 1; ; attempt++) {
          try {
            tables = await verifyCopy(o);
            return;
          } catch (e) {
            if (!(e instanceof CopyDiffers) || attempt >= COPY_ATTEMPTS) throw e;
            await copyAccount(o);
          }
        }
      }),
    );
    await step("switch", async () => {
      // Tokens from before secrets carried their account are found by their hash in the directory,
      // and a sign-in by its email (an account from before the directory may have none there yet).
      const found = await o.to.db.all({
        sql: "SELECT 'token' AS kind, hash AS key FROM tokens WHERE account_id = ? UNION ALL SELECT 'email', email FROM people WHERE account_id = ?",
        params: [o.accountId, o.accountId],
      });
      const keys: Sql[] = [];
      for (let i = 0; i < found.length; i += 30) {
        const chunk = found.slice(i, i + 30);
        keys.push({
          sql: `INSERT INTO directory_keys (kind, key, account_id) VALUES ${chunk.map(() => "(?, ?, ?)").join(", ")} ON CONFLICT DO UPDATE SET account_id = excluded.account_id`,
          params: chunk.flatMap((k) => [k.kind, k.key, o.accountId]),
        });
      }
      const at = now();
      // The directory's keys and its word in one batch: the switch is atomic.
      await o.directory.batch([
        ...keys,
        {
          sql: "INSERT INTO directory_accounts (account_id, shard, updated_at) VALUES (?, ?, ?) ON CONFLICT (account_id) DO UPDATE SET shard = excluded.shard, updated_at = excluded.updated_at",
          params: [o.accountId, o.to.name, at],
        },
      ]);
      switchedAt = Date.parse(at);
    });
  }
  await step("delete", async () => {
    // Routes cached before the switch name the old database until they lapse: its rows stay (frozen by the fence) until then.
    const wait = (switchedAt ?? 0) + lifetime - Date.now();
    if (wait > 0) await sleep(wait);
    await deleteAccountRows(o.from.db, o.accountId);
  });
  await step("finish", () =>
    o.to.db.batch(permitted([{ sql: "UPDATE accounts SET moving_to = NULL WHERE id = ? AND moving_to IS NOT NULL", params: [o.accountId] }])),
  );
  return { account: o.accountId, from: o.from.name, to: o.to.name, steps: done, tables };
}
