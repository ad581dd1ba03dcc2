import type { CursorKey } from "./cursor.ts";
import { withClient } from "./task-search.ts";
import { personRef, type PersonRef } from "../domain/principal.ts";

export interface ActivityRow {
  id: string;
  actor: string;
  token_id: string;
  tool: string;
  target_id: string | null;
  summary: string;
  created_at: string;
  /** The app connected through OAuth that made the call; null for a tg_ token or the web console. */
  client: string | null;
  /** The person who made the call, and their shown name now; null for an agent, the server, or a tg_ token of no person. */
  person_id: string | null;
  person_name: string | null;
}

/** An activity row as the tools show it: its person as one value, `{ id, name }` or null. */
export function withPerson<R extends { person_id: string | null; person_name: string | null }>(row: R): Omit<R, "person_id" | "person_name"> & { person: PersonRef | null } {
  const { person_id, person_name, ...rest } = row;
  return { ...rest, person: personRef(person_id, person_name) };
}

export interface ActivityFilter {
  targetId?: string;
  since?: string;
  actor?: string;
  tool?: string;
  after: CursorKey | null;
  limit: number;
}

/** The condition of the feed's filter, with `?` parameters, and their values. */
export function activityWhere(accountId: string, f: ActivityFilter): { sql: string; binds: unknown[] } {
  const where = ["account_id = ?"];
  const binds: unknown[] = [accountId];
  if (f.targetId) (where.push("target_id = ?"), binds.push(f.targetId));
  if (f.since) (where.push("created_at >= ?"), binds.push(f.since));
  if (f.actor) (where.push("actor = ?"), binds.push(f.actor));
  if (f.tool) (where.push("tool = ?"), binds.push(f.tool));
  if (f.after) (where.push("(created_at < ? OR (created_at = ? AND id < ?))"), binds.push(f.after.k, f.after.k, f.after.id));
  return { sql: where.join(" AND "), binds };
}

/** The account's audit feed, newest first, filtered, with the OAuth app of each call; fetches limit + 1 rows. */
export function selectActivity(db: D1Database, accountId: string, f: ActivityFilter): D1PreparedStatement {
  const w = activityWhere(accountId, f);
  return db
    .prepare(
      withClient(`SELECT id, actor, token_id, tool, target_id, summary, created_at, person_id FROM activity
        WHERE ${w.sql} ORDER BY created_at DESC, id DESC LIMIT ?`),
    )
    .bind(...w.binds, f.limit + 1, accountId);
}

/** The table of each kind of record an activity entry can be about, by its id's prefix. */
const TABLE_OF_PREFIX: Record<string, string> = {
  agt: "agents", tok: "tokens", prj: "projects", tsk: "tasks", stp: "steps", cmt: "comments", lbl: "labels", run: "runs",
  evt: "run_events", apr: "approvals", cal: "calendar_links", con: "connectors", trs: "trash", whk: "webhooks", per: "people",
};

/**
 * One row when `targetId` means something in this account: an entry of its
 * feed is about it (a record since purged included), or it is one of the
 * account's records, the account itself included. Binds the account and the id.
 */
export function selectTargetKnown(db: D1Database, accountId: string, targetId: string): D1PreparedStatement {
  const table = TABLE_OF_PREFIX[targetId.slice(0, 3)];
  const record = table ? `EXISTS (SELECT 1 FROM ${table} WHERE id = ?2 AND account_id = ?1)` : "?2 = ?1";
  return db
    .prepare(`SELECT 1 AS ok WHERE EXISTS (SELECT 1 FROM activity WHERE account_id = ?1 AND target_id = ?2) OR ${record}`)
    .bind(accountId, targetId);
}

export interface NewActivity {
  id: string;
  accountId: string;
  tokenId: string;
  actor: string;
  tool: string;
  targetId: string | null;
  summary: string;
  now: string;
  /** The person who made the call (Principal.person's id); null for an agent, the server, or a tg_ token of no person. */
  personId: string | null;
}

/** One row of the audit feed; it rides in the same batch as the change it records. */
export function insertActivity(db: D1Database, a: NewActivity): D1PreparedStatement {
  return db
    .prepare("INSERT INTO activity (id, account_id, token_id, actor, tool, target_id, summary, created_at, person_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
    .bind(a.id, a.accountId, a.tokenId, a.actor, a.tool, a.targetId, a.summary.slice(0, 500), a.now, a.personId);
}

type SqlPart = { sql: string; binds: unknown[] };

/** `part`'s parameters (`?` or `?N`) renumbered to start after `offset`; how many it takes. */
function renumber(part: SqlPart, offset: number): { sql: string; count: number } {
  if (/\?\d/.test(part.sql)) {
    return { sql: part.sql.replace(/\?(\d+)/g, (_, n: string) => `?${Number(n) + offset}`), count: part.binds.length };
  }
  let next = 0;
  const sql = part.sql.replace(/\?/g, () => `?${offset + ++next}`);
  return { sql, count: next };
}

/**
 * The same row with its summary (and target, when given) computed in SQL: an
 * expression over the rows as they are before the change, whose parameters
 * (`?` or `?N`) bind `binds`. The plain values stand in should one read nothing.
 */
export function insertActivityFrom(db: D1Database, a: NewActivity, summary: SqlPart | undefined, target?: SqlPart): D1PreparedStatement {
  // The row's own nine parameters come first: the parts' are renumbered after them.
  const t = target ? renumber(target, 9) : null;
  const s = summary ? renumber(summary, 9 + (t ? target!.binds.length : 0)) : { sql: "?7" };
  return db
    .prepare(
      `INSERT INTO activity (id, account_id, token_id, actor, tool, target_id, summary, created_at, person_id)
       SELECT ?1, ?2, ?3, ?4, ?5, ${t ? `coalesce((${t.sql}), ?6)` : "?6"}, substr(coalesce((${s.sql}), ?7), 1, 500), ?8, ?9`,
    )
    .bind(a.id, a.accountId, a.tokenId, a.actor, a.tool, a.targetId, a.summary.slice(0, 500), a.now, a.personId, ...(target?.binds ?? []), ...(summary?.binds ?? []));
}
