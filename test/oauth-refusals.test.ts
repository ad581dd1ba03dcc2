import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { seedAccount, snapshotDb, workerFetch } from "./helpers.ts";
import {
  authorizePath, consent, consentForm, connectApp, exchange, mcp, mcpStatus, PASSWORD, pkce, refresh, registerClient, RESOURCE, tokenRequest,
} from "./oauth-helpers.ts";
import { addPerson, Browser, signIn, uniqueEmail } from "./web-helpers.ts";

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

/** A signed-in person's browser and a registered client. */
async function signedIn(clientName = "Refused app") {
  const acc = await seedAccount();
  const email = uniqueEmail();
  const personId = await addPerson(acc.accountId, email, PASSWORD);
  const browser = new Browser();
  expect((await signIn(browser, email, PASSWORD)).status).toBe(303);
  const client = await registerClient(clientName);
  return { acc, email, personId, browser, ...client };
}

function expectNoStackTrace(html: string): void {
  expect(html).not.toMatch(/<script|\bat \w+ \(|TypeError|Error:/);
}

async function grantRows(clientId: string): Promise<number> {
  return (await env.DB.prepare("SELECT count(*) AS n FROM tokens WHERE client_id = ?").bind(clientId).first<{ n: number }>())?.n ?? 0;
}

describe("refused at /authorize", () => {
  it("a redirect_uri that is not registered: a page here, never a redirect", async () => {
    const s = await signedIn();
    const { challenge } = await pkce();
    for (const redirectUri of ["https://evil.example/callback", "http://127.0.0.1:33418/callback/other", "http://127.0.0.1:33418/callback?x=1"]) {
      const res = await s.browser.get(authorizePath({ clientId: s.clientId, redirectUri, challenge }));
      expect(res.status, redirectUri).toBe(400);
      expect(res.headers.get("location")).toBeNull();
      const html = await res.text();
      expect(html).toMatch(/This connection request is not valid/);
      expect(html).not.toContain("evil.example");
      expectNoStackTrace(html);
    }
    expect(await grantRows(s.clientId)).toBe(0);
  });

  it("an unknown client: a page here, never a redirect", async () => {
    const s = await signedIn();
    const { challenge } = await pkce();
    const res = await s.browser.get(authorizePath({ clientId: "no-such-client", redirectUri: "https://evil.example/cb", challenge }));
    expect(res.status).toBe(400);
    expect(res.headers.get("location")).toBeNull();
    const html = await res.text();
    expect(html).toMatch(/This connection request is not valid[\s\S]*Invalid client_id/);
    expectNoStackTrace(html);
  });

  it("PKCE missing: back to the client with invalid_request, no consent page, no code", async () => {
    const s = await signedIn();
    const res = await s.browser.get(authorizePath({ clientId: s.clientId, redirectUri: s.redirectUri }));
    expect(res.status).toBe(302);
    const to = new URL(res.headers.get("location") as string);
    expect(to.origin + to.pathname).toBe(s.redirectUri);
    expect(to.searchParams.get("error")).toBe("invalid_request");
    expect(to.searchParams.get("code")).toBeNull();
  });

  it("PKCE missing from a confidential client is refused too (Taskgate requires S256 of every client)", async () => {
    const s = await signedIn();
    const reg = await workerFetch("https://taskgate.test/oauth/register", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_name: "Server app", redirect_uris: ["https://server.example/cb"], token_endpoint_auth_method: "client_secret_basic" }),
    });
    const { client_id } = (await reg.json()) as { client_id: string };
    const res = await s.browser.get(authorizePath({ clientId: client_id, redirectUri: "https://server.example/cb" }));
    expect(res.status).toBe(302);
    const to = new URL(res.headers.get("location") as string);
    expect(to.origin).toBe("https://server.example");
    expect(to.searchParams.get("error")).toBe("invalid_request");
    expect(to.searchParams.get("error_description")).toMatch(/S256/);
  });

  it("PKCE `plain`: back to the client with invalid_request, no consent page, no code", async () => {
    const s = await signedIn();
    const res = await s.browser.get(authorizePath({ clientId: s.clientId, redirectUri: s.redirectUri, challenge: "a".repeat(50), method: "plain" }));
    expect(res.status).toBe(302);
    const to = new URL(res.headers.get("location") as string);
    expect(to.origin + to.pathname).toBe(s.redirectUri);
    expect(to.searchParams.get("error")).toBe("invalid_request");
    expect(to.searchParams.get("error_description")).toMatch(/plain/);
    expect(to.searchParams.get("code")).toBeNull();
    expect(await grantRows(s.clientId)).toBe(0);
  });

  it("a resource other than this server's /mcp: back to the client with invalid_target, no consent", async () => {
    const s = await signedIn();
    const { challenge } = await pkce();
    const res = await s.browser.get(authorizePath({ clientId: s.clientId, redirectUri: s.redirectUri, challenge, resource: "https://other.example/mcp" }));
    expect(res.status).toBe(302);
    const to = new URL(res.headers.get("location") as string);
    expect(to.origin + to.pathname).toBe(s.redirectUri);
    expect(to.searchParams.get("error")).toBe("invalid_target");
    expect(to.searchParams.get("code")).toBeNull();
  });

  it("signed out: /authorize sends the browser to sign in and back to the same request", async () => {
    const { clientId, redirectUri } = await registerClient();
    const { challenge } = await pkce();
    const path = authorizePath({ clientId, redirectUri, challenge });
    const res = await new Browser().get(path);
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe(`/signin?return_to=${encodeURIComponent(path)}`);
  });
});

