/**
 * Claim leases through real SDK clients against real D1: an agent's claim
 * lapses when its lease runs out unless the holder's run events, step status
 * changes and comments renew it; a lapsed claim blocks nobody and another
 * claim_task takes the task over. Time passes by writing the lease's end into
 * the row.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../src/index.ts";
import { asServer, claimRow, connect, createToken, seedAccount, snapshotDb, type TestClient } from "./helpers.ts";
import { addHook, fakeReceivers, sleep, waitFor, workerEnv, type Received } from "./webhooks.helpers.ts";

afterEach(() => {
  vi.restoreAllMocks();
});

const MINUTE = 60_000;

const lease = claimRow;

/** Sets the lease's end in the row: how time passes in these tests. */
async function expireAt(taskId: string, msFromNow: number): Promise<string> {
  const at = new Date(Date.now() + msFromNow).toISOString();
  await asServer(env.DB, env.DB.prepare("UPDATE tasks SET claim_expires_at = ? WHERE id = ?").bind(at, taskId));
  return at;
}

/** A lease end `minutes` from `from`, within the time a call takes. */
function expectAbout(iso: string | null, minutes: number, from = Date.now()) {
  expect(iso).not.toBeNull();
  const d = Date.parse(iso as string) - (from + minutes * MINUTE);
  expect(Math.abs(d), `${iso} is ${minutes} min from now`).toBeLessThan(15_000);
}

async function agentClient(accountId: string, name: string): Promise<TestClient> {
  return connect((await createToken({ accountId, kind: "agent", scope: "write", agent: name })).secret);
}

/** An account where agent `holder` claimed a task (with a running run and a step) and agent `other` waits. */
async function held(leaseMinutes?: number) {
  const acc = await seedAccount("Leases", "holder");
  const human = await connect(acc.human);
  const holder = await connect(acc.agent);
  const other = await agentClient(acc.accountId, "other");
  const { task } = await human.ok("create_task", { title: "Long migration", auto_ok: false });
  const claim = await holder.ok("claim_task", { task_id: task.id, ...(leaseMinutes ? { lease_minutes: leaseMinutes } : {}) });
  const { run } = await holder.ok("start_run", { task_id: task.id });
  const { steps } = await human.ok("add_steps", { task_id: task.id, steps: ["Copy the data"] });
  return {
    acc, human, holder, other, claim, taskId: task.id as string, runId: run.id as string, stepId: steps[0].id as string,
    close: () => Promise.all([human, holder, other].map((c) => c.close())),
  };
}

async function tick(): Promise<void> {
  const pending: Promise<unknown>[] = [];
  const ctx = { waitUntil: (p: Promise<unknown>) => pending.push(p), passThroughOnException() {}, props: {} } as unknown as ExecutionContext;
  await worker.scheduled!({ cron: "* * * * *", scheduledTime: Date.now(), noRetry() {} } as ScheduledController, workerEnv, ctx);
  await Promise.all(pending);
}

