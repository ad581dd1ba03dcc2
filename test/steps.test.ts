import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { liveStepsAre, stepIsLive, stepsUnchangedSinceRead } from "../src/db/steps.ts";
import { activityCount, asServer, connect, ERAS, seedAccount, snapshotDb, type TestClient } from "./helpers.ts";


async function setup(era: "modern" | "legacy" = "modern") {
  const acc = await seedAccount();
  const human = await connect(acc.human, era);
  const { task } = await human.ok("create_task", { title: "Ship the release" });
  return { acc, human, task: task as { id: string } };
}

async function withSteps(client: TestClient, taskId: string, texts: string[]) {
  const { steps } = await client.ok("add_steps", { task_id: taskId, steps: texts });
  return steps as { id: string; position: number; text: string; status: string }[];
}

describe("steps in both protocol eras", () => {
  for (const era of ERAS) {
    it(`${era}: add_steps appends, list_steps reads them in order`, async () => {
      const { acc, human, task } = await setup(era);
      const added = await withSteps(human, task.id, ["Write notes", "  Tag the build  "]);
      expect(added.map((s) => [s.position, s.text, s.status])).toEqual([[1, "Write notes", "pending"], [2, "Tag the build", "pending"]]);
      const more = await withSteps(human, task.id, ["Announce"]);
      expect(more[0].position).toBe(3);

      const reader = await connect(acc.agentRead, era);
      const listed = await reader.ok("list_steps", { task_id: task.id });
      expect(listed.task_id).toBe(task.id);
      expect(listed.steps).toEqual([...added, ...more]);
      const got = await reader.ok("get_task", { task_id: task.id });
      expect(got.steps.map((s: { id: string }) => s.id)).toEqual(listed.steps.map((s: { id: string }) => s.id));
      await reader.close();
      await human.close();
    });
  }
});

describe("add_steps", () => {
  it("writes one activity row on the task naming the steps, and bumps nothing on the task", async () => {
    const { acc, human, task } = await setup();
    const before = await human.ok("get_task", { task_id: task.id });
    const steps = await withSteps(human, task.id, ["a", "b"]);
    const { results } = await env.DB.prepare("SELECT tool, summary FROM activity WHERE account_id = ? AND target_id = ? AND tool = 'add_steps'")
      .bind(acc.accountId, task.id)
      .all<{ tool: string; summary: string }>();
    expect(results).toHaveLength(1);
    for (const s of steps) expect(results[0].summary).toContain(s.id);
    const after = await human.ok("get_task", { task_id: task.id });
    expect(after.task).toEqual(before.task);
  });

  it("refuses bad input with the field named, and writes nothing", async () => {
    const { human, task } = await setup();
    const snap = await snapshotDb();
    expect(await human.fails("add_steps", { task_id: task.id, steps: [] })).toMatch(/steps/);
    expect(await human.fails("add_steps", { task_id: task.id, steps: Array.from({ length: 51 }, (_, i) => `s${i}`) })).toMatch(/steps/);
    expect(await human.fails("add_steps", { task_id: task.id, steps: ["ok", "x".repeat(2001)] })).toMatch(/steps\.1/);
    expect(await human.fails("add_steps", { task_id: task.id, steps: ["   "] })).toMatch(/steps\.0.*empty/);
    expect(await human.fails("add_steps", { task_id: "tsk_nope", steps: ["a"] })).toMatch(/task_id/);
    expect(await human.fails("add_steps", { task_id: task.id, steps: ["a"], extra: 1 })).toMatch(/extra/);
    expect(await snapshotDb()).toBe(snap);
  });

  it("accepts exactly 50 steps of 2,000 chars", async () => {
    const { human, task } = await setup();
    const steps = await withSteps(human, task.id, Array.from({ length: 50 }, (_, i) => `${i}`.padEnd(2000, "x")));
    expect(steps).toHaveLength(50);
    expect(steps[49].position).toBe(50);
  });

  it("refuses another account's task as not found, changing nothing", async () => {
    const { human, task } = await setup();
    const other = await seedAccount("Other");
    const stranger = await connect(other.human);
    const snap = await snapshotDb();
    expect(await stranger.fails("add_steps", { task_id: task.id, steps: ["sneaky"] })).toMatch(/No task .* in this account/);
    expect(await stranger.fails("list_steps", { task_id: task.id })).toMatch(/No task/);
    expect(await snapshotDb()).toBe(snap);
    await human.close();
  });

  it("replays an idempotency_key: same result, nothing new written", async () => {
    const { acc, human, task } = await setup();
    const first = await human.ok("add_steps", { task_id: task.id, steps: ["one", "two"], idempotency_key: "k-1" });
    const snap = await snapshotDb();
    const again = await human.ok("add_steps", { task_id: task.id, steps: ["one", "two"], idempotency_key: "k-1" });
    expect(again).toEqual(first);
    expect(await snapshotDb()).toBe(snap);
    expect((await human.ok("list_steps", { task_id: task.id })).steps).toHaveLength(2);
    expect(await activityCount(acc.accountId, task.id)).toBe(2);
  });

  it("refuses a read-only token", async () => {
    const { acc, task } = await setup();
    const reader = await connect(acc.humanRead);
    const snap = await snapshotDb();
    await reader.fails("add_steps", { task_id: task.id, steps: ["a"] });
    expect(await snapshotDb()).toBe(snap);
  });
});

