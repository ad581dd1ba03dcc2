/**
 * schema.sql as single statements. D1's exec() treats each line as a statement,
 * so the tests prepare each statement and run them as one batch; a trigger's
 * body (BEGIN … END;) stays one statement.
 */
export function splitSql(sql: string): string[] {
  const statements: string[] = [];
  let current: string[] = [];
  let inTrigger = false;
  for (const raw of sql.split("\n")) {
    const line = raw.replace(/--.*$/, "").trimEnd();
    if (!line.trim()) continue;
    current.push(line);
    if (/^\s*CREATE\s+TRIGGER/i.test(line)) inTrigger = true;
    const ends = inTrigger ? /^\s*END;\s*$/i.test(line) : line.endsWith(";");
    if (ends) {
      statements.push(current.join("\n"));
      current = [];
      inTrigger = false;
    }
  }
  if (current.length) statements.push(current.join("\n"));
  return statements;
}

export async function applySchema(db: D1Database, sql: string): Promise<void> {
  await db.batch(splitSql(sql).map((s) => db.prepare(s)));
}
