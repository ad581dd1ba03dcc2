import { toFtsQuery } from "../domain/search-terms.ts";

/** The search statement's text (no D1 types here: the benchmark runs it on node:sqlite too). */

export interface SearchQuery {
  accountId: string;
  /** The words to find (searchWords), the last one as a prefix. */
  words: readonly string[];
  projectId?: string;
  statuses?: readonly string[];
  offset: number;
  limit: number;
}

/** How many of the newest matches search ranks: a bounded set, however large the account. */
export const SEARCH_RANKED = 500;

/** The search statement selecting `columns` (of tasks t), and its binds. */
export function searchSql(q: SearchQuery, columns: string): { sql: string; binds: unknown[] } {
  const where = ["t.account_id = ?2", "t.trash_id IS NULL"];
  const binds: unknown[] = [toFtsQuery(q.accountId, q.words), q.accountId, q.limit + 1, q.offset, SEARCH_RANKED];
  if (q.projectId) (where.push(`t.project_id = ?${binds.length + 1}`), binds.push(q.projectId));
  if (q.statuses) {
    const first = binds.length + 1;
    where.push(`t.status IN (${q.statuses.map((_, i) => `?${first + i}`).join(", ")})`);
    binds.push(...q.statuses);
  }
  const sql = `WITH th AS (
         SELECT t.rid, bm25(task_search, 10.0, 4.0) AS score
           FROM task_search f CROSS JOIN tasks t ON t.rid = f.rowid
          WHERE task_search MATCH ?1 AND ${where.join(" AND ")}
          ORDER BY f.rowid DESC LIMIT ?5),
       ch AS (
         SELECT t.rid, bm25(comment_search) AS score, c.rowid AS crid
           FROM comment_search f CROSS JOIN comments c ON c.rowid = f.rowid CROSS JOIN tasks t ON t.id = c.task_id
          WHERE comment_search MATCH ?1 AND c.account_id = ?2 AND c.trash_id IS NULL AND ${where.join(" AND ")}
          ORDER BY f.rowid DESC LIMIT ?5),
       hits AS (
         SELECT rid, sum(score) AS score, max(crid) AS crid FROM (
           SELECT rid, score, NULL AS crid FROM th
           UNION ALL
           SELECT rid, min(score), crid FROM ch GROUP BY rid)
          GROUP BY rid),
       pg AS MATERIALIZED (SELECT rid, score, crid FROM hits ORDER BY score, rid DESC LIMIT ?3 OFFSET ?4)
       SELECT ${columns}, pg.score, c.body AS comment_body
         FROM pg CROSS JOIN tasks t ON t.rid = pg.rid LEFT JOIN comments c ON c.rowid = pg.crid
        ORDER BY pg.score, pg.rid DESC`;
  return { sql, binds };
}

