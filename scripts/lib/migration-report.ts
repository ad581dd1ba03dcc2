/**
 * What `npm start` and `npm run admin -- migrate` say about the migrations
 * they applied: read from the output of `wrangler d1 migrations apply`, and
 * worded one line a database. No Node imports, so the Workers tests read it too.
 */

/** One database's migrations, applied by one run (none when it had recorded every file of migrations/). */
export interface AppliedMigrations {
  database: string;
  applied: string[];
}

/** wrangler's colours and styles, which a terminal may get around the table's cells. */
const ANSI = /\u001b\[[0-9;]*m/g;

/**
 * The migrations that `wrangler d1 migrations apply` applied, in order: after
 * each one it prints the table of those it is applying, each with its status
 * (✅ applied, ❌ failed, 🕒 not yet); "No migrations to apply!" when there are none.
 */
export function appliedMigrations(wranglerOutput: string): string[] {
  const text = wranglerOutput.replace(ANSI, "");
  return [...new Set([...text.matchAll(/^\W*([0-9]{4}_[\w.-]+\.sql)\W+✅/gmu)].map((m) => m[1]))];
}

/** One line a database: the migrations it was given, by name, or that it needed none. */
export function migrationLines(done: AppliedMigrations[]): string[] {
  return done.map(({ database, applied }) =>
    applied.length === 0
      ? `Database ${database}: no new migrations.`
      : `Database ${database}: applied ${applied.length === 1 ? "the migration" : `${applied.length} migrations`} ${applied.join(", ")}.`,
  );
}
