/**
 * From a stored connector row to a working adapter: the key, decryption, the
 * shape check, and the error discipline around every upstream call (no
 * message may carry a credential; a rejected credential is recorded on the
 * row so list_connectors can say so).
 */
import { connectorSql, type ConnectorRow, type ConnectorSummaryRow } from "../db/connectors.ts";
import type { Sql } from "../db/provisioning.ts";
import { ToolError } from "../domain/errors.ts";
import type { Env } from "../env.ts";
import { CredentialsError, isDrive, parseCredentials, secretsOf, tokenOf } from "./credentials.ts";
import { ConnectorKeyError, decryptCredentials, importConnectorKey } from "../domain/crypto.ts";
import { driveConnector, driveRules } from "./drive.ts";
import { connectHint } from "./http.ts";
import { notionConnector, notionRules } from "./notion.ts";
import { slackConnector, slackRules } from "./slack.ts";
import { PROVIDER_NAMES, type Provider } from "../domain/providers.ts";
import type { Connector, IdRules } from "./types.ts";

export const RULES: Record<Provider, IdRules> = { drive: driveRules, slack: slackRules, notion: notionRules };

export function prepare(db: D1Database, s: Sql): D1PreparedStatement {
  return db.prepare(s.sql).bind(...s.params);
}

export async function connectorRows(db: D1Database, accountId: string): Promise<ConnectorRow[]> {
  return (await prepare(db, connectorSql.all(accountId)).all<ConnectorRow>()).results;
}

export async function connectorSummaries(db: D1Database, accountId: string): Promise<ConnectorSummaryRow[]> {
  return (await prepare(db, connectorSql.summaries(accountId)).all<ConnectorSummaryRow>()).results;
}

/** The AES key, or a tool error telling the operator what to set. */
export async function requireKey(env: Env): Promise<CryptoKey> {
  try {
    return await importConnectorKey(env.CONNECTOR_KEY);
  } catch (e) {
    if (e instanceof ConnectorKeyError) throw new ToolError("not_connected", e.message);
    throw e;
  }
}

export interface OpenConnector {
  row: ConnectorRow;
  connector: Connector;
  secrets: string[];
}

export async function openConnector(key: CryptoKey, row: ConnectorRow): Promise<OpenConnector> {
  const unusable = (why: string) =>
    new ToolError(
      "not_connected",
      `The stored ${PROVIDER_NAMES[row.provider]} credentials ${why}; reconnect the app with \`${connectHint(row.provider, row.account_id)}\`.`,
    );
  let plaintext: string;
  try {
    plaintext = await decryptCredentials(key, row.account_id, row.provider, row.credentials);
  } catch {
    throw unusable("cannot be opened with the current CONNECTOR_KEY (was the key changed?)");
  }
  let credentials;
  try {
    credentials = parseCredentials(row.provider, JSON.parse(plaintext));
  } catch (e) {
    if (e instanceof CredentialsError || e instanceof SyntaxError) throw unusable("are not in the expected shape");
    throw e;
  }
  const info = { connectorId: row.id, accountId: row.account_id, version: row.updated_at };
  const connector =
    row.provider === "drive" && isDrive(credentials)
      ? driveConnector(credentials, info)
      : row.provider === "slack"
        ? slackConnector(tokenOf(credentials), info)
        : notionConnector(tokenOf(credentials), info);
  return { row, connector, secrets: secretsOf(credentials) };
}

function redact(message: string, secrets: string[]): string {
  let out = message;
  for (const s of secrets) out = out.split(s).join("[redacted]");
  return out;
}

/**
 * Runs one upstream operation. A rejected credential marks the row
 * `auth_failed` with the message; the next success marks it `connected`
 * again (a write only when the state changes, so the happy path pays nothing).
 */
export async function upstream<T>(db: D1Database, open: OpenConnector, op: (c: Connector) => Promise<T>): Promise<T> {
  const { row } = open;
  const mark = async (status: string, lastError: string | null) => {
    try {
      await prepare(db, connectorSql.mark(row.account_id, row.id, row.updated_at, status, lastError)).run();
    } catch (e) {
      console.error(JSON.stringify({ level: "warn", msg: "could not record connector status", connector: row.id, error: String(e) }));
    }
  };
  let result: T;
  try {
    result = await op(open.connector);
  } catch (e) {
    if (e instanceof ToolError) {
      const safe = new ToolError(e.code, redact(e.message, open.secrets));
      if (safe.code === "not_connected") await mark("auth_failed", safe.message.slice(0, 500));
      throw safe;
    }
    throw new Error(redact(e instanceof Error ? e.message : String(e), open.secrets));
  }
  if (row.status !== "connected") await mark("connected", null);
  return result;
}
