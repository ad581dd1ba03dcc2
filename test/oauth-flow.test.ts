import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { connect, ERAS, MCP_URL, seedAccount, workerFetch } from "./helpers.ts";
import { authorizePath, consent, consentForm, connectApp, exchange, mcp, mcpStatus, pkce, refresh, registerClient, type Choice, type Tokens } from "./oauth-helpers.ts";
import { TOOL_NAMES, WRITE_TOOLS } from "../src/catalog/effects.ts";
import { PRESETS, TOOLSETS } from "../src/catalog/toolsets.ts";
import { Browser, ORIGIN, signIn, uniqueEmail, addPerson, expectPageSecurity } from "./web-helpers.ts";
import { PASSWORD } from "./oauth-helpers.ts";

afterEach(() => vi.restoreAllMocks());

describe("connect by URL: DCR, sign-in, consent, PKCE, /mcp with the access token", () => {
  it("the whole flow, both SDK eras, refresh with rotation, revoke", async () => {
    const app = await connectApp({ actAs: "self", access: "write" }, { clientName: "Flow app" });
    expect(app.tokens).toMatchObject({ token_type: "bearer", expires_in: 3600, scope: "tasks:read tasks:write", resource: "https://taskgate.test/mcp" });
    expect(app.tokens.refresh_token).toEqual(expect.any(String));

    for (const era of ERAS) {
      const c = await mcp(app.tokens.access_token, era);
      expect((await c.listTools()).length, era).toBe(84);
      const me = await c.ok("whoami");
      expect(me.token).toMatchObject({ label: "Flow app", kind: "human", scope: "write", agent: null });
      expect(me.account.id).toBe(app.acc.accountId);
      await c.ok("create_task", { title: `made through OAuth, ${era}` });
      await c.close();
    }

    // Refresh rotates: R1 → R2 → R3, and the newest access token works (a replaced one coming back ends the grant: oauth-replay.test.ts).
    const r2 = await refresh(app.clientId, app.tokens.refresh_token);
    expect(r2.status).toBe(200);
    const t2 = (await r2.json()) as { access_token: string; refresh_token: string };
    expect(t2.refresh_token).not.toBe(app.tokens.refresh_token);
    const r3 = await refresh(app.clientId, t2.refresh_token);
    expect(r3.status).toBe(200);
    const t3 = (await r3.json()) as { access_token: string; refresh_token: string };
    expect(await mcpStatus(t3.access_token)).toBe(200);

    // revoke_token (by the person, with a tg_ token) ends every access and refresh token of the grant at once.
    const human = await mcp(app.acc.human);
    const listed = (await human.ok("list_tokens")).items.find((t: { source: string }) => t.source === "oauth");
    expect(listed).toMatchObject({ label: "Flow app", kind: "human", scope: "write", state: "active", client: { id: app.clientId, name: "Flow app" } });
    const revoked = await human.ok("revoke_token", { token_id: listed.id });
    expect(revoked.revoked).toBe(true);
    await human.close();
    for (const token of [app.tokens.access_token, t2.access_token, t3.access_token]) expect(await mcpStatus(token)).toBe(401);
    const afterRevoke = await refresh(app.clientId, t3.refresh_token);
    expect(afterRevoke.status).toBe(400);
    expect(((await afterRevoke.json()) as { error: string }).error).toBe("invalid_grant");
  });

  it("a Client ID Metadata Document client: the document comes from the test's mocked fetch, the page shows its domain", async () => {
    const acc = await seedAccount();
    const email = uniqueEmail();
    await addPerson(acc.accountId, email, PASSWORD);
    const b = new Browser();
    await signIn(b, email, PASSWORD);
    const clientId = "https://app.example.com/oauth/client.json";
    const redirectUri = "https://app.example.com/callback";
    const fetched: string[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL) => {
      const url = new Request(input).url;
      fetched.push(url);
      if (url !== clientId) throw new Error(`unexpected outbound fetch ${url}`);
      return new Response(
        JSON.stringify({ client_id: clientId, client_name: "Example <b>App</b>", redirect_uris: [redirectUri], token_endpoint_auth_method: "none", grant_types: ["authorization_code", "refresh_token"] }),
        { headers: { "content-type": "application/json", "cache-control": "max-age=60" } },
      );
    });
    const { verifier, challenge } = await pkce();
    const shown = await b.get(`/authorize?${new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: redirectUri, state: "s", code_challenge: challenge, code_challenge_method: "S256", scope: "tasks:read", resource: `${ORIGIN}/mcp` })}`);
    expect(shown.status).toBe(200);
    expectPageSecurity(shown, expect);
    expect(shown.headers.get("content-security-policy")).toContain("form-action 'self' https://app.example.com");
    const html = await shown.text();
    expect(html).toContain("Published by <strong>app.example.com</strong>");
    expect(html).toContain("Example &lt;b&gt;App&lt;/b&gt;");
    expect(html).not.toContain("<b>App</b>");
    expect(html).toContain("Access will be sent to <strong>app.example.com</strong>");
    expect(html).not.toMatch(/an app on your computer/);

    const q = await consent(b, { clientId, redirectUri, challenge, scope: "tasks:read" }, { actAs: "agent", agentName: "example-app", access: "read" });
    const tokens = await exchange(clientId, q.get("code") as string, verifier, redirectUri);
    expect(fetched.length).toBeGreaterThan(0);
    vi.restoreAllMocks();
    const c = await mcp(tokens.access_token, "legacy");
    expect((await c.listTools()).length).toBe(34);
    expect((await c.ok("whoami")).token).toMatchObject({ kind: "agent", agent: "example-app", scope: "read", label: "Example <b>App</b>" });
    await c.close();
  });
});