describe("refused consent forms", () => {
  it("a consent POST without its handle: a page, nothing recorded", async () => {
    const s = await signedIn();
    const { challenge } = await pkce();
    const html = await (await s.browser.get(authorizePath({ clientId: s.clientId, redirectUri: s.redirectUri, challenge }))).text();
    const { csrf } = consentForm(html);
    const res = await s.browser.post("/authorize", { csrf, act_as: "self", access: "write", decision: "allow" });
    expect(res.status).toBe(400);
    expect(res.headers.get("location")).toBeNull();
    expect(await res.text()).toMatch(/no consent handle/);
    expect(await grantRows(s.clientId)).toBe(0);
  });

  it("a consent POST from another session: refused, and the page still works in its own browser", async () => {
    const s = await signedIn();
    const { verifier, challenge } = await pkce();
    const html = await (await s.browser.get(authorizePath({ clientId: s.clientId, redirectUri: s.redirectUri, challenge }))).text();
    const form = consentForm(html);
    const choice = { act_as: "self", access: "write", decision: "allow" };

    // Another person, signed in in another browser, posts the stolen handle with their own session's token.
    const other = new Browser("198.51.100.50");
    const otherEmail = uniqueEmail("mallory");
    await addPerson(s.acc.accountId, otherEmail, PASSWORD);
    await signIn(other, otherEmail, PASSWORD);
    const otherCsrf = consentForm(await (await other.get(authorizePath({ clientId: s.clientId, redirectUri: s.redirectUri, challenge }))).text()).csrf;
    const stolen = await other.post("/authorize", { handle: form.handle, csrf: otherCsrf, ...choice });
    expect(stolen.status).toBe(400);
    expect(stolen.headers.get("location")).toBeNull();
    // …or with the victim's csrf value: not their session's.
    const forged = await other.post("/authorize", { ...form, ...choice });
    expect(forged.status).toBe(403);
    // …or from another site, in the victim's own browser.
    const crossSite = await s.browser.post("/authorize", { ...form, ...choice }, { origin: "https://evil.example" });
    expect(crossSite.status).toBe(403);
    expect(await grantRows(s.clientId)).toBe(0);

    const ok = await s.browser.post("/authorize", { ...form, ...choice });
    expect(ok.status).toBe(302);
    const code = new URL(ok.headers.get("location") as string).searchParams.get("code") as string;
    expect((await exchange(s.clientId, code, verifier, s.redirectUri)).access_token).toEqual(expect.any(String));
  });

  it("a used consent handle can't be used again", async () => {
    const s = await signedIn();
    const { challenge } = await pkce();
    const html = await (await s.browser.get(authorizePath({ clientId: s.clientId, redirectUri: s.redirectUri, challenge }))).text();
    const form = consentForm(html);
    expect((await s.browser.post("/authorize", { ...form, act_as: "self", access: "read", decision: "allow" })).status).toBe(302);
    const again = await s.browser.post("/authorize", { ...form, act_as: "self", access: "write", decision: "allow" });
    expect(again.status).toBe(400);
    expect(await again.text()).toMatch(/expired/);
    expect(await grantRows(s.clientId)).toBe(1);
  });

  it("a tampered form (unknown choices, a bad agent name) shows the page again with what to fix, and records nothing", async () => {
    const s = await signedIn();
    const { challenge } = await pkce();
    let html = await (await s.browser.get(authorizePath({ clientId: s.clientId, redirectUri: s.redirectUri, challenge }))).text();
    for (const [tamper, message] of [
      [{ act_as: "admin", access: "write" }, /Choose who the app acts as/],
      [{ act_as: "self", access: "root" }, /Choose what the app may do/],
      [{ act_as: "agent", agent_name: "", access: "read" }, /Agent name: type the name/],
      [{ act_as: "agent", agent_name: "Not A Name<script>", access: "read" }, /Agent name: use lowercase letters/],
      [{ act_as: "agent", agent_name: "human", access: "read" }, /Agent name: use lowercase letters/],
    ] as const) {
      const res = await s.browser.post("/authorize", { ...consentForm(html), decision: "allow", ...tamper });
      expect(res.status, JSON.stringify(tamper)).toBe(400);
      html = await res.text();
      expect(html).toMatch(message);
      expect(html).not.toContain("<script>");
    }
    expect(await grantRows(s.clientId)).toBe(0);
    const fixed = await s.browser.post("/authorize", { ...consentForm(html), decision: "allow", act_as: "agent", agent_name: "fixed-bot", access: "read" });
    expect(fixed.status).toBe(302);
  });
});

