/**
 * Guards: statements that abort their whole batch unless an SQL condition
 * holds at that point of it (the `guard` table's CHECK refuses the row they
 * would insert), and the one read that says which of them failed.
 */

/** Aborts the batch unless `condition` holds. */
export function guardStatement(db: D1Database, condition: string, binds: unknown[]): D1PreparedStatement {
  return db.prepare(`INSERT INTO guard (failed) SELECT 'x' WHERE NOT coalesce((${condition}), 0)`).bind(...binds);
}

/** Whether each condition holds now, in one round trip. */
export async function conditionsHold(db: D1Database, conditions: { condition: string; binds: unknown[] }[]): Promise<boolean[]> {
  const checks = await db.batch(conditions.map((g) => db.prepare(`SELECT coalesce((${g.condition}), 0) AS ok`).bind(...g.binds)));
  return checks.map((c) => Boolean((c.results[0] as { ok: number } | undefined)?.ok));
}
