/**
 * A refresh token is single-use even when its uses arrive at the same
 * moment: of n concurrent refreshes with the same token at most one gets new
 * tokens, the others get invalid_grant, and the grant is ended (every token
 * of it, the winner's new ones too), with one entry in the person's audit
 * feed. The spend is one conditional write in D1 (src/db/refresh-tokens.ts).
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { seedAccount } from "./helpers.ts";
import { hashToken } from "../src/domain/tokens.ts";
import { connectApp, dailyJobAt, mcp, mcpStatus, refresh, type Connected, type Tokens } from "./oauth-helpers.ts";

interface Answer {
  status: number;
  cacheControl: string | null;
  body: Partial<Tokens> & { error?: string; error_description?: string };
}

/** n refresh requests with the same token, sent together. */
async function together(app: Connected, refreshToken: string, n: number): Promise<Answer[]> {
  return Promise.all(
    Array.from({ length: n }, async () => {
      const res = await refresh(app.clientId, refreshToken);
      return { status: res.status, cacheControl: res.headers.get("cache-control"), body: (await res.json()) as Answer["body"] };
    }),
  );
}

afterEach(() => {
  vi.useRealTimers();
});

/** What the first database keeps of a grant's refresh tokens: the hashes spent, 'replayed' once it was ended for a replay. */
async function spentRows(app: Connected): Promise<string[]> {
  const [user, grantId] = app.tokens.refresh_token.split(":");
  const { results } = await env.DB.prepare("SELECT hash FROM spent_refresh_tokens WHERE user_id = ? AND grant_id = ? ORDER BY hash")
    .bind(user, grantId)
    .all<{ hash: string }>();
  return results.map((r) => r.hash);
}

async function auditFeed(app: Connected) {
  const human = await mcp(app.acc.human);
  const all = (await human.ok("list_tokens")).items as { id: string; source: string; state: string }[];
  const grant = all.find((t) => t.source === "oauth");
  const feed = grant ? ((await human.ok("list_activity", { target_id: grant.id })).items as { tool: string; actor: string; summary: string }[]) : [];
  await human.close();
  return { grant, feed };
}

describe("concurrent refreshes with the same refresh token", () => {
  for (const n of [4, 8]) {
    it(`${n} at once: at most one 200, the others invalid_grant, and the grant ends with one audit entry`, async () => {
      const app = await connectApp({ actAs: "self", access: "write" }, { clientName: `Race ${n} app` });
      const answers = await together(app, app.tokens.refresh_token, n);

      const won = answers.filter((a) => a.status === 200);
      const refused = answers.filter((a) => a.status === 400);
      console.log(JSON.stringify({ test: "refresh race", sent: n, ok200: won.length, invalid_grant400: refused.length }));
      expect(won.length, JSON.stringify(answers.map((a) => a.status))).toBeLessThanOrEqual(1);
      expect(refused.length).toBe(n - won.length);
      for (const a of refused) {
        expect(a.body.error).toBe("invalid_grant");
        expect(a.cacheControl).toBe("no-store");
      }

      // The grant is ended: every token of it, a winner's new ones included, is refused.
      const accessTokens = [app.tokens.access_token, ...won.map((a) => a.body.access_token as string)];
      for (const token of accessTokens) expect(await mcpStatus(token)).toBe(401);
      for (const token of [app.tokens.refresh_token, ...won.map((a) => a.body.refresh_token as string)]) {
        expect((await refresh(app.clientId, token)).status).toBe(400);
      }
      expect((await env.OAUTH_KV.list({ prefix: `grant:${app.personId}:` })).keys).toEqual([]);
      expect((await env.OAUTH_KV.list({ prefix: `token:${app.personId}:` })).keys).toEqual([]);

      const { grant, feed } = await auditFeed(app);
      expect(grant?.state).toBe("revoked");
      expect(feed.map((e) => [e.tool, e.actor])).toEqual([["refresh_token_replay", "taskgate"]]);
      expect(feed[0].summary).toContain("a refresh token it had already replaced was used again");
      expect(await spentRows(app), "the ended grant's spent tokens are forgotten, its mark kept").toEqual(["replayed"]);
    });
  }

  it("an account in the second database: its grant's race is decided in the first, and ends the grant there", async () => {
    const acc = await seedAccount("Second database account", "bot", "DB_1");
    const app = await connectApp({ actAs: "agent", agentName: "race-bot", access: "read" }, { acc, db: env.DB_1, clientName: "Second database app" });
    const answers = await together(app, app.tokens.refresh_token, 4);
    expect(answers.filter((a) => a.status === 200).length).toBeLessThanOrEqual(1);
    expect(answers.filter((a) => a.status === 400 && a.body.error === "invalid_grant").length).toBeGreaterThanOrEqual(3);
    expect(await mcpStatus(app.tokens.access_token)).toBe(401);
    const { grant, feed } = await auditFeed(app);
    expect(grant?.state).toBe("revoked");
    expect(feed.map((e) => e.tool)).toEqual(["refresh_token_replay"]);
    expect(await spentRows(app)).toEqual(["replayed"]);
    const [user, grantId] = app.tokens.refresh_token.split(":");
    const inSecond = await env.DB_1.prepare("SELECT count(*) AS n FROM spent_refresh_tokens WHERE user_id = ? AND grant_id = ?").bind(user, grantId).first<{ n: number }>();
    expect(inSecond?.n, "the second database keeps none").toBe(0);
  });

  it("a refresh whose grant was ended for a replay while the provider exchanged it gets no tokens, and the provider's new ones are revoked", async () => {
    // The state a race's winner can meet: it won the spend, then another request ended the grant in D1 (the mark)
    // before the provider's 200 went out, the grant's row and the provider's grant not yet ended.
    const app = await connectApp({ actAs: "self", access: "write" }, { clientName: "Late winner app" });
    const [user, grantId] = app.tokens.refresh_token.split(":");
    await env.DB.prepare("INSERT INTO spent_refresh_tokens (user_id, grant_id, hash, spent_at, grant_expires_at) VALUES (?, ?, 'replayed', ?, ?)")
      .bind(user, grantId, new Date().toISOString(), new Date(Date.now() + 86_400_000).toISOString())
      .run();
    const res = await refresh(app.clientId, app.tokens.refresh_token);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe("invalid_grant");
    expect(await mcpStatus(app.tokens.access_token)).toBe(401);
    expect((await env.OAUTH_KV.list({ prefix: `grant:${app.personId}:` })).keys).toEqual([]);
    expect((await env.OAUTH_KV.list({ prefix: `token:${app.personId}:` })).keys, "the access token the provider made for it is gone").toEqual([]);
    const { grant, feed } = await auditFeed(app);
    expect(grant?.state).toBe("revoked");
    expect(feed.map((e) => e.tool)).toEqual(["refresh_token_replay"]);
  });
});

