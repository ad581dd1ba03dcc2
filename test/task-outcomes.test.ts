import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { activityCount, connect, seedAccount, snapshotDb, type TestClient } from "./helpers.ts";

/**
 * Calls whose usual batch misses and whose diagnosis decides: a field given
 * that holds its value already, a refusal named in the order the checks run.
 */

async function refusedUnchanged(c: TestClient, tool: string, args: Record<string, unknown>): Promise<string> {
  const before = await snapshotDb();
  const text = await c.fails(tool, args);
  expect(await snapshotDb()).toBe(before);
  return text;
}

describe("update_task writes the fields that change", () => {
  it("names only those in the history, at the version read; none changing is a no-op", async () => {
    const acc = await seedAccount("Outcomes update");
    const c = await connect(acc.human);
    const t = (await c.ok("create_task", { title: "Report", notes: "draft" })).task;

    // The title holds its value already: only the notes are written.
    const u = await c.ok("update_task", { task_id: t.id, title: "Report", notes: "final", expected_version: 1 });
    expect(u).toMatchObject({ changed: true, task: { title: "Report", notes: "final", version: 2 } });
    const history = await c.ok("get_task_history", { task_id: t.id });
    expect(history.items[0]).toMatchObject({ tool: "update_task", summary: "updated notes" });

    const n = await activityCount(acc.accountId);
    expect(await c.ok("update_task", { task_id: t.id, title: "Report", notes: "final" })).toEqual({ task: u.task, changed: false });
    expect(await activityCount(acc.accountId)).toBe(n);

    expect(await refusedUnchanged(c, "update_task", { task_id: t.id, notes: "again", expected_version: 1 })).toMatch(/has changed since version 1/);
    await c.close();
  });
});

describe("refusals come in the order the rows are checked", () => {
  it("a missing parent is named before the rule's mistake; a missing task before a time in the past", async () => {
    const acc = await seedAccount("Outcomes order");
    const c = await connect(acc.human);
    const missing = "tsk_0000000000000000";
    expect(
      await refusedUnchanged(c, "create_task", { title: "x", parent_id: missing, due_at: "2027-09-01T09:00:00Z", recurrence: "FREQ=FORTNIGHTLY" }),
    ).toMatch(/^No task tsk_0000000000000000 /);
    expect(await refusedUnchanged(c, "snooze_task", { task_id: missing, until: "2020-01-01T00:00:00Z" })).toMatch(/^No task tsk_0000000000000000 /);

    // A recurring subtask, created in one batch with its schedule and series.
    const parent = (await c.ok("create_task", { title: "Parent" })).task;
    const kid = (await c.ok("create_task", { title: "Weekly", parent_id: parent.id, due_at: "2027-09-01T09:00:00Z", recurrence: "FREQ=WEEKLY" })).task;
    expect(kid).toMatchObject({ parent_id: parent.id, recurrence: "FREQ=WEEKLY", version: 1 });
    expect(kid.series_id).toMatch(/^ser_/);
    const row = await env.DB.prepare("SELECT series_id, recurrence FROM tasks WHERE id = ?").bind(kid.id).first<{ series_id: string; recurrence: string }>();
    expect(row?.series_id).toBe(kid.series_id);
    expect(JSON.parse(row?.recurrence ?? "{}")).toMatchObject({ rule: "FREQ=WEEKLY" });
    const history = await c.ok("get_task_history", { task_id: kid.id });
    expect(history.items[0].summary).toBe(`created task "Weekly", repeating FREQ=WEEKLY (series ${kid.series_id})`);
    await c.close();
  });
});
