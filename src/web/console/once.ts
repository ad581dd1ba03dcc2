/**
 * What makes a console form that creates something single-use, and the page
 * after it a plain GET:
 *
 * - each render of such a form carries a fresh `form_id`; the create's own D1
 *   batch records it (idempotency_keys, under the person's web principal), so
 *   the same form sent again (a second click, Back and resend) fails on that
 *   key and creates nothing more;
 * - the answer to the POST is a 303 to the page, and what must be shown once
 *   (a new secret) rides along in a cookie sealed with a key of this session,
 *   living a minute and cleared by the page that shows it: a reload shows the
 *   page without it. The sealed value carries a one-time key that the page
 *   claims in D1 before it shows anything, so the same cookie sent again
 *   (replayed within its minute, in the same session) shows nothing.
 */
import { getCookie } from "hono/cookie";
import { openText, sealText } from "../../domain/crypto.ts";
import { claimOnce, type IdempotencyScope } from "../../db/idempotency.ts";
import type { Principal } from "../../domain/principal.ts";
import { envOf, type WebContext } from "../context.ts";
import { cookie, cookieName, currentSession, sessionKey } from "../session.ts";
import { WEB_TOKEN_PREFIX } from "./respond.ts";
import { one, type FormFields } from "./actions.ts";

const FORM_ID = /^[0-9a-f-]{36}$/;

/** The hidden field's value for one render of a form. */
export const newFormId = (): string => crypto.randomUUID();

/** The form's one-time key as an idempotency scope of the person's web principal, or null when the form has none (an older page). */
export function formOnce(p: Principal, form: FormFields, what: string): IdempotencyScope | null {
  const id = one(form, "form_id");
  return id && FORM_ID.test(id) ? { accountId: p.accountId, tokenId: p.tokenId, tool: what, key: id } : null;
}

/** Whether a batch failed because its form's key was already recorded. */
export function formAlreadyUsed(e: unknown): boolean {
  return e instanceof Error && e.message.includes("idempotency_keys");
}

type Shown = "token" | "webhook";
const COOKIE: Record<Shown, string> = { token: "tg_new_token", webhook: "tg_new_webhook" };
const SECONDS = 60;

/** The Set-Cookie that carries `value` (sealed to this session) to the next page. */
export async function showOnNextPage(c: WebContext, what: Shown, value: unknown): Promise<string> {
  const key = await sessionKey(c, `shown-once:${what}`);
  if (!key) throw new Error("showOnNextPage needs a signed-in session");
  return cookie(c, COOKIE[what], await sealText(key, what, JSON.stringify({ once: crypto.randomUUID(), value })), SECONDS);
}

/** What the last POST left to show, if it opens for this session, and the Set-Cookie that clears it (a reload shows nothing). */
export async function takeShown<T>(c: WebContext, what: Shown): Promise<{ value: T | null; clear: string | null }> {
  const raw = getCookie(c, cookieName(c, COOKIE[what]));
  if (!raw) return { value: null, clear: null };
  const clear = cookie(c, COOKIE[what], "", 0);
  const key = await sessionKey(c, `shown-once:${what}`);
  const session = await currentSession(c);
  let sealed: { once?: unknown; value?: T };
  try {
    if (!key || !session) return { value: null, clear };
    sealed = JSON.parse(await openText(key, what, raw)) as { once?: unknown; value?: T };
  } catch {
    return { value: null, clear };
  }
  if (typeof sealed.once !== "string" || sealed.value === undefined) return { value: null, clear };
  const scope = { accountId: session.accountId, tokenId: `${WEB_TOKEN_PREFIX}${session.personId}`, tool: `shown-once:${what}`, key: sealed.once };
  return { value: (await claimOnce(envOf(c).DB, scope, new Date().toISOString())) ? sealed.value : null, clear };
}
