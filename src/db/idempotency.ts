/**
 * Idempotency keys: per token and tool, the first result of a call together
 * with the SHA-256 of its canonical arguments, so a retry replays the result
 * and a different call under the same key can be refused. Rows written before
 * the hash existed have none and replay as before.
 */
export interface IdempotencyRecord {
  result: string;
  request_hash: string | null;
}

export interface IdempotencyScope {
  accountId: string;
  tokenId: string;
  tool: string;
  key: string;
}

export function findIdempotent(db: D1Database, s: IdempotencyScope): Promise<IdempotencyRecord | null> {
  return db
    .prepare("SELECT result, request_hash FROM idempotency_keys WHERE account_id = ? AND token_id = ? AND tool = ? AND key = ?")
    .bind(s.accountId, s.tokenId, s.tool, s.key)
    .first<IdempotencyRecord>();
}

/** The record of a first call; in the call's own batch, so a racing retry fails on the primary key and replays. */
export function insertIdempotent(db: D1Database, s: IdempotencyScope, requestHash: string, result: string, now: string): D1PreparedStatement {
  return db
    .prepare("INSERT INTO idempotency_keys (account_id, token_id, tool, key, result, created_at, request_hash) VALUES (?, ?, ?, ?, ?, ?, ?)")
    .bind(s.accountId, s.tokenId, s.tool, s.key, result, now, requestHash);
}

/**
 * The record of a form's one use, written only if the webhook the batch inserts
 * before it exists: a refused insert (the account's limit) leaves the key
 * unused, and a key already recorded fails the batch on the primary key.
 */
export function insertIdempotentForWebhook(db: D1Database, s: IdempotencyScope, webhookId: string, now: string): D1PreparedStatement {
  return db
    .prepare(
      "INSERT INTO idempotency_keys (account_id, token_id, tool, key, result, created_at, request_hash) " +
        "SELECT ?, ?, ?, ?, ?, ?, '' WHERE EXISTS (SELECT 1 FROM webhooks WHERE id = ?)",
    )
    .bind(s.accountId, s.tokenId, s.tool, s.key, JSON.stringify({ webhook_id: webhookId }), now, webhookId);
}

/** The result a record holds between its call's batch and the write of a result that batch read. */
export const PENDING_RESULT = "";

/** Records the result of a call whose batch held its key with PENDING_RESULT. */
export async function recordIdempotent(db: D1Database, s: IdempotencyScope, result: string): Promise<void> {
  await db
    .prepare("UPDATE idempotency_keys SET result = ? WHERE account_id = ? AND token_id = ? AND tool = ? AND key = ? AND result = ''")
    .bind(result, s.accountId, s.tokenId, s.tool, s.key)
    .run();
}

/**
 * Claims a one-time key: true for the first claim, false ever after (the
 * primary key holds it). The console marks a shown-once secret's cookie
 * as shown with it, so a replayed cookie shows nothing.
 */
export async function claimOnce(db: D1Database, s: IdempotencyScope, now: string): Promise<boolean> {
  const r = await db
    .prepare("INSERT OR IGNORE INTO idempotency_keys (account_id, token_id, tool, key, result, created_at, request_hash) VALUES (?, ?, ?, ?, '', ?, '')")
    .bind(s.accountId, s.tokenId, s.tool, s.key, now)
    .run();
  return r.meta.changes === 1;
}
