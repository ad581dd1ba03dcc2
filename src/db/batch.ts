/**
 * Named reads in one D1 round trip: `readBatch(db, { a: stmtA, b: stmtB })`
 * runs both statements as one batch and returns their rows by name. The web
 * console answers every page with one of these (plus the session lookup).
 */
export async function readBatch<K extends string>(
  db: D1Database,
  statements: Record<K, D1PreparedStatement>,
): Promise<Record<K, unknown[]>> {
  const names = Object.keys(statements) as K[];
  const results = await db.batch(names.map((n) => statements[n]));
  const out = {} as Record<K, unknown[]>;
  names.forEach((n, i) => {
    out[n] = results[i].results;
  });
  return out;
}
