import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { connectorSql } from "../src/db/connectors.ts";
import { CredentialsError, readCredentialsJson } from "../src/connectors/credentials.ts";
import { ConnectorKeyError, importConnectorKey, keyFromDotenv } from "../src/domain/crypto.ts";
import { planConnector } from "../src/connectors/plan.ts";
import { PROVIDERS } from "../src/domain/providers.ts";
import { execute, query, ROOT, type Target } from "./lib/d1.ts";
import { accountMustExist, oneOf, required, UsageError, type Values } from "./lib/cli.ts";

/**
 * CONNECTOR_KEY from the environment, else from .dev.vars in the project root,
 * else (with --persist-to DIR) from DIR/.dev.vars, the one `npm start -- --persist-to DIR` made.
 */
export function connectorKey(target: Target): string {
  const fromEnv = process.env.CONNECTOR_KEY?.trim();
  if (fromEnv) return fromEnv;
  const devVars = [join(ROOT, ".dev.vars"), ...(target.persistTo ? [join(target.persistTo, ".dev.vars")] : [])].find((f) => existsSync(f));
  const fromFile = devVars ? keyFromDotenv(readFileSync(devVars, "utf8")) : undefined;
  if (!fromFile) {
    throw new Error(
      "CONNECTOR_KEY is not set: export CONNECTOR_KEY (the same value as the Worker's secret; `openssl rand -base64 32` makes one), or run `npm start` once to create .dev.vars with a key.",
    );
  }
  if (target.remote) console.error("Using CONNECTOR_KEY from .dev.vars: it must equal the production secret (wrangler secret put CONNECTOR_KEY), or the Worker cannot open what is stored with it.");
  return fromFile;
}

/** `connect --account ID --provider drive|slack|notion --credentials-file F`: stores encrypted app credentials. */
export async function connectCommand(values: Values, target: Target): Promise<unknown> {
  const accountId = required(values, "account");
  const provider = oneOf(values, "provider", PROVIDERS);
  const file = required(values, "credentials-file");
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    throw new UsageError(`cannot read --credentials-file ${file}`);
  }
  let credentials;
  try {
    credentials = readCredentialsJson(provider, text);
  } catch (e) {
    if (e instanceof CredentialsError) throw new UsageError(`${file}: ${e.message}`);
    throw e;
  }
  const key = connectorKey(target);
  try {
    await importConnectorKey(key);
  } catch (e) {
    if (e instanceof ConnectorKeyError) throw new Error(e.message);
    throw e;
  }
  accountMustExist(target, accountId);
  const existing = query<{ id: string }>(target, connectorSql.idOf(accountId, provider))[0]?.id ?? null;
  const plan = await planConnector({ accountId, provider, credentials, key, existingId: existing }, new Date().toISOString());
  execute(target, plan.statements);
  return { id: plan.id, account_id: accountId, provider, status: "connected", replaced: existing !== null };
}
