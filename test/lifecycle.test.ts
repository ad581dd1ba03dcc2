import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { connect, ERAS, seedAccount, snapshotDb } from "./helpers.ts";
import { activityOf, agentClients, approvalsOf, closeAll, MISSING, setTaskColumn } from "./lifecycle.helpers.ts";

describe("complete_task", () => {
  for (const era of ERAS) {
    it(`${era}: a person's completion completes, and a second call changes nothing`, async () => {
      const acc = await seedAccount();
      const human = await connect(acc.human, era);
      const { task } = await human.ok("create_task", { title: "File the taxes" });
      const r = await human.ok("complete_task", { task_id: task.id });
      expect(r).toMatchObject({ outcome: "completed", changed: true, approval: null });
      expect(r.task).toMatchObject({ status: "done", version: 2 });
      expect(r.task.completed_at).toEqual(expect.any(String));
      expect(await human.ok("get_task", { task_id: task.id })).toMatchObject({ task: r.task });
      const again = await human.ok("complete_task", { task_id: task.id });
      expect(again).toMatchObject({ outcome: "completed", changed: false, task: r.task });
      expect((await activityOf(task.id)).filter((e) => e.tool === "complete_task")).toHaveLength(1);
      await human.close();
    });

    it(`${era}: an agent's completion without auto-OK waits for approval, with exactly one pending approval however often it repeats`, async () => {
      const acc = await seedAccount();
      const human = await connect(acc.human, era);
      const agent = await connect(acc.agent, era);
      const { task } = await human.ok("create_task", { title: "Draft the newsletter" });
      const first = await agent.ok("complete_task", { task_id: task.id, note: "Draft is in the shared folder." });
      expect(first).toMatchObject({ outcome: "awaiting_approval", changed: true });
      expect(first.task.status).toBe("awaiting_approval");
      expect(first.task.completed_at).toBeNull();
      expect(first.approval).toMatchObject({ status: "pending", task_id: task.id, question: "Draft is in the shared folder.", requested_by: acc.agentName });

      const again = await agent.ok("complete_task", { task_id: task.id });
      expect(again).toMatchObject({ outcome: "awaiting_approval", changed: false, approval: first.approval });
      const concurrent = await Promise.all([1, 2, 3, 4].map(() => agent.ok("complete_task", { task_id: task.id })));
      for (const c of concurrent) expect(c).toMatchObject({ outcome: "awaiting_approval", changed: false, approval: { id: first.approval.id } });

      expect(await approvalsOf(task.id)).toEqual([expect.objectContaining({ id: first.approval.id, status: "pending" })]);
      expect((await activityOf(task.id)).filter((e) => e.tool === "complete_task")).toHaveLength(1);
      const got = await agent.ok("get_task", { task_id: task.id });
      expect(got.pending_approval).toMatchObject({ id: first.approval.id });
      await closeAll(human, agent);
    });
  }

  it("concurrent first completions by an agent still open exactly one approval", async () => {
    const acc = await seedAccount();
    const human = await connect(acc.human);
    const agent = await connect(acc.agent);
    const { task } = await human.ok("create_task", { title: "Race to done" });
    const results = await Promise.all([1, 2, 3, 4, 5].map(() => agent.call("complete_task", { task_id: task.id })));
    for (const r of results) expect(r.isError, r.text).toBe(false);
    expect(results.filter((r) => r.structured.changed)).toHaveLength(1);
    const approvals = await approvalsOf(task.id);
    expect(approvals).toHaveLength(1);
    expect(approvals[0].status).toBe("pending");
    expect((await activityOf(task.id)).filter((e) => e.tool === "complete_task")).toHaveLength(1);
    await closeAll(human, agent);
  });

  it("an agent completes an auto-OK task itself", async () => {
    const acc = await seedAccount();
    const human = await connect(acc.human);
    const agent = await connect(acc.agent);
    const { task } = await human.ok("create_task", { title: "Rotate logs", auto_ok: true });
    const r = await agent.ok("complete_task", { task_id: task.id });
    expect(r).toMatchObject({ outcome: "completed", changed: true, approval: null, task: { status: "done" } });
    expect(await approvalsOf(task.id)).toEqual([]);
    const [entry] = (await activityOf(task.id)).filter((e) => e.tool === "complete_task");
    expect(entry).toMatchObject({ actor: acc.agentName, summary: expect.stringContaining("auto-OK") });
    await closeAll(human, agent);
  });

  it("a person's completion of an awaiting task approves its pending approval", async () => {
    const acc = await seedAccount();
    const human = await connect(acc.human);
    const agent = await connect(acc.agent);
    const { task } = await human.ok("create_task", { title: "Order paper" });
    const { approval } = await agent.ok("complete_task", { task_id: task.id });
    const r = await human.ok("complete_task", { task_id: task.id });
    expect(r).toMatchObject({ outcome: "completed", approval: { id: approval.id, status: "approved", decided_by: "human" } });
    expect(await approvalsOf(task.id)).toEqual([expect.objectContaining({ status: "approved" })]);
    await closeAll(human, agent);
  });

  it("refuses a cancelled task, and unknown or foreign task ids, changing nothing", async () => {
    const acc = await seedAccount();
    const other = await seedAccount("Other");
    const human = await connect(acc.human);
    const stranger = await connect(other.human);
    const { task } = await human.ok("create_task", { title: "Cancelled plan" });
    await setTaskColumn(task.id, "status", "cancelled");
    const before = await snapshotDb();
    expect(await human.fails("complete_task", { task_id: task.id })).toMatch(/cancelled; reopen_task/);
    for (const tool of ["complete_task", "reopen_task", "claim_task", "set_auto_ok"]) {
      const args = tool === "set_auto_ok" ? { auto_ok: true } : {};
      expect(await stranger.fails(tool, { task_id: task.id, ...args })).toMatch(new RegExp(`No task ${task.id} in this account`));
      expect(await human.fails(tool, { task_id: MISSING.task, ...args })).toMatch(/No task tsk_0+ in this account; list_tasks/);
      expect(await human.fails(tool, { task_id: "nope", ...args })).toMatch(/task_id: expected a task id/);
    }
    expect(await snapshotDb()).toBe(before);
    await closeAll(human, stranger);
  });
});

