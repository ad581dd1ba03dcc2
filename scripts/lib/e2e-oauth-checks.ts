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
import { authorizeInBrowser, CallbackListener, describeChoice, inviteArgs, roleOf, setPassword, setupLink, type ConsentChoice, type Person } from "./oauth-pages.ts";

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
      const invite = await stack.admin(inviteArgs(accountId, PERSON.email, stack.base));
      return setupLink(invite, stack.base);
    });
    const ready = await c.run("browser: the invited person sets a password on the setup page and is signed in", async () => {
      assert(link, "no setup link");
      await setPassword(page, link, PERSON.password);
      assert(!/\/setup/.test(new URL(page.url()).pathname), `still on the setup page: ${page.url()}`);
      return true;
    });
    if (!ready) return sessions;
    const grants: Grant[] = [];
    for (const flow of FLOWS) {
      const g = await oauthClient(c, stack.base, page, listener, flow);
      if (g) grants.push(g);
    }
    sessions.push(...grants.map((g) => g.session));
    await grantsAtWork(c, stack.base, grants);
    return sessions;
  } finally {
    await context?.close().catch(() => {});
    await browser?.close().catch(() => {});
    await listener.close();
  }
}

interface Grant {
  era: Era;
  choice: ConsentChoice;
  clientName: string;
  provider: BrowserOAuthProvider;
  session: McpSession;
  /** The grant's id in list_tokens (whoami's token id). */
  tokenId: string;
}

async function oauthClient(c: Checks, base: string, page: Page, listener: CallbackListener, { era, choice }: { era: Era; choice: ConsentChoice }): Promise<Grant | undefined> {
  const role = roleOf(choice);
  const clientName = `Taskgate e2e (${era} SDK, ${describeChoice(choice)})`;
  const provider = new BrowserOAuthProvider({
    clientName,
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
  const tokenId = await c.run(`whoami, ${era} client: the grant is ${describeChoice(choice)} (${expectedTools(role).length} tools)`, async () => {
    const me = await s.ok("whoami", {});
    equal(me.token.kind, choice.actAs === "self" ? "human" : "agent", "kind");
    equal(me.token.scope, choice.access, "scope");
    equal(me.token.agent, choice.actAs === "agent" ? choice.agentName : null, "agent");
    return me.token.id as string;
  });
  return tokenId ? { era, choice, clientName, provider, session: s, tokenId } : undefined;
}

const LIST = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });

/** The grants do what a token does: an agent grant writes as its agent (the feed names the app); a person lists and revokes grants. */
async function grantsAtWork(c: Checks, base: string, grants: Grant[]): Promise<void> {
  const find = (actAs: string, access: string) => grants.find((g) => g.choice.actAs === actAs && g.choice.access === access);
  const agentWrite = find("agent", "write");
  const agentRead = find("agent", "read");
  const human = find("self", "write");
  await c.run(`agent write grant (${agentWrite?.era} client): create_task and claim_task act as ${AGENT}; list_activity names the app`, async () => {
    assert(agentWrite, "no agent write grant");
    const s = agentWrite.session;
    const created = await s.ok("create_task", { title: "Filed through OAuth" });
    const claimed = await s.ok("claim_task", { task_id: created.task.id });
    equal(claimed.task.assignee, AGENT, "assignee");
    const feed = await s.ok("list_activity", { target_id: created.task.id });
    const entry = feed.items.find((e: { tool: string }) => e.tool === "create_task");
    assert(entry, "no create_task entry in the feed");
    equal(entry.actor, AGENT, "actor");
    equal(entry.client, agentWrite.clientName, "client");
    equal(entry.token_id, agentWrite.tokenId, "token_id");
  });
  await c.run(`human grant (${human?.era} client): list_tokens shows the ${grants.length} apps; revoke_token ends a grant at once (401)`, async () => {
    assert(human && agentRead, "no human write or agent read grant");
    const listed = await human.session.ok("list_tokens", { include_revoked: false });
    for (const g of grants) {
      const row = listed.items.find((t: { id: string }) => t.id === g.tokenId);
      assert(row, `grant ${g.tokenId} is not listed`);
      equal(row.source, "oauth", "source");
      equal(row.client?.name, g.clientName, "client name");
    }
    const before = await fetch(`${base}/mcp`, { method: "POST", headers: mcpHeaders(agentRead.provider.accessToken), body: LIST });
    equal(before.status, 200, "status before revoking");
    const revoked = await human.session.ok("revoke_token", { token_id: agentRead.tokenId });
    equal(revoked.revoked, true, "revoked");
    const after = await fetch(`${base}/mcp`, { method: "POST", headers: mcpHeaders(agentRead.provider.accessToken), body: LIST });
    equal(after.status, 401, "status after revoking");
  });
}

function mcpHeaders(token: string | undefined): Record<string, string> {
  return { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token ?? ""}` };
}
