/** GET/POST /setup: a person sets a password through a one-time link, and is signed in. */
import { accountEnv, locateSecret } from "../db/shards.ts";
import type { Hono } from "hono";
import { hashPassword, passwordProblem, PASSWORD_MIN } from "../domain/passwords.ts";
import { hashToken } from "../domain/tokens.ts";
import { completeSetup, findSetupLink, SetupLinkGone, type SetupLinkRow } from "../db/people.ts";
import { envOf, type WebContext, type WebEnv } from "./context.ts";
import { ErrorPage, Layout, Notice } from "./layout.tsx";
import { MOVING_HINT, MOVING_MESSAGE } from "./errors.tsx";
import { page, redirect } from "./render.ts";
import { endReplacedSession, formToken, formTokenOk, newSession, sameOrigin } from "./session.ts";

const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;
const ASK_AGAIN = "Ask whoever runs this Taskgate for a new link (npm run admin -- invite --account … --email …).";

function SetupPage(props: { csrf: string; token: string; email: string; resetting: boolean; error?: string }) {
  return (
    <Layout title="Set your password">
      <section class="card">
        <h1>{props.resetting ? "Choose a new password" : "Set your password"}</h1>
        <p>
          For <strong>{props.email}</strong>. Use at least {PASSWORD_MIN} characters; afterwards you are signed in.
        </p>
        {props.error ? <Notice kind="error">{props.error}</Notice> : null}
        <form method="post" action="/setup">
          <input type="hidden" name="csrf" value={props.csrf} />
          <input type="hidden" name="token" value={props.token} />
          <input type="hidden" name="email" value={props.email} autocomplete="username" />
          <label for="password">Password</label>
          <input id="password" name="password" type="password" autocomplete="new-password" minlength={PASSWORD_MIN} required />
          <label for="confirm">Repeat password</label>
          <input id="confirm" name="confirm" type="password" autocomplete="new-password" minlength={PASSWORD_MIN} required />
          <div class="actions">
            <button type="submit">Set password</button>
          </div>
        </form>
      </section>
    </Layout>
  );
}

type LinkCheck = { ok: true; link: SetupLinkRow; hash: string } | { ok: false; response: Promise<Response> };

function refused(status: number, title: string, message: string): LinkCheck {
  return { ok: false, response: page(<ErrorPage title={title} message={message} hint={ASK_AGAIN} />, { status }) };
}

/** The link behind a token, if it can still be used; otherwise the page that says why not. */
async function lookup(c: WebContext, raw: unknown): Promise<LinkCheck> {
  if (typeof raw !== "string" || !TOKEN_SHAPE.test(raw)) {
    return refused(400, "This setup link is incomplete", "The link has no valid token in it. Open the whole link as it was given to you.");
  }
  const hash = await hashToken(raw);
  // The link carries its account: the rest of this request uses that account's database as envOf(c).DB.
  c.set("accountEnv", accountEnv(envOf(c), await locateSecret(envOf(c), raw, null)));
  const link = await findSetupLink(envOf(c).DB, hash);
  if (!link) return refused(404, "This setup link is not valid", "No setup link matches it: it may have been replaced by a newer one, or mistyped.");
  if (link.used_at) return refused(410, "This setup link was already used", "Each link works once. Sign in with the password you set, or ask for a new link.");
  if (Date.parse(link.expires_at) <= Date.now()) {
    return refused(410, "This setup link expired", `It was valid until ${link.expires_at.slice(0, 16).replace("T", " ")} UTC; links work for 7 days.`);
  }
  return { ok: true, link, hash };
}

export function setupRoutes(web: Hono<WebEnv>): void {
  web.get("/setup", async (c) => {
    const token = c.req.query("token");
    const found = await lookup(c, token);
    if (!found.ok) return found.response;
    const form = formToken(c);
    return page(<SetupPage csrf={form.value} token={token as string} email={found.link.email} resetting={found.link.has_password === 1} />, {
      cookies: [form.setCookie],
    });
  });

  web.post("/setup", async (c) => {
    const form = await c.req.parseBody();
    const found = await lookup(c, form.token);
    if (!found.ok) return found.response;
    const token = form.token as string;
    const { link } = found;
    const again = (status: number, error: string, headers: Record<string, string> = {}) => {
      const t = formToken(c);
      return page(<SetupPage csrf={t.value} token={token} email={link.email} resetting={link.has_password === 1} error={error} />, {
        status,
        cookies: [t.setCookie],
        headers,
      });
    };
    if (!sameOrigin(c) || !formTokenOk(c, form.csrf)) return again(403, "This form expired or was not sent from this site. Type your password again.");
    const password = typeof form.password === "string" ? form.password : "";
    const confirm = typeof form.confirm === "string" ? form.confirm : "";
    const problem = passwordProblem(password, confirm);
    if (problem) return again(400, problem);
    if (link.moving_to) return again(503, `${MOVING_MESSAGE} ${MOVING_HINT}`, { "retry-after": "60" });

    const session = await newSession(c, { id: link.person_id, account_id: link.account_id });
    // The session this browser held (maybe another person's, in another database) ends wherever it lives.
    const previous = await endReplacedSession(c);
    try {
      await completeSetup(
        envOf(c).DB,
        { hash: found.hash, personId: link.person_id, accountId: link.account_id, passwordHash: await hashPassword(password), now: new Date().toISOString() },
        [...previous.here, session.statement],
      );
      await previous.elsewhere();
    } catch (e) {
      if (e instanceof SetupLinkGone) {
        return page(<ErrorPage title="This setup link was already used" message="Each link works once; it was used a moment ago." hint={ASK_AGAIN} />, { status: 410 });
      }
      throw e;
    }
    return redirect("/", { cookies: [session.setCookie] });
  });
}
