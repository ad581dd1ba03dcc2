/**
 * Webhook endpoints from the admin CLI, with the same planning and SQL as the
 * Worker (src/db/webhooks.ts, bound to D1 by src/db/webhooks-d1.ts). A local database accepts any URL; --remote
 * (production) only https://.
 */
import { ConnectorKeyError } from "../src/domain/crypto.ts";
import { planWebhook, toSummary, webhookSql } from "../src/db/webhooks.ts";
import { WEBHOOK_LIMIT_REACHED, WebhookInputError } from "../src/domain/webhooks.ts";
import { execute, findInDatabases, query, type Target } from "./lib/d1.ts";
import { accountMustExist, required, UsageError, type Values } from "./lib/cli.ts";
import { connectorKey } from "./admin-connect.ts";

export async function addWebhookCommand(values: Values, target: Target): Promise<unknown> {
  const accountId = required(values, "account");
  const url = required(values, "url");
  const events = required(values, "events");
  let plan;
  try {
    plan = await planWebhook({ accountId, url, events, key: connectorKey(target), allowHttp: !target.remote }, new Date().toISOString());
  } catch (e) {
    if (e instanceof WebhookInputError) throw new UsageError(`--${e.message}`);
    if (e instanceof ConnectorKeyError) throw new Error(e.message);
    throw e;
  }
  accountMustExist(target, accountId);
  execute(target, plan.statements);
  if (query(target, webhookSql.find(plan.webhook.id)).length === 0) throw new Error(`nothing was added: ${WEBHOOK_LIMIT_REACHED} (list-webhooks, remove-webhook)`);
  console.error("Store this signing secret now: it is shown only once. Receivers verify each delivery with it (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature).");
  const { id, events: types, created_at } = plan.webhook;
  return { id, account_id: accountId, url: plan.webhook.url, events: types, secret: plan.secret, created_at };
}

export function listWebhooksCommand(values: Values, target: Target): unknown {
  const accountId = required(values, "account");
  accountMustExist(target, accountId);
  return query<Parameters<typeof toSummary>[0]>(target, webhookSql.list(accountId)).map(toSummary);
}

export function removeWebhookCommand(values: Values, target: Target): unknown {
  const id = required(values, "id");
  const found = findInDatabases<{ id: string; account_id: string }>(target, webhookSql.find(id));
  if (!found) throw new UsageError(`no webhook ${id}; list-webhooks --account ID shows the ids`);
  execute(found.target, webhookSql.remove(found.row.account_id, id));
  return { id, account_id: found.row.account_id, removed: true };
}
