/**
 * `npm run -s migration -- NAME`: schema.sql is the one source of the schema;
 * this writes the migration that brings a database built by migrations/ to it.
 *
 * It builds two in-memory SQLite databases, one from every migration in order
 * and one from schema.sql, and compares their objects. Each trigger, view and
 * index that is new or whose text differs is written as DROP … / CREATE …
 * with schema.sql's own text (so the two files can never state a rule twice
 * in different words); each new table is created from schema.sql; each new
 * column is added with ALTER TABLE. A column that changed or went away needs
 * the table rebuilt and its rows copied, which no generator should guess:
 * the draft says so, and the migration is finished by hand. It then adds the
 * file to schema.sql's ledger of migrations.
 *
 *   npm run -s migration -- add_scopes   # writes migrations/NNNN_add_scopes.sql
 *   npm run -s migration -- --check      # exits 1 when schema.sql and migrations/ differ
 *
 * A data migration (filling a new column from what the database knows) is
 * added to the draft by hand, after the statements it needs; it records a
 * server caller first (see migrations/0019_fail_closed.sql). The migrations
 * test (test/migrations.test.ts) compares the two databases object by object,
 * triggers and views by their whole text, in the Workers runtime.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { ROOT } from "./lib/d1.ts";
import { normalizeSql, splitSql } from "./lib/sql-text.ts";

interface SchemaObject {
  type: string;
  name: string;
  tbl_name: string;
  sql: string;
}

function build(files: string[]): DatabaseSync {
  const db = new DatabaseSync(":memory:");
  for (const sql of files) for (const s of splitSql(sql)) db.exec(s);
  return db;
}

function objects(db: DatabaseSync): Map<string, SchemaObject> {
  const rows = db
    .prepare("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY rowid")
    .all() as unknown as SchemaObject[];
  return new Map(rows.map((r) => [`${r.type} ${r.name}`, r]));
}

interface Column {
  name: string;
  type: string;
  notnull: number;
  dflt_value: string | null;
  pk: number;
}

const columns = (db: DatabaseSync, table: string) =>
  db.prepare(`SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?)`).all(table) as unknown as Column[];

/** The statements that bring `from` to `to`, and what needs a hand. */
export function draft(from: DatabaseSync, to: DatabaseSync): { sql: string[]; byHand: string[] } {
  const have = objects(from);
  const want = objects(to);
  const sql: string[] = [];
  const byHand: string[] = [];
  const isShadow = (o: SchemaObject) => o.type === "table" && [...want.values()].some((v) => /VIRTUAL TABLE/i.test(v.sql) && o.name.startsWith(`${v.name}_`));
  for (const [key, o] of want) {
    if (isShadow(o)) continue;
    const old = have.get(key);
    if (o.type === "table") {
      if (!old) {
        sql.push(`${o.sql};`);
        continue;
      }
      const before = new Map(columns(from, o.name).map((c) => [c.name, c]));
      for (const c of columns(to, o.name)) {
        const b = before.get(c.name);
        if (!b) {
          const line = (/\(([\s\S]*)\)/.exec(o.sql)?.[1] ?? "").split("\n").map((l) => l.trim().replace(/,$/, "")).find((l) => l.split(/\s+/)[0] === c.name);
          sql.push(`ALTER TABLE ${o.name} ADD COLUMN ${line ?? `${c.name} ${c.type}`};`);
        } else if (JSON.stringify(b) !== JSON.stringify(c)) byHand.push(`column ${o.name}.${c.name} changed: rebuild ${o.name} and copy its rows`);
        before.delete(c.name);
      }
      for (const gone of before.keys()) byHand.push(`column ${o.name}.${gone} is gone from schema.sql: rebuild ${o.name} and copy its rows`);
    } else if (!old || normalizeSql(old.sql) !== normalizeSql(o.sql)) {
      if (old) sql.push(`DROP ${o.type.toUpperCase()} IF EXISTS ${o.name};`);
      sql.push(o.sql.endsWith("END") || o.sql.endsWith(";") ? o.sql.replace(/;?$/, ";") : `${o.sql};`);
    }
  }
  for (const [key, o] of have) {
    if (!want.has(key) && !isShadow(o)) {
      if (o.type === "table") byHand.push(`table ${o.name} is gone from schema.sql: drop it once nothing reads it`);
      else sql.push(`DROP ${o.type.toUpperCase()} IF EXISTS ${o.name};`);
    }
  }
  return { sql, byHand };
}

function main(argv: string[]): number {
  const dir = join(ROOT, "migrations");
  const files = readdirSync(dir).filter((f) => f.endsWith(".sql")).sort();
  const schema = readFileSync(join(ROOT, "schema.sql"), "utf8");
  // What `wrangler d1 migrations apply` adds beside the migrations: its ledger (schema.sql makes the same).
  const ledgerTable = "CREATE TABLE IF NOT EXISTS d1_migrations (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL);";
  const migrated = build([...files.map((f) => readFileSync(join(dir, f), "utf8")), ledgerTable]);
  const { sql, byHand } = draft(migrated, build([schema]));
  if (argv[0] === "--check") {
    if (sql.length === 0 && byHand.length === 0) {
      console.log(`schema.sql and migrations/ (${files.length} files) state the same schema.`);
      return 0;
    }
    console.error(`schema.sql differs from what migrations/ build: ${sql.length} statement(s) and ${byHand.length} change(s) by hand; run npm run -s migration -- NAME.`);
    return 1;
  }
  const name = argv[0];
  if (!name || !/^[a-z][a-z0-9_]*$/.test(name)) {
    console.error("Give the migration a name in lower case with underscores: npm run -s migration -- add_scopes (or --check).");
    return 2;
  }
  if (sql.length === 0 && byHand.length === 0) {
    console.log("Nothing to migrate: migrations/ already build schema.sql.");
    return 0;
  }
  const next = String(Number(files.at(-1)!.slice(0, 4)) + 1).padStart(4, "0");
  const file = `${next}_${name}.sql`;
  const header = [`-- ${name.replaceAll("_", " ")}: drafted from schema.sql by npm run migration; say here why.`];
  const todo = byHand.map((t) => `-- BY HAND: ${t}`);
  writeFileSync(join(dir, file), [...header, ...todo, ...sql, ""].join("\n"));
  const ledger = /(INSERT OR IGNORE INTO d1_migrations \(name\) VALUES[^;]*)\);/;
  if (!ledger.test(schema)) throw new Error("schema.sql has no ledger of migrations (INSERT OR IGNORE INTO d1_migrations …)");
  writeFileSync(join(ROOT, "schema.sql"), schema.replace(ledger, `$1),\n  ('${file}');`));
  console.log(`Wrote migrations/${file} (${sql.length} statement(s)${byHand.length ? `, ${byHand.length} to finish by hand` : ""}) and added it to schema.sql's ledger.`);
  return 0;
}

process.exitCode = main(process.argv.slice(2));
