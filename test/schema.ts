import { splitSql } from "../scripts/lib/sql-text.ts";

/**
 * schema.sql as single statements (scripts/lib/sql-text.ts), prepared each
 * alone and run as one batch.
 */
export { splitSql };

export async function applySchema(db: D1Database, sql: string): Promise<void> {
  await db.batch(splitSql(sql).map((s) => db.prepare(s)));
}
