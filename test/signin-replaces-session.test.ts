/**
 * Signing in as another person in the same browser ends the session the
 * browser held, wherever it lives: with two databases (DB and DB_1), the
 * previous person's account may live in the other one. The same for a
 * password set through a setup link.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { hashToken } from "../src/domain/tokens.ts";
import { seedAccount } from "./helpers.ts";
import { addPerson, Browser, field, invite, signIn, uniqueEmail } from "./web-helpers.ts";

const PASSWORD = "correct horse battery";
type Shard = "DB" | "DB_1";

async function personIn(shard: Shard): Promise<{ email: string; accountId: string }> {
  const acc = await seedAccount(`Account in ${shard}`, "bot", shard);
  const email = uniqueEmail();
  await addPerson(acc.accountId, email, PASSWORD, env[shard]);
  return { email, accountId: acc.accountId };
}

const sessionCookie = (b: Browser) => [...b.cookies].find(([k]) => /^(__Host-)?tg_session$/.test(k)) as [string, string];

async function sessionRows(secret: string): Promise<number> {
  const hash = await hashToken(secret);
  let n = 0;
  for (const db of [env.DB, env.DB_1]) n += (await db.prepare("SELECT count(*) AS n FROM sessions WHERE hash = ?").bind(hash).first<{ n: number }>())!.n;
  return n;
}

/** Whether a browser holding only this session cookie is signed in. */
async function signedIn(cookie: [string, string]): Promise<boolean> {
  const b = new Browser();
  b.cookies.set(...cookie);
  return (await b.get("/settings")).status === 200;
}

describe("a new sign-in in the same browser ends the previous session wherever it lives", () => {
  for (const [first, second] of [["DB", "DB_1"], ["DB_1", "DB"], ["DB_1", "DB_1"], ["DB", "DB"]] as [Shard, Shard][]) {
    it(`signed in to an account in ${first}, then as another person of an account in ${second}`, async () => {
      const a = await personIn(first);
      const b = await personIn(second);
      const browser = new Browser();
      // A second tab keeps the sign-in form open (a signed-in browser is sent on from /signin).
      const tab = await (await browser.get("/signin")).text();
      expect((await signIn(browser, a.email, PASSWORD)).status).toBe(303);
      const old = sessionCookie(browser);
      expect(await sessionRows(old[1])).toBe(1);
      expect(await signedIn(old)).toBe(true);

      expect((await browser.post("/signin", { csrf: field(tab, "csrf"), return_to: "/", email: b.email, password: PASSWORD })).status).toBe(303);
      const current = sessionCookie(browser);
      expect(current[1]).not.toBe(old[1]);
      expect(await sessionRows(old[1]), "the previous session's row, in any database").toBe(0);
      expect(await signedIn(old), "the previous cookie, replayed").toBe(false);
      expect(await signedIn(current)).toBe(true);
    });
  }

  it("a password set through a setup link ends the session the browser held in the other database", async () => {
    const a = await personIn("DB_1");
    const browser = new Browser();
    expect((await signIn(browser, a.email, PASSWORD)).status).toBe(303);
    const old = sessionCookie(browser);

    const acc = await seedAccount("Invited into DB", "bot", "DB");
    const link = await invite(acc.accountId, uniqueEmail("newcomer"), env.DB);
    const html = await (await browser.get(link.path)).text();
    const done = await browser.post("/setup", { csrf: field(html, "csrf"), token: link.token, password: PASSWORD, confirm: PASSWORD });
    expect(done.status).toBe(303);
    expect(await sessionRows(old[1])).toBe(0);
    expect(await signedIn(old)).toBe(false);
    expect(await signedIn(sessionCookie(browser))).toBe(true);
  });
});
