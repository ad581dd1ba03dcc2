/**
 * D1's passing faults: the query may be run again and may succeed (the
 * "retry" actions of D1's error list), and a local database that another
 * process (the admin CLI, wrangler d1 execute) holds a write lock on. A
 * batch is atomic, so one that failed this way wrote nothing — except
 * "Network connection lost", after which a write may or may not have landed.
 * Locally, a session's bookmark is read inside the transaction after its
 * statements, and a lock held by another process fails that step (its
 * transaction rolled back) with "Failed to get session commit token".
 */
const TRANSIENT =
  /Network connection lost|storage caused object to be reset|reset because its code was updated|D1 DB is overloaded|Cannot resolve D1 DB due to transient issue|SQLITE_BUSY|database is locked|Failed to get session commit token/;

export function isTransient(e: unknown): boolean {
  return TRANSIENT.test(String(e instanceof Error ? e.message : e));
}
