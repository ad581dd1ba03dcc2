/** GET/POST /signin and POST /signout. */
import type { Hono } from "hono";
import { normalizeEmail } from "../db/people-plans.ts";
import { verifyAgainstNothing, verifyPassword } from "../domain/passwords.ts";
import { selectPersonByEmail, type PersonRow } from "../db/people.ts";
import { MOVING_HINT, MOVING_MESSAGE } from "./errors.tsx";
import { accountEnv, locate } from "../db/shards.ts";
import { envOf, type WebContext, type WebEnv } from "./context.ts";
import { Layout, Notice } from "./layout.tsx";
import { page, redirect } from "./render.ts";
import { safeReturnTo } from "./return-to.ts";
import { currentSession, endReplacedSession, endSession, formToken, formTokenOk, newSession, requireCsrf, sameOrigin } from "./session.ts";
import { blockedUntil, failureStatements, refusalSummary, signInKeys, successStatements, throttleStatements, whenAgain, type Block, type KeyName } from "./throttle.ts";
import { readBatch } from "../db/batch.ts";
import { insertSignInRefusal } from "../db/sessions.ts";
import { ID_PREFIX, newId } from "../domain/ids.ts";

function SignInPage(props: { csrf: string; returnTo: string; email?: string; error?: string; forApp?: boolean }) {
  return (
    <Layout title="Sign in">
      <section class="card">
        <h1>Sign in to Taskgate</h1>
        {props.forApp ? <p class="muted">An app asked to connect to your Taskgate account. Sign in to decide what it may do.</p> : null}
        {props.error ? <Notice kind="error">{props.error}</Notice> : null}
        <form method="post" action="/signin">
          <input type="hidden" name="csrf" value={props.csrf} />
          <input type="hidden" name="return_to" value={props.returnTo} />
          <label for="email">Email</label>
          <input id="email" name="email" type="email" autocomplete="username" required value={props.email ?? ""} />
          <label for="password">Password</label>
          <input id="password" name="password" type="password" autocomplete="current-password" required />
          <div class="actions">
            <button type="submit">Sign in</button>
          </div>
        </form>
      </section>
    </Layout>
  );
}

async function signInForm(c: WebContext, o: { returnTo: string; status?: number; email?: string; error?: string; headers?: Record<string, string> }) {
  const token = formToken(c);
  return page(<SignInPage csrf={token.value} returnTo={o.returnTo} email={o.email} error={o.error} forApp={o.returnTo.startsWith("/authorize")} />, {
    status: o.status,
    cookies: [token.setCookie],
    headers: o.headers,
  });
}

const WRONG = "That email and password do not match. Check both and try again.";

export function signInRoutes(web: Hono<WebEnv>): void {
  web.get("/signin", async (c) => {
    const returnTo = safeReturnTo(c.req.query("return_to"));
    if (await currentSession(c)) return redirect(returnTo, { status: 302 });
    return signInForm(c, { returnTo });
  });

  web.post("/signin", async (c) => {
    const form = await c.req.parseBody();
    const returnTo = safeReturnTo(form.return_to);
    const email = normalizeEmail(typeof form.email === "string" ? form.email : "");
    const password = typeof form.password === "string" ? form.password : "";
    if (!sameOrigin(c) || !formTokenOk(c, form.csrf)) {
      return signInForm(c, { returnTo, email, status: 403, error: "This sign-in form expired or was not sent from this site. Sign in again." });
    }
    if (!email || !password) return signInForm(c, { returnTo, email, status: 400, error: "Enter your email and your password." });

    // Throttling lives in the first database; the person in their account's (the same one unless the deployment has several).
    const db = envOf(c).DB;
    const own = accountEnv(envOf(c), await locate(envOf(c), { kind: "email", key: email }));
    const apart = own.DB !== db;
    const nowMs = Date.now();
    const now = new Date(nowMs).toISOString();
    const address = c.req.header("cf-connecting-ip") ?? "unknown";
    const keys = await signInKeys(email, address);
    const throttles = throttleStatements(db, keys, nowMs);
    let counts: Record<KeyName, unknown[]>;
    let person: PersonRow | undefined;
    if (apart) {
      counts = await readBatch(db, throttles);
      person = (await selectPersonByEmail(own.DB, email).first<PersonRow>()) ?? undefined;
    } else {
      const read = await readBatch(db, { ...throttles, person: selectPersonByEmail(db, email) });
      counts = read;
      person = read.person[0] as PersonRow | undefined;
    }
    const block = blockedUntil(counts, nowMs);
    // A refused attempt on a person's email is in their account's activity (the throttled ones once per failure that caused the wait).
    const refusal = (reason: "wrong" | Block) =>
      person &&
      insertSignInRefusal(own.DB, {
        id: newId(ID_PREFIX.activity),
        accountId: person.account_id,
        personId: person.id,
        tool: reason === "wrong" ? "sign_in_failed" : "sign_in_throttled",
        summary: refusalSummary(email, address, reason, nowMs),
        now,
        after: reason === "wrong" ? undefined : reason.lastFailure,
      });
    if (block) {
      const row = refusal(block);
      if (row) await row.run();
      return signInForm(c, {
        returnTo,
        email,
        status: 429,
        error: `Too many failed sign-ins. Try again ${whenAgain(block.until, nowMs)}.`,
        headers: { "retry-after": String(Math.max(1, Math.ceil((block.until.getTime() - nowMs) / 1000))) },
      });
    }
    const ok = person?.password_hash ? await verifyPassword(password, person.password_hash) : await verifyAgainstNothing(password);
    if (!ok || !person) {
      const row = refusal("wrong");
      if (row && apart) await Promise.all([db.batch(failureStatements(db, keys, now)), row.run()]);
      else await db.batch([...failureStatements(db, keys, now), ...(row ? [row] : [])]);
      return signInForm(c, { returnTo, email, status: 401, error: WRONG });
    }
    if (person.moving_to) return signInForm(c, { returnTo, email, status: 503, error: `${MOVING_MESSAGE} ${MOVING_HINT}`, headers: { "retry-after": "60" } });
    c.set("accountEnv", own);
    const session = await newSession(c, person);
    // The session this browser held (maybe another person's, in another database) ends wherever it lives.
    const previous = await endReplacedSession(c);
    const sessionStatements = [...previous.here, session.statement];
    if (apart) await Promise.all([own.DB.batch(sessionStatements), db.batch(successStatements(db, keys)), previous.elsewhere()]);
    else await Promise.all([db.batch([...successStatements(db, keys), ...sessionStatements]), previous.elsewhere()]);
    return redirect(returnTo, { cookies: [session.setCookie] });
  });

  web.post("/signout", requireCsrf(), async (c) => {
    const cleared = await endSession(c);
    return redirect("/signin", { cookies: [cleared] });
  });
}
