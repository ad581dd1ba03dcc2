/**
 * Release and hand-off through real SDK clients in both protocol eras, against
 * real D1: the holder of a task gives it back (`assign_task` with `assignee:
 * null`) or hands it to another agent (`assign_task` with that agent's name),
 * and is told what it ended; anyone else's agent is refused naming the holder;
 * a person may release any task and is told who held it; a paused agent is
 * given nothing.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { claimRow, connect, createToken, type Era, ERAS, seedAccount, snapshotDb } from "./helpers.ts";
import { addHook, fakeReceivers, sleep, waitFor } from "./webhooks.helpers.ts";

afterEach(() => {
  vi.restoreAllMocks();
});

const MINUTE = 60_000;

const row = claimRow;

async function runRow(runId: string) {
  return env.DB.prepare("SELECT status, summary, finished_at FROM runs WHERE id = ?").bind(runId).first<{ status: string; summary: string | null; finished_at: string | null }>();
}

/** An account where agent alpha claimed a task and runs on it; beta and the paused idle are agents too. */
async function claimed(era: Era, name: string) {
  const acc = await seedAccount(name, "alpha");
  const token = async (agent: string) => connect((await createToken({ accountId: acc.accountId, kind: "agent", scope: "write", agent })).secret, era);
  const person = await connect(acc.human, era);
  const alpha = await connect(acc.agent, era);
  const beta = await token("beta");
  const idle = await token("idle");
  await idle.ok("list_my_tasks", {});
  await person.ok("pause_agent", { agent: "idle" });
  const { task } = await person.ok("create_task", { title: "Migrate the mailing list" });
  await alpha.ok("claim_task", { task_id: task.id, lease_minutes: 20 });
  const { run } = await alpha.ok("start_run", { task_id: task.id });
  return {
    acc, person, alpha, beta, taskId: task.id as string, runId: run.id as string,
    close: () => Promise.all([person, alpha, beta, idle].map((c) => c.close())),
  };
}

