import { env } from "cloudflare:workers";
import { CLAIM, classOf, ENDS_WITH, SERIES, holdsWrittenValues, isDerivedTable, PRESENCE_COLUMNS, PRESENCE_TABLES, REMOVAL_MARKERS } from "../../src/domain/columns.ts";
import { asServer } from "../helpers.ts";

/** What one change to one row is, by the class of what changed. */
export type Effect =
  | "added" // a new record (a row of a table holding written values)
  | "removed" // a record deleted, or taken out of use by its removal marker (trashed, revoked)
  | "replaced" // a written value replaced by another
  | "cleared" // a written value cleared
  | "filled" // a written value set where there was none
  | "lifecycle" // a lifecycle value moved (status, claim, snooze, restored from the trash)
  | "renewed" // the caller's own claim lease restarted (same holder, later end)
  | "bookkeeping" // ids, versions, timestamps, activity, idempotency, notices
  | "presence"; // when a token was last used or an agent last seen

export const DESTRUCTIVE_EFFECTS: ReadonlySet<Effect> = new Set(["removed", "replaced", "cleared"]);

export interface Change {
  table: string;
  key: string;
  op: "insert" | "delete" | "update";
  effect: Effect;
  column?: string;
  from?: unknown;
  to?: unknown;
}

type Row = Record<string, unknown>;
export type Snapshot = Map<string, Map<string, Row>>;

interface TableMeta {
  name: string;
  columns: string[];
  keys: string[];
  scope: "account_id" | "id" | "all";
}

let tables: Promise<TableMeta[]> | undefined;

/** Every table of the real database with its columns (PRAGMA table_info), full-text tables left out. */
export async function schemaTables(): Promise<{ name: string; columns: string[]; keys: string[] }[]> {
  const { results } = await env.DB.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name").all<{ name: string; sql: string | null }>();
  const virtual = results.filter((t) => /^CREATE VIRTUAL TABLE/i.test(t.sql ?? "")).map((t) => t.name);
  const names = results.map((t) => t.name).filter((n) => !isDerivedTable(n, virtual));
  const info = await env.DB.batch(names.map((n) => env.DB.prepare(`PRAGMA table_info("${n}")`)));
  return names.map((name, i) => {
    const cols = info[i].results as { name: string; pk: number }[];
    const keys = cols.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => c.name);
    return { name, columns: cols.map((c) => c.name), keys };
  });
}

function tableMeta(): Promise<TableMeta[]> {
  tables ??= schemaTables().then((ts) =>
    ts.map((t) => ({ ...t, scope: t.name === "accounts" ? "id" : t.columns.includes("account_id") ? "account_id" : "all" })),
  );
  return tables;
}

/** Every row of the account in every table (rows of no account, such as the migration ledger, whole), in one round trip. */
export async function snapshotAccount(accountId: string): Promise<Snapshot> {
  const metas = await tableMeta();
  const reads = await env.DB.batch(
    metas.map((t) =>
      t.scope === "all" ? env.DB.prepare(`SELECT * FROM "${t.name}"`) : env.DB.prepare(`SELECT * FROM "${t.name}" WHERE ${t.scope} = ?`).bind(accountId),
    ),
  );
  const snap: Snapshot = new Map();
  metas.forEach((t, i) => {
    const rows = new Map<string, Row>();
    for (const r of reads[i].results as Row[]) rows.set(t.keys.length ? t.keys.map((k) => String(r[k])).join("|") : JSON.stringify(r), r);
    snap.set(t.name, rows);
  });
  return snap;
}

const empty = (v: unknown) => v === null || v === undefined || v === "";

function columnEffect(table: string, column: string, before: Row, after: Row): Effect {
  if (PRESENCE_COLUMNS[table]?.includes(column) || PRESENCE_TABLES.has(table)) return "presence";
  if (REMOVAL_MARKERS[table] === column) return empty(before[column]) ? "removed" : "lifecycle";
  if (table === CLAIM.table && column === CLAIM.lease && before[CLAIM.holder] === after[CLAIM.holder] && !empty(before[column]) && !empty(after[column])) {
    return String(after[column]) > String(before[column]) ? "renewed" : "lifecycle";
  }
  let cls = classOf(table, column);
  if (table === CLAIM.table && column === CLAIM.holder && !empty(before[CLAIM.lease])) cls = "lifecycle";
  if (cls === undefined) throw new Error(`column ${table}.${column} has no class in src/domain/columns.ts`);
  if (cls !== "written") return cls;
  if (empty(before[column])) return "filled";
  if (!empty(after[column])) return "replaced";
  const state = ENDS_WITH[table]?.[column];
  return state && before[state] !== after[state] ? "lifecycle" : "cleared";
}