describe("reopen_task", () => {
  it("brings done, cancelled and awaiting tasks back to open, closing a pending approval; open stays as it is", async () => {
    const acc = await seedAccount();
    const human = await connect(acc.human);
    const agent = await connect(acc.agent);
    const { task: done } = await human.ok("create_task", { title: "Done one" });
    await human.ok("complete_task", { task_id: done.id });
    const r1 = await human.ok("reopen_task", { task_id: done.id, reason: "Found a typo" });
    expect(r1).toMatchObject({ changed: true, closed_approval: null, task: { status: "open", completed_at: null } });
    const again = await human.ok("reopen_task", { task_id: done.id });
    expect(again).toMatchObject({ changed: false, task: r1.task });
    expect((await activityOf(done.id)).filter((e) => e.tool === "reopen_task")).toEqual([
      expect.objectContaining({ summary: "reopened from done: Found a typo" }),
    ]);

    const { task: awaiting } = await human.ok("create_task", { title: "Awaiting one" });
    const { approval } = await agent.ok("complete_task", { task_id: awaiting.id });
    const r2 = await agent.ok("reopen_task", { task_id: awaiting.id });
    // The agent that asked withdraws its own sign-off (C3): withdrawn, not decided.
    expect(r2).toMatchObject({ changed: true, task: { status: "open" }, closed_approval: { id: approval.id, status: "withdrawn", decided_by: acc.agentName } });
    expect(await approvalsOf(awaiting.id)).toEqual([expect.objectContaining({ status: "withdrawn" })]);
    expect((await human.ok("list_pending_approvals", {})).items).toEqual([]);

    const { task: cancelled } = await human.ok("create_task", { title: "Cancelled one" });
    await setTaskColumn(cancelled.id, "status", "cancelled");
    expect(await human.ok("reopen_task", { task_id: cancelled.id })).toMatchObject({ changed: true, task: { status: "open" } });
    await closeAll(human, agent);
  });

  it("refuses a task still being worked on, changing nothing", async () => {
    const acc = await seedAccount();
    const agent = await connect(acc.agent);
    const { task } = await agent.ok("create_task", { title: "In flight" });
    await agent.ok("claim_task", { task_id: task.id });
    const before = await snapshotDb();
    expect(await agent.fails("reopen_task", { task_id: task.id })).toMatch(/is in_progress, not finished/);
    expect(await snapshotDb()).toBe(before);
    await agent.close();
  });
});

