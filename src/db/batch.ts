import { Named, type BatchStep } from "../catalog/tool.ts";

/** What a batch returned for its named statements: their rows, and how many rows each changed. */
export interface NamedResults<K extends string> {
  rows: Record<K, unknown[]>;
  changes: Record<K, number>;
}

/** The statement a batch step runs. */
export function statementOf(step: BatchStep): D1PreparedStatement {
  return step instanceof Named ? step.statement : step;
}

/**
 * Runs `steps` in order as one D1 batch and returns the results of the named
 * ones by name; the unnamed ones run for their effect only. The one place a
 * batch's results are matched to its statements by position.
 */
export async function batchByName<K extends string>(db: D1Database, steps: readonly BatchStep<K>[]): Promise<NamedResults<K>> {
  const results = await db.batch(steps.map(statementOf));
  const out: NamedResults<K> = { rows: {} as Record<K, unknown[]>, changes: {} as Record<K, number> };
  steps.forEach((step, i) => {
    if (!(step instanceof Named)) return;
    if (step.name in out.rows) throw new Error(`batch names "${step.name}" twice`);
    out.rows[step.name as K] = results[i].results ?? [];
    out.changes[step.name as K] = results[i].meta?.changes ?? 0;
  });
  return out;
}

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
  return (await batchByName(db, names.map((n) => new Named(n, statements[n])))).rows;
}
