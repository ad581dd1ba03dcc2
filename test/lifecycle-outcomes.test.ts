import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { connect, seedAccount, snapshotDb, type TestClient } from "./helpers.ts";
import { activityOf, approvalsOf, closeAll, setTaskColumn } from "./lifecycle.helpers.ts";

/**
 * The cases of complete_task, approve_task, reject_task, request_approval and
 * claim_task beside their usual one: a pending request reused or decided by
 * the same batch, a task left as it is, a recurring task's next occurrence.
 * Each answers, records and summarises as its own case always has.
 */

/** The latest history entry of `tool` on the task. */
async function lastEntry(taskId: string, tool: string): Promise<string | undefined> {
  return (await activityOf(taskId)).filter((e) => e.tool === tool).at(-1)?.summary;
}

async function taskRow(taskId: string) {
  return env.DB.prepare("SELECT status, version, assignee, recurrence IS NOT NULL AS recurs FROM tasks WHERE id = ?")
    .bind(taskId)
    .first<{ status: string; version: number; assignee: string | null; recurs: number }>();
}

/** A task that awaits approval with no pending request: its sign-off withdrawn while it was blocked, then unblocked. */
async function awaitingWithoutRequest(human: TestClient, agent: TestClient, title: string) {
  const { task } = await human.ok("create_task", { title });
  const { approval } = await agent.ok("complete_task", { task_id: task.id });
  await human.ok("block_task", { task_id: task.id, reason: "Waiting for the printer" });
  await agent.ok("request_approval", { task_id: task.id, withdraw: true });
  const back = await human.ok("unblock_task", { task_id: task.id });
  expect(back.task.status).toBe("awaiting_approval");
  expect((await agent.ok("get_task", { task_id: task.id })).pending_approval).toBeNull();
  return { taskId: task.id as string, withdrawn: approval.id as string, version: back.task.version as number };
}

describe("complete_task beside its usual case", () => {
  it("an agent's completion of a blocked task awaits the sign-off already pending, opening none", async () => {
    const acc = await seedAccount();
    const human = await connect(acc.human);
    const agent = await connect(acc.agent);
    const { task } = await human.ok("create_task", { title: "Print the flyers" });
    const { approval } = await agent.ok("complete_task", { task_id: task.id });
    const blocked = await human.ok("block_task", { task_id: task.id, reason: "Out of paper" });
    const r = await agent.ok("complete_task", { task_id: task.id });
    expect(r).toMatchObject({ outcome: "awaiting_approval", changed: true, approval: { id: approval.id, status: "pending" }, next_occurrence: null });
    expect(r.task).toMatchObject({ status: "awaiting_approval", blocked_reason: null, version: blocked.task.version + 1 });
    expect(await approvalsOf(task.id)).toEqual([expect.objectContaining({ id: approval.id, status: "pending" })]);
    expect(await lastEntry(task.id, "complete_task")).toBe(`completed; awaiting a person's approval (${approval.id})`);
    await closeAll(human, agent);
  });

  it("an agent's completion of a task awaiting approval without a request opens a sign-off and leaves the task as it is", async () => {
    const acc = await seedAccount();
    const human = await connect(acc.human);
    const agent = await connect(acc.agent);
    const { taskId, withdrawn, version } = await awaitingWithoutRequest(human, agent, "Bind the report");
    const r = await agent.ok("complete_task", { task_id: taskId, note: "Bound." });
    expect(r).toMatchObject({ outcome: "awaiting_approval", changed: true, approval: { kind: "signoff", status: "pending", question: "Bound." } });
    expect(r.approval.id).not.toBe(withdrawn);
    expect(r.task).toMatchObject({ status: "awaiting_approval", version });
    expect(await lastEntry(taskId, "complete_task")).toBe(`completed; awaiting a person's approval (${r.approval.id})`);
    expect(await agent.ok("complete_task", { task_id: taskId })).toMatchObject({ changed: false, approval: { id: r.approval.id } });
    await closeAll(human, agent);
  });

  it("a person's completion closes a pending question unanswered", async () => {
    const acc = await seedAccount();
    const human = await connect(acc.human);
    const agent = await connect(acc.agent);
    const { task } = await human.ok("create_task", { title: "Book the venue" });
    const { approval } = await agent.ok("request_approval", { task_id: task.id, question: "The big hall or the small one?" });
    const r = await human.ok("complete_task", { task_id: task.id });
    expect(r).toMatchObject({
      outcome: "completed", changed: true, task: { status: "done" },
      approval: { id: approval.id, kind: "question", status: "closed", decided_by: "human", reason: "the task was completed by human", task_title: "Book the venue" },
    });
    expect(await lastEntry(task.id, "complete_task")).toBe(`completed; approval ${approval.id} closed`);
    expect(await human.ok("complete_task", { task_id: task.id })).toMatchObject({ changed: false, approval: { id: approval.id, status: "closed" } });
    await closeAll(human, agent);
  });

  it("an agent under auto-OK withdraws its own sign-off request as it completes; another's question refuses it", async () => {
    const acc = await seedAccount();
    const human = await connect(acc.human);
    const agent = await connect(acc.agent);
    const { task } = await human.ok("create_task", { title: "Rotate the keys" });
    const { approval } = await agent.ok("complete_task", { task_id: task.id });
    await human.ok("set_auto_ok", { task_id: task.id, auto_ok: true });
    const r = await agent.ok("complete_task", { task_id: task.id });
    expect(r).toMatchObject({
      outcome: "completed", changed: true, task: { status: "done" },
      approval: { id: approval.id, status: "withdrawn", decided_by: acc.agentName, reason: "completed by the agent under auto-OK" },
    });
    expect(await lastEntry(task.id, "complete_task")).toBe(`completed (auto-OK); approval ${approval.id} withdrawn`);

    const { task: other } = await human.ok("create_task", { title: "Renew the certificate", auto_ok: true });
    const { approval: asked } = await human.ok("request_approval", { task_id: other.id, question: "Which provider?" });
    const before = await snapshotDb();
    expect(await agent.fails("complete_task", { task_id: other.id })).toContain(`has a pending question (${asked.id}, asked by human)`);
    expect(await snapshotDb()).toBe(before);
    await closeAll(human, agent);
  });

  it("a person's completion of a recurring task awaiting sign-off approves it and creates the next occurrence", async () => {
    const acc = await seedAccount();
    const human = await connect(acc.human);
    const agent = await connect(acc.agent);
    const { task } = await human.ok("create_task", { title: "Weekly invoice run", recurrence: "FREQ=WEEKLY", due_at: "2027-03-01T09:00:00Z" });
    const { approval } = await agent.ok("complete_task", { task_id: task.id });
    const r = await human.ok("complete_task", { task_id: task.id, note: "Fine." });
    expect(r).toMatchObject({ outcome: "completed", changed: true, task: { status: "done", recurrence: null }, approval: { id: approval.id, status: "approved", reason: "Fine." } });
    expect(r.next_occurrence).toMatchObject({ status: "open", recurrence: "FREQ=WEEKLY", due_at: "2027-03-08T09:00:00.000Z" });
    expect(await lastEntry(task.id, "complete_task")).toBe(
      `completed; approval ${approval.id} approved; next occurrence ${r.next_occurrence.id} due 2027-03-08T09:00:00.000Z`,
    );
    expect(await taskRow(r.next_occurrence.id)).toMatchObject({ status: "open", recurs: 1 });
    const again = await human.ok("complete_task", { task_id: task.id });
    expect(again).toMatchObject({ changed: false, approval: { id: approval.id }, next_occurrence: { id: r.next_occurrence.id } });
    await closeAll(human, agent);
  });
});