describe("set_step_status and update_step", () => {
  it("change a step, log on the task, and converge without a second activity row", async () => {
    const { acc, human, task } = await setup();
    const agent = await connect(acc.agent);
    const [a] = await withSteps(human, task.id, ["draft"]);

    const set = await agent.ok("set_step_status", { step_id: a.id, status: "done" });
    expect(set.changed).toBe(true);
    expect(set.step).toMatchObject({ id: a.id, status: "done", text: "draft", position: 1 });
    expect((await human.ok("list_steps", { task_id: task.id })).steps[0]).toEqual(set.step);
    const n = await activityCount(acc.accountId, task.id);
    const snap = await snapshotDb();
    const again = await agent.ok("set_step_status", { step_id: a.id, status: "done" });
    expect(again).toEqual({ step: set.step, changed: false });
    expect(await snapshotDb()).toBe(snap);

    const upd = await agent.ok("update_step", { step_id: a.id, text: "final draft" });
    expect(upd).toMatchObject({ changed: true, step: { text: "final draft", status: "done" } });
    const snap2 = await snapshotDb();
    expect((await agent.ok("update_step", { step_id: a.id, text: " final draft " })).changed).toBe(false);
    expect(await snapshotDb()).toBe(snap2);
    expect(await activityCount(acc.accountId, task.id)).toBe(n + 1);

    const { results } = await env.DB.prepare("SELECT actor, summary FROM activity WHERE account_id = ? AND target_id = ? ORDER BY created_at, id")
      .bind(acc.accountId, task.id)
      .all<{ actor: string; summary: string }>();
    expect(results.filter((r) => r.summary.includes(a.id)).map((r) => r.actor)).toEqual(["human", "bot", "bot"]);
  });

  it("refuse bad statuses, bad texts and foreign or unknown steps, changing nothing", async () => {
    const { human, task } = await setup();
    const [a] = await withSteps(human, task.id, ["draft"]);
    const other = await seedAccount("Other");
    const stranger = await connect(other.human);
    const snap = await snapshotDb();
    expect(await human.fails("set_step_status", { step_id: a.id, status: "finished" })).toMatch(/status/);
    expect(await human.fails("update_step", { step_id: a.id, text: "" })).toMatch(/text/);
    expect(await human.fails("update_step", { step_id: a.id, text: "y".repeat(2001) })).toMatch(/text/);
    expect(await human.fails("set_step_status", { step_id: "stp_0123456789abcdef", status: "done" })).toMatch(/No step stp_0123456789abcdef.*list_steps/);
    expect(await stranger.fails("set_step_status", { step_id: a.id, status: "done" })).toMatch(/No step/);
    expect(await stranger.fails("update_step", { step_id: a.id, text: "mine now" })).toMatch(/No step/);
    expect(await stranger.fails("delete_step", { step_id: a.id })).toMatch(/No step/);
    expect(await snapshotDb()).toBe(snap);
  });

  it("treat the steps of a task in the trash as gone", async () => {
    const { acc, human, task } = await setup();
    const [a] = await withSteps(human, task.id, ["draft"]);
    await asServer(env.DB, env.DB.prepare("UPDATE tasks SET trash_id = 'trs_test' WHERE id = ? AND account_id = ?").bind(task.id, acc.accountId));
    const snap = await snapshotDb();
    expect(await human.fails("set_step_status", { step_id: a.id, status: "done" })).toMatch(/No step/);
    expect(await human.fails("list_steps", { task_id: task.id })).toMatch(/No task/);
    expect(await human.fails("add_steps", { task_id: task.id, steps: ["x"] })).toMatch(/No task/);
    expect(await snapshotDb()).toBe(snap);
  });
});