describe("a grant is a principal like any other", () => {
  it("costs what a tg_ token costs: one D1 call to resolve it cold (with the bookkeeping), none from the cache", async () => {
    const app = await connectApp({ actAs: "agent", agentName: "counted", access: "write" });
    const call = (name: string, args: Record<string, unknown> = {}) =>
      workerFetch("https://taskgate.test/mcp", {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${app.tokens.access_token}` },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }),
      });
    const first = await call("whoami");
    expect(first.status).toBe(200);
    expect(first.headers.get("x-d1-calls")).toBe("2");
    const row = await env.DB.prepare("SELECT t.last_used_at, a.last_seen_at FROM tokens t JOIN agents a ON a.id = t.agent_id WHERE t.person_id = ?")
      .bind(app.personId)
      .first<{ last_used_at: string | null; last_seen_at: string | null }>();
    expect(row?.last_used_at).toMatch(/^\d{4}-/);
    expect(row?.last_seen_at).toBe(row?.last_used_at);
    expect((await call("whoami")).headers.get("x-d1-calls")).toBe("1");
    // Paths below /mcp are the same protected resource: the grant's token is accepted there too.
    const below = await workerFetch("https://taskgate.test/mcp/readonly", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${app.tokens.access_token}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "whoami", arguments: {} } }),
    });
    expect(below.status).not.toBe(401);
    expect(below.status).not.toBe(403);
  });

  it("for each consent choice, tools/list is exactly what a tg_ token of that kind and scope gives", async () => {
    const acc = await seedAccount("Choices", "bot");
    const byToken = async (secret: string) => {
      const c = await mcp(secret);
      const names = (await c.listTools()).map((t) => t.name).sort();
      await c.close();
      return names;
    };
    const cases: [Choice, string, number][] = [
      [{ actAs: "self", access: "write" }, acc.human, 84],
      [{ actAs: "self", access: "read" }, acc.humanRead, 34],
      [{ actAs: "agent", agentName: "bot", access: "write" }, acc.agent, 75],
      [{ actAs: "agent", agentName: "bot", access: "read" }, acc.agentRead, 34],
    ];
    for (const [choice, secret, n] of cases) {
      const app = await connectApp(choice, { acc });
      for (const era of ERAS) {
        const c = await mcp(app.tokens.access_token, era);
        const names = (await c.listTools()).map((t) => t.name).sort();
        expect(names, `${JSON.stringify(choice)} ${era}`).toEqual(await byToken(secret));
        expect(names).toHaveLength(n);
        await c.close();
      }
    }
  });

  it("the toolsets chosen on the consent page are kept in the grant: tools/list and tools/call cover only them, also after a refresh", async () => {
    const acc = await seedAccount("Consent toolsets", "bot");
    const inSets = (...names: string[]) => new Set<string>([...TOOLSETS, ...PRESETS].filter((t) => names.includes(t.name)).flatMap((t) => t.tools));
    const cases: [Choice, string[]][] = [
      [{ actAs: "agent", agentName: "bot", access: "write", tools: "agent" }, TOOL_NAMES.filter((n) => inSets("agent").has(n))],
      [{ actAs: "self", access: "write", tools: "chosen", toolsets: ["runs", "approvals"] }, TOOL_NAMES.filter((n) => inSets("runs", "approvals").has(n))],
      [{ actAs: "self", access: "read", tools: "chosen", toolsets: ["tasks"] }, TOOL_NAMES.filter((n) => inSets("tasks").has(n) && !WRITE_TOOLS.has(n))],
    ];
    for (const [choice, expected] of cases) {
      const app = await connectApp(choice, { acc });
      for (const era of ERAS) {
        const c = await mcp(app.tokens.access_token, era);
        expect((await c.listTools()).map((t) => t.name), `${JSON.stringify(choice)} ${era}`).toEqual(expected);
        expect(await c.fails("list_labels", {})).toMatch(/^list_labels is outside this connection's toolsets .*in the toolset `labels`.*allow it again with labels among them/);
        await c.close();
      }
      // A URL narrows the grant's toolsets further, never widens them.
      const narrowed = await connect(app.tokens.access_token, "modern", { url: `${MCP_URL}/x/tasks,runs` });
      expect((await narrowed.listTools()).map((t) => t.name)).toEqual(expected.filter((n) => inSets("tasks", "runs").has(n)));
      await narrowed.close();
      const res = await refresh(app.clientId, app.tokens.refresh_token);
      expect(res.status).toBe(200);
      const again = await mcp(((await res.json()) as Tokens).access_token);
      expect((await again.listTools()).map((t) => t.name)).toEqual(expected);
      await again.close();
    }
  });

  it("the consent page offers the toolsets and refuses a choice it cannot keep, nothing allowed", async () => {
    const acc = await seedAccount("Consent toolset errors");
    const email = uniqueEmail();
    await addPerson(acc.accountId, email, PASSWORD);
    const b = new Browser();
    expect((await signIn(b, email, PASSWORD)).status).toBe(303);
    const { clientId, redirectUri } = await registerClient("Toolset app");
    const { challenge } = await pkce();
    const shown = await (await b.get(authorizePath({ clientId, redirectUri, challenge }))).text();
    for (const t of TOOLSETS) expect(shown).toContain(`value="${t.name}"`);
    expect(shown).toContain('name="tools" value="agent"');
    for (const [extra, message] of [
      [{ tools: "chosen" }, /tick at least one toolset/],
      [{ tools: "chosen", toolset: ["tasks", "frobnicate"] }, /tick only the toolsets listed/],
      [{ tools: "everything" }, /Choose which tools the app sees/],
    ] as [Record<string, string | string[]>, RegExp][]) {
      const page = await (await b.get(authorizePath({ clientId, redirectUri, challenge }))).text();
      const res = await b.post("/authorize", { ...consentForm(page), act_as: "self", access: "write", decision: "allow", ...extra });
      expect(res.status, JSON.stringify(extra)).toBe(400);
      const html = await res.text();
      expect(html).toMatch(message);
      expect(html).not.toContain("frobnicate");
    }
  });

  it("acting as an agent: a new name creates the agent; the audit feed names the client; pausing it makes the grant read-only", async () => {
    const app = await connectApp({ actAs: "agent", agentName: "claude-code", access: "write" }, { clientName: "Claude Code" });
    const agent = await mcp(app.tokens.access_token);
    const task = await agent.ok("create_task", { title: "Through OAuth" });
    await agent.close();

    const human = await mcp(app.acc.human);
    await human.ok("create_task", { title: "Through a tg_ token" });
    const feed = (await human.ok("list_activity")).items as { actor: string; client: string | null; target_id: string }[];
    expect(feed.find((e) => e.target_id === task.task.id)).toMatchObject({ actor: "claude-code", client: "Claude Code" });
    expect(feed.find((e) => e.target_id !== task.task.id && e.actor === "human")?.client).toBeNull();
    const history = (await human.ok("get_task_history", { task_id: task.task.id })).items;
    expect(history[0]).toMatchObject({ actor: "claude-code", client: "Claude Code" });
    expect((await human.ok("list_agents")).items.map((a: { name: string }) => a.name)).toContain("claude-code");

    await human.ok("pause_agent", { agent: "claude-code" });
    const paused = await mcp(app.tokens.access_token);
    expect((await paused.listTools()).length).toBe(34);
    expect(await paused.fails("create_task", { title: "refused" })).toMatch(/paused/);
    await paused.close();
    await human.ok("resume_agent", { agent: "claude-code" });
    const resumed = await mcp(app.tokens.access_token);
    expect((await resumed.listTools()).length).toBe(75);
    await resumed.close();
    await human.close();
  });

  it("Deny sends the browser back with access_denied and its state, and records nothing", async () => {
    const acc = await seedAccount();
    const email = uniqueEmail();
    await addPerson(acc.accountId, email, PASSWORD);
    const b = new Browser();
    await signIn(b, email, PASSWORD);
    const { clientId, redirectUri } = await registerClient("Denied app");
    const { challenge } = await pkce();
    const html = await (await b.get(authorizePath({ clientId, redirectUri, challenge, state: "keep-me" }))).text();
    expect(html).toMatch(/an app on your computer/);
    const res = await b.post("/authorize", { ...consentForm(html), decision: "deny" });
    expect(res.status).toBe(302);
    const to = new URL(res.headers.get("location") as string);
    expect(to.origin + to.pathname).toBe(redirectUri);
    expect(to.searchParams.get("error")).toBe("access_denied");
    expect(to.searchParams.get("state")).toBe("keep-me");
    expect(to.searchParams.get("code")).toBeNull();
    const rows = await env.DB.prepare("SELECT count(*) AS n FROM tokens WHERE client_id = ?").bind(clientId).first<{ n: number }>();
    expect(rows?.n).toBe(0);
  });

  it("a new consent for the same app replaces the person's earlier grant", async () => {
    const first = await connectApp({ actAs: "self", access: "read" });
    const { verifier, challenge } = await pkce();
    const q = await consent(first.browser, { clientId: first.clientId, redirectUri: first.redirectUri, challenge }, { actAs: "self", access: "write" });
    const second = await exchange(first.clientId, q.get("code") as string, verifier, first.redirectUri);
    expect(await mcpStatus(first.tokens.access_token)).toBe(401);
    expect(await mcpStatus(second.access_token)).toBe(200);
    const rows = await env.DB.prepare("SELECT scope, revoked_at FROM tokens WHERE client_id = ? ORDER BY created_at").bind(first.clientId).all<{ scope: string; revoked_at: string | null }>();
    expect(rows.results.map((r) => [r.scope, r.revoked_at === null])).toEqual([["read", false], ["write", true]]);
  });
});
