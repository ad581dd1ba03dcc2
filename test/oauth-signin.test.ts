import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { planInvite } from "../src/db/people-plans.ts";
import { hashToken } from "../src/domain/tokens.ts";
import { STYLESHEET_PATH } from "../src/web/style.ts";
import { run, seedAccount, snapshotDb } from "./helpers.ts";
import { addPerson, Browser, expectPageSecurity, field, invite, signIn, uniqueEmail } from "./web-helpers.ts";

const PASSWORD = "correct horse battery";

describe("invitation and password setup", () => {
  it("sets a password through the one-time link, signs the person in, and keeps only hashes", async () => {
    const acc = await seedAccount();
    const email = uniqueEmail();
    const link = await invite(acc.accountId, email.toUpperCase());
    const b = new Browser();

    const form = await b.get(link.path);
    expect(form.status).toBe(200);
    expectPageSecurity(form, expect);
    const html = await form.text();
    expect(html).toContain('<label for="password">Password</label>');
    expect(html).toContain('<label for="confirm">Repeat password</label>');
    expect(html).toMatch(/<input id="password" name="password" type="password"/);
    expect(html).toMatch(/<input id="confirm" name="confirm" type="password"/);
    expect(html).toMatch(/<button type="submit">Set password<\/button>/);
    expect(html).toContain(email);
    expect(html).not.toMatch(/<script/i);

    const mismatch = await b.post("/setup", { csrf: field(html, "csrf"), token: link.token, password: PASSWORD, confirm: PASSWORD + "x" });
    expect(mismatch.status).toBe(400);
    expect(await mismatch.text()).toMatch(/not the same/);
    const short = await b.post("/setup", { csrf: field(html, "csrf"), token: link.token, password: "short", confirm: "short" });
    expect(short.status).toBe(400);
    expect(await short.text()).toMatch(/at least 10 characters/);

    const done = await b.post("/setup", { csrf: field(html, "csrf"), token: link.token, password: PASSWORD, confirm: PASSWORD });
    expect(done.status).toBe(303);
    expect(done.headers.get("location")).toBe("/");
    const setCookie = done.headers.getSetCookie().find((c) => c.startsWith("__Host-tg_session="));
    expect(setCookie).toMatch(/; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+; Secure$/);

    const home = await b.get("/");
    expect(home.status).toBe(200);
    const homeHtml = await home.text();
    expect(homeHtml).toContain(email);
    expect(homeHtml).toMatch(/<button type="submit" class="secondary">Sign out<\/button>/);

    const person = await env.DB.prepare("SELECT id, email, password_hash FROM people WHERE email = ?").bind(email).first<{ id: string; email: string; password_hash: string }>();
    expect(person?.password_hash).toMatch(/^pbkdf2-sha256\$100000\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(person?.password_hash).not.toContain(PASSWORD);
    const sessionSecret = b.cookies.get("__Host-tg_session") as string;
    const session = await env.DB.prepare("SELECT hash FROM sessions WHERE person_id = ?").bind(person?.id).first<{ hash: string }>();
    expect(session?.hash).toBe(await hashToken(sessionSecret));
    expect(JSON.stringify(await snapshotDb())).not.toContain(sessionSecret);
    expect(JSON.stringify(await snapshotDb())).not.toContain(link.token);

    // The link works once.
    const again = await new Browser().get(link.path);
    expect(again.status).toBe(410);
    expect(await again.text()).toMatch(/already used/);
    // …and the password signs in from another browser.
    expect((await signIn(new Browser(), email, PASSWORD)).status).toBe(303);
  });

  it("a new password set through a setup link ends the person's other sessions, and no one else's", async () => {
    const acc = await seedAccount();
    const email = uniqueEmail();
    const personId = await addPerson(acc.accountId, email, PASSWORD);
    const a = new Browser("203.0.113.31");
    const c = new Browser("203.0.113.32");
    expect((await signIn(a, email, PASSWORD)).status).toBe(303);
    expect((await signIn(c, email, PASSWORD)).status).toBe(303);
    const colleague = uniqueEmail("grace");
    await addPerson(acc.accountId, colleague, PASSWORD);
    const theirs = new Browser("203.0.113.33");
    expect((await signIn(theirs, colleague, PASSWORD)).status).toBe(303);
    expect((await a.get("/")).status).toBe(200);

    // Someone with the setup link (a reset: inviting the same email again) sets a new password in browser B.
    const link = await invite(acc.accountId, email);
    const b = new Browser("203.0.113.34");
    const html = await (await b.get(link.path)).text();
    expect(html).toContain("Choose a new password");
    const done = await b.post("/setup", { csrf: field(html, "csrf"), token: link.token, password: PASSWORD + " new", confirm: PASSWORD + " new" });
    expect(done.status).toBe(303);

    for (const ended of [a, c]) {
      const res = await ended.get("/");
      expect(res.status).toBe(302);
      expect(res.headers.get("location")).toBe("/signin");
    }
    const home = await b.get("/");
    expect(home.status).toBe(200);
    expect(await home.text()).toContain(email);
    expect((await theirs.get("/")).status).toBe(200);
    expect((await env.DB.prepare("SELECT count(*) AS n FROM sessions WHERE person_id = ?").bind(personId).first<{ n: number }>())?.n).toBe(1);
    // The old password is gone with them.
    expect((await signIn(new Browser("203.0.113.35"), email, PASSWORD)).status).toBe(401);
    expect((await signIn(new Browser("203.0.113.35"), email, PASSWORD + " new")).status).toBe(303);
  });

  it("explains an expired, unknown or incomplete link on a page, without a stack trace", async () => {
    const acc = await seedAccount();
    const link = await invite(acc.accountId, uniqueEmail());
    await env.DB.prepare("UPDATE setup_links SET expires_at = ? WHERE hash = ?").bind(new Date(Date.now() - 1000).toISOString(), await hashToken(link.token)).run();
    const b = new Browser();
    const expired = await b.get(link.path);
    expect(expired.status).toBe(410);
    expectPageSecurity(expired, expect);
    expect(await expired.text()).toMatch(/This setup link expired[\s\S]*valid until/);
    const posted = await b.post("/setup", { token: link.token, password: PASSWORD, confirm: PASSWORD });
    expect(posted.status).toBe(410);

    const unknown = await b.get(`/setup?token=${"A".repeat(43)}`);
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toMatch(/not valid/);
    for (const path of ["/setup", "/setup?token=%3Cscript%3E"]) {
      const res = await b.get(path);
      expect(res.status).toBe(400);
      const text = await res.text();
      expect(text).toMatch(/incomplete/);
      expect(text).not.toMatch(/<script|at \w+ \(|Error:/);
    }
  });

  it("a new invitation replaces the unused link; an email of another account writes nothing", async () => {
    const acc = await seedAccount();
    const email = uniqueEmail();
    const first = await invite(acc.accountId, email);
    const second = await invite(acc.accountId, email);
    expect((await new Browser().get(first.path)).status).toBe(404);
    expect((await new Browser().get(second.path)).status).toBe(200);
    expect((await env.DB.prepare("SELECT count(*) AS n FROM people WHERE email = ?").bind(email).first<{ n: number }>())?.n).toBe(1);

    const other = await seedAccount("Other");
    const before = await snapshotDb();
    const plan = await planInvite(other.accountId, email, new Date().toISOString());
    await expect(run(plan.statements)).rejects.toThrow(/NOT NULL/);
    expect(await snapshotDb()).toBe(before);
    await expect(planInvite(acc.accountId, "not an email", new Date().toISOString())).rejects.toThrow(/--email/);
  });

  it("a setup form without its form token, or from another site, sets nothing", async () => {
    const acc = await seedAccount();
    const link = await invite(acc.accountId, uniqueEmail());
    const b = new Browser();
    const html = await (await b.get(link.path)).text();
    const before = await snapshotDb();
    const forged = await new Browser().post("/setup", { csrf: field(html, "csrf"), token: link.token, password: PASSWORD, confirm: PASSWORD });
    expect(forged.status).toBe(403);
    const foreign = await b.post("/setup", { csrf: field(html, "csrf"), token: link.token, password: PASSWORD, confirm: PASSWORD }, { origin: "https://evil.example" });
    expect(foreign.status).toBe(403);
    expect(await snapshotDb()).toBe(before);
  });
});

describe("sign-in and sign-out", () => {
  it("shows the form of the page contract, signs in, and signs out", async () => {
    const acc = await seedAccount();
    const email = uniqueEmail();
    await addPerson(acc.accountId, email, PASSWORD);
    const b = new Browser();
    const form = await b.get("/signin");
    expect(form.status).toBe(200);
    expectPageSecurity(form, expect);
    const html = await form.text();
    expect(html).toContain('<label for="email">Email</label><input id="email" name="email" type="email"');
    expect(html).toContain('<label for="password">Password</label><input id="password" name="password" type="password"');
    expect(html).toMatch(/<button type="submit">Sign in<\/button>/);
    expect(html).toContain(`<link rel="stylesheet" href="${STYLESHEET_PATH}"/>`);

    const css = await b.get(STYLESHEET_PATH);
    expect(css.status).toBe(200);
    expect(css.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");

    expect((await b.get("/")).headers.get("location")).toBe("/signin");
    const res = await signIn(b, email.toUpperCase(), PASSWORD, "/somewhere?x=1");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/somewhere?x=1");
    const signedIn = await b.get("/signin?return_to=%2F");
    expect(signedIn.status).toBe(302);
    const home = await (await b.get("/")).text();
    expect(home).toContain(email);

    const out = await b.post("/signout", { csrf: field(home, "csrf") });
    expect(out.status).toBe(303);
    expect(out.headers.get("location")).toBe("/signin");
    expect(b.cookies.has("__Host-tg_session")).toBe(false);
    const personId = (await env.DB.prepare("SELECT id FROM people WHERE email = ?").bind(email).first<{ id: string }>())?.id;
    expect((await env.DB.prepare("SELECT count(*) AS n FROM sessions WHERE person_id = ?").bind(personId).first<{ n: number }>())?.n).toBe(0);
    expect((await b.get("/")).status).toBe(302);
  });

  it("a new sign-in in the same browser replaces its session", async () => {
    const acc = await seedAccount();
    const email = uniqueEmail();
    const personId = await addPerson(acc.accountId, email, PASSWORD);
    const b = new Browser();
    const html = await (await b.get("/signin")).text();
    for (let i = 0; i < 2; i++) expect((await b.post("/signin", { csrf: field(html, "csrf"), email, password: PASSWORD })).status).toBe(303);
    expect((await env.DB.prepare("SELECT count(*) AS n FROM sessions WHERE person_id = ?").bind(personId).first<{ n: number }>())?.n).toBe(1);
  });

  it("answers a wrong password and an unknown email alike", async () => {
    const acc = await seedAccount();
    const email = uniqueEmail();
    await addPerson(acc.accountId, email, PASSWORD);
    const wrong = await signIn(new Browser(), email, "not the password");
    const nobody = await signIn(new Browser(), uniqueEmail("nobody"), "not the password");
    expect(wrong.status).toBe(401);
    expect(nobody.status).toBe(401);
    const strip = (html: string) => html.replace(/value="[^"]*"/g, "");
    expect(strip(await wrong.text())).toBe(strip(await nobody.text()));
  });

  it("never redirects to another origin after sign-in (open redirect)", async () => {
    const acc = await seedAccount();
    const email = uniqueEmail();
    await addPerson(acc.accountId, email, PASSWORD);
    for (const target of ["https://evil.example/steal", "//evil.example/x", "/\\evil.example", "javascript:alert(1)", "/%0d%0aLocation:https://evil.example", "evil.example"]) {
      const res = await signIn(new Browser(), email, PASSWORD, target);
      expect(res.status, target).toBe(303);
      const location = res.headers.get("location") as string;
      expect(new URL(location, "https://taskgate.test").origin, target).toBe("https://taskgate.test");
      expect(location.startsWith("/") && !location.startsWith("//"), `${target} → ${location}`).toBe(true);
    }
    // The form itself never carries a foreign target either.
    const html = await (await new Browser().get("/signin?return_to=https%3A%2F%2Fevil.example%2F")).text();
    expect(field(html, "return_to")).toBe("/");
  });

  it("refuses a sign-in form without its form token or from another site, and a sign-out from another session", async () => {
    const acc = await seedAccount();
    const email = uniqueEmail();
    await addPerson(acc.accountId, email, PASSWORD);
    const b = new Browser();
    const html = await (await b.get("/signin")).text();
    const noCookie = await new Browser().post("/signin", { csrf: field(html, "csrf"), email, password: PASSWORD });
    expect(noCookie.status).toBe(403);
    const foreign = await b.post("/signin", { csrf: field(html, "csrf"), email, password: PASSWORD }, { origin: "https://evil.example" });
    expect(foreign.status).toBe(403);
    expect(foreign.headers.getSetCookie().some((c) => c.startsWith("__Host-tg_session="))).toBe(false);

    expect((await signIn(b, email, PASSWORD)).status).toBe(303);
    const other = new Browser();
    expect((await signIn(other, email, PASSWORD)).status).toBe(303);
    const otherCsrf = field(await (await other.get("/")).text(), "csrf");
    const crossed = await b.post("/signout", { csrf: otherCsrf });
    expect(crossed.status).toBe(403);
    expect((await b.get("/")).status).toBe(200);
  });
});
