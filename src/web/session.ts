/**
 * Signing a person in, for every page (this module is the session API the
 * pages, the consent step and the web console share):
 *
 * - `currentSession(c)` → `{ personId, accountId, email, name, csrfToken }` or null.
 *   One indexed D1 lookup, remembered for the rest of the request.
 * - `requireSession()` → middleware: signed out → 302 to /signin with a
 *   same-origin `return_to` of this page (GET), so the person comes back here.
 * - `csrfOk(session, submitted)` → whether a signed-in form's `csrf` field
 *   belongs to this session. Every signed-in form carries
 *   `<input type=hidden name=csrf value={session.csrfToken}>`.
 * - `requireCsrf()` → middleware for signed-in POSTs: signed in, same origin,
 *   and the session's `csrf` value, or a 403 page; the form stays readable
 *   with `c.req.parseBody()`.
 * - `newSession(c, person)` / `endSession(c)` → the D1 statement and cookies.
 *
 * The session id is 32 random bytes, only in an HttpOnly, SameSite=Lax cookie
 * (`__Host-` and Secure on https); D1 keeps its SHA-256 and an expiry. The CSRF
 * token is derived from the id, so a page can't be posted from another session.
 */
import type { MiddlewareHandler } from "hono";
import { getCookie } from "hono/cookie";
import { newSecret } from "../db/people-plans.ts";
import { constantTimeEqualText } from "../domain/passwords.ts";
import { shownName } from "../domain/principal.ts";
import { base64url, hashToken, newSecretOf } from "../domain/tokens.ts";
import { deleteSession, deleteSessionStatement, findSession, insertSession } from "../db/sessions.ts";
import { accountEnv, isSharded, locateNow, locateSecret, shardsOf, throughSession } from "../db/shards.ts";
import { BOOKMARK_SHAPE, closeReadSession, openReadSession } from "../db/read-sessions.ts";
import { envOf, isHttps, originOf, type Session, type WebContext, type WebEnv } from "./context.ts";
import { formRefused } from "./errors.tsx";
import { signInPath } from "./return-to.ts";

export const SESSION_DAYS = 7;
const SESSION_SECONDS = SESSION_DAYS * 86_400;
const SECRET_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** `__Host-` cookies need https; on http (local development only) the plain name. */
export function cookieName(c: WebContext, base: string): string {
  return isHttps(c) ? `__Host-${base}` : base;
}

/** A Set-Cookie value: HttpOnly, SameSite=Lax, Path=/, and Secure on https. */
export function cookie(c: WebContext, base: string, value: string, maxAgeSeconds: number): string {
  return `${cookieName(c, base)}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${isHttps(c) ? "; Secure" : ""}`;
}

async function csrfFor(secret: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`taskgate-csrf:${secret}`));
  return base64url(new Uint8Array(digest));
}

function sessionSecret(c: WebContext): string | null {
  const raw = getCookie(c, cookieName(c, "tg_session"));
  return raw && SECRET_SHAPE.test(raw) ? raw : null;
}

/**
 * An AES-GCM key that only this session's requests derive (HKDF of its cookie
 * secret, for one `purpose`): what a page hands the next one through the
 * browser, sealed with it, opens for this session alone. Null when signed out.
 */
export async function sessionKey(c: WebContext, purpose: string): Promise<CryptoKey | null> {
  const secret = sessionSecret(c);
  if (!secret) return null;
  const base = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), "HKDF", false, ["deriveKey"]);
  const info = new TextEncoder().encode(`taskgate-session:${purpose}`);
  return crypto.subtle.deriveKey({ name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info }, base, { name: "AES-GCM", length: 256 }, false, ["encrypt", "decrypt"]);
}

export async function currentSession(c: WebContext): Promise<Session | null> {
  const known = c.get("session");
  if (known !== undefined) return known;
  const secret = sessionSecret(c);
  let session: Session | null = null;
  if (secret) {
    // The session id carries its account: the rest of this request reads and writes that account's database as envOf(c).DB.
    let shard = await locateSecret(envOf(c), secret, null);
    let own = accountEnv(envOf(c), shard);
    const hash = await hashToken(secret);
    const now = new Date().toISOString();
    let row = await findSession(own.DB, hash, now);
    // A moving account: the directory names the database that holds it whole (the other may hold half a copy).
    if (row?.moving_to && isSharded(envOf(c))) {
      const whole = await locateNow(envOf(c), row.account_id);
      if (whole !== shard) {
        [shard, own] = [whole, accountEnv(envOf(c), whole)];
        row = await findSession(own.DB, hash, now);
      }
    }
    if (row) {
      session = { personId: row.person_id, accountId: row.account_id, email: row.email, name: shownName(row.display_name, row.email), csrfToken: await csrfFor(secret), shard, ...(row.moving_to ? { moving: true } : {}) };
      // The person's reads: from no state older than their latest write anywhere, or than what this browser last saw.
      const reads = openReadSession(own.DB, { accountId: row.account_id, holder: row.holder, bookmark: row.bookmark }, browserBookmark(c));
      c.set("reads", reads);
      c.set("accountEnv", throughSession(own, reads.db));
    }
  }
  c.set("session", session);
  return session;
}

const READS_COOKIE = "tg_reads";

/** The newest state this browser has seen (its cookie), so its pages never show an older one. */
function browserBookmark(c: WebContext): string | null {
  const raw = getCookie(c, cookieName(c, READS_COOKIE));
  return raw && BOOKMARK_SHAPE.test(raw) ? raw : null;
}

