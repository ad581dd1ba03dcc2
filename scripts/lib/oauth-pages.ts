/**
 * A person's steps through Taskgate's own pages in a real browser, shared by
 * the browser tests and the end-to-end script: set a password from an invite,
 * sign in, sign out, and answer the consent page. Each step finds the controls
 * by their labels and button names, as a person (or a screen reader) would.
 * Also the local "app" an OAuth client redirects to: a small HTTP listener on
 * 127.0.0.1 that records each callback.
 */
import { createServer, type Server } from "node:http";
import type { Page } from "playwright-core";
import type { TokenRole } from "./e2e-checks.ts";

export type ActAs = "self" | "agent";
export type Access = "read" | "write";

export interface ConsentChoice {
  actAs: ActAs;
  /** Required with actAs "agent": a new or an existing agent's name. */
  agentName?: string;
  access: Access;
  /** The toolsets to tick under "Only these toolsets" (their titles as the page shows them); absent: every tool. */
  toolsets?: string[];
}

/** What a `tg_` token of the same kind and scope is called in the checks: the grant must list the same tools. */
export function roleOf(choice: ConsentChoice): TokenRole {
  return `${choice.actAs === "self" ? "human" : "agent"} ${choice.access}` as TokenRole;
}

/** "as myself, read and write" / "as agent x, read only": for check names. */
export function describeChoice(choice: ConsentChoice): string {
  const who = choice.actAs === "self" ? "as myself" : `as agent ${choice.agentName}`;
  return `${who}, ${choice.access === "write" ? "read and write" : "read only"}`;
}

/** The arguments of `npm run admin -- invite` for a person of `accountId` on the server at `base`. */
export function inviteArgs(accountId: string, email: string, base: string): string[] {
  return ["invite", "--account", accountId, "--email", email, "--url", base];
}

/** The one-time setup link that `invite` printed, checked to point at the server under test. */
export function setupLink(invite: Record<string, unknown>, base: string): string {
  const link = invite.setup_url;
  if (typeof link !== "string") throw new Error(`invite printed no setup_url: ${JSON.stringify(Object.keys(invite))}`);
  if (!link.startsWith(`${base}/setup?token=`)) throw new Error(`the setup link ${link.replace(/token=.*/, "token=…")} is not on ${base}`);
  return link;
}

export interface Person {
  email: string;
  password: string;
}

/** Opens the invite's setup link and sets the password (twice); the person is signed in afterwards. */
export async function setPassword(page: Page, setupUrl: string, password: string, beforeSubmit?: () => Promise<void>): Promise<void> {
  await page.goto(setupUrl);
  await page.getByLabel("Password", { exact: true }).fill(password);
  await page.getByLabel("Repeat password", { exact: true }).fill(password);
  await beforeSubmit?.();
  await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Set password" }).click()]);
}

/** Fills the sign-in form the page shows now and submits it. */
export async function signIn(page: Page, person: Person, beforeSubmit?: () => Promise<void>): Promise<void> {
  await page.getByLabel("Email", { exact: true }).fill(person.email);
  await page.getByLabel("Password", { exact: true }).fill(person.password);
  await beforeSubmit?.();
  await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Sign in" }).click()]);
}

/** Whether the page shows the sign-in form. */
export async function onSignInPage(page: Page): Promise<boolean> {
  return (await page.getByRole("button", { name: "Sign in" }).count()) > 0 && (await page.getByLabel("Email", { exact: true }).count()) > 0;
}

/** Whether the page shows the consent form. */
export async function onConsentPage(page: Page): Promise<boolean> {
  return (await page.getByRole("button", { name: "Allow" }).count()) > 0 && (await page.getByRole("button", { name: "Deny" }).count()) > 0;
}

/** Presses "Sign out" on the page shown now (it posts to /signout). */
export async function signOut(page: Page): Promise<void> {
  await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Sign out" }).click()]);
}

/** Picks who the client acts as and what it may do on the consent page shown now. */
export async function choose(page: Page, choice: ConsentChoice): Promise<void> {
  if (choice.actAs === "agent") {
    if (!choice.agentName) throw new Error("an agent consent needs agentName");
    await page.getByLabel("One of my agents", { exact: true }).check();
    await page.getByLabel("Agent name", { exact: true }).fill(choice.agentName);
  } else {
    await page.getByLabel("Myself", { exact: true }).check();
  }
  await page.getByLabel(choice.access === "write" ? "Read and write" : "Read only", { exact: true }).check();
  if (choice.toolsets?.length) {
    await page.getByLabel("Only these toolsets:", { exact: true }).check();
    for (const title of choice.toolsets) await page.locator(".toolsets label", { hasText: title }).locator("input").check();
  }
}

/**
 * Presses Allow or Deny and waits until the browser has followed the redirect
 * to `redirectUri`; returns the URL it landed on (code and state, or error).
 */
export async function decide(page: Page, decision: "Allow" | "Deny", redirectUri: string): Promise<URL> {
  const landed = page.waitForURL((url) => url.href.startsWith(redirectUri), { waitUntil: "load" });
  await page.getByRole("button", { name: decision, exact: true }).click();
  await landed;
  return new URL(page.url());
}

/**
 * The whole browser step of an authorization: opens `authorizationUrl`, signs
 * in when the sign-in page comes first, answers the consent page and returns
 * the redirect the browser landed on. `onPage` sees each page before it is
 * submitted (for screenshots).
 */
export async function authorizeInBrowser(
  page: Page,
  o: {
    authorizationUrl: string;
    redirectUri: string;
    person: Person;
    choice: ConsentChoice;
    decision?: "Allow" | "Deny";
    onPage?: (name: "signin" | "consent") => Promise<void>;
  },
): Promise<URL> {
  await page.goto(o.authorizationUrl);
  if (await onSignInPage(page)) await signIn(page, o.person, () => o.onPage?.("signin") ?? Promise.resolve());
  if (!(await onConsentPage(page))) {
    const text = (await page.locator("body").innerText()).replace(/\s+/g, " ").slice(0, 300);
    throw new Error(`expected the consent page at ${new URL(page.url()).pathname}, the page says: ${text}`);
  }
  await choose(page, o.choice);
  await o.onPage?.("consent");
  return decide(page, o.decision ?? "Allow", o.redirectUri);
}

/**
 * The redirect target of a local OAuth client (as mcp-remote or a desktop app
 * runs one): answers GET /callback with a short page and keeps every callback URL.
 */
export class CallbackListener {
  private server: Server | null = null;
  readonly received: URL[] = [];
  redirectUri = "";

  async start(): Promise<string> {
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? "/", this.redirectUri || "http://127.0.0.1");
      if (url.pathname !== "/callback") {
        res.writeHead(404, { "content-type": "text/plain" }).end("not found");
        return;
      }
      this.received.push(url);
      const outcome = url.searchParams.has("code") ? "Authorization code received." : `No code: ${url.searchParams.get("error") ?? "nothing"}.`;
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(`<!doctype html><meta charset="utf-8"><title>Test client</title><h1>Test client</h1><p id="outcome">${outcome}</p>`);
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    this.server = server;
    const address = server.address();
    if (!address || typeof address === "string") throw new Error("the callback listener has no port");
    this.redirectUri = `http://127.0.0.1:${address.port}/callback`;
    return this.redirectUri;
  }

  /** The last callback the listener answered. */
  last(): URL | undefined {
    return this.received[this.received.length - 1];
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