describe("refused at the token endpoint and at /mcp", () => {
  it("a code used twice: the second exchange is refused", async () => {
    const s = await signedIn();
    const { verifier, challenge } = await pkce();
    const q = await consent(s.browser, { clientId: s.clientId, redirectUri: s.redirectUri, challenge }, { actAs: "self", access: "read" });
    const code = q.get("code") as string;
    const first = await exchange(s.clientId, code, verifier, s.redirectUri);
    const again = await tokenRequest({ grant_type: "authorization_code", client_id: s.clientId, code, code_verifier: verifier, redirect_uri: s.redirectUri });
    expect(again.status).toBe(400);
    expect(((await again.json()) as { error: string }).error).toBe("invalid_grant");
    // A replayed code ends the grant it made (the first exchange's tokens too), and list_tokens says so.
    expect(await mcpStatus(first.access_token)).toBe(401);
    const human = await mcp(s.acc.human);
    const listed = (await human.ok("list_tokens")).items.find((t: { source: string }) => t.source === "oauth");
    expect(listed?.state).toBe("revoked");
    await human.close();
  });

  it("a wrong code_verifier, or a different redirect_uri at the exchange: refused", async () => {
    const s = await signedIn();
    const { challenge } = await pkce();
    const q = await consent(s.browser, { clientId: s.clientId, redirectUri: s.redirectUri, challenge }, { actAs: "self", access: "read" });
    const code = q.get("code") as string;
    const wrong = await tokenRequest({ grant_type: "authorization_code", client_id: s.clientId, code, code_verifier: (await pkce()).verifier, redirect_uri: s.redirectUri });
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as { error: string }).error).toBe("invalid_grant");
    const { verifier: v2, challenge: c2 } = await pkce();
    const q2 = await consent(s.browser, { clientId: s.clientId, redirectUri: s.redirectUri, challenge: c2 }, { actAs: "self", access: "read" });
    const elsewhere = await tokenRequest({ grant_type: "authorization_code", client_id: s.clientId, code: q2.get("code") as string, code_verifier: v2, redirect_uri: "http://127.0.0.1:33418/other" });
    expect(elsewhere.status).toBe(400);
    expect(await grantRows(s.clientId)).toBeGreaterThan(0);
    const live = await env.DB.prepare("SELECT count(*) AS n FROM tokens WHERE client_id = ? AND grant_id IS NOT NULL").bind(s.clientId).first<{ n: number }>();
    expect(live?.n, "no grant was activated by a refused exchange").toBe(0);
  });

  it("a token for another resource: issued for this origin's /mcp, refused at another origin's", async () => {
    const app = await connectApp({ actAs: "self", access: "read" });
    expect(await mcpStatus(app.tokens.access_token)).toBe(200);
    const elsewhere = await workerFetch("https://taskgate.example.com/mcp", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${app.tokens.access_token}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.headers.get("www-authenticate")).toMatch(/invalid_token/);
    const retarget = await tokenRequest({ grant_type: "refresh_token", client_id: app.clientId, refresh_token: app.tokens.refresh_token, resource: "https://other.example/mcp" });
    expect(retarget.status).toBe(400);
    expect(((await retarget.json()) as { error: string }).error).toBe("invalid_target");
  });

  it("an expired access token: 401 (an hour later)", async () => {
    const app = await connectApp({ actAs: "self", access: "read" });
    expect(await mcpStatus(app.tokens.access_token)).toBe(200);
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + 3601_000);
    expect(await mcpStatus(app.tokens.access_token)).toBe(401);
    vi.useRealTimers();
    // The refresh token still works and gives a live access token.
    const r = await refresh(app.clientId, app.tokens.refresh_token);
    expect(r.status).toBe(200);
  });

  it("an expired grant (30 days on): its tokens and its refresh are refused", async () => {
    const app = await connectApp({ actAs: "self", access: "read" });
    await env.DB.prepare("UPDATE tokens SET expires_at = ? WHERE person_id = ?").bind(new Date(Date.now() - 1000).toISOString(), app.personId).run();
    expect(await mcpStatus(app.tokens.access_token)).toBe(401);
    const r = await refresh(app.clientId, app.tokens.refresh_token);
    expect(r.status).toBe(400);
  });

  it("a revoked token: 401 for the access token, invalid_grant for the refresh token", async () => {
    const app = await connectApp({ actAs: "self", access: "write" });
    const c = await mcp(app.tokens.access_token);
    const me = await c.ok("whoami");
    await c.ok("revoke_token", { token_id: me.token.id, confirm: true });
    await c.close();
    expect(await mcpStatus(app.tokens.access_token)).toBe(401);
    expect(((await (await refresh(app.clientId, app.tokens.refresh_token)).json()) as { error: string }).error).toBe("invalid_grant");
  });

  it("a refresh token is not an access token", async () => {
    const app = await connectApp({ actAs: "self", access: "read" });
    expect(await mcpStatus(app.tokens.refresh_token)).toBe(401);
  });

  it("a token request narrowed to tasks:read gives a read-only principal, whatever the grant allows", async () => {
    const app = await connectApp({ actAs: "self", access: "write" });
    const r = await tokenRequest({ grant_type: "refresh_token", client_id: app.clientId, refresh_token: app.tokens.refresh_token, scope: "tasks:read", resource: RESOURCE });
    expect(r.status).toBe(200);
    const narrowed = (await r.json()) as { access_token: string; scope: string };
    expect(narrowed.scope).toBe("tasks:read");
    const c = await mcp(narrowed.access_token);
    expect((await c.listTools()).length).toBe(34);
    // A write asks for more than the token carries: the scope challenge (403), which a host answers by asking the person again.
    await expect(c.call("create_task", { title: "no" })).rejects.toThrow(/Insufficient scope: required "tasks:read tasks:write"/);
    await c.close();
  });

  it("a grant of account A used on account B's ids: not found, nothing changed", async () => {
    const a = await connectApp({ actAs: "self", access: "write" });
    const b = await seedAccount("Account B");
    const bClient = await mcp(b.human);
    const task = (await bClient.ok("create_task", { title: "B's task" })).task;
    const project = (await bClient.ok("create_project", { name: "B's project" })).project;
    await bClient.close();

    const before = await snapshotDb();
    const c = await mcp(a.tokens.access_token);
    for (const [tool, args] of [
      ["get_task", { task_id: task.id }],
      ["update_task", { task_id: task.id, title: "taken over" }],
      ["delete_task", { task_id: task.id }],
      ["complete_task", { task_id: task.id }],
      ["comment_on_task", { task_id: task.id, body: "hi" }],
      ["get_project", { project_id: project.id }],
      ["archive_project", { project_id: project.id }],
    ] as const) {
      expect(await c.fails(tool, args), tool).toMatch(/No (task|project) \S+ in this account/);
    }
    await c.close();
    expect(await snapshotDb()).toBe(before);
  });
});
