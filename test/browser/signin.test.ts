/**
 * A person's own pages in Chromium, with JavaScript off: the invite's setup
 * link, signing in and out, a wrong password, a used link. Every page comes
 * with the Content-Security-Policy (no script, no framing) and never shows a
 * stack trace. Screenshots: screenshots/setup.png, home.png, signin.png,
 * signin-error.png, setup-used.png. A return address that leads off the site
 * (`/.//evil.example/x` and its kin) ends on this origin, signed out or in.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Page, Response } from "playwright-core";
import { launchBrowser, newPersonContext, screenshot } from "../../scripts/lib/browser.ts";
import { inviteArgs, onSignInPage, setPassword, setupLink, signIn, signOut, type Person } from "../../scripts/lib/oauth-pages.ts";
import { adminCli, taskgate } from "./context.ts";
import { expectNoLeak, expectSafeHeaders, pageText } from "./expect-page.ts";

const PERSON: Person = { email: "grace@example.com", password: "a long and private passphrase" };

let browser: Browser;
let context: BrowserContext;
let page: Page;
let link: string;

const text = () => pageText(page);

async function expectSafePage(response: Response | null): Promise<void> {
  expectSafeHeaders(response);
  await expectNoLeak(page, [PERSON.password]);
}

beforeAll(async () => {
  const invite = await adminCli(inviteArgs(taskgate().accountId, PERSON.email, taskgate().base));
  link = setupLink(invite, taskgate().base);
  browser = await launchBrowser();
  context = await newPersonContext(browser);
  page = await context.newPage();
});

afterAll(async () => {
  await context?.close().catch(() => {});
  await browser?.close();
});

describe("signing in, in Chromium with JavaScript off", () => {
  it("signed out, / leads to the sign-in page", async () => {
    await page.goto(`${taskgate().base}/`);
    expect(new URL(page.url()).pathname).toBe("/signin");
    expect(await onSignInPage(page)).toBe(true);
  });

  it("the invite's setup page sets the password and signs the person in", async () => {
    await setPassword(page, link, PERSON.password, async () => {
      expectSafeHeaders(await page.reload());
      await page.getByLabel("Password", { exact: true }).fill(PERSON.password);
      await page.getByLabel("Repeat password", { exact: true }).fill(PERSON.password);
      await screenshot(page, "setup");
    });
    expect(new URL(page.url()).pathname).toBe("/");
    expect(await text()).toContain(PERSON.email);
    expect(await page.getByRole("button", { name: "Sign out" }).count()).toBe(1);
    await expectSafePage(await page.reload());
    await screenshot(page, "home");
  });

  it("the setup link works once: opened again, the page says so", async () => {
    const again = await context.newPage();
    try {
      const response = await again.goto(link);
      expect(response?.status()).toBe(410);
      expect((await again.locator("h1").innerText()).toLowerCase()).toContain("already used");
      await screenshot(again, "setup-used");
    } finally {
      await again.close();
    }
  });

  it("Sign out ends the session: / leads to sign-in again", async () => {
    await signOut(page);
    expect(new URL(page.url()).pathname).toBe("/signin");
    await page.goto(`${taskgate().base}/`);
    expect(new URL(page.url()).pathname).toBe("/signin");
    await expectSafePage(await page.reload());
    await screenshot(page, "signin");
  });

  it("a wrong password is refused with a message that names neither the account nor the cause", async () => {
    await signIn(page, { email: PERSON.email, password: "not the password at all" });
    expect(await onSignInPage(page)).toBe(true);
    const alert = page.getByRole("alert");
    expect(await alert.count()).toBe(1);
    expect((await alert.innerText()).length).toBeGreaterThan(10);
    const unknown = await text();
    await signIn(page, { email: "nobody@example.com", password: "not the password at all" });
    expect((await text()).replace("nobody@example.com", PERSON.email)).toBe(unknown);
    await screenshot(page, "signin-error");
  });

  it("the right password signs in and returns to where the person was going", async () => {
    await page.goto(`${taskgate().base}/`);
    await signIn(page, PERSON);
    expect(new URL(page.url()).pathname).toBe("/");
    expect(await text()).toContain(PERSON.email);
  });
});

describe("a return address that leads off the site, in Chromium", () => {
  const OFF_SITE = ["/.//evil.example/x", "/%2e//evil.example/x", "/authorize/../..//evil.example/x", "/a/%2e%2e/%2f%2fevil.example/x"];

  it("signing in with return_to=/.//evil.example/x, and then each trick signed in, ends on this origin", async () => {
    const local = new URL(taskgate().base);
    const own = await newPersonContext(browser);
    // Every request that leaves the site (a redirect's too), and a navigation that failed on the way there.
    const left: string[] = [];
    own.on("request", (r) => {
      if (new URL(r.url()).host !== local.host) left.push(r.url());
    });
    const tab = await own.newPage();
    const go = (url: string) => tab.goto(url).catch((e: Error) => left.push(`failed: ${e.message.split("\n")[0]}`));
    try {
      await go(`${taskgate().base}/signin?return_to=${OFF_SITE[0]}`);
      expect(await onSignInPage(tab)).toBe(true);
      await signIn(tab, PERSON);
      expect(left).toEqual([]);
      expect(new URL(tab.url()).origin).toBe(local.origin);
      expect(new URL(tab.url()).pathname).toBe("/");
      expect(await pageText(tab)).toContain(PERSON.email);
      for (const target of OFF_SITE) {
        await go(`${taskgate().base}/signin?return_to=${target}`);
        expect(left, target).toEqual([]);
        expect(new URL(tab.url()).origin, target).toBe(local.origin);
        expect(new URL(tab.url()).pathname, target).toBe("/");
      }
    } finally {
      await own.close().catch(() => {});
    }
  });
});
