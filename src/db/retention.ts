/**
 * The daily removal of activity entries and run events older than each
 * account's activity_retention_days, in bounded batches, oldest first across
 * accounts: each round plans which (account, table) pairs hold the oldest
 * expired rows (one index seek per account and table), then deletes at most
 * `rowsPerStatement` of the oldest rows of each pair in one batch.
 */

export interface RetentionLimits {
  /** Rows one DELETE removes at most. */
  rowsPerStatement: number;
  /** DELETE statements in one batch (one round trip) at most. */
  statementsPerBatch: number;
  /** Rounds (a plan and a batch: two queries plus the deletes) per run at most. */
  batchesPerRun: number;
}

/**
 * At most 10 × (1 + 10) = 110 D1 queries and 100,000 rows per run: within
 * D1's 1,000 queries per invocation (paid plan), with each DELETE short.
 */
export const RETENTION_LIMITS: RetentionLimits = { rowsPerStatement: 1000, statementsPerBatch: 10, batchesPerRun: 10 };

const TABLES = ["activity", "run_events"] as const;

interface Expired {
  tbl: (typeof TABLES)[number];
  account_id: string;
  cutoff: string;
}

/** The (account, table) pairs whose oldest row is past the account's retention, oldest first. */
function planStatement(db: D1Database, nowIso: string, limit: number): D1PreparedStatement {
  const oldest = TABLES.map(
    (t) => `SELECT '${t}' AS tbl, c.id AS account_id, c.cutoff, (SELECT min(created_at) FROM ${t} WHERE account_id = c.id) AS oldest FROM c`,
  ).join(" UNION ALL ");
  return db
    .prepare(
      `WITH c AS (SELECT id, strftime('%Y-%m-%dT%H:%M:%fZ', ?1, '-' || activity_retention_days || ' days') AS cutoff FROM accounts WHERE moving_to IS NULL)
       SELECT tbl, account_id, cutoff FROM (${oldest}) WHERE oldest < cutoff ORDER BY oldest LIMIT ?2`,
    )
    .bind(nowIso, limit);
}

function deleteStatement(db: D1Database, e: Expired, rows: number): D1PreparedStatement {
  const table = TABLES.find((t) => t === e.tbl) as string;
  return db
    .prepare(
      `DELETE FROM ${table} WHERE rowid IN (
         SELECT rowid FROM ${table} WHERE account_id = ?1 AND created_at < ?2 ORDER BY created_at, id LIMIT ?3)`,
    )
    .bind(e.account_id, e.cutoff, rows);
}

/** Removes expired activity entries and run events; returns how many of each, and whether some remain for the next run. */
export async function purgeExpiredActivity(
  db: D1Database,
  nowIso: string,
  limits: RetentionLimits = RETENTION_LIMITS,
): Promise<{ activity: number; run_events: number; more: boolean }> {
  const removed = { activity: 0, run_events: 0 };
  for (let round = 0; round < limits.batchesPerRun; round++) {
    const { results: expired } = await planStatement(db, nowIso, limits.statementsPerBatch).all<Expired>();
    if (expired.length === 0) return { ...removed, more: false };
    const done = await db.batch(expired.map((e) => deleteStatement(db, e, limits.rowsPerStatement)));
    expired.forEach((e, i) => (removed[e.tbl] += done[i].meta.changes));
  }
  const { results: left } = await planStatement(db, nowIso, 1).all<Expired>();
  return { ...removed, more: left.length > 0 };
}
