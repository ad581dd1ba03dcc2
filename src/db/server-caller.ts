/**
 * The server's own writers as callers of the consent rules (schema.sql): a
 * batch that records no caller in call_actor writes none of the tables the
 * rules cover, so the jobs, an account's move (the admin CLI's move-account
 * among them) and the bench seeding record themselves, as kind `server` with one of these names, which their
 * activity rows carry too. Plain SQL text with no D1 types, for the scripts
 * (wrangler d1 execute) as much as the Worker; src/db/consent.ts has the D1
 * statements (serverBatch).
 */
import type { Sql } from "./provisioning.ts";

/**
 * The server's own writers, each named in call_actor (kind `server`, which
 * sets it apart from any agent) and in the activity rows it writes: `server:<job>`.
 */
export const SERVER_WRITERS = {
  /** The daily purge of trash items past their retention (src/db/trash.ts). */
  purge: "server:purge",
  /** The daily marking of pending actions past their expiry (src/db/pending-actions.ts). */
  expire: "server:expire",
  /** An account's copy to another database (src/db/move-account.ts). */
  move: "server:move",
  /** The benchmarks' seeding (bench/). */
  bench: "server:bench",
  /** A data migration (migrations/). */
  migration: "server:migration",
} as const;
export type ServerWriter = (typeof SERVER_WRITERS)[keyof typeof SERVER_WRITERS];

/** A unique name for one batch's caller row. */
export function serverBatchId(prefix = "srv"): string {
  return `${prefix}_${crypto.randomUUID()}`;
}

/**
 * The caller's two statements as SQL text, for statements run as one file or
 * transaction (`wrangler d1 execute --file` runs a file as one): `in` goes
 * first and `out` last. `batch` names the row (unique per transaction).
 */
export function serverSql(name: ServerWriter, batch: string = serverBatchId(), now = new Date().toISOString()): { in: Sql; out: Sql } {
  return {
    in: { sql: "INSERT INTO call_actor (batch, kind, name, now) VALUES (?, 'server', ?, ?)", params: [batch, name, now] },
    out: { sql: "DELETE FROM call_actor WHERE batch = ?", params: [batch] },
  };
}

/** Statements run as one transaction by the server's writer `name`: its caller recorded first, removed last. */
export function asServerSql(name: ServerWriter, statements: Sql[], now?: string): Sql[] {
  const caller = serverSql(name, serverBatchId(), now);
  return [caller.in, ...statements, caller.out];
}
