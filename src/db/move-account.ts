/**
 * Moves an account with all of its rows from one database (shard) to another:
 * mark it moving (its writes are refused), copy, verify by counts and
 * checksums, switch the directory, delete the old rows, clear the mark. Every
 * step is idempotent and the state is read from the databases themselves, so a
 * run that failed at any point completes when run again.
 *
 * The steps run over `SqlDb`, which the Worker's D1 (src/db/account-moves.ts)
 * and the admin CLI's wrangler runner (scripts/admin-move.ts) both provide.
 */
import { indexText } from "../domain/search-terms.ts";
import type { Sql } from "./provisioning.ts";

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
  "runs", "run_events", "approvals", "calendar_links", "connectors", "trash", "activity", "idempotency_keys",
  "webhooks", "webhook_deliveries", "stale_run_notices", "claim_lapse_notices", "people", "setup_links", "sessions",
  "push_subscriptions", "push_deliveries",
] as const;

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
export type MoveStep = (typeof MOVE_STEPS)[number];

export interface MoveOptions {
  accountId: string;
  /** The database the account is in (the directory's word) and its handle. */
  from: { name: string; db: SqlDb };
  to: { name: string; db: SqlDb };
  /** The first database, which keeps the directory. */
  directory: SqlDb;
  /** Waited after marking and after switching, so routes cached at the edge expire first (the caches' lifetime). */
  settle?: () => Promise<void>;
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

async function runInBatches(db: SqlDb, statements: Sql[]): Promise<void> {
  for (let i = 0; i < statements.length; i += BATCH_STATEMENTS) await db.batch(statements.slice(i, i + BATCH_STATEMENTS));
}

/** Inserts of one page (rows already in the target are left as they are), with the full-text rows of tasks and comments. */
function copyStatements(table: string, columns: string[], rows: Row[], accountId: string): Sql[] {
  const cols = columns.filter((c) => c !== OWN_ROWID[table]);
  const perStatement = Math.max(1, Math.floor(MAX_PARAMS / cols.length));
  const out: Sql[] = [];
  for (let i = 0; i < rows.length; i += perStatement) {
    const chunk = rows.slice(i, i + perStatement);
    out.push({
      sql: `INSERT INTO ${table} (${cols.join(", ")}) VALUES ${chunk.map(() => `(${cols.map(() => "?").join(", ")})`).join(", ")} ON CONFLICT DO NOTHING`,
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

async function copyAccount(o: MoveOptions): Promise<void> {
  for (const table of ACCOUNT_TABLES) {
    const columns = await columnsOf(o.from.db, table);
    for await (const rows of pagesOf(o.from.db, table, o.accountId)) await runInBatches(o.to.db, copyStatements(table, columns, rows, o.accountId));
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

/** Counts and checksums of every table in both databases; throws naming each table that differs. */
export async function verifyCopy(o: Pick<MoveOptions, "accountId" | "from" | "to">): Promise<TableReport[]> {
  const out: TableReport[] = [];
  const differ: string[] = [];
  for (const table of ACCOUNT_TABLES) {
    const columns = await columnsOf(o.from.db, table);
    const [a, b] = [await summarize(o.from.db, table, o.accountId, columns), await summarize(o.to.db, table, o.accountId, columns)];
    if (a.rows !== b.rows || a.checksum !== b.checksum) differ.push(`${table} (${a.rows} rows ${a.checksum} in ${o.from.name}, ${b.rows} rows ${b.checksum} in ${o.to.name})`);
    out.push(a);
  }
  const tasks = out.find((t) => t.table === "tasks")!.rows;
  const indexed = await searchRows(o.to.db, o.accountId);
  if (indexed !== tasks) differ.push(`task_search (${indexed} of ${tasks} tasks indexed in ${o.to.name})`);
  if (differ.length) throw new Error(`The copy in ${o.to.name} differs from ${o.from.name}: ${differ.join("; ")}. Run the move again: it copies what is missing.`);
  return out;
}

async function deleteAccountRows(db: SqlDb, accountId: string): Promise<void> {
  // Children first, the account's own row last, so a failure leaves it marked as moving.
  for (const table of [...ACCOUNT_TABLES].reverse()) {
    for (;;) {
      const [left] = await db.all({ sql: `SELECT count(*) AS n FROM ${table} WHERE ${keyOf(table)} = ?`, params: [accountId] });
      if (Number(left.n) === 0) break;
      await db.batch([{ sql: `DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE ${keyOf(table)} = ? LIMIT 500)`, params: [accountId] }]);
    }
  }
}

export async function hasAccount(db: SqlDb, accountId: string): Promise<boolean> {
  return (await db.all({ sql: "SELECT 1 AS x FROM accounts WHERE id = ?", params: [accountId] })).length > 0;
}

/**
 * Moves the account (see the file's comment). Where a previous run stopped is
 * read from the directory and both databases: a switched directory goes on
 * with the deletion, otherwise the copy starts again (keeping what is there).
 */
export async function moveAccount(o: MoveOptions): Promise<MoveReport> {
  const now = o.now ?? (() => new Date().toISOString());
  const settle = o.settle ?? (async () => {});
  const done: MoveStep[] = [];
  const step = async (name: MoveStep, work: () => Promise<void>) => {
    await work();
    done.push(name);
    await o.after?.(name);
  };
  if (o.from.name === o.to.name) throw new Error(`Account ${o.accountId} is already in ${o.to.name}.`);
  const [placed] = await o.directory.all({ sql: "SELECT shard FROM directory_accounts WHERE account_id = ?", params: [o.accountId] });
  const switched = placed?.shard === o.to.name;
  let tables: TableReport[] = [];
  if (!switched) {
    if (!(await hasAccount(o.from.db, o.accountId))) throw new Error(`Account ${o.accountId} is not in ${o.from.name}.`);
    await step("mark", async () => {
      await o.from.db.batch([{ sql: "UPDATE accounts SET moving_to = ? WHERE id = ?", params: [o.to.name, o.accountId] }]);
      await settle();
    });
    await step("copy", () => copyAccount(o));
    await step("verify", async () => {
      tables = await verifyCopy(o);
    });
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
      await runInBatches(o.directory, [
        ...keys,
        {
          sql: "INSERT INTO directory_accounts (account_id, shard, updated_at) VALUES (?, ?, ?) ON CONFLICT (account_id) DO UPDATE SET shard = excluded.shard, updated_at = excluded.updated_at",
          params: [o.accountId, o.to.name, now()],
        },
      ]);
      await settle();
    });
  }
  await step("delete", () => deleteAccountRows(o.from.db, o.accountId));
  await step("finish", () => o.to.db.batch([{ sql: "UPDATE accounts SET moving_to = NULL WHERE id = ? AND moving_to IS NOT NULL", params: [o.accountId] }]));
  return { account: o.accountId, from: o.from.name, to: o.to.name, steps: done, tables };
}
