import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { searchTaskRows } from "../src/db/task-search.ts";
import { applySchema, splitSql } from "./schema.ts";

interface Migration {
  name: string;
  sql: string;
}

const MIGRATIONS = JSON.parse(env.MIGRATIONS) as Migration[];

/** Tables, columns, indexes and triggers of a database, in a form two databases can be compared by. */
async function structure(db: D1Database): Promise<Record<string, unknown>> {
  const objects = await db
    .prepare(
      "SELECT type, name, tbl_name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' ORDER BY type, name",
    )
    .all<{ type: string; name: string; tbl_name: string }>();
  const out: Record<string, unknown> = {};
  for (const o of objects.results) {
    if (o.type === "table") {
      const cols = await db.prepare(`SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?) ORDER BY name`).bind(o.name).all();
      out[`table ${o.name}`] = cols.results;
    } else if (o.type === "index") {
      const cols = await db.prepare("SELECT name FROM pragma_index_info(?) ORDER BY seqno").bind(o.name).all<{ name: string }>();
      const sql = await db.prepare("SELECT sql FROM sqlite_master WHERE name = ?").bind(o.name).first<{ sql: string | null }>();
      const partial = sql?.sql ? /\bWHERE\b(.*)$/is.exec(sql.sql)?.[1]?.trim() ?? null : null;
      const unique = sql?.sql ? /^CREATE\s+UNIQUE/i.test(sql.sql) : true;
      out[`index ${o.name}`] = { on: o.tbl_name, columns: cols.results.map((c) => c.name), unique, partial };
    } else {
      // Triggers and views by their whole text: a condition dropped from one file's trigger is a difference.
      const sql = await db.prepare("SELECT sql FROM sqlite_master WHERE type = ? AND name = ?").bind(o.type, o.name).first<{ sql: string }>();
      out[`${o.type} ${o.name}`] = { on: o.tbl_name, body: normalizeSql(sql?.sql ?? "") };
    }
  }
  return out;
}

/** SQL text compared by its tokens: whitespace, case of keywords and `IF NOT EXISTS` do not count. */
export function normalizeSql(sql: string): string {
  return sql
    .replace(/--[^\n]*/g, " ")
    .replace(/\bIF\s+NOT\s+EXISTS\b/gi, " ")
    .replace(/\s+/g, " ")
    .replace(/\s*([(),;=<>])\s*/g, "$1")
    .trim();
}

async function count(db: D1Database, table: string): Promise<number> {
  return (await db.prepare(`SELECT count(*) AS n FROM ${table}`).first<{ n: number }>())!.n;
}

describe("schema upgrades", () => {
  it("migrations/ starts from the first deployed schema and schema.sql records every migration", () => {
    expect(MIGRATIONS[0]?.name).toBe("0000_initial.sql");
    const names = MIGRATIONS.map((m) => m.name);
    expect(names).toEqual([...names].sort());
    const ledger = /INSERT OR IGNORE INTO d1_migrations \(name\) VALUES([^;]*);/.exec(env.SCHEMA_SQL);
    expect(ledger, "schema.sql inserts the migrations it contains into d1_migrations").not.toBeNull();
    const recorded = [...ledger![1].matchAll(/'([^']+)'/g)].map((m) => m[1]);
    expect(recorded).toEqual(names);
  });

  // Every migration applies to every database of a deployment (npm run admin -- migrate): two here, each with its rows.
  for (const which of ["MIGRATED_DB", "MIGRATED_DB_1"] as const)
  it(`${which}: a database of the first schema, with data, upgraded by every migration equals schema.sql and keeps its rows`, async () => {
    const db = env[which];
    await applySchema(db, MIGRATIONS[0].sql);
    const now = "2026-01-05T10:00:00.000Z";
    await db.batch([
      db.prepare("INSERT INTO accounts (id, name, created_at, updated_at) VALUES ('acc_m', 'Migrated', ?, ?)").bind(now, now),
      db.prepare("INSERT INTO agents (id, account_id, name, created_at) VALUES ('agt_m', 'acc_m', 'bot', ?)").bind(now),
      db
        .prepare(
          "INSERT INTO tokens (id, account_id, kind, scope, agent_id, hash, prefix, label, created_at) VALUES ('tok_m', 'acc_m', 'agent', 'write', 'agt_m', 'h', 'tg_x', 'ci', ?)",
        )
        .bind(now),
      db.prepare("INSERT INTO projects (id, account_id, name, created_at, updated_at) VALUES ('prj_m', 'acc_m', 'P', ?, ?)").bind(now, now),
      db
        .prepare(
          "INSERT INTO tasks (id, account_id, project_id, title, notes, created_by, created_at, updated_at) VALUES ('tsk_m', 'acc_m', 'prj_m', 'Keep me', 'Über-notes', 'human', ?, ?)",
        )
        .bind(now, now),
      db
        .prepare("INSERT INTO comments (id, account_id, task_id, author_token_id, author, body, created_at, updated_at) VALUES ('cmt_m', 'acc_m', 'tsk_m', 'tok_m', 'bot', 'Ask about the zeppelin', ?, ?)")
        .bind(now, now),
      db
        .prepare("INSERT INTO idempotency_keys (account_id, token_id, tool, key, result, created_at) VALUES ('acc_m', 'tok_m', 'create_task', 'k', '{}', ?)")
        .bind(now),
      db
        .prepare("INSERT INTO activity (id, account_id, token_id, actor, tool, target_id, summary, created_at) VALUES ('act_m', 'acc_m', 'tok_m', 'bot', 'create_task', 'tsk_m', 's', ?)")
        .bind(now),
    ]);
    const tables = ["accounts", "agents", "tokens", "projects", "tasks", "comments", "idempotency_keys", "activity"];
    const before = Object.fromEntries(await Promise.all(tables.map(async (t) => [t, await count(db, t)] as const)));

    for (const m of MIGRATIONS.slice(1)) {
      const statements = splitSql(m.sql);
      if (statements.length) await db.batch(statements.map((s) => db.prepare(s)));
    }
    // What `wrangler d1 migrations apply` records; schema.sql records the same.
    await applySchema(
      db,
      "CREATE TABLE IF NOT EXISTS d1_migrations (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL);",
    );

    expect(await structure(db)).toEqual(await structure(env.DB));
    for (const t of tables) expect(await count(db, t), t).toBe(before[t]);
    const task = await db.prepare("SELECT title FROM tasks WHERE id = 'tsk_m'").first<{ title: string }>();
    expect(task?.title).toBe("Keep me");
    const found = async (words: string[]) =>
      (await searchTaskRows(db, { accountId: "acc_m", words, offset: 0, limit: 5 })).map((r) => [r.id, r.comment_body]);
    expect(await found(["keep"]), "the rebuilt index holds the title").toEqual([["tsk_m", null]]);
    expect(await found(["uber", "not"]), "and the notes, folded, the last word a prefix").toEqual([["tsk_m", null]]);
    expect(await found(["zeppelin"]), "and each comment").toEqual([["tsk_m", "Ask about the zeppelin"]]);
    expect((await searchTaskRows(db, { accountId: "acc_other", words: ["keep"], offset: 0, limit: 5 })).length).toBe(0);
    expect(await db.prepare("SELECT shard FROM directory_accounts WHERE account_id = 'acc_m'").first("shard"), "accounts from before the directory live in the first database").toBe("DB");
    const key = await db.prepare("SELECT result, request_hash FROM idempotency_keys WHERE key = 'k'").first();
    expect(key, "an idempotency row from before request_hash keeps its result, with no hash").toEqual({ result: "{}", request_hash: null });
  });
});