describe("delete_step", () => {
  it("moves the step to the trash without renumbering the others, and converges", async () => {
    const { acc, human, task } = await setup();
    const [a, b, c] = await withSteps(human, task.id, ["a", "b", "c"]);
    const del = await human.ok("delete_step", { step_id: b.id });
    expect(del).toMatchObject({ step_id: b.id, task_id: task.id, item_count: 1, already_in_trash: false });
    expect(del.trash_id).toMatch(/^trs_/);
    expect(Date.parse(del.purge_after) - Date.now()).toBeGreaterThan(29 * 86_400_000);

    const trash = await env.DB.prepare("SELECT kind, target_id, title, deleted_by, purge_after FROM trash WHERE id = ? AND account_id = ?")
      .bind(del.trash_id, acc.accountId)
      .first();
    expect(trash).toEqual({ kind: "step", target_id: b.id, title: "b", deleted_by: "human", purge_after: del.purge_after });
    const row = await env.DB.prepare("SELECT position, trash_id FROM steps WHERE id = ?").bind(b.id).first();
    expect(row).toEqual({ position: 2, trash_id: del.trash_id });

    const listed = (await human.ok("list_steps", { task_id: task.id })).steps;
    expect(listed.map((s: { id: string; position: number }) => [s.id, s.position])).toEqual([[a.id, 1], [c.id, 3]]);

    const snap = await snapshotDb();
    const again = await human.ok("delete_step", { step_id: b.id });
    expect(again).toEqual({ ...del, already_in_trash: true });
    expect(await snapshotDb()).toBe(snap);

    expect(await human.fails("set_step_status", { step_id: b.id, status: "done" })).toMatch(new RegExp(`in the trash \\(${del.trash_id}\\)`));
    expect(await human.fails("update_step", { step_id: b.id, text: "b2" })).toMatch(/restore_from_trash/);

    const [d] = await withSteps(human, task.id, ["d"]);
    expect(d.position).toBe(4);
  });

  it("appends after a trashed last step, so a restore keeps its place", async () => {
    const { human, task } = await setup();
    const [, b] = await withSteps(human, task.id, ["a", "b"]);
    await human.ok("delete_step", { step_id: b.id });
    const [c] = await withSteps(human, task.id, ["c"]);
    expect(c.position).toBe(3);
  });

  it("restore_from_trash puts a deleted step back in its place", async () => {
    const { human, task } = await setup();
    const steps = await withSteps(human, task.id, ["a", "b", "c"]);
    const before = (await human.ok("list_steps", { task_id: task.id })).steps;
    const { trash_id } = await human.ok("delete_step", { step_id: steps[1].id });
    await human.ok("restore_from_trash", { item_id: trash_id });
    expect((await human.ok("list_steps", { task_id: task.id })).steps).toEqual(before);
  });
});

describe("reorder_steps", () => {
  it("rewrites positions 1..n in the given order, and converges", async () => {
    const { acc, human, task } = await setup();
    const [a, b, c] = await withSteps(human, task.id, ["a", "b", "c"]);
    const r = await human.ok("reorder_steps", { task_id: task.id, step_ids: [c.id, a.id, b.id] });
    expect(r.changed).toBe(true);
    expect(r.steps.map((s: { id: string; position: number }) => [s.id, s.position])).toEqual([[c.id, 1], [a.id, 2], [b.id, 3]]);
    expect((await human.ok("list_steps", { task_id: task.id })).steps).toEqual(r.steps);

    const n = await activityCount(acc.accountId, task.id);
    const snap = await snapshotDb();
    const again = await human.ok("reorder_steps", { task_id: task.id, step_ids: [c.id, a.id, b.id] });
    expect(again).toEqual({ ...r, changed: false });
    expect(await snapshotDb()).toBe(snap);
    expect(await activityCount(acc.accountId, task.id)).toBe(n);
  });

  it("works around a trashed step and keeps the trashed step's position", async () => {
    const { human, task } = await setup();
    const [a, b, c] = await withSteps(human, task.id, ["a", "b", "c"]);
    await human.ok("delete_step", { step_id: a.id });
    const r = await human.ok("reorder_steps", { task_id: task.id, step_ids: [c.id, b.id] });
    expect(r.steps.map((s: { id: string; position: number }) => [s.id, s.position])).toEqual([[c.id, 1], [b.id, 2]]);
    const row = await env.DB.prepare("SELECT position FROM steps WHERE id = ?").bind(a.id).first<{ position: number }>();
    expect(row?.position).toBe(1);
    const listed = (await human.ok("list_steps", { task_id: task.id })).steps;
    expect(listed.map((s: { id: string }) => s.id)).toEqual([c.id, b.id]);
  });

  it("refuses anything but an exact permutation, listing the offending ids, and changes nothing", async () => {
    const { human, task } = await setup();
    const [a, b, c] = await withSteps(human, task.id, ["a", "b", "c"]);
    const { task: otherTask } = await human.ok("create_task", { title: "Other" });
    const [x] = await withSteps(human, otherTask.id, ["x"]);
    const other = await seedAccount("Other");
    const stranger = await connect(other.human);
    const snap = await snapshotDb();

    const missing = await human.fails("reorder_steps", { task_id: task.id, step_ids: [c.id, a.id] });
    expect(missing).toContain(`missing: ${b.id}`);
    const foreign = await human.fails("reorder_steps", { task_id: task.id, step_ids: [c.id, a.id, b.id, x.id] });
    expect(foreign).toContain(`not live steps of this task: ${x.id}`);
    const dup = await human.fails("reorder_steps", { task_id: task.id, step_ids: [c.id, a.id, a.id, b.id] });
    expect(dup).toContain(`listed more than once: ${a.id}`);
    const all = await human.fails("reorder_steps", { task_id: task.id, step_ids: [a.id, a.id, x.id] });
    expect(all).toMatch(new RegExp(`missing: ${b.id}, ${c.id}; not live steps of this task: ${x.id}; listed more than once: ${a.id}`));
    expect(await human.fails("reorder_steps", { task_id: task.id, step_ids: [] })).toMatch(/step_ids/);
    expect(await human.fails("reorder_steps", { task_id: task.id, step_ids: ["nope"] })).toMatch(/step_ids\.0/);
    expect(await stranger.fails("reorder_steps", { task_id: task.id, step_ids: [c.id, a.id, b.id] })).toMatch(/No task/);
    expect(await snapshotDb()).toBe(snap);
  });
});