describe("approve_task and reject_task beside their usual case", () => {
  it("approving a task awaiting approval without a request completes it, deciding nothing", async () => {
    const acc = await seedAccount();
    const human = await connect(acc.human);
    const agent = await connect(acc.agent);
    const { taskId } = await awaitingWithoutRequest(human, agent, "Ship the order");
    const r = await human.ok("approve_task", { task_id: taskId });
    expect(r).toMatchObject({ changed: true, approval: null, next_occurrence: null, task: { status: "done" } });
    expect(await lastEntry(taskId, "approve_task")).toBe("approved; task done");
    await closeAll(human, agent);
  });

  it("approving a pending sign-off of a task already done decides it and leaves the task as it is", async () => {
    const acc = await seedAccount();
    const human = await connect(acc.human);
    const agent = await connect(acc.agent);
    const { task } = await human.ok("create_task", { title: "Archive the mail" });
    const { approval } = await agent.ok("complete_task", { task_id: task.id });
    await setTaskColumn(task.id, "status", "done");
    const { version } = (await taskRow(task.id))!;
    const r = await human.ok("approve_task", { task_id: task.id, note: "Thanks" });
    expect(r).toMatchObject({ changed: true, approval: { id: approval.id, status: "approved", reason: "Thanks" }, task: { status: "done", version } });
    expect(await lastEntry(task.id, "approve_task")).toBe(`approved ${approval.id}; task done: Thanks`);
    await closeAll(human, agent);
  });

  it("rejecting a pending sign-off of a blocked task leaves it blocked, with the reason as a comment", async () => {
    const acc = await seedAccount();
    const human = await connect(acc.human);
    const agent = await connect(acc.agent);
    const { task } = await human.ok("create_task", { title: "Paint the fence" });
    const { approval } = await agent.ok("complete_task", { task_id: task.id });
    const blocked = await human.ok("block_task", { task_id: task.id, reason: "Rain" });
    const r = await human.ok("reject_task", { task_id: task.id, reason: "One coat is missing." });
    expect(r).toMatchObject({ changed: true, approval: { id: approval.id, status: "rejected" }, task: { status: "blocked", version: blocked.task.version } });
    expect(await lastEntry(task.id, "reject_task")).toBe(`rejected ${approval.id}; back to blocked (comment ${r.comment_id}): One coat is missing.`);
    await closeAll(human, agent);
  });

  it("rejecting a task awaiting approval without a request sends it back to work, deciding nothing", async () => {
    const acc = await seedAccount();
    const human = await connect(acc.human);
    const agent = await connect(acc.agent);
    const { taskId, version } = await awaitingWithoutRequest(human, agent, "Proofread the brochure");
    const r = await human.ok("reject_task", { task_id: taskId, reason: "Page 3 has typos." });
    expect(r).toMatchObject({ changed: true, approval: null, task: { status: "in_progress", version: version + 1 }, comment_id: expect.stringMatching(/^cmt_/) });
    expect(await lastEntry(taskId, "reject_task")).toBe(`rejected; back to in_progress (comment ${r.comment_id}): Page 3 has typos.`);
    await closeAll(human, agent);
  });

  it("approving a recurring task's sign-off completes it with its next occurrence", async () => {
    const acc = await seedAccount();
    const human = await connect(acc.human);
    const agent = await connect(acc.agent);
    const { task } = await human.ok("create_task", { title: "Monthly backup check", recurrence: "FREQ=MONTHLY", due_at: "2027-03-01T09:00:00Z" });
    const { approval } = await agent.ok("complete_task", { task_id: task.id });
    const r = await human.ok("approve_task", { task_id: task.id });
    expect(r).toMatchObject({ changed: true, approval: { id: approval.id, status: "approved" }, task: { status: "done", recurrence: null } });
    expect(r.next_occurrence).toMatchObject({ due_at: "2027-04-01T09:00:00.000Z", recurrence: "FREQ=MONTHLY" });
    expect(await lastEntry(task.id, "approve_task")).toBe(`approved ${approval.id}; task done; next occurrence ${r.next_occurrence.id} due 2027-04-01T09:00:00.000Z`);
    await closeAll(human, agent);
  });
});