describe("the spent refresh tokens' rows", () => {
  it("each refresh records its token; the daily job removes a grant's rows once the grant has expired (30 days), not before", async () => {
    const app = await connectApp({ actAs: "self", access: "read" }, { clientName: "Kept app" });
    let tokens = app.tokens;
    for (let i = 0; i < 3; i++) {
      const res = await refresh(app.clientId, tokens.refresh_token);
      expect(res.status).toBe(200);
      tokens = (await res.json()) as Tokens;
    }
    expect(await spentRows(app)).toHaveLength(3);

    await dailyJobAt(Date.now() + 29 * 86_400_000);
    expect(await spentRows(app), "29 days on, the grant lives: its rows stay").toHaveLength(3);
    await dailyJobAt(Date.now() + 30 * 86_400_000 + 60_000);
    expect(await spentRows(app), "past the grant's 30 days").toEqual([]);
  });
});

describe("a grant from before D1 recorded spends (migration 0021)", () => {
  it("an older token it replaced, remembered only in KV, still ends the grant when it comes back", async () => {
    const app = await connectApp({ actAs: "self", access: "read" }, { clientName: "Upgraded app" });
    const first = app.tokens.refresh_token;
    let tokens = app.tokens;
    for (let i = 0; i < 2; i++) {
      const res = await refresh(app.clientId, tokens.refresh_token);
      expect(res.status).toBe(200);
      tokens = (await res.json()) as Tokens;
    }
    // As the code before 0021 left it: no rows in D1, the token replaced two refreshes ago under its KV key.
    const [user, grantId] = first.split(":");
    await env.DB.prepare("DELETE FROM spent_refresh_tokens WHERE user_id = ? AND grant_id = ?").bind(user, grantId).run();
    await env.OAUTH_KV.put(`refresh-retired:${user}:${grantId}:${await hashToken(first)}`, "1");

    const res = await refresh(app.clientId, first);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe("invalid_grant");
    expect(await mcpStatus(tokens.access_token), "the grant's current access token stopped working").toBe(401);
    expect((await auditFeed(app)).feed.map((e) => e.tool)).toContain("refresh_token_replay");
  });
});