describe("claim_task's lease", () => {
  it("is 30 minutes by default and lease_minutes otherwise; claim_task, get_task and fleet_status show its end; a person's claim has none", async () => {
    const { human, holder, claim, taskId, close } = await held();
    expectAbout(claim.claim_expires_at, 30);
    expect(claim.taken_over_from).toBeNull();
    expect(await lease(taskId)).toMatchObject({ assignee: "holder", status: "in_progress", claim_lease_minutes: 30, claim_expires_at: claim.claim_expires_at });
    expect((await human.ok("get_task", { task_id: taskId })).claim_expires_at).toBe(claim.claim_expires_at);
    const fleet = await human.ok("fleet_status", {});
    const mine = fleet.agents.find((a: { name: string }) => a.name === "holder");
    expect(mine.claimed_tasks).toEqual([{ id: taskId, title: "Long migration", status: "in_progress", claim_expires_at: claim.claim_expires_at, scope: [] }]);

    const { task: second } = await human.ok("create_task", { title: "Quick fix" });
    const short = await holder.ok("claim_task", { task_id: second.id, lease_minutes: 5 });
    expectAbout(short.claim_expires_at, 5);
    expect((await lease(second.id))?.claim_lease_minutes).toBe(5);
    // The holder's claim_task again starts the lease over, with the new length, and writes no history.
    const history = (await human.ok("get_task_history", { task_id: second.id })).items.length;
    await expireAt(second.id, 10_000);
    const again = await holder.ok("claim_task", { task_id: second.id, lease_minutes: 1440 });
    expect(again.changed).toBe(false);
    expectAbout(again.claim_expires_at, 1440);
    expect(await lease(second.id)).toMatchObject({ claim_lease_minutes: 1440, claim_expires_at: again.claim_expires_at });
    expect((await human.ok("get_task_history", { task_id: second.id })).items.length).toBe(history);

    const { task: own } = await human.ok("create_task", { title: "The person's" });
    const personal = await human.ok("claim_task", { task_id: own.id, lease_minutes: 1 });
    expect(personal.claim_expires_at).toBeNull();
    expect(await lease(own.id)).toMatchObject({ assignee: "human", claim_expires_at: null, claim_lease_minutes: null });
    expect((await human.ok("get_task", { task_id: own.id })).claim_expires_at).toBeNull();
    const { task: none } = await human.ok("create_task", { title: "Nobody's" });
    expect((await human.ok("get_task", { task_id: none.id })).claim_expires_at).toBeNull();
    await close();
  });

  it("refuses a lease that is not a whole number of minutes from 1 to 1440, naming the field and the range; writes nothing", async () => {
    const acc = await seedAccount("Lease input");
    const human = await connect(acc.human);
    const agent = await connect(acc.agent);
    const { task } = await human.ok("create_task", { title: "Validated" });
    const before = await snapshotDb();
    for (const bad of [0, -5, 1441, 2.5, "10"]) {
      const text = await agent.fails("claim_task", { task_id: task.id, lease_minutes: bad });
      expect(text, String(bad)).toMatch(/^Invalid arguments for claim_task\. lease_minutes: must be (a whole number of minutes from 1 to 1440|from 1 to 1440 minutes)\./);
    }
    // null is not a lease: leave the field out for the default.
    expect(await agent.fails("claim_task", { task_id: task.id, lease_minutes: null })).toMatch(/^Invalid arguments for claim_task\. lease_minutes: must not be null; leave it out, or send /);
    expect(await snapshotDb()).toBe(before);
    const tool = (await agent.listTools()).find((t) => t.name === "claim_task")!;
    expect(tool.inputSchema.properties.lease_minutes).toMatchObject({ type: "integer", default: 30 });
    expect(tool.description).toContain("lease_minutes (1–1440)");
    await Promise.all([human.close(), agent.close()]);
  });
});

describe("renewing the lease", () => {
  it("the holder's run event, step status change and comment each renew it by its length; nobody else's do", async () => {
    const { human, holder, other, taskId, runId, stepId, close } = await held(20);
    const soon = await expireAt(taskId, 2 * MINUTE);

    // Another agent's and the person's actions on the task leave the lease alone.
    expect(await other.fails("start_run", { task_id: taskId })).toContain("is claimed by agent holder");
    await other.ok("comment_on_task", { task_id: taskId, body: "I could help" });
    expect(await other.fails("set_step_status", { step_id: stepId, status: "in_progress" })).toContain("is claimed by agent holder");
    await human.ok("comment_on_task", { task_id: taskId, body: "How far along?" });
    await human.ok("set_step_status", { step_id: stepId, status: "pending" });
    expect((await lease(taskId))?.claim_expires_at).toBe(soon);

    const renewals: [string, () => Promise<unknown>][] = [
      ["log_run_event", () => holder.ok("log_run_event", { run_id: runId, kind: "progress", message: "half the rows copied" })],
      ["set_step_status", () => holder.ok("set_step_status", { step_id: stepId, status: "in_progress" })],
      ["comment_on_task", () => holder.ok("comment_on_task", { task_id: taskId, body: "Still on it" })],
    ];
    for (const [tool, renew] of renewals) {
      await expireAt(taskId, 2 * MINUTE);
      const version = (await human.ok("get_task", { task_id: taskId })).task.version;
      await renew();
      const row = await lease(taskId);
      expectAbout(row!.claim_expires_at, 20);
      const shown = await human.ok("get_task", { task_id: taskId });
      expect(shown.claim_expires_at, tool).toBe(row!.claim_expires_at);
      expect(shown.task.version, `${tool}: a renewal is not a change of the task`).toBe(version);
    }
    await close();
  });

  it("renews a lapsed claim that nobody took over, and nothing once another agent holds the task", async () => {
    const { holder, other, taskId, runId, close } = await held();
    await expireAt(taskId, -MINUTE);
    await holder.ok("log_run_event", { run_id: runId, kind: "note", message: "back" });
    expectAbout((await lease(taskId))!.claim_expires_at, 30);
    expect(await other.fails("claim_task", { task_id: taskId })).toContain("is claimed by agent holder");
    await close();
  });
});