/** Every change from one snapshot to the next, one entry per added or removed row and per changed column. */
export function diff(before: Snapshot, after: Snapshot): Change[] {
  const out: Change[] = [];
  for (const [table, rowsAfter] of after) {
    const rowsBefore = before.get(table) ?? new Map<string, Row>();
    const record = holdsWrittenValues(table);
    const presence = PRESENCE_TABLES.has(table);
    for (const [key, row] of rowsAfter) {
      const old = rowsBefore.get(key);
      if (!old) {
        out.push({ table, key, op: "insert", effect: presence ? "presence" : record ? "added" : "bookkeeping" });
        continue;
      }
      for (const column of Object.keys(row)) {
        if (old[column] === row[column]) continue;
        out.push({ table, key, op: "update", column, from: old[column], to: row[column], effect: columnEffect(table, column, old, row) });
      }
    }
    for (const key of rowsBefore.keys()) if (!rowsAfter.has(key)) out.push({ table, key, op: "delete", effect: presence ? "presence" : record ? "removed" : "bookkeeping" });
  }
  return out.map((c) => (handedOn(c, before, after) ? { ...c, effect: "lifecycle" } : c));
}

/** A series' rule cleared on one occurrence and carried by a new occurrence of the same series. */
function handedOn(c: Change, before: Snapshot, after: Snapshot): boolean {
  if (c.table !== SERIES.table || c.column !== SERIES.rule || c.effect !== "cleared") return false;
  const series = after.get(c.table)?.get(c.key)?.[SERIES.series];
  const old = before.get(c.table) ?? new Map<string, Row>();
  return [...(after.get(c.table) ?? new Map<string, Row>())].some(([k, r]) => !old.has(k) && r[SERIES.series] === series && !empty(r[SERIES.rule]));
}

/** The changes that are more than presence (a token's or agent's last use). */
export const substantive = (changes: Change[]) => changes.filter((c) => c.effect !== "presence");

export function describeChange(c: Change): string {
  const where = c.column ? `${c.table}.${c.column}` : c.table;
  return c.column ? `${c.effect} ${where} (${JSON.stringify(c.from)} → ${JSON.stringify(c.to)})` : `${c.effect} ${where} row ${c.key}`;
}

/**
 * Puts the account's rows back as `snap` holds them, in one batch: every
 * account-scoped table emptied of the account's rows and refilled, the
 * account's own row updated in place (rows of other accounts untouched).
 */
export async function restoreAccount(accountId: string, snap: Snapshot): Promise<void> {
  const metas = await tableMeta();
  const db = env.DB;
  const statements: D1PreparedStatement[] = [];
  // Rows that others reference go in first, and out last.
  const order = (name: string) => (name === "agents" ? 0 : name === "people" ? 1 : 2);
  const scoped = metas.filter((t) => t.scope === "account_id").sort((a, b) => order(a.name) - order(b.name));
  for (const t of [...scoped].reverse()) statements.push(db.prepare(`DELETE FROM "${t.name}" WHERE account_id = ?`).bind(accountId));
  for (const t of scoped) {
    for (const row of snap.get(t.name)?.values() ?? []) {
      const cols = Object.keys(row);
      statements.push(db.prepare(`INSERT INTO "${t.name}" (${cols.map((c) => `"${c}"`).join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`).bind(...cols.map((c) => row[c])));
    }
  }
  const account = [...(snap.get("accounts")?.values() ?? [])][0];
  if (account) {
    const cols = Object.keys(account).filter((c) => c !== "id");
    statements.push(db.prepare(`UPDATE accounts SET ${cols.map((c) => `"${c}" = ?`).join(", ")} WHERE id = ?`).bind(...cols.map((c) => account[c]), accountId));
  }
  // The server's own batch, as the consent rules require of a write that is no tool call.
  await asServer(db, statements);
}
