import type { Sql } from "./provisioning.ts";

/**
 * Stores a token planned by planToken (only its hash reaches D1) with its
 * activity row, as one batch. The person's web console creates tokens this
 * way: no tool does, because a tool result would carry the secret into a
 * model's context.
 */
export async function storePlannedToken(db: D1Database, statements: Sql[], activity: D1PreparedStatement, ...more: D1PreparedStatement[]): Promise<void> {
  await db.batch([...more, ...statements.map((s) => db.prepare(s.sql).bind(...s.params)), activity]);
}
