/**
 * Every SQL statement about connectors, as plain Sql values (no D1 types), so
 * that the Worker binds them and the admin CLI renders them for wrangler from
 * one source. The credentials column only ever holds a ciphertext envelope.
 */
import type { Sql } from "./provisioning.ts";
import type { Provider } from "../domain/providers.ts";

export interface ConnectorRow {
  id: string;
  account_id: string;
  provider: Provider;
  credentials: string;
  status: string;
  last_error: string | null;
  created_at: string;
  updated_at: string;
}

/** The columns lists may show: everything but the credentials. */
export type ConnectorSummaryRow = Omit<ConnectorRow, "credentials" | "account_id">;

export const connectorSql = {
  summaries(accountId: string): Sql {
    return {
      sql: "SELECT id, provider, status, last_error, created_at, updated_at FROM connectors WHERE account_id = ? ORDER BY provider",
      params: [accountId],
    };
  },
  all(accountId: string): Sql {
    return {
      sql: "SELECT id, account_id, provider, credentials, status, last_error, created_at, updated_at FROM connectors WHERE account_id = ? ORDER BY provider",
      params: [accountId],
    };
  },
  idOf(accountId: string, provider: Provider): Sql {
    return { sql: "SELECT id FROM connectors WHERE account_id = ? AND provider = ?", params: [accountId, provider] };
  },
  /** Connecting again replaces the credentials and clears a recorded failure; the id stays. */
  upsert(c: { id: string; accountId: string; provider: Provider; envelope: string; now: string }): Sql {
    return {
      sql: `INSERT INTO connectors (id, account_id, provider, credentials, status, last_error, created_at, updated_at)
            VALUES (?, ?, ?, ?, 'connected', NULL, ?, ?)
            ON CONFLICT (account_id, provider) DO UPDATE SET
              credentials = excluded.credentials, status = 'connected', last_error = NULL, updated_at = excluded.updated_at`,
      params: [c.id, c.accountId, c.provider, c.envelope, c.now, c.now],
    };
  },
  remove(accountId: string, id: string): Sql {
    return { sql: "DELETE FROM connectors WHERE account_id = ? AND id = ?", params: [accountId, id] };
  },
  /** Bookkeeping after an upstream answer; matches only the credentials it was about, so a fresh connect is never overwritten. */
  mark(accountId: string, id: string, version: string, status: string, lastError: string | null): Sql {
    return {
      sql: "UPDATE connectors SET status = ?, last_error = ? WHERE account_id = ? AND id = ? AND updated_at = ?",
      params: [status, lastError, accountId, id, version],
    };
  },
};
