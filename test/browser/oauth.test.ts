/**
 * OAuth sign-in and consent in a real browser, with JavaScript off: a person
 * invited with the admin CLI sets a password on the setup page, signs in,
 * consents, and lands on the client's redirect (a local listener) with a code
 * and the client's state. The code is exchanged by hand (PKCE S256, resource
 * indicator) and the token's tools/list, through the real 2.x client, is
 * exactly what a `tg_` token of the chosen kind and scope lists.
 *
 * The consent page as it first appears, for a freshly self-registered app:
 * nobody is chosen for whom the app acts as and access is Read only, so Allow
 * pressed at once sends nothing to the app (Chromium asks for the choice; a
 * browser that skips that check gets the page again with what to choose).
 * By keyboard alone the person chooses an agent and allows. axe-core finds no
 * serious violation on the page, first or with its error.
 * Screenshots: screenshots/oauth-*.png (the first appearance:
 * screenshots/oauth-consent-first.png).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Page, Request } from "playwright-core";
import { launchBrowser, newPersonContext, screenshot } from "../../scripts/lib/browser.ts";
import { expectedTools } from "../../scripts/lib/e2e-checks.ts";
import { connect } from "../../scripts/lib/e2e-harness.ts";
import {
  CallbackListener,
  choose,
  decide,
  describeChoice,
  inviteArgs,
  onConsentPage,
  onSignInPage,
  roleOf,
  setPassword,
  setupLink,
  signIn,
  signOut,
  type ConsentChoice,
  type Person,
} from "../../scripts/lib/oauth-pages.ts";
import { adminCli, taskgate } from "./context.ts";
import { seriousViolations } from "./axe.ts";
import { TOOL_NAMES } from "../../src/catalog/effects.ts";
import { TOOLSETS } from "../../src/catalog/toolsets.ts";
import { expectNoLeak, expectSafeHeaders, pageText } from "./expect-page.ts";
import { authorizationUrl, discover, exchange, register, type ServerMetadata } from "./oauth-client.ts";

const PERSON: Person = { email: "ada@example.com", password: "correct horse battery staple" };
const CLIENT_NAME = "Browser Test Client";

let browser: Browser;
let context: BrowserContext;
/** Further contexts (JavaScript on, for axe), closed after the tests. */
const contexts: BrowserContext[] = [];
let page: Page;
const listener = new CallbackListener();
let as: ServerMetadata;
let resource: string;
let scope: string;
let clientId: string;

const text = () => pageText(page);

/** The grants an app holds as the person with read and write, as the admin CLI lists them (revoked ones too). */
async function personWriteGrants(app: string): Promise<number> {
  const rows = (await adminCli(["list-tokens", "--account", taskgate().accountId])) as unknown as { source: string; client_id: string | null; kind: string; scope: string }[];
  return rows.filter((r) => r.source === "oauth" && r.client_id === app && r.kind === "human" && r.scope === "write").length;
}

/** Consents with `choice` (signed in already), exchanges the code and opens a 2.x client with the access token. */
async function grant(choice: ConsentChoice) {
  const auth = authorizationUrl(as, { clientId, redirectUri: listener.redirectUri, resource, scope });
  expectSafeHeaders(await page.goto(auth.url));
  expect(await onConsentPage(page), `consent page, got: ${await text()}`).toBe(true);
  await choose(page, choice);
  const landed = await decide(page, "Allow", listener.redirectUri);
  expect(landed.searchParams.get("state")).toBe(auth.state);
  const code = landed.searchParams.get("code");
  expect(code).toBeTruthy();
  expect(listener.last()?.searchParams.get("code")).toBe(code);
  const tokens = await exchange(as, { clientId, redirectUri: listener.redirectUri, resource, code: code as string, verifier: auth.verifier });
  expect(tokens.token_type.toLowerCase()).toBe("bearer");
  return connect(`${taskgate().base}/mcp`, tokens.access_token, "modern");
}

beforeAll(async () => {
  const base = taskgate().base;
  await listener.start();
  const found = await discover(base);
  as = found.as;
  resource = found.resource;
  scope = found.scopes.join(" ");
  clientId = await register(as, CLIENT_NAME, listener.redirectUri);
  browser = await launchBrowser();
  context = await newPersonContext(browser);
  page = await context.newPage();
});

afterAll(async () => {
  for (const c of [context, ...contexts]) await c?.close().catch(() => {});
  await browser?.close();
  await listener.close();
});

