/**
 * Connecting an app, as statements: the admin CLI renders them for wrangler,
 * the tests bind them to D1. The credentials exist in clear only in memory
 * here; what leaves is the AES-GCM envelope.
 */
import { connectorSql } from "../db/connectors.ts";
import type { Sql } from "../db/provisioning.ts";
import { ID_PREFIX, newId } from "../domain/ids.ts";
import { parseCredentials } from "./credentials.ts";
import { encryptCredentials, importConnectorKey } from "../domain/crypto.ts";
import type { Provider } from "../domain/providers.ts";

export interface ConnectorRequest {
  accountId: string;
  provider: Provider;
  /** Checked with parseCredentials before anything is encrypted. */
  credentials: unknown;
  /** CONNECTOR_KEY (base64 of 32 bytes). */
  key: string;
  /** The id of the existing connector of this account and provider, when reconnecting. */
  existingId?: string | null;
}

export async function planConnector(req: ConnectorRequest, now: string): Promise<{ id: string; statements: Sql[] }> {
  const credentials = parseCredentials(req.provider, req.credentials);
  const key = await importConnectorKey(req.key);
  const envelope = await encryptCredentials(key, req.accountId, req.provider, JSON.stringify(credentials));
  const id = req.existingId ?? newId(ID_PREFIX.connector);
  return { id, statements: [connectorSql.upsert({ id, accountId: req.accountId, provider: req.provider, envelope, now })] };
}