describe("reorder_steps with an id listed twice", () => {
  it("refuses as many ids as live steps when one of them is listed twice, and changes nothing", async () => {
    const { acc, human, task } = await setup();
    const [a, b] = await withSteps(human, task.id, ["a", "b"]);
    const snap = await snapshotDb();
    expect(await human.fails("reorder_steps", { task_id: task.id, step_ids: [b.id, b.id] })).toContain(`missing: ${a.id}; listed more than once: ${b.id}`);
    expect(await snapshotDb()).toBe(snap);
    const twice = liveStepsAre({ taskId: task.id, accountId: acc.accountId, stepIds: [b.id, b.id] });
    expect((await env.DB.prepare(`SELECT coalesce((${twice.sql}), 0) AS ok`).bind(...twice.binds).first<{ ok: number }>())?.ok).toBe(0);
  });
});

describe("the race guards of the step writes", () => {
  const holds = async (condition: { sql: string; binds: unknown[] }) =>
    (await env.DB.prepare(`SELECT coalesce((${condition.sql}), 0) AS ok`).bind(...condition.binds).first<{ ok: number }>())?.ok === 1;

  it("hold exactly while what the tool read still holds", async () => {
    const { acc, human, task } = await setup();
    const a = acc.accountId;
    const [s1, s2] = await withSteps(human, task.id, ["a", "b"]);
    expect(await holds(stepsUnchangedSinceRead({ taskId: task.id, accountId: a, maxPosition: 2 }))).toBe(true);
    expect(await holds(stepsUnchangedSinceRead({ taskId: task.id, accountId: a, maxPosition: 1 }))).toBe(false);
    expect(await holds(stepIsLive({ stepId: s1.id, accountId: a }))).toBe(true);
    expect(await holds(stepIsLive({ stepId: s1.id, accountId: "acc_other" }))).toBe(false);
    expect(await holds(liveStepsAre({ taskId: task.id, accountId: a, stepIds: [s2.id, s1.id] }))).toBe(true);
    expect(await holds(liveStepsAre({ taskId: task.id, accountId: a, stepIds: [s2.id] }))).toBe(false);

    await human.ok("delete_step", { step_id: s2.id });
    expect(await holds(stepIsLive({ stepId: s2.id, accountId: a }))).toBe(false);
    expect(await holds(liveStepsAre({ taskId: task.id, accountId: a, stepIds: [s2.id, s1.id] }))).toBe(false);
    expect(await holds(liveStepsAre({ taskId: task.id, accountId: a, stepIds: [s1.id] }))).toBe(true);
    expect(await holds(stepsUnchangedSinceRead({ taskId: task.id, accountId: a, maxPosition: 2 }))).toBe(true);

    await asServer(env.DB, env.DB.prepare("UPDATE tasks SET trash_id = 'trs_test' WHERE id = ?").bind(task.id));
    expect(await holds(stepIsLive({ stepId: s1.id, accountId: a }))).toBe(false);
    expect(await holds(stepsUnchangedSinceRead({ taskId: task.id, accountId: a, maxPosition: 2 }))).toBe(false);
    expect(await holds(liveStepsAre({ taskId: task.id, accountId: a, stepIds: [s1.id] }))).toBe(false);
  });
});
