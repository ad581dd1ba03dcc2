/**
 * A refresh token is single-use: one that its grant has already replaced,
 * presented again, ends the whole grant (every access and refresh token),
 * answers invalid_grant, and tells the person why in the audit feed.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { connectApp, mcp, mcpStatus, refresh, tokenRequest, type Connected, type Tokens } from "./oauth-helpers.ts";

async function refreshed(app: Connected, refreshToken: string): Promise<Tokens> {
  const res = await refresh(app.clientId, refreshToken);
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Tokens;
}

async function refusedGrant(app: Connected, refreshToken: string): Promise<string> {
  const res = await refresh(app.clientId, refreshToken);
  expect(res.status).toBe(400);
  expect(res.headers.get("cache-control")).toBe("no-store");
  const body = (await res.json()) as { error: string; error_description: string };
  expect(body.error).toBe("invalid_grant");
  return body.error_description;
}

const grantKeys = async (personId: string) => (await env.OAUTH_KV.list({ prefix: `grant:${personId}:` })).keys.length;

/** What the person sees: list_tokens (with their tg_ token) and the audit feed's entry for the grant. */
async function personView(app: Connected) {
  const human = await mcp(app.acc.human);
  const all = (await human.ok("list_tokens")).items as { id: string; source: string; state: string; label: string }[];
  const live = (await human.ok("list_tokens", { include_revoked: false })).items as { source: string }[];
  const grant = all.find((t) => t.source === "oauth");
  const feed = grant ? ((await human.ok("list_activity", { target_id: grant.id })).items as { tool: string; actor: string; summary: string; client: string | null }[]) : [];
  await human.close();
  return { grant, live: live.filter((t) => t.source === "oauth"), feed };
}

describe("a replaced refresh token presented again ends the grant", () => {
  it("code → r1; r1 → r2; r1 again → invalid_grant; then r2 and every access token of the grant are refused, and the person sees why", async () => {
    const app = await connectApp({ actAs: "self", access: "write" }, { clientName: "Replayed app" });
    const t2 = await refreshed(app, app.tokens.refresh_token);
    expect(await mcpStatus(t2.access_token)).toBe(200);

    expect(await refusedGrant(app, app.tokens.refresh_token)).toMatch(/already used; the authorization is ended/);
    expect(await refusedGrant(app, t2.refresh_token)).not.toBe("");
    for (const token of [app.tokens.access_token, t2.access_token]) expect(await mcpStatus(token)).toBe(401);
    expect(await grantKeys(app.personId)).toBe(0);
    expect((await env.OAUTH_KV.list({ prefix: `token:${app.personId}:` })).keys).toEqual([]);

    const { grant, live, feed } = await personView(app);
    expect(grant).toMatchObject({ label: "Replayed app", state: "revoked" });
    expect(live).toEqual([]);
    expect(feed).toHaveLength(1);
    expect(feed[0]).toMatchObject({ tool: "refresh_token_replay", actor: "taskgate", client: "Replayed app" });
    expect(feed[0].summary).toBe(
      `ended the app connection ${grant?.id} "Replayed app": a refresh token it had already replaced was used again, so a copy of it may be in other hands; every token of the connection stopped working. Connect the app again.`,
    );
    expect(feed[0].summary).not.toContain(app.tokens.refresh_token.split(":")[2]);

    // A third try changes nothing more: one entry, still refused.
    expect(await refusedGrant(app, app.tokens.refresh_token)).not.toBe("");
    expect((await personView(app)).feed).toHaveLength(1);
  });

  it("an older token, after its successor was used too (r1 → r2 → r3, then r1), ends the grant as well", async () => {
    const app = await connectApp({ actAs: "agent", agentName: "replay-bot", access: "read" }, { clientName: "Older token app" });
    const t2 = await refreshed(app, app.tokens.refresh_token);
    const t3 = await refreshed(app, t2.refresh_token);
    const t4 = await refreshed(app, t3.refresh_token);
    expect(await mcpStatus(t4.access_token)).toBe(200);

    await refusedGrant(app, app.tokens.refresh_token);
    await refusedGrant(app, t4.refresh_token);
    for (const token of [app.tokens.access_token, t2.access_token, t3.access_token, t4.access_token]) expect(await mcpStatus(token)).toBe(401);
    const { grant, feed } = await personView(app);
    expect(grant?.state).toBe("revoked");
    expect(feed.map((e) => e.tool)).toEqual(["refresh_token_replay"]);
  });

  it("a token the grant never issued is refused without ending it, a refused refresh does not use its token; the current one keeps rotating", async () => {
    const app = await connectApp({ actAs: "self", access: "read" }, { clientName: "Guessed app" });
    const [user, grantId] = app.tokens.refresh_token.split(":");
    await refusedGrant(app, `${user}:${grantId}:${"x".repeat(32)}`);
    // The provider refuses this request (another resource): the token stays unused, and its retry is no replay.
    const elsewhere = await tokenRequest({ grant_type: "refresh_token", client_id: app.clientId, refresh_token: app.tokens.refresh_token, resource: "https://other.example/mcp" });
    expect(elsewhere.status).toBe(400);
    expect(((await elsewhere.json()) as { error: string }).error).toBe("invalid_target");
    const t2 = await refreshed(app, app.tokens.refresh_token);
    const t3 = await refreshed(app, t2.refresh_token);
    expect(await mcpStatus(t3.access_token)).toBe(200);
    const { grant, feed } = await personView(app);
    expect(grant?.state).toBe("active");
    expect(feed.filter((e) => e.tool === "refresh_token_replay")).toEqual([]);
  });
});