describe("OAuth in Chromium, JavaScript off", () => {
  it("the invite's setup page sets the password and signs the person in", async () => {
    const invite = await adminCli(inviteArgs(taskgate().accountId, PERSON.email, taskgate().base));
    const link = setupLink(invite, taskgate().base);
    await setPassword(page, link, PERSON.password);
    expect(new URL(page.url()).pathname).not.toBe("/setup");
    expect(await page.getByRole("button", { name: "Sign out" }).count()).toBeGreaterThan(0);
  });

  it("signed out, /authorize leads to sign-in and back; consent and Allow land on the client's redirect with a code", async () => {
    await signOut(page);
    const choice: ConsentChoice = { actAs: "self", access: "write" };
    const auth = authorizationUrl(as, { clientId, redirectUri: listener.redirectUri, resource, scope });
    await page.goto(auth.url);
    expect(new URL(page.url()).pathname).toBe("/signin");
    expect(await onSignInPage(page)).toBe(true);
    expectSafeHeaders(await page.reload());
    await signIn(page, PERSON, () => screenshot(page, "oauth-signin").then(() => {}));

    expect(await onConsentPage(page), `consent page, got: ${await text()}`).toBe(true);
    expectSafeHeaders(await page.reload());
    await expectNoLeak(page, [PERSON.password]);
    const consent = await text();
    expect(consent).toContain(CLIENT_NAME);
    expect(consent).toContain("127.0.0.1");
    await choose(page, choice);
    await screenshot(page, "oauth-consent");
    const landed = await decide(page, "Allow", listener.redirectUri);
    expect(landed.searchParams.get("state")).toBe(auth.state);
    expect(landed.searchParams.get("code")).toMatch(/.{16,}/);
    expect(await page.locator("#outcome").innerText()).toBe("Authorization code received.");
    await screenshot(page, "oauth-redirect");

    const tokens = await exchange(as, { clientId, redirectUri: listener.redirectUri, resource, code: landed.searchParams.get("code") as string, verifier: auth.verifier });
    const s = await connect(`${taskgate().base}/mcp`, tokens.access_token, "modern");
    try {
      expect((await s.listTools()).map((t) => t.name).sort()).toEqual([...expectedTools(roleOf(choice))].sort());
      const me = await s.ok("whoami", {});
      expect(me.account.id).toBe(taskgate().accountId);
      expect(me.token).toMatchObject({ kind: "human", scope: "write", agent: null });
    } finally {
      await s.close();
    }
  });

  it("the consent page as it first appears: nobody chosen for whom the app acts as, Read only; Allow pressed at once sends the app nothing", async () => {
    const fresh = await register(as, "Fresh Helper", listener.redirectUri);
    const callbacks = listener.received.length;
    const auth = authorizationUrl(as, { clientId: fresh, redirectUri: listener.redirectUri, resource, scope });
    expectSafeHeaders(await page.goto(auth.url));
    expect(await onConsentPage(page), `consent page, got: ${await text()}`).toBe(true);
    await screenshot(page, "oauth-consent-first");
    const shown = await text();

    // Allow at once: Chromium asks for the choice (focusing it) and posts nothing, so the app gets nothing.
    const posts: string[] = [];
    const seen = (r: Request) => {
      if (r.method() === "POST") posts.push(r.url());
    };
    page.on("request", seen);
    await page.getByRole("button", { name: "Allow", exact: true }).click();
    await page.waitForTimeout(1_000);
    page.off("request", seen);
    expect(await personWriteGrants(fresh), "the person's write grants after Allow pressed at once").toBe(0);
    expect(listener.received.length, "no callback reached the app").toBe(callbacks);
    expect(posts, "Allow pressed at once posts nothing").toEqual([]);
    expect(new URL(page.url()).pathname).toBe("/authorize");
    expect(await page.locator("input[name=act_as]:invalid").count()).toBe(2);
    expect(await page.locator("#act_as_agent:focus").count(), "the browser shows the first choice to make").toBe(1);

    // What the page showed: nobody chosen, Read only, the app not verified, what acting as the person allows.
    expect(await page.getByLabel("One of my agents", { exact: true }).isChecked()).toBe(false);
    expect(await page.getByLabel("Myself", { exact: true }).isChecked()).toBe(false);
    expect(await page.getByLabel("Read only", { exact: true }).isChecked()).toBe(true);
    expect(shown).toContain("Allow the app that calls itself “Fresh Helper” to use your Taskgate account?");
    expect(shown).toContain("Not verified. This app registered itself, as any app can; Taskgate has not verified who made it.");
    expect(shown).toContain("Acting as you with read and write, the app can do everything you can, including what only you may: approve or reject your agents' work");
    expect(shown).toContain("If an agent sent you this link, choose One of my agents: acting as you, it could approve its own work.");

    // From there by keyboard alone: Space chooses One of my agents, Tab reaches its name, Enter allows.
    await page.keyboard.press("Space");
    await page.keyboard.press("Tab");
    expect(await page.locator("#agent_name:focus").count()).toBe(1);
    await page.keyboard.type("keyboard-agent");
    const landedAt = page.waitForURL((url) => url.href.startsWith(listener.redirectUri), { waitUntil: "load" });
    await page.keyboard.press("Enter");
    await landedAt;
    const landed = new URL(page.url());
    expect(landed.searchParams.get("state")).toBe(auth.state);
    const tokens = await exchange(as, { clientId: fresh, redirectUri: listener.redirectUri, resource, code: landed.searchParams.get("code") as string, verifier: auth.verifier });
    expect(tokens.scope).toBe("tasks:read");
    const s = await connect(`${taskgate().base}/mcp`, tokens.access_token, "modern");
    try {
      expect((await s.ok("whoami", {})).token).toMatchObject({ kind: "agent", agent: "keyboard-agent", scope: "read" });
    } finally {
      await s.close();
    }
    expect(await personWriteGrants(fresh)).toBe(0);
  });

  it("axe finds no serious violation on the consent page; a browser that skips the page's check gets it again with what to choose, and nothing is allowed", async () => {
    // JavaScript on, only so axe can run (and to play a browser that ignores `required`): the page itself has none.
    const scripted = await newPersonContext(browser, { javaScript: true });
    contexts.push(scripted);
    const p = await scripted.newPage();
    const fresh = await register(as, "Another Fresh Helper", listener.redirectUri);
    const callbacks = listener.received.length;
    const auth = authorizationUrl(as, { clientId: fresh, redirectUri: listener.redirectUri, resource, scope });
    await p.goto(auth.url);
    await signIn(p, PERSON);
    expect(await onConsentPage(p)).toBe(true);
    expect(await seriousViolations(p), "axe on the consent page as it first appears").toEqual([]);

    await p.locator('form[action="/authorize"]').evaluate((form) => ((form as HTMLFormElement).noValidate = true));
    const [response] = await Promise.all([p.waitForNavigation(), p.getByRole("button", { name: "Allow", exact: true }).click()]);
    expect(await personWriteGrants(fresh), "the person's write grants after a form without the choice").toBe(0);
    expect(listener.received.length, "no callback reached the app").toBe(callbacks);
    expect(response?.status()).toBe(400);
    expect(await pageText(p)).toContain("Choose who the app acts as: One of my agents, or Myself. Nothing was allowed.");
    expect(await p.getByLabel("Myself", { exact: true }).isChecked()).toBe(false);
    expect(await p.getByLabel("One of my agents", { exact: true }).isChecked()).toBe(false);
    await screenshot(p, "oauth-consent-unchosen");
    expect(await seriousViolations(p), "axe on the consent page with its error").toEqual([]);
  });

  const choices: ConsentChoice[] = [
    { actAs: "agent", agentName: "browser-agent", access: "write" },
    { actAs: "agent", agentName: "browser-agent", access: "read" },
    { actAs: "self", access: "read" },
  ];
  for (const choice of choices) {
    it(`consent ${describeChoice(choice)}: tools/list is that of a ${roleOf(choice)} token`, async () => {
      const session = await grant(choice);
      try {
        const names = (await session.listTools()).map((t) => t.name).sort();
        expect(names).toEqual([...expectedTools(roleOf(choice))].sort());
        const me = await session.ok("whoami", {});
        expect(me.token).toMatchObject({ kind: choice.actAs === "self" ? "human" : "agent", scope: choice.access, agent: choice.agentName ?? null });
      } finally {
        await session.close();
      }
    });
  }

  it("consent with chosen toolsets: the app's tools/list is just those toolsets", async () => {
    const auth = authorizationUrl(as, { clientId, redirectUri: listener.redirectUri, resource, scope });
    await page.goto(auth.url);
    expect(await onConsentPage(page)).toBe(true);
    await choose(page, { actAs: "self", access: "write", toolsets: ["Runs", "Approvals"] });
    await screenshot(page, "oauth-consent-toolsets");
    const landed = await decide(page, "Allow", listener.redirectUri);
    const tokens = await exchange(as, { clientId, redirectUri: listener.redirectUri, resource, code: landed.searchParams.get("code") as string, verifier: auth.verifier });
    const s = await connect(`${taskgate().base}/mcp`, tokens.access_token, "modern");
    try {
      const chosen = new Set(TOOLSETS.filter((t) => t.name === "runs" || t.name === "approvals").flatMap((t) => t.tools));
      expect((await s.listTools()).map((t) => t.name)).toEqual(TOOL_NAMES.filter((n) => chosen.has(n)));
    } finally {
      await s.close();
    }
  });

  it("Deny sends the person back to the client with access_denied and no code", async () => {
    const auth = authorizationUrl(as, { clientId, redirectUri: listener.redirectUri, resource, scope });
    await page.goto(auth.url);
    expect(await onConsentPage(page)).toBe(true);
    const landed = await decide(page, "Deny", listener.redirectUri);
    expect(landed.searchParams.get("error")).toBe("access_denied");
    expect(landed.searchParams.get("state")).toBe(auth.state);
    expect(landed.searchParams.has("code")).toBe(false);
  });

  it("a client name with markup is refused at registration; one with &, quotes and an apostrophe is shown as text", async () => {
    await expect(register(as, `<img src=x id=injected> Evil <b>App</b>`, listener.redirectUri)).rejects.toThrow(/HTTP 400 .*invalid_client_metadata.*client_name: must not contain < or >/);
    const name = `Tom & Jerry's "Evil" App`;
    const evil = await register(as, name, listener.redirectUri);
    const auth = authorizationUrl(as, { clientId: evil, redirectUri: listener.redirectUri, resource, scope });
    await page.goto(auth.url);
    expect(await onConsentPage(page)).toBe(true);
    expect(await text()).toContain(name);
    await screenshot(page, "oauth-consent-escaped");
  });
});
