/**
 * The admin CLI's token statements (it runs them through `wrangler d1
 * execute`): the account's tg_ tokens and OAuth grants, and revoking one.
 * Revoking in D1 is enough: every request and every refresh checks the row.
 */
import type { Sql } from "./provisioning.ts";

export function listTokensSql(accountId: string): Sql {
  return {
    sql: `SELECT t.id, CASE WHEN t.client_id IS NULL THEN 'token' ELSE 'oauth' END AS source, t.label, t.kind, t.scope, a.name AS agent,
                 CASE WHEN t.client_id IS NULL THEN t.prefix END AS prefix, t.client_name, t.client_id,
                 t.created_at, t.expires_at, t.revoked_at, t.last_used_at
            FROM tokens t LEFT JOIN agents a ON a.id = t.agent_id WHERE t.account_id = ? ORDER BY t.created_at, t.id`,
    params: [accountId],
  };
}

export function findTokenSql(id: string): Sql {
  return { sql: "SELECT revoked_at, client_id FROM tokens WHERE id = ?", params: [id] };
}

export function revokeTokenSql(id: string, now: string): Sql {
  return { sql: "UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", params: [now, id] };
}