describe("claim_task", () => {
  for (const era of ERAS) {
    it(`${era}: N agents claiming one task at once → exactly one owner; the others are told who holds it`, async () => {
      const acc = await seedAccount();
      const human = await connect(acc.human, era);
      const names = ["a1", "a2", "a3", "a4", "a5", "a6"];
      const agents = await agentClients(acc, names, era);
      const { task } = await human.ok("create_task", { title: "One prize" });
      const results = await Promise.all(agents.map((c) => c.call("claim_task", { task_id: task.id })));
      const winners = results.filter((r) => !r.isError);
      expect(winners).toHaveLength(1);
      const owner = winners[0].structured.task.assignee as string;
      expect(names).toContain(owner);
      expect(winners[0].structured).toMatchObject({ changed: true, task: { status: "in_progress", assignee: owner, version: 2 } });
      for (const r of results.filter((x) => x.isError)) expect(r.text).toMatch(new RegExp(`is claimed by agent ${owner} `));
      const row = await env.DB.prepare("SELECT assignee, status, version FROM tasks WHERE id = ?").bind(task.id).first();
      expect(row).toEqual({ assignee: owner, status: "in_progress", version: 2 });
      expect((await activityOf(task.id)).filter((e) => e.tool === "claim_task")).toEqual([
        expect.objectContaining({ actor: owner, summary: `claimed by ${owner} and started` }),
      ]);

      const mine = agents[names.indexOf(owner)];
      expect(await mine.ok("claim_task", { task_id: task.id })).toMatchObject({ changed: false, task: { assignee: owner, version: 2 } });
      expect((await activityOf(task.id)).filter((e) => e.tool === "claim_task")).toHaveLength(1);
      await closeAll(human, ...agents);
    });
  }

  it("claims an own open task; refuses done, cancelled, awaiting and someone else's task", async () => {
    const acc = await seedAccount();
    const human = await connect(acc.human);
    const [a1, a2] = await agentClients(acc, ["a1", "a2"]);
    const { task: mine } = await human.ok("create_task", { title: "Assigned, not started", assignee: "a1" });
    expect(await a1.ok("claim_task", { task_id: mine.id })).toMatchObject({ changed: true, task: { status: "in_progress", assignee: "a1" } });
    expect(await a2.fails("claim_task", { task_id: mine.id })).toMatch(/claimed by agent a1 .*Ask a person to decide .*, or pick another task/);
    expect(await human.fails("claim_task", { task_id: mine.id })).toMatch(/claimed by a1/);

    const { task: done } = await human.ok("create_task", { title: "Finished" });
    await human.ok("complete_task", { task_id: done.id });
    const { task: awaiting } = await human.ok("create_task", { title: "Waiting" });
    await a1.ok("complete_task", { task_id: awaiting.id });
    const { task: cancelled } = await human.ok("create_task", { title: "Dropped" });
    await setTaskColumn(cancelled.id, "status", "cancelled");
    const before = await snapshotDb();
    expect(await a2.fails("claim_task", { task_id: done.id })).toMatch(/is done and can't be claimed; reopen_task/);
    expect(await a2.fails("claim_task", { task_id: cancelled.id })).toMatch(/is cancelled and can't be claimed/);
    expect(await a2.fails("claim_task", { task_id: awaiting.id })).toMatch(/awaiting a person's approval/);
    expect(await snapshotDb()).toBe(before);

    const { task: forHuman } = await human.ok("create_task", { title: "Mine, the person's" });
    expect(await human.ok("claim_task", { task_id: forHuman.id })).toMatchObject({ task: { assignee: "human", status: "in_progress" } });
    await closeAll(human, a1, a2);
  });
});

describe("set_auto_ok", () => {
  it("a person allows an agent to complete alone; the same value again changes nothing", async () => {
    const acc = await seedAccount();
    const human = await connect(acc.human);
    const agent = await connect(acc.agent);
    const { task } = await human.ok("create_task", { title: "Routine backup" });
    expect(task.auto_ok).toBe(false);
    const on = await human.ok("set_auto_ok", { task_id: task.id, auto_ok: true });
    expect(on).toMatchObject({ changed: true, task: { auto_ok: true, version: 2 } });
    expect(await human.ok("set_auto_ok", { task_id: task.id, auto_ok: true })).toMatchObject({ changed: false, task: { version: 2 } });
    expect((await activityOf(task.id)).filter((e) => e.tool === "set_auto_ok")).toHaveLength(1);
    expect(await agent.ok("complete_task", { task_id: task.id })).toMatchObject({ outcome: "completed" });

    const { task: t2 } = await human.ok("create_task", { title: "Sensitive", auto_ok: true });
    await human.ok("set_auto_ok", { task_id: t2.id, auto_ok: false });
    expect(await agent.ok("complete_task", { task_id: t2.id })).toMatchObject({ outcome: "awaiting_approval" });
    expect(await human.fails("set_auto_ok", { task_id: t2.id })).toMatch(/auto_ok/);
    await closeAll(human, agent);
  });
});
