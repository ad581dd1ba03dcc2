/**
 * SQL files as text, for the tests (in the Workers runtime) and the scripts
 * (in Node) alike: no imports. schema.sql and migrations/ are split into
 * single statements the way D1 needs them, and trigger and view texts are
 * compared the way the migrations test and `npm run migration` compare them.
 */

/**
 * An SQL file as single statements. D1's exec() treats each line as a
 * statement, so each statement is prepared alone and the lot run as one
 * batch; a trigger's body (BEGIN … END;) stays one statement, and `--` ends
 * a line as a comment.
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

/** SQL text compared by its tokens: whitespace, comments and `IF NOT EXISTS` do not count. */
export function normalizeSql(sql: string): string {
  return sql
    .replace(/--[^\n]*/g, " ")
    .replace(/\bIF\s+NOT\s+EXISTS\b/gi, " ")
    .replace(/\s+/g, " ")
    .replace(/\s*([(),;=<>])\s*/g, "$1")
    .trim();
}
