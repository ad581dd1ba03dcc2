/**
 * Guards: statements that abort their whole batch unless an SQL condition
 * holds at that point of it (the `guard` table's CHECK refuses the row they
 * would insert), and the one read that says which of them failed.
 */

import type { Condition } from "../catalog/tool.ts";
import { readBatch } from "./batch.ts";

/** Both conditions (each with anonymous `?` binds, so their binds simply follow one another). */
export function bothHold(a: Condition, b: Condition): Condition {
  return { sql: `(${a.sql}) AND (${b.sql})`, binds: [...a.binds, ...b.binds] };
}

/** Aborts the batch unless `condition` holds. */
export function guardStatement(db: D1Database, condition: Condition): D1PreparedStatement {
  return db.prepare(`INSERT INTO guard (failed) SELECT 'x' WHERE NOT coalesce((${condition.sql}), 0)`).bind(...condition.binds);
}

/** Whether each condition holds now, in one round trip. */
export async function conditionsHold(db: D1Database, conditions: Condition[]): Promise<boolean[]> {
  const statements = Object.fromEntries(conditions.map((c, i) => [`c${i}`, selectHolds(db, c)]));
  const rows = await readBatch(db, statements);
  return conditions.map((_, i) => holdsIn(rows[`c${i}`]));
}

/** Whether `condition` holds at this point of a batch: an `{ ok }` row (holdsIn reads it). */
export function selectHolds(db: D1Database, condition: Condition): D1PreparedStatement {
  return db.prepare(`SELECT coalesce((${condition.sql}), 0) AS ok`).bind(...condition.binds);
}

/** selectHolds's answer from its rows. */
export function holdsIn(rows: unknown[]): boolean {
  return Boolean((rows[0] as { ok: number } | undefined)?.ok);
}
