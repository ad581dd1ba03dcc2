/**
 * The OAuth part of the end-to-end script: a person invited with the admin CLI
 * sets a password in Chromium, then each real SDK client connects by URL alone
 * (OAuth through the SDK's own client support, the consent given in the
 * browser) and tools/list and whoami show the principal that consent chose.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { launchBrowser, newPersonContext } from "./browser.ts";
import { expectedTools, toolList } from "./e2e-checks.ts";
import { assert, equal, type Checks, type Era, type McpSession } from "./e2e-harness.ts";
import { BrowserOAuthProvider, connectWithOAuth } from "./e2e-oauth.ts";
import type { LocalStack } from "./local-stack.ts";
import { authorizeInBrowser, CallbackListener, describeChoice, roleOf, setPassword, setupLink, type ConsentChoice, type Person } from "./oauth-pages.ts";

const PERSON: Person = { email: "ada@example.com", password: "correct horse battery staple" };
const AGENT = "e2e-oauth-agent";

/** Each SDK once with a grant of each kind, so both eras meet all four choices. */
const FLOWS: { era: Era; choice: ConsentChoice }[] = [
  { era: "modern", choice: { actAs: "self", access: "write" } },
  { era: "modern", choice: { actAs: "agent", agentName: AGENT, access: "read" } },
  { era: "legacy", choice: { actAs: "agent", agentName: AGENT, access: "write" } },
  { era: "legacy", choice: { actAs: "self", access: "read" } },
];

export async function oauthFlows(c: Checks, stack: LocalStack, accountId: string): Promise<McpSession[]> {
  const sessions: McpSession[] = [];
  const listener = new CallbackListener();
  let browser: Browser | undefined;
  let context: BrowserContext | undefined;
  try {
    const page = await c.run("Chromium (@sparticuz/chromium) launches; a local redirect listener runs", async () => {
      await listener.start();
      browser = await launchBrowser();
      context = await newPersonContext(browser);
      return context.newPage();
    });
    if (!page) return sessions;
    const link = await c.run(`admin CLI: invite ${PERSON.email} prints a one-time setup URL`, async () => {
      const invite = await stack.admin(["invite", "--account", accountId, "--email", PERSON.email]);
      return setupLink(invite, stack.base);
    });
    const ready = await c.run("browser: the invited person sets a password on the setup page and is signed in", async () => {
      assert(link, "no setup link");
      await setPassword(page, link, PERSON.password);
      assert(!/\/setup/.test(new URL(page.url()).pathname), `still on the setup page: ${page.url()}`);
      return true;
    });
    if (!ready) return sessions;
    for (const flow of FLOWS) {
      const s = await oauthClient(c, stack.base, page, listener, flow);
      if (s) sessions.push(s);
    }
    return sessions;
  } finally {
    await context?.close().catch(() => {});
    await browser?.close().catch(() => {});
    await listener.close();
  }
}

async function oauthClient(c: Checks, base: string, page: Page, listener: CallbackListener, { era, choice }: { era: Era; choice: ConsentChoice }): Promise<McpSession | undefined> {
  const role = roleOf(choice);
  const provider = new BrowserOAuthProvider({
    clientName: `Taskgate e2e (${era} SDK)`,
    redirectUri: listener.redirectUri,
    authorize: (url) => authorizeInBrowser(page, { authorizationUrl: url.href, redirectUri: listener.redirectUri, person: PERSON, choice }),
  });
  const s = await c.run(`${era} client connects by URL with OAuth (DCR, PKCE S256; consent ${describeChoice(choice)} in the browser)`, async () => {
    const session = await connectWithOAuth(`${base}/mcp`, era, provider);
    assert(provider.clientId, "the SDK registered a client");
    const url = provider.authorizationUrl;
    assert(url, "the SDK asked for the browser step");
    equal(url.searchParams.get("code_challenge_method"), "S256", "code_challenge_method");
    equal(url.searchParams.get("resource"), `${base}/mcp`, "resource indicator");
    assert(!/^tg_/.test(provider.accessToken ?? ""), "an OAuth access token, not a tg_ token");
    return session;
  });
  if (!s) return undefined;
  await toolList(c, s, role, "OAuth grant");
  await c.run(`whoami, ${era} client: the grant is ${describeChoice(choice)} (${expectedTools(role).length} tools)`, async () => {
    const me = await s.ok("whoami", {});
    equal(me.token.kind, choice.actAs === "self" ? "human" : "agent", "kind");
    equal(me.token.scope, choice.access, "scope");
    equal(me.token.agent, choice.actAs === "agent" ? choice.agentName : null, "agent");
  });
  return s;
}