/**
 * After a signed-in page or form: the person's session is closed (a write's
 * bookmark stored for their next request anywhere, after the response), and
 * the browser keeps the newest state it saw, for the session's length.
 */
export function closeReads(): MiddlewareHandler<WebEnv> {
  return async function closeReads(c, next) {
    await next();
    const reads = c.get("reads");
    if (!reads) return;
    const seen = browserBookmark(c);
    const b = closeReadSession(reads, (p) => c.executionCtx.waitUntil(p));
    if (!b || (seen && seen >= b)) return;
    const res = new Response(c.res.body, c.res);
    res.headers.append("set-cookie", cookie(c, READS_COOKIE, b, SESSION_SECONDS));
    c.res = res;
  };
}

/** Signed out → 302 to /signin?return_to=<this page>; signed in → on. */
export function requireSession(): MiddlewareHandler<WebEnv> {
  return async function requireSession(c, next) {
    if (await currentSession(c)) return next();
    const url = new URL(c.req.url);
    return c.redirect(signInPath(c.req.method === "GET" ? url.pathname + url.search : "/"), 302);
  };
}

/** Signed-in form posts only: a session, this origin, and this session's `csrf` value; otherwise a page that says so. */
export function requireCsrf(): MiddlewareHandler<WebEnv> {
  return async function requireCsrf(c, next) {
    if (c.req.method !== "POST") return next();
    const session = await currentSession(c);
    if (!session) return c.redirect(signInPath("/"), 303);
    const form = await c.req.parseBody();
    if (!sameOrigin(c) || !csrfOk(session, form.csrf)) {
      return formRefused(session);
    }
    return next();
  };
}

/** Whether the posted `csrf` value is this session's. */
export function csrfOk(session: Session, submitted: unknown): boolean {
  return typeof submitted === "string" && constantTimeEqualText(submitted, session.csrfToken);
}

/** A new session for a person who just proved who they are: the statement to run (in envOf(c).DB, the person's account's database) and the cookie to set. */
export async function newSession(
  c: WebContext,
  person: { id: string; account_id: string },
): Promise<{ statement: D1PreparedStatement; setCookie: string }> {
  const secret = newSecretOf(person.account_id);
  const now = new Date();
  const statement = insertSession(envOf(c).DB, {
    hash: await hashToken(secret),
    personId: person.id,
    accountId: person.account_id,
    now: now.toISOString(),
    expiresAt: new Date(now.getTime() + SESSION_SECONDS * 1000).toISOString(),
  });
  return { statement, setCookie: cookie(c, "tg_session", secret, SESSION_SECONDS) };
}

/**
 * Ends the session this browser holds now, if any, when a new sign-in replaces
 * it, wherever it lives: that session may be another person's, of an account in
 * another database (or one moving between two). Its row is deleted by hash in
 * every database; the new session's database gets it in its own batch (`here`),
 * the others are run by `elsewhere`.
 */
export async function endReplacedSession(c: WebContext): Promise<{ here: D1PreparedStatement[]; elsewhere: () => Promise<unknown> }> {
  const secret = sessionSecret(c);
  if (!secret) return { here: [], elsewhere: async () => undefined };
  const hash = await hashToken(secret);
  const others = shardsOf(envOf(c)).filter((s) => s.db !== envOf(c).DB);
  return {
    here: [deleteSessionStatement(envOf(c).DB, hash)],
    elsewhere: () => Promise.all(others.map((s) => deleteSessionStatement(s.db, hash).run())),
  };
}

/**
 * Ends this browser's session (the row and the cookie); returns the Set-Cookie
 * that clears it. The row is deleted in every database: during a move the
 * session has a copy in both, and a sign-out must end each.
 */
export async function endSession(c: WebContext): Promise<string> {
  const secret = sessionSecret(c);
  if (secret) {
    const hash = await hashToken(secret);
    await Promise.all(shardsOf(envOf(c)).map((s) => deleteSession(s.db, hash)));
  }
  c.set("session", null);
  return cookie(c, "tg_session", "", 0);
}

/**
 * Forms shown before sign-in (sign-in, password setup) are protected by a
 * double-submit token: a random value in a SameSite=Lax cookie and in the
 * form. A cross-site post carries neither the cookie nor the value.
 */
export function formToken(c: WebContext): { value: string; setCookie: string | null } {
  const existing = getCookie(c, cookieName(c, "tg_form"));
  if (existing && SECRET_SHAPE.test(existing)) return { value: existing, setCookie: null };
  const value = newSecret();
  return { value, setCookie: cookie(c, "tg_form", value, 86_400) };
}

export function formTokenOk(c: WebContext, submitted: unknown): boolean {
  const existing = getCookie(c, cookieName(c, "tg_form"));
  return typeof submitted === "string" && !!existing && SECRET_SHAPE.test(existing) && constantTimeEqualText(submitted, existing);
}

/** Posts from another site are refused: a browser's Origin (or Sec-Fetch-Site) must say it is this one. */
export function sameOrigin(c: WebContext): boolean {
  const origin = c.req.header("origin");
  if (origin && origin !== "null") return origin === originOf(c);
  if (origin === "null") return false;
  const site = c.req.header("sec-fetch-site");
  return !site || site === "same-origin" || site === "none";
}
