/**
 * Reads near the caller: every request that acts for a caller reads and
 * writes its account's database through one D1 session
 * (`withSession`), which D1 serves from the nearest replica once read
 * replication is on, and never from a state older than the bookmark it
 * starts from. Writes go to the primary, as without a session.
 *
 * A session starts from the newest bookmark known for its caller (its
 * holder: an agent with all its tokens, a person with their console and
 * apps, or a person's token of no person):
 * - the bookmark stored after the caller's latest write (`read_bookmarks`,
 *   read from the primary beside the token or the console session);
 * - what this isolate saw the caller reach since (its writes and reads);
 * - for the console, what the browser saw (a cookie).
 * With none, the caller has written nothing since this version: any replica
 * serves it.
 *
 * After a request that wrote, the session's bookmark is stored for the
 * caller (after the response, on the primary; a newer one is never
 * replaced by an older one). What this guarantees, and for how long a
 * caller may miss what others wrote: docs/architecture.md, "Reads near the
 * caller".
 */
import { unmetered } from "./metered.ts";
import { watched } from "./watched.ts";

/** The caller a bookmark is kept for, and the bookmark stored for it (null: none). */
export interface ReadStart {
  accountId: string;
  holder: string;
  bookmark: string | null;
}

/**
 * The holder of a tokens row `t` as SQL: its agent, else its person, else the
 * token itself. The one definition: the token and session lookups select it.
 */
export function holderSql(t: string): string {
  return `CASE WHEN ${t}.kind = 'agent' AND ${t}.agent_id IS NOT NULL THEN 'agent:' || ${t}.agent_id
               WHEN ${t}.person_id IS NOT NULL THEN ${personHolderSql(`${t}.person_id`)} ELSE 'token:' || ${t}.id END`;
}

/** A person's holder, the same for their tokens, their apps and their console session. */
export function personHolderSql(personId: string): string {
  return `'person:' || ${personId}`;
}

/** The bookmark stored for the holder `holder` (an SQL expression) of account `account`, as a scalar subquery. */
export function storedBookmarkSql(account: string, holder: string): string {
  return `(SELECT bookmark FROM read_bookmarks WHERE account_id = ${account} AND holder = ${holder})`;
}

/** D1 bookmarks order as their text does (fixed-width hexadecimal parts). */
export function newer(a: string | null | undefined, b: string | null | undefined): string | null {
  if (!a) return b ?? null;
  if (!b) return a;
  return a >= b ? a : b;
}

/** What a bookmark looks like (a cookie is only trusted in this shape). */
export const BOOKMARK_SHAPE = /^[0-9a-f]{8}(?:-[0-9a-f]{8}){2}-[0-9a-f]{32}$/;

const LIMIT = 10_000;
/** The newest bookmark this isolate saw each holder reach (`account|holder`): lost with the isolate, refilled from D1. */
const seen = new Map<string, string>();

export function forgetReadBookmarks(): void {
  seen.clear();
}

const keyOf = (s: Pick<ReadStart, "accountId" | "holder">) => `${s.accountId}|${s.holder}`;

/** A write statement: what a session's primary serves, and what makes the request's bookmark worth storing. */
const WRITE = /^\s*(?:INSERT|UPDATE|DELETE|REPLACE)\b|^\s*WITH\b[\s\S]*\b(?:INSERT|UPDATE|DELETE|REPLACE)\b/i;

/** A request's session: the database its caller reads and writes through, and what it did. */
export interface ReadSession {
  db: D1Database;
  /** The database it was opened on: where its bookmark is stored (on the primary, outside any session). */
  primary: D1Database;
  start: ReadStart;
  /** Whether any write statement ran through it. */
  wrote(): boolean;
  /** The session's bookmark now: the newest state it read or wrote. */
  bookmark(): string | null;
}

/**
 * Opens the caller's session on `db` (the account's database, metered or
 * not), from the newest of the stored bookmark, this isolate's and `extra`
 * (the browser's).
 */
export function openReadSession(db: D1Database, start: ReadStart, extra?: string | null): ReadSession {
  const from = newer(newer(start.bookmark, seen.get(keyOf(start))), extra);
  const session = db.withSession(from ?? "first-unconstrained");
  let wrote = false;
  // A write that failed (a refusal's rolled-back batch) changed nothing to wait for; a statement prepared elsewhere may write.
  const db2 = watched(session, (sql, run) => run().then((out) => ((wrote ||= sql.some((s) => s === null || WRITE.test(s))), out)), {
    withSession: () => {
      throw new Error("A request's session is its only one: read through it.");
    },
    exec: () => {
      throw new Error("exec is not served in a session: use prepare.");
    },
  });
  return {
    db: db2 as unknown as D1Database,
    primary: db,
    start,
    wrote: () => wrote,
    bookmark: () => session.getBookmark(),
  };
}

/**
 * The end of a request's session: this isolate remembers the newest state
 * the caller reached, and a request that wrote stores its bookmark for the
 * caller's next request anywhere (`persist`, given the statement to run on
 * the primary after the response). Returns the session's bookmark.
 */
export function closeReadSession(s: ReadSession, persist: (p: Promise<unknown>) => void, nowMs = Date.now()): string | null {
  const b = s.bookmark();
  if (!b) return null;
  const key = keyOf(s.start);
  const known = seen.get(key);
  if (!known || b > known) {
    if (seen.size >= LIMIT && !known) seen.clear();
    seen.set(key, b);
  }
  if (s.wrote() && (!s.start.bookmark || b > s.start.bookmark)) {
    s.start.bookmark = b;
    persist(
      // After the response, which neither waits for it nor counts it among its D1 calls.
      storeBookmark(unmetered(s.primary), s.start, b, nowMs).catch((e) =>
        console.error(JSON.stringify({ level: "warn", where: "storeBookmark", error: String(e) })),
      ),
    );
  }
  return b;
}

/** Stores a caller's bookmark on the primary, never over a newer one. */
export function storeBookmark(primary: D1Database, start: ReadStart, bookmark: string, nowMs: number): Promise<D1Result> {
  return primary
    .prepare(
      `INSERT INTO read_bookmarks (account_id, holder, bookmark, updated_at) VALUES (?1, ?2, ?3, ?4)
       ON CONFLICT (account_id, holder) DO UPDATE SET bookmark = excluded.bookmark, updated_at = excluded.updated_at
       WHERE excluded.bookmark > read_bookmarks.bookmark`,
    )
    .bind(start.accountId, start.holder, bookmark, new Date(nowMs).toISOString())
    .run();
}