describe.each(ERAS)("release and hand-off (%s era)", (era) => {
  it("the holder releases: lease and runs end, the task is open and unassigned, the answer and the history say so; again changes nothing", async () => {
    const { person, alpha, beta, taskId, runId, close } = await claimed(era, `Release ${era}`);
    const released = await alpha.ok("assign_task", { task_id: taskId, assignee: null });
    expect(released).toEqual({ changed: true, released: "alpha", runs_ended: [runId], task: expect.objectContaining({ id: taskId, status: "open", assignee: null }) });
    expect(await row(taskId)).toEqual({ assignee: null, status: "open", claim_expires_at: null, claim_lease_minutes: null });
    expect(await runRow(runId)).toMatchObject({ status: "cancelled", summary: "released: alpha released the task" });

    const history = await person.ok("get_task_history", { task_id: taskId });
    expect(history.items[0]).toMatchObject({ tool: "assign_task", actor: "alpha", summary: "released by alpha (held by alpha); now open and unassigned" });

    // Nobody holds it now: releasing again changes nothing and says so.
    expect(await alpha.ok("assign_task", { task_id: taskId, assignee: null })).toMatchObject({ changed: false, released: null, runs_ended: [], task: { status: "open", assignee: null } });
    // And another agent may take it.
    expect((await beta.ok("claim_task", { task_id: taskId })).task).toMatchObject({ assignee: "beta", status: "in_progress" });
    await close();
  });

  it("another agent's release is refused naming the holder; nothing is written", async () => {
    const { alpha, beta, taskId, runId, close } = await claimed(era, `Release refused ${era}`);
    const before = await snapshotDb();
    const text = await beta.fails("assign_task", { task_id: taskId, assignee: null });
    expect(text).toContain(`task ${taskId} is claimed by agent alpha`);
    expect(text).toContain("beta may not release or reassign it (assign_task)");
    expect(await snapshotDb()).toBe(before);
    expect(await row(taskId)).toMatchObject({ assignee: "alpha", status: "in_progress" });
    expect(await runRow(runId)).toMatchObject({ status: "running" });
    expect((await alpha.ok("log_run_event", { run_id: runId, kind: "progress", message: "still mine" })).event).toBeDefined();
    await close();
  });

  it("a person releases any task and is told who held it", async () => {
    const { person, taskId, runId, close } = await claimed(era, `Person releases ${era}`);
    const released = await person.ok("assign_task", { task_id: taskId, assignee: null });
    expect(released).toMatchObject({ changed: true, released: "alpha", runs_ended: [runId], task: { status: "open", assignee: null } });
    expect(await runRow(runId)).toMatchObject({ status: "cancelled", summary: "released: human released the task" });
    const history = await person.ok("get_task_history", { task_id: taskId });
    expect(history.items[0]).toMatchObject({ actor: "human", summary: "released by human (held by alpha); now open and unassigned" });
    await close();
  });

  it("the holder hands off to another agent: it holds the task with a new lease, the giver's runs end, task.handed_off is delivered", async () => {
    const seen = fakeReceivers();
    const { acc, person, alpha, beta, taskId, runId, close } = await claimed(era, `Hand-off ${era}`);
    const hook = await addHook(acc.accountId, "https://hooks.example.test/handed", "task.handed_off");
    const handed = await alpha.ok("assign_task", { task_id: taskId, assignee: "beta" });
    expect(handed).toMatchObject({ changed: true, released: "alpha", runs_ended: [runId], task: { id: taskId, assignee: "beta", status: "in_progress" } });
    const lease = await row(taskId);
    expect(lease).toMatchObject({ assignee: "beta", status: "in_progress", claim_lease_minutes: 30 });
    const until = lease!.claim_expires_at as string;
    expect(Math.abs(Date.parse(until) - (Date.now() + 30 * MINUTE))).toBeLessThan(15_000);
    // The receiver reads its new lease as its own.
    expect((await beta.ok("get_task", { task_id: taskId })).claim_expires_at).toBe(until);
    expect(await runRow(runId)).toMatchObject({ status: "cancelled", summary: "handed off: alpha handed the task to beta" });
    const history = await person.ok("get_task_history", { task_id: taskId });
    expect(history.items[0]).toMatchObject({ tool: "assign_task", actor: "alpha", summary: `handed off by alpha to beta, who holds it now (lease until ${until})` });

    // The receiver holds it and works on it; the giver no longer may.
    const { run } = await beta.ok("start_run", { task_id: taskId });
    expect(run.agent).toBe("beta");
    expect(await alpha.fails("start_run", { task_id: taskId })).toContain(`task ${taskId} is claimed by agent beta`);
    expect(await alpha.fails("assign_task", { task_id: taskId, assignee: null })).toContain(`task ${taskId} is claimed by agent beta`);
    // A repeat of the hand-off is another agent's call now (C1 before C7): refused naming the new holder.
    expect(await alpha.fails("assign_task", { task_id: taskId, assignee: "beta" })).toContain(`task ${taskId} is claimed by agent beta`);
    expect((await beta.ok("list_my_tasks", {})).items.map((t: { id: string }) => t.id)).toContain(taskId);

    await waitFor("the task.handed_off delivery", () => seen.some((r) => r.url === hook.webhook.url));
    await sleep(300);
    const got = seen.filter((r) => r.url === hook.webhook.url);
    expect(got).toHaveLength(1);
    expect(got[0].event).toMatchObject({
      type: "task.handed_off",
      account_id: acc.accountId,
      data: { task: { id: taskId, assignee: "beta", status: "in_progress" }, from: "alpha", to: "beta", claim_expires_at: until, runs_ended: [runId] },
    });
    await close();
  });

  it("a hand-off to a paused agent is refused (C5), and so is another agent's hand-off, naming the holder; nothing is written", async () => {
    const { alpha, beta, taskId, close } = await claimed(era, `Hand-off refused ${era}`);
    const before = await snapshotDb();
    expect(await alpha.fails("assign_task", { task_id: taskId, assignee: "idle" })).toMatch(/^agent idle is paused \(since .*\), so no task can be assigned to it\. .*A paused agent is given nothing, a hand-off included\./);
    const text = await beta.fails("assign_task", { task_id: taskId, assignee: "beta" });
    expect(text).toContain(`task ${taskId} is claimed by agent alpha`);
    expect(await beta.fails("assign_task", { task_id: taskId, assignee: "idle" })).toContain("alpha");
    expect(await snapshotDb()).toBe(before);
    expect(await row(taskId)).toMatchObject({ assignee: "alpha", status: "in_progress" });
    await close();
  });
});
