import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { activityCount, asServer, connect, createToken, ERAS, MCP_URL, seedAccount, snapshotDb, workerFetch } from "./helpers.ts";

const INIT = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "curl", version: "1" } },
});

/** One raw MCP request with this bearer token: 200 while the token is accepted, 401 once it is not. */
async function status(secret: string): Promise<number> {
  const res = await workerFetch(MCP_URL, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${secret}` },
    body: INIT,
  });
  await res.body?.cancel();
  return res.status;
}


const MY_TOOLS = {
  list_trash: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  restore_from_trash: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  empty_trash: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  list_calendar_links: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  get_agenda: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  link_calendar_event: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  unlink_calendar_event: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  get_digest: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  get_account_settings: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  list_tokens: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  update_account_settings: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  revoke_token: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
} as const;
const HUMAN_ONLY = ["empty_trash", "update_account_settings", "revoke_token"];

describe("the 12 trash, calendar, digest and account tools in tools/list", () => {
  for (const era of ERAS) {
    it(`${era}: a human write token sees all 12 with their hints; an agent misses the human-only ones; a read token only reads`, async () => {
      const acc = await seedAccount();
      const human = await connect(acc.human, era);
      const tools = new Map((await human.listTools()).map((t) => [t.name, t]));
      for (const [name, hints] of Object.entries(MY_TOOLS)) {
        const t = tools.get(name);
        expect(t, name).toBeDefined();
        expect(t!.annotations, name).toMatchObject({ ...hints, openWorldHint: false });
        expect(t!.outputSchema, name).toBeDefined();
        expect(t!.description!.length, name).toBeLessThan(400);
      }
      await human.close();
      const agent = await connect(acc.agent, era);
      const agentNames = new Set((await agent.listTools()).map((t) => t.name));
      for (const name of Object.keys(MY_TOOLS)) expect(agentNames.has(name), name).toBe(!HUMAN_ONLY.includes(name));
      expect(await agent.fails("update_account_settings", { trash_retention_days: 7 })).toMatch(/human/i);
      await agent.close();
      const reader = await connect(acc.humanRead, era);
      const readNames = new Set((await reader.listTools()).map((t) => t.name));
      for (const [name, hints] of Object.entries(MY_TOOLS)) expect(readNames.has(name), name).toBe(hints.readOnlyHint);
      await reader.close();
    });
  }
});

describe("account settings", () => {
  it("defaults, validated changes, convergence, and purge times that follow the retention", async () => {
    const acc = await seedAccount();
    const c = await connect(acc.human);
    const { settings } = await c.ok("get_account_settings");
    expect(settings).toMatchObject({ account_id: acc.accountId, time_zone: "UTC", default_auto_ok: false, trash_retention_days: 30 });

    const before = await snapshotDb();
    for (const [args, field] of [
      [{ time_zone: "Mars/Olympus_Mons" }, /time_zone.*IANA/],
      [{ time_zone: "+01:00" }, /time_zone/],
      [{ trash_retention_days: 0 }, /trash_retention_days/],
      [{ trash_retention_days: 366 }, /trash_retention_days/],
      [{ trash_retention_days: 2.5 }, /trash_retention_days/],
      [{ default_auto_ok: "yes" }, /default_auto_ok/],
      [{}, /at least one/],
      [{ time_zone: "UTC", color: "red" }, /color|unrecognized/i],
    ] as const) {
      expect(await c.fails("update_account_settings", args as Record<string, unknown>)).toMatch(field);
    }
    expect(await snapshotDb()).toBe(before);

    const deletedAt = "2026-03-01T10:00:00.000Z";
    await asServer(env.DB, env.DB.prepare(
      `INSERT INTO trash (id, account_id, kind, target_id, title, item_count, deleted_by, deleted_by_token, deleted_at, purge_after)
       VALUES ('trs_aaaaaaaaaaaaaaaa', ?, 'comment', 'cmt_aaaaaaaaaaaaaaaa', 'x', 1, 'human', ?, ?, '2026-03-31T10:00:00.000Z')`,
    ).bind(acc.accountId, acc.tokenIds.human, deletedAt));

    const first = await c.ok("update_account_settings", { time_zone: "europe/berlin", default_auto_ok: true, trash_retention_days: 7 });
    expect(first.changed).toBe(true);
    expect(first.settings).toMatchObject({ time_zone: "Europe/Berlin", default_auto_ok: true, trash_retention_days: 7 });
    const trashRow = await env.DB.prepare("SELECT purge_after FROM trash WHERE id = 'trs_aaaaaaaaaaaaaaaa'").first<{ purge_after: string }>();
    expect(trashRow?.purge_after).toBe("2026-03-08T10:00:00.000Z");

    const n = await activityCount(acc.accountId);
    const again = await c.ok("update_account_settings", { time_zone: "Europe/Berlin", default_auto_ok: true, trash_retention_days: 7 });
    expect(again).toEqual({ settings: first.settings, changed: false });
    expect(await activityCount(acc.accountId)).toBe(n);
    expect((await c.ok("get_account_settings")).settings).toEqual(first.settings);

    const ny = await c.ok("update_account_settings", { time_zone: "America/New_York" });
    expect(ny.settings).toMatchObject({ time_zone: "America/New_York", default_auto_ok: true, trash_retention_days: 7 });
    expect(await activityCount(acc.accountId)).toBe(n + 1);
    await c.close();

    const reader = await connect(acc.humanRead);
    expect((await reader.ok("get_account_settings")).settings.time_zone).toBe("America/New_York");
    expect(await reader.fails("update_account_settings", { time_zone: "UTC" })).toMatch(/read/i);
    await reader.close();
  });
});

describe("account settings, some of them already so", () => {
  it("sets every setting given in one write whose activity names only those that changed", async () => {
    const acc = await seedAccount();
    const c = await connect(acc.human);
    const r = await c.ok("update_account_settings", { time_zone: "UTC", default_auto_ok: true, trash_retention_days: 30, activity_retention_days: 90 });
    expect(r).toMatchObject({ changed: true, settings: { time_zone: "UTC", default_auto_ok: true, trash_retention_days: 30, activity_retention_days: 90 } });
    const { results } = await env.DB.prepare("SELECT target_id, summary FROM activity WHERE account_id = ? AND tool = 'update_account_settings'")
      .bind(acc.accountId)
      .all();
    expect(results).toEqual([{ target_id: acc.accountId, summary: "updated account settings: default_auto_ok = 1, activity_retention_days = 90" }]);
    await c.close();
  });
});

describe("list_tokens", () => {
  it("a human sees every token of the account, an agent only its own, and never a secret or hash", async () => {
    const acc = await seedAccount();
    const other = await createToken({ accountId: acc.accountId, kind: "agent", scope: "write", agent: "other-bot" });
    const stranger = await seedAccount("Someone else");

    const human = await connect(acc.human);
    const all = await human.ok("list_tokens");
    const ids = all.items.map((t: { id: string }) => t.id);
    expect(new Set(ids)).toEqual(new Set([...Object.values(acc.tokenIds), other.id]));
    expect(ids).not.toContain(stranger.tokenIds.human);
    const raw = JSON.stringify(all);
    for (const secret of [acc.human, acc.agent, acc.humanRead, acc.agentRead, other.secret]) expect(raw).not.toContain(secret);
    expect(raw).not.toMatch(/hash/);
    for (const t of all.items) {
      expect(Object.keys(t).sort()).toEqual(
        ["agent", "client", "created_at", "current", "expires_at", "id", "kind", "label", "last_used_at", "prefix", "revoked_at", "scope", "source", "state"].sort(),
      );
      expect(t).toMatchObject({ source: "token", client: null });
      expect(t.current).toBe(t.id === acc.tokenIds.human);
      expect(t.state).toBe("active");
      if (t.current) expect(acc.human.startsWith(t.prefix.replace("…", ""))).toBe(true);
    }
    const botToken = all.items.find((t: { id: string }) => t.id === acc.tokenIds.agent);
    expect(botToken).toMatchObject({ kind: "agent", scope: "write", agent: acc.agentName });

    const paged = await human.ok("list_tokens", { limit: 2 });
    expect(paged.items).toHaveLength(2);
    const rest = await human.ok("list_tokens", { limit: 10, cursor: paged.next_cursor });
    expect([...paged.items, ...rest.items].map((t: { id: string }) => t.id)).toEqual(ids);
    expect(rest.next_cursor).toBeNull();
    await human.close();

    for (const secret of [acc.agent, acc.agentRead]) {
      const agent = await connect(secret);
      const own = await agent.ok("list_tokens");
      expect(new Set(own.items.map((t: { id: string }) => t.id))).toEqual(new Set([acc.tokenIds.agent, acc.tokenIds.agentRead]));
      await agent.close();
    }
  });
});

describe("revoke_token", () => {
  it("takes effect on the next request, is convergent, guards the caller's own token, and stays in the account", async () => {
    const acc = await seedAccount();
    const stranger = await seedAccount("Someone else");
    const c = await connect(acc.human);
    expect(await status(acc.agent)).toBe(200);

    const first = await c.ok("revoke_token", { token_id: acc.tokenIds.agent });
    expect(first.revoked).toBe(true);
    expect(first.token).toMatchObject({ id: acc.tokenIds.agent, state: "revoked", revoked_at: expect.any(String) });
    const res401 = await workerFetch(MCP_URL, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${acc.agent}` },
      body: INIT,
    });
    expect(res401.status).toBe(401);
    expect(res401.headers.get("www-authenticate")).toMatch(/invalid_token/);

    const n = await activityCount(acc.accountId);
    const again = await c.ok("revoke_token", { token_id: acc.tokenIds.agent });
    expect(again).toEqual({ revoked: false, token: first.token });
    expect(await activityCount(acc.accountId)).toBe(n);
    const history = await c.ok("list_activity", { target_id: acc.tokenIds.agent });
    expect(history.items).toHaveLength(1);
    expect(history.items[0]).toMatchObject({ tool: "revoke_token", actor: "human" });

    const before = await snapshotDb();
    expect(await c.fails("revoke_token", { token_id: stranger.tokenIds.human })).toMatch(/No token .* list_tokens/);
    expect(await c.fails("revoke_token", { token_id: "tok_nope" })).toMatch(/token_id/);
    expect(await c.fails("revoke_token", { token_id: acc.tokenIds.human })).toMatch(/confirm: true/);
    expect(await c.fails("revoke_token", { token_id: acc.tokenIds.human, confirm: false })).toMatch(/confirm: true/);
    expect(await snapshotDb()).toBe(before);
    expect(await status(stranger.human)).toBe(200);

    const agentRead = await connect(acc.agentRead);
    expect(await agentRead.fails("revoke_token", { token_id: acc.tokenIds.humanRead })).toMatch(/read|human/i);
    await agentRead.close();

    const self = await c.ok("revoke_token", { token_id: acc.tokenIds.human, confirm: true });
    expect(self.token).toMatchObject({ current: true, state: "revoked" });
    expect(await status(acc.human)).toBe(401);
    expect(await status(acc.humanRead)).toBe(200);
  });

  it("a revocation made elsewhere reaches this isolate within AUTH_CACHE_SECONDS (5 s)", async () => {
    const acc = await seedAccount();
    const t = await createToken({ accountId: acc.accountId, kind: "human", scope: "read" });
    expect(await status(t.secret)).toBe(200);
    const resolvedAt = Date.now();
    await env.DB.prepare("UPDATE tokens SET revoked_at = ? WHERE id = ?").bind(new Date().toISOString(), t.id).run();
    expect(await status(t.secret)).toBe(200);
    expect(Date.now() - resolvedAt).toBeLessThan(5000);
    await new Promise((r) => setTimeout(r, 5000 - (Date.now() - resolvedAt) + 150));
    expect(await status(t.secret)).toBe(401);
  });
});