describe("request_approval and claim_task beside their usual case", () => {
  it("a request on a task awaiting approval without one is a sign-off", async () => {
    const acc = await seedAccount();
    const human = await connect(acc.human);
    const agent = await connect(acc.agent);
    const { taskId } = await awaitingWithoutRequest(human, agent, "Send the parcel");
    const r = await agent.ok("request_approval", { task_id: taskId, question: "Sent by courier, all right?" });
    expect(r).toMatchObject({ changed: true, approval: { kind: "signoff", status: "pending", question: "Sent by courier, all right?", task_title: "Send the parcel" } });
    expect(await lastEntry(taskId, "request_approval")).toBe(`requested sign-off ${r.approval.id}: Sent by courier, all right?`);
    await closeAll(human, agent);
  });

  it("withdrawing a sign-off request sends its task back to work; a question's task stays", async () => {
    const acc = await seedAccount();
    const human = await connect(acc.human);
    const agent = await connect(acc.agent);
    const { task } = await human.ok("create_task", { title: "Tidy the wiki" });
    const { approval } = await agent.ok("complete_task", { task_id: task.id });
    const r = await agent.ok("request_approval", { task_id: task.id, withdraw: true });
    expect(r).toMatchObject({ changed: true, approval: { id: approval.id, status: "withdrawn", task_title: "Tidy the wiki" } });
    expect(await taskRow(task.id)).toMatchObject({ status: "in_progress" });
    expect(await lastEntry(task.id, "request_approval")).toBe(`withdrew sign-off request ${approval.id}`);

    const { approval: q } = await agent.ok("request_approval", { task_id: task.id, question: "Keep the old pages?" });
    const { version } = (await taskRow(task.id))!;
    await agent.ok("request_approval", { task_id: task.id, withdraw: true });
    expect(await taskRow(task.id)).toMatchObject({ status: "in_progress", version });
    expect(await lastEntry(task.id, "request_approval")).toBe(`withdrew question ${q.id}`);
    await closeAll(human, agent);
  });

  it("claims a task in progress that nobody holds", async () => {
    const acc = await seedAccount();
    const human = await connect(acc.human);
    const agent = await connect(acc.agent);
    const { task } = await human.ok("create_task", { title: "Sort the inbox" });
    await setTaskColumn(task.id, "status", "in_progress");
    const r = await agent.ok("claim_task", { task_id: task.id });
    expect(r).toMatchObject({ changed: true, taken_over_from: null, task: { status: "in_progress", assignee: acc.agentName } });
    expect(await lastEntry(task.id, "claim_task")).toBe(`claimed by ${acc.agentName} and started`);
    await closeAll(human, agent);
  });
});
