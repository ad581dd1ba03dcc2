/**
 * A local deployment of several D1 databases for the shards part of the
 * benchmark: a wrangler configuration generated from wrangler.toml with DB and
 * DB_1 … DB_{n-1} declared (each a SQLite file of its own under --persist-to,
 * all served by one `wrangler dev`), the schema in every database, and
 * accounts, tokens, tasks and sessions planned by the same code as the admin
 * CLI, each in the database it is placed in, with its place in the directory.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { applySchemaFile, query, render, type Target } from "../scripts/lib/d1.ts";
import { shardNames, writeShardConfig } from "../scripts/lib/shard-config.ts";
import { planAccount, planToken, type Sql } from "../src/db/provisioning.ts";
import { ID_PREFIX, newId } from "../src/domain/ids.ts";
import { displayPrefix, hashToken, newSecretOf, TOKEN_PREFIX } from "../src/domain/tokens.ts";
import { asBenchSeed, taskIdAt, taskInserts } from "./seed.ts";
import { ROOT } from "./worker.ts";

/** How a token says (or does not say) where its account lives. */
export type TokenForm = "hinted" | "no-hint" | "account-less";
export const TOKEN_FORMS: TokenForm[] = ["hinted", "no-hint", "account-less"];

export const FORM_LABEL: Record<TokenForm, string> = {
  hinted: "new `tg_` token (account and database in the secret)",
  "no-hint": "token with its account but no database",
  "account-less": "old token (no account in the secret; its hash in the directory, as a move leaves it)",
};

export interface Deployment {
  databases: string[];
  persistTo: string;
  config: string;
  target: Target;
}

/** wrangler.toml with `count` D1 databases (DB, DB_1, …) and its paths made absolute, written under `dir`. */
export function generateConfig(dir: string, count: number): Deployment {
  const databases = shardNames(count);
  const config = writeShardConfig(dir, count, `wrangler-${count}db.toml`);
  const persistTo = join(dir, `state-${count}db`);
  return { databases, persistTo, config, target: { remote: false, persistTo, config } };
}

/** SQL text per database, applied with one `wrangler d1 execute --file` each. */
export class Seed {
  readonly files = new Map<string, string[]>();
  readonly d: Deployment;
  readonly nowIso: string;
  constructor(d: Deployment, nowIso: string) {
    this.d = d;
    this.nowIso = nowIso;
    for (const db of d.databases) this.files.set(db, []);
  }

  add(db: string, statements: (Sql | string)[]): void {
    this.files.get(db)!.push(...statements.map((s) => (typeof s === "string" ? s : render(s) + ";")));
  }

  /** An account in database `db`, as `create-account` places it: its row there, its place in the directory (in DB). */
  account(name: string, db: string): string {
    const plan = planAccount(name, this.nowIso, db);
    this.add(db, plan.statements);
    this.add("DB", plan.directory);
    return plan.id;
  }

  /** A write token of the account in the given form; an account-less one also gets its hash into the directory. */
  async token(accountId: string, db: string, form: TokenForm): Promise<string> {
    const plan = await planToken({ accountId, kind: "human", scope: "write", ...(form === "hinted" ? { shard: db } : {}) }, this.nowIso);
    if (form !== "account-less") {
      this.add(db, plan.statements);
      return plan.secret;
    }
    // The same row with a secret from before secrets carried their account: 32 random bytes.
    const secret = TOKEN_PREFIX + newSecretOf();
    const [oldHash, newHash] = [await hashToken(plan.secret), await hashToken(secret)];
    const swap = (v: Sql["params"][number]) => (v === oldHash ? newHash : v === displayPrefix(plan.secret) ? displayPrefix(secret) : v);
    this.add(db, plan.statements.map((s) => ({ sql: s.sql, params: s.params.map(swap) })));
    this.add("DB", [{ sql: "INSERT INTO directory_keys (kind, key, account_id) VALUES ('token', ?, ?)", params: [newHash, accountId] }]);
    return secret;
  }

  /** `count` tasks in the account; returns the first one's id. */
  tasks(accountId: string, db: string, count: number): string {
    this.add(db, taskInserts({ accountId, from: 0, count, agentName: "bench-agent", agentEvery: 5, projectIds: [], baseMs: Date.parse(this.nowIso) - 86_400_000 }));
    return taskIdAt(accountId, 0);
  }

  /** A person of the account signed in: the session cookie's value (it carries the account, never the database). */
  async session(accountId: string, db: string): Promise<string> {
    const personId = newId(ID_PREFIX.person);
    const secret = newSecretOf(accountId);
    const expires = new Date(Date.parse(this.nowIso) + 86_400_000).toISOString();
    this.add(db, [
      { sql: "INSERT INTO people (id, account_id, email, created_at, updated_at) VALUES (?, ?, ?, ?, ?)", params: [personId, accountId, `${personId}@bench.example`, this.nowIso, this.nowIso] },
      { sql: "INSERT INTO sessions (hash, person_id, account_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?)", params: [await hashToken(secret), personId, accountId, this.nowIso, expires] },
    ]);
    return secret;
  }

  /** The schema and then everything planned, database by database. */
  apply(dir: string): void {
    for (const [db, lines] of this.files) {
      const target = { ...this.d.target, database: db === "DB" ? undefined : db };
      applySchemaFile(target, join(ROOT, "schema.sql"));
      if (lines.length === 0) continue;
      const file = join(dir, `shards-${this.d.databases.length}db-${db}.sql`);
      writeFileSync(file, asBenchSeed(lines).join("\n") + "\n");
      applySchemaFile(target, file);
    }
  }
}

/** How many accounts the directory places in each database. */
export function directoryCounts(d: Deployment): Map<string, number> {
  const rows = query<{ shard: string; n: number }>(d.target, { sql: "SELECT shard, count(*) AS n FROM directory_accounts GROUP BY shard", params: [] });
  return new Map(rows.map((r) => [r.shard, Number(r.n)]));
}