describe("back in progress", () => {
  it("after a rejection or an unblock, the holder's lease starts over instead of having run out while the task waited", async () => {
    const { human, holder, other, taskId, close } = await held(15);
    await holder.ok("complete_task", { task_id: taskId, note: "Done?" });
    await expireAt(taskId, -60 * MINUTE);
    await human.ok("reject_task", { task_id: taskId, reason: "One table is missing." });
    expectAbout((await lease(taskId))!.claim_expires_at, 15);
    expect(await other.fails("claim_task", { task_id: taskId })).toContain("is claimed by agent holder");

    await holder.ok("block_task", { task_id: taskId, reason: "waiting for the database admin" });
    expect((await human.ok("get_task", { task_id: taskId })).claim_expires_at, "no claim while blocked").toBeNull();
    await expireAt(taskId, -60 * MINUTE);
    await human.ok("unblock_task", { task_id: taskId });
    expectAbout((await lease(taskId))!.claim_expires_at, 15);
    expect(await other.fails("start_run", { task_id: taskId })).toContain("is claimed by agent holder");
    await close();
  });
});

describe("a lapsed claim", () => {
  it("blocks no other agent: start_run, request_approval and complete_task go through", async () => {
    const { other, taskId, close } = await held();
    expect(await other.fails("start_run", { task_id: taskId })).toContain("is claimed by agent holder");
    await expireAt(taskId, -1000);
    expect((await other.ok("start_run", { task_id: taskId })).run.agent).toBe("other");
    expect((await other.ok("request_approval", { task_id: taskId, question: "Shall I finish it?" })).changed).toBe(true);
    expect((await other.ok("request_approval", { task_id: taskId, withdraw: true })).approval.status).toBe("withdrawn");
    expect((await other.ok("complete_task", { task_id: taskId })).outcome).toBe("awaiting_approval");
    await close();
  });

  it("is taken over by another agent's claim_task: the old run ends as stale, the history says so, the old holder's list no longer has it", async () => {
    const seen = fakeReceivers();
    const { acc, human, holder, other, taskId, runId, close } = await held();
    const hook = await addHook(acc.accountId, "https://hooks.example.test/lapsed", "claim.lapsed");
    expect((await holder.ok("list_my_tasks", {})).items.map((t: { id: string }) => t.id)).toContain(taskId);
    const expired = await expireAt(taskId, -5 * MINUTE);

    const took = await other.ok("claim_task", { task_id: taskId, lease_minutes: 10 });
    expect(took).toMatchObject({ changed: true, taken_over_from: "holder", task: { id: taskId, assignee: "other", status: "in_progress" } });
    expectAbout(took.claim_expires_at, 10);
    expect(await lease(taskId)).toMatchObject({ assignee: "other", claim_lease_minutes: 10 });

    const { run } = await human.ok("get_run", { run_id: runId });
    expect(run.status).toBe("cancelled");
    expect(run.summary).toBe(`stale: the claim of holder lapsed at ${expired} and other took the task over`);
    const history = await human.ok("get_task_history", { task_id: taskId });
    expect(history.items[0]).toMatchObject({ tool: "claim_task", actor: "other" });
    expect(history.items[0].summary).toBe(`claimed by other and started, taking it over from holder whose claim lapsed at ${expired} (run ${runId} ended as stale)`);

    expect((await holder.ok("list_my_tasks", {})).items.map((t: { id: string }) => t.id)).not.toContain(taskId);
    expect((await other.ok("list_my_tasks", {})).items.map((t: { id: string }) => t.id)).toContain(taskId);
    expect(await holder.fails("start_run", { task_id: taskId })).toContain("is claimed by agent other");
    expect(await holder.fails("claim_task", { task_id: taskId })).toContain("is claimed by agent other");
    expect(await holder.fails("log_run_event", { run_id: runId, kind: "note", message: "late" })).toContain("has ended (cancelled)");

    await waitFor("the claim.lapsed delivery", () => seen.filter((r) => r.url === hook.webhook.url).length === 1);
    const [got] = seen.filter((r) => r.url === hook.webhook.url);
    expect(got.event.type).toBe("claim.lapsed");
    expect(got.event.data).toEqual({
      task: { id: taskId, title: "Long migration", status: "in_progress", project_id: null, assignee: "other", due_at: null },
      holder: "holder", lease_expired_at: expired, taken_over_by: "other", stale_run_id: runId,
    });
    // The cron does not announce it again.
    await tick();
    await sleep(1000);
    expect(seen.filter((r) => r.url === hook.webhook.url)).toHaveLength(1);
    await close();
  });

  it("a person's claim never lapses: no lease, and no agent takes it over", async () => {
    const acc = await seedAccount("Person's claim");
    const human = await connect(acc.human);
    const agent = await connect(acc.agent);
    const { task } = await human.ok("create_task", { title: "Mine" });
    await human.ok("claim_task", { task_id: task.id });
    await asServer(env.DB, env.DB.prepare("UPDATE tasks SET updated_at = ? WHERE id = ?").bind(new Date(Date.now() - 30 * 86_400_000).toISOString(), task.id));
    expect(await agent.fails("claim_task", { task_id: task.id })).toMatch(/is claimed by human|is held by the person/);
    // A person's reassignment gives the agent a claim without a lease.
    await human.ok("assign_task", { task_id: task.id, assignee: acc.agentName });
    expect(await lease(task.id)).toMatchObject({ assignee: acc.agentName, claim_expires_at: null });
    await Promise.all([human.close(), agent.close()]);
  });

  it("20 agents claiming a lapsed task at once: exactly one takes it over, the others are told who holds it, one event", async () => {
    const seen = fakeReceivers();
    const { acc, human, taskId, runId, close } = await held();
    const hook = await addHook(acc.accountId, "https://hooks.example.test/race", "claim.lapsed");
    await expireAt(taskId, -MINUTE);
    const racers: TestClient[] = [];
    for (let i = 0; i < 20; i++) racers.push(await agentClient(acc.accountId, `racer-${i}`));
    const results = await Promise.all(racers.map((c) => c.call("claim_task", { task_id: taskId })));
    const winners = results.filter((r) => !r.isError);
    expect(winners, results.map((r) => r.text).join("\n")).toHaveLength(1);
    const winner = winners[0].structured.task.assignee as string;
    expect(winners[0].structured.taken_over_from).toBe("holder");
    for (const r of results.filter((x) => x.isError)) expect(r.text).toContain(`is claimed by agent ${winner} `);
    expect((await lease(taskId))?.assignee).toBe(winner);
    const takeovers = await env.DB.prepare("SELECT count(*) AS n FROM activity WHERE target_id = ? AND tool = 'claim_task' AND summary LIKE '%taking it over%'")
      .bind(taskId).first<{ n: number }>();
    expect(takeovers?.n).toBe(1);
    expect((await human.ok("get_run", { run_id: runId })).run.status).toBe("cancelled");
    await waitFor("the claim.lapsed delivery", () => seen.filter((r) => r.url === hook.webhook.url).length >= 1);
    await sleep(1500);
    expect(seen.filter((r) => r.url === hook.webhook.url).map((r: Received) => r.event.data.taken_over_by)).toEqual([winner]);
    await Promise.all([close(), ...racers.map((c) => c.close())]);
  });
});

