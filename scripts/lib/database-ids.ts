/**
 * Each D1 binding of a configuration needs a database of its own. Locally a
 * `database_id` names the SQLite file, so two bindings with one id (the same
 * placeholder copied twice, say) are one database under two names: a migration
 * reaches it once, and moving an account from one to the other deletes it.
 * `npm start`, the admin CLI (migrate, move-account, every command that reads
 * the databases) and `npm run deploy` refuse such a configuration. No imports:
 * the tests read it too.
 */

/**
 * An id made of zeros (and dashes), perhaps ending in a small number that
 * tells the databases apart (…-000000000001 for DB_1): wrangler.toml's
 * placeholders, never deployed with.
 */
export function isPlaceholder(id: string | null | undefined): boolean {
  return !id || /^[0-]*[0-9]{0,4}$/.test(id);
}

/** Every [[d1_databases]] block's binding and database_id, in order. */
export function databaseIdsOf(toml: string): { binding: string; id: string | null }[] {
  const out: { binding: string; id: string | null }[] = [];
  let inD1 = false;
  let current: { binding: string | null; id: string | null } | null = null;
  const flush = () => {
    if (current?.binding) out.push({ binding: current.binding, id: current.id });
    current = null;
  };
  for (const raw of toml.split("\n")) {
    const line = raw.replace(/#.*$/, "").trim();
    if (line.startsWith("[")) {
      flush();
      inD1 = line === "[[d1_databases]]";
      if (inD1) current = { binding: null, id: null };
      continue;
    }
    if (!inD1 || !current) continue;
    const m = /^(binding|database_id)\s*=\s*"([^"]*)"/.exec(line);
    if (m?.[1] === "binding") current.binding = m[2];
    else if (m?.[1] === "database_id") current.id = m[2];
  }
  flush();
  return out;
}

/** Why the configuration cannot be used (two bindings share a database_id), or null. */
export function sharedDatabaseIdProblem(toml: string, file = "wrangler.toml"): string | null {
  const seen = new Map<string, string>();
  for (const { binding, id } of databaseIdsOf(toml)) {
    if (!id) continue;
    const first = seen.get(id);
    if (first) {
      const n = /^DB_([0-9]+)$/.exec(binding)?.[1] ?? "1";
      return (
        `${file} gives the D1 bindings ${first} and ${binding} the same database_id (${id}). Each binding needs a database of its own: ` +
        `locally the id names the SQLite file, so both would be one database. Give ${binding} an id of its own ` +
        `(a placeholder such as 00000000-0000-0000-0000-${n.padStart(12, "0")} is fine: npm run deploy finds or creates the database by its name).`
      );
    }
    seen.set(id, binding);
  }
  return null;
}
