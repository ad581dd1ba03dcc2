import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { listTokensSql, revokeTokenSql } from "../src/db/admin-tokens.ts";
import { run } from "./helpers.ts";
import { connectApp, mcp, mcpStatus, refresh, tokenRequest } from "./oauth-helpers.ts";

async function grantKeys(personId: string): Promise<number> {
  return (await env.OAUTH_KV.list({ prefix: `grant:${personId}:` })).keys.length;
}

async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 50; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`never happened: ${what}`);
}

describe("OAuth grants in list_tokens, revoke_token and the admin CLI", () => {
  it("the admin CLI's listing (D1 through wrangler) shows each grant with its app, kind and scope", async () => {
    const app = await connectApp({ actAs: "agent", agentName: "cli-bot", access: "read" }, { clientName: "Listed app" });
    const rows = (await env.DB.prepare(listTokensSql(app.acc.accountId).sql).bind(...listTokensSql(app.acc.accountId).params).all()).results;
    const grant = rows.find((r) => r.source === "oauth");
    expect(grant).toMatchObject({ label: "Listed app", client_name: "Listed app", client_id: app.clientId, kind: "agent", agent: "cli-bot", scope: "read", prefix: null, revoked_at: null });
    expect(Date.parse(grant?.expires_at as string) - Date.now()).toBeGreaterThan(29 * 86_400_000);
    expect(rows.filter((r) => r.source === "token")).toHaveLength(4);
    expect(JSON.stringify(rows)).not.toContain(app.tokens.access_token);
  });

  it("a revocation made only in D1 (admin CLI revoke-token) refuses the access token and ends the grant in KV too", async () => {
    const app = await connectApp({ actAs: "self", access: "write" });
    expect(await grantKeys(app.personId)).toBe(1);
    const rows = (await env.DB.prepare("SELECT id FROM tokens WHERE person_id = ?").bind(app.personId).all<{ id: string }>()).results;
    await run([revokeTokenSql(rows[0].id, new Date().toISOString())]);
    expect(await mcpStatus(app.tokens.access_token)).toBe(401);
    await eventually(async () => (await grantKeys(app.personId)) === 0, "the grant is gone from KV");
    const r = await refresh(app.clientId, app.tokens.refresh_token);
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: string }).error).toBe("invalid_grant");
  });

  it("a refresh after a D1-only revocation is refused, and that ends the grant in KV", async () => {
    const app = await connectApp({ actAs: "self", access: "read" });
    const rows = (await env.DB.prepare("SELECT id FROM tokens WHERE person_id = ?").bind(app.personId).all<{ id: string }>()).results;
    await run([revokeTokenSql(rows[0].id, new Date().toISOString())]);
    const r = await refresh(app.clientId, app.tokens.refresh_token);
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: string }).error).toBe("invalid_grant");
    expect(await grantKeys(app.personId)).toBe(0);
  });

  it("an app that revokes its own refresh token (RFC 7009) shows as revoked in list_tokens", async () => {
    const app = await connectApp({ actAs: "self", access: "read" }, { clientName: "Leaving app" });
    const res = await tokenRequest({ token: app.tokens.refresh_token, token_type_hint: "refresh_token", client_id: app.clientId });
    expect(res.status).toBe(200);
    expect(await mcpStatus(app.tokens.access_token)).toBe(401);
    const human = await mcp(app.acc.human);
    const listed = (await human.ok("list_tokens")).items.find((t: { source: string }) => t.source === "oauth");
    expect(listed).toMatchObject({ label: "Leaving app", state: "revoked" });
    await human.close();
  });

  it("revoking an access token alone (RFC 7009) keeps the grant: refresh still works", async () => {
    const app = await connectApp({ actAs: "self", access: "read" });
    const res = await tokenRequest({ token: app.tokens.access_token, client_id: app.clientId });
    expect(res.status).toBe(200);
    expect(await mcpStatus(app.tokens.access_token)).toBe(401);
    const r = await refresh(app.clientId, app.tokens.refresh_token);
    expect(r.status).toBe(200);
    const state = await env.DB.prepare("SELECT revoked_at FROM tokens WHERE person_id = ?").bind(app.personId).first<{ revoked_at: string | null }>();
    expect(state?.revoked_at).toBeNull();
  });

  it("an agent's grant lists only that agent's tokens; the person's revoke_token through MCP ends it at once", async () => {
    const app = await connectApp({ actAs: "agent", agentName: "bot", access: "write" }, { clientName: "Bot app" });
    const agent = await mcp(app.tokens.access_token);
    const own = (await agent.ok("list_tokens")).items as { id: string; source: string; agent: string; current: boolean }[];
    expect(own.every((t) => t.agent === "bot")).toBe(true);
    expect(own.map((t) => t.source).sort()).toEqual(["oauth", "token", "token"]);
    const mine = own.find((t) => t.current);
    expect(mine?.source).toBe("oauth");
    expect(await agent.fails("revoke_token", { token_id: mine?.id as string })).toMatch(/human/);
    await agent.close();

    const human = await mcp(app.acc.human);
    await human.ok("revoke_token", { token_id: mine?.id as string });
    await human.close();
    expect(await mcpStatus(app.tokens.access_token)).toBe(401);
    expect(await grantKeys(app.personId)).toBe(0);
  });
});
