/**
 * Webhook endpoints from the console. Webhooks are not tools: the page calls
 * the db operations (createWebhook, listWebhooks, removeWebhook) with the
 * checks the admin CLI shares (planWebhook: the URL rule and the event
 * list), and http:// only where the Worker delivers to it (ALLOW_HTTP_WEBHOOKS).
 * The signing secret is shown once, on the page right after adding (once.ts).
 */
import { ConnectorKeyError } from "../../domain/crypto.ts";
import { createWebhook, removeWebhook } from "../../db/webhooks-d1.ts";
import { WebhookInputError, type EventSelection } from "../../domain/webhooks.ts";
import { localDevelopment, type Env } from "../../env.ts";
import type { Principal } from "../../domain/principal.ts";
import { one, type FormFields } from "./actions.ts";
import { formAlreadyUsed, formOnce } from "./once.ts";

export interface NewWebhook {
  id: string;
  url: string;
  /** Every box ticked is `all`: the events a later version adds reach it too. */
  events: EventSelection;
  secret: string;
}

const WEBHOOK_ID = /^whk_[0-9a-z]{16}$/;

export async function addWebhookFromForm(env: Env, p: Principal, form: FormFields): Promise<NewWebhook | { error: string }> {
  const once = formOnce(p, form, "add_webhook");
  if (!once) return { error: "This webhook form is from an older page: nothing was added. Fill in the form below again." };
  try {
    const { webhook, secret } = await createWebhook(env.DB, {
      accountId: p.accountId,
      url: one(form, "url") ?? "",
      events: (form.events ?? []).join(","),
      key: env.CONNECTOR_KEY,
      allowHttp: localDevelopment(env),
    }, once);
    return { id: webhook.id, url: webhook.url, events: webhook.events, secret };
  } catch (e) {
    if (formAlreadyUsed(e)) {
      return {
        error:
          "This form already added its webhook, and its signing secret was shown once, when it was added; nothing more was added. " +
          "If the secret is lost, remove that webhook below and add it again.",
      };
    }
    if (e instanceof WebhookInputError) {
      const why = e.message.replace(/^url:/, "URL:").replace(/^events:/, "Events:");
      return { error: `Nothing was added. ${why.charAt(0).toUpperCase()}${why.slice(1)}` };
    }
    if (e instanceof ConnectorKeyError) return { error: `Nothing was added: ${e.message}` };
    throw e;
  }
}

export async function removeWebhookFromForm(env: Env, accountId: string, form: FormFields): Promise<{ ok: string } | { error: string }> {
  const id = one(form, "webhook_id") ?? "";
  const removed = WEBHOOK_ID.test(id) && (await removeWebhook(env.DB, accountId, id));
  if (!removed) return { error: `There is no webhook ${id.slice(0, 40)} in this account; nothing was removed.` };
  return { ok: `Removed webhook ${id}: it receives no more events.` };
}