describe("claim.lapsed from the minute cron", () => {
  it("announces a lapse once, not again at the take-over, and again after a renewal lapses anew", async () => {
    const seen = fakeReceivers();
    const { acc, holder, other, taskId, runId, close } = await held();
    const hook = await addHook(acc.accountId, "https://hooks.example.test/cron", "claim.lapsed");
    const mine = () => seen.filter((r) => r.url === hook.webhook.url);
    await tick();
    await sleep(1000);
    expect(mine()).toHaveLength(0);

    const first = await expireAt(taskId, -MINUTE);
    await tick();
    await tick();
    await waitFor("the first claim.lapsed delivery", () => mine().length >= 1);
    await sleep(1000);
    expect(mine()).toHaveLength(1);
    expect(mine()[0].event.data).toEqual({
      task: { id: taskId, title: "Long migration", status: "in_progress", project_id: null, assignee: "holder", due_at: null },
      holder: "holder", lease_expired_at: first, taken_over_by: null, stale_run_id: null,
    });

    // The holder comes back: renewed. When it lapses again, that is a new lapse.
    await holder.ok("log_run_event", { run_id: runId, kind: "progress", message: "back" });
    await tick();
    const second = await expireAt(taskId, -MINUTE);
    await tick();
    await waitFor("the second claim.lapsed delivery", () => mine().length >= 2);
    expect(mine()[1].event.data.lease_expired_at).toBe(second);
    expect(mine()[1].event.id).not.toBe(mine()[0].event.id);

    // The take-over of an announced lapse sends nothing more.
    expect((await other.ok("claim_task", { task_id: taskId })).taken_over_from).toBe("holder");
    await tick();
    await sleep(1500);
    expect(mine()).toHaveLength(2);
    await close();
  });
});
