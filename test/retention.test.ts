import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../src/index.ts";
import { purgeExpiredActivity } from "../src/db/retention.ts";
import { connect, ERAS, seedAccount, snapshotDb } from "./helpers.ts";

const DAY = 86_400_000;

/** Milliseconds from `days` ago to kept_since, which is the next UTC midnight: under a day. */
function offFrom(iso: string, days: number): number {
  expect(iso).toMatch(/T00:00:00\.000Z$/);
  const off = Date.parse(iso) - (Date.now() - days * DAY);
  expect(off).toBeGreaterThanOrEqual(-60_000);
  return off - DAY;
}

describe("activity retention", () => {
  for (const era of ERAS) {
    it(`${era}: a setting (default 180 days) that list_activity and export_project report as kept_since`, async () => {
      const acc = await seedAccount();
      const c = await connect(acc.human, era);
      expect((await c.ok("get_account_settings")).settings.activity_retention_days).toBe(180);
      const { project } = await c.ok("create_project", { name: "Kept" });
      const feed = await c.ok("list_activity");
      expect(offFrom(feed.kept_since, 180)).toBeLessThan(60_000);
      expect(offFrom((await c.ok("export_project", { project_id: project.id })).kept_since, 180)).toBeLessThan(60_000);

      const before = await snapshotDb();
      for (const bad of [6, 3651, 2.5, "30"]) {
        expect(await c.fails("update_account_settings", { activity_retention_days: bad })).toMatch(/activity_retention_days/);
      }
      expect(await snapshotDb()).toBe(before);

      const r = await c.ok("update_account_settings", { activity_retention_days: 30 });
      expect(r).toMatchObject({ changed: true, settings: { activity_retention_days: 30, trash_retention_days: 30 } });
      expect((await c.ok("get_account_settings")).settings.activity_retention_days).toBe(30);
      expect(offFrom((await c.ok("list_activity", { limit: 1 })).kept_since, 30)).toBeLessThan(60_000);
      expect(offFrom((await c.ok("export_project", { project_id: project.id })).kept_since, 30)).toBeLessThan(60_000);
      expect((await c.ok("update_account_settings", { activity_retention_days: 30 })).changed).toBe(false);

      const agent = await connect(acc.agent, era);
      expect(await agent.fails("update_account_settings", { activity_retention_days: 60 })).toMatch(/human/i);
      expect(offFrom((await agent.ok("list_activity")).kept_since, 30)).toBeLessThan(60_000);
      await c.close();
      await agent.close();
    });
  }
});

const ago = (days: number) => new Date(Date.now() - days * DAY).toISOString();

async function addActivity(accountId: string, id: string, days: number): Promise<void> {
  await env.DB.prepare(
    "INSERT INTO activity (id, account_id, token_id, actor, tool, target_id, summary, created_at) VALUES (?, ?, 'tok_old', 'human', 'create_task', NULL, 'old', ?)",
  ).bind(id, accountId, ago(days)).run();
}

async function addEvent(accountId: string, id: string, days: number): Promise<void> {
  await env.DB.prepare("INSERT INTO run_events (id, account_id, run_id, kind, message, created_at) VALUES (?, ?, 'run_old', 'progress', 'old', ?)")
    .bind(id, accountId, ago(days))
    .run();
}

async function ids(table: string, accountId: string): Promise<string[]> {
  const { results } = await env.DB.prepare(`SELECT id FROM ${table} WHERE account_id = ? AND id LIKE '%\\_old%' ESCAPE '\\' ORDER BY id`).bind(accountId).all<{ id: string }>();
  return results.map((r) => r.id);
}

describe("the daily removal of old activity and run events", () => {
  it("removes rows past each account's retention in bounded batches, oldest first across accounts, and keeps the rest", async () => {
    const short = await seedAccount("Short memory");
    const long = await seedAccount("Long memory");
    const c = await connect(short.human);
    await c.ok("update_account_settings", { activity_retention_days: 30 });
    for (const [id, days] of [["act_old_s200", 200], ["act_old_s100", 100], ["act_old_s040", 40], ["act_old_s010", 10]] as const) await addActivity(short.accountId, id, days);
    for (const [id, days] of [["act_old_l210", 210], ["act_old_l100", 100], ["act_old_l010", 10]] as const) await addActivity(long.accountId, id, days);
    for (const [id, days] of [["evt_old_s050", 50], ["evt_old_s005", 5]] as const) await addEvent(short.accountId, id, days);
    for (const [id, days] of [["evt_old_l190", 190], ["evt_old_l020", 20]] as const) await addEvent(long.accountId, id, days);

    // One round of two statements of one row each: the two oldest expired rows of all, whatever their account.
    const first = await purgeExpiredActivity(env.DB, new Date().toISOString(), { rowsPerStatement: 1, statementsPerBatch: 2, batchesPerRun: 1 });
    expect(first).toEqual({ activity: 2, run_events: 0, more: true });
    expect(await ids("activity", long.accountId)).toEqual(["act_old_l010", "act_old_l100"]);
    expect(await ids("activity", short.accountId)).toEqual(["act_old_s010", "act_old_s040", "act_old_s100"]);

    // Two statements' worth of two rows: the oldest expired pair (the long account's event at 190 days, then the short account's activity) goes first.
    const second = await purgeExpiredActivity(env.DB, new Date().toISOString(), { rowsPerStatement: 2, statementsPerBatch: 1, batchesPerRun: 2 });
    expect(second).toEqual({ activity: 2, run_events: 1, more: true });
    expect(await ids("run_events", long.accountId)).toEqual(["evt_old_l020"]);
    expect(await ids("activity", short.accountId)).toEqual(["act_old_s010"]);
    expect(await ids("run_events", short.accountId)).toEqual(["evt_old_s005", "evt_old_s050"]);

    // The daily cron finishes the job with its own limits.
    const pending: Promise<unknown>[] = [];
    const ctx = { waitUntil: (p: Promise<unknown>) => pending.push(p), passThroughOnException() {}, props: {} } as unknown as ExecutionContext;
    await worker.scheduled({ cron: "17 3 * * *", scheduledTime: Date.now(), noRetry() {} } as ScheduledController, env, ctx);
    await Promise.all(pending);
    expect(await ids("activity", short.accountId)).toEqual(["act_old_s010"]);
    expect(await ids("run_events", short.accountId)).toEqual(["evt_old_s005"]);
    expect(await ids("activity", long.accountId)).toEqual(["act_old_l010", "act_old_l100"]);
    expect(await ids("run_events", long.accountId)).toEqual(["evt_old_l020"]);
    expect(await purgeExpiredActivity(env.DB, new Date().toISOString())).toEqual({ activity: 0, run_events: 0, more: false });

    // The feed shows what is kept, and says from when; the settings change itself is recent and stays.
    const feed = await c.ok("list_activity");
    expect(feed.items.map((i: { id: string }) => i.id)).toContain("act_old_s010");
    expect(feed.items.some((i: { tool: string }) => i.tool === "update_account_settings")).toBe(true);
    expect(feed.items.every((i: { created_at: string }) => i.created_at >= feed.kept_since)).toBe(true);
    await c.close();
  });
});
