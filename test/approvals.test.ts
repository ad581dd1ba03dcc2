import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { annotationsFor, HUMAN_TOOLS, TOOL_NAMES, type ToolName } from "../src/catalog/effects.ts";
import { asServer, connect, ERAS, seedAccount, snapshotDb } from "./helpers.ts";
import { activityOf, approvalsOf, closeAll, MISSING } from "./lifecycle.helpers.ts";

const CONSENT_TOOLS: ToolName[] = [
  "complete_task", "reopen_task", "claim_task", "set_auto_ok",
  "list_runs", "get_run", "start_run", "log_run_event", "finish_run", "cancel_run",
  "fleet_status", "list_agents", "get_agent", "get_workload", "pause_agent", "resume_agent",
  "list_pending_approvals", "get_approval", "request_approval", "approve_task", "reject_task",
];

describe("the agents-and-consent tools", () => {
  for (const era of ERAS) {
    it(`${era}: all 21 are listed for a person's write token, with the hints of the effect sets`, async () => {
      const acc = await seedAccount();
      const human = await connect(acc.human, era);
      const tools = new Map((await human.listTools()).map((t) => [t.name, t]));
      for (const name of CONSENT_TOOLS) {
        const t = tools.get(name);
        expect(t, name).toBeDefined();
        const { title, ...hints } = annotationsFor(name);
        expect(t?.title, name).toBe(title);
        expect(t?.annotations, name).toEqual(hints);
        expect(t?.description?.length, name).toBeLessThan(400);
        expect(t?.outputSchema?.type, name).toBe("object");
      }
      expect(new Set(CONSENT_TOOLS).size).toBe(21);
      await human.close();
    });
  }
});

describe("an agent can never give consent", () => {
  for (const era of ERAS) {
    it(`${era}: every HUMAN_TOOLS tool from an agent's token is refused, saying a person must do it, and changes nothing`, async () => {
      const acc = await seedAccount();
      const human = await connect(acc.human, era);
      const agent = await connect(acc.agent, era);
      const { task } = await human.ok("create_task", { title: "Needs consent" });
      await agent.ok("complete_task", { task_id: task.id });
      const plausible: Record<string, Record<string, unknown>> = {
        set_auto_ok: { task_id: task.id, auto_ok: true },
        pause_agent: { agent: acc.agentName },
        resume_agent: { agent: acc.agentName },
        approve_task: { task_id: task.id },
        reject_task: { task_id: task.id, reason: "I say no" },
        empty_trash: {},
        disconnect_connector: { provider: "drive" },
        update_account_settings: { default_auto_ok: true },
        revoke_token: { token_id: acc.tokenIds.human },
      };
      expect(Object.keys(plausible).sort()).toEqual([...HUMAN_TOOLS].sort());
      const listed = (await agent.listTools()).map((t) => t.name);
      for (const name of HUMAN_TOOLS) {
        expect(listed, name).not.toContain(name);
        const before = await snapshotDb();
        const text = await agent.fails(name, plausible[name]);
        expect(text, name).toMatch(/a person must do it with a human token/);
        expect(await snapshotDb(), `${name} changed rows`).toBe(before);
      }
      expect(listed).toHaveLength(TOOL_NAMES.length - HUMAN_TOOLS.size);
      expect((await agent.ok("get_task", { task_id: task.id })).task.status).toBe("awaiting_approval");
      await closeAll(human, agent);
    });
  }
});

describe("approve_task and reject_task", () => {
  for (const era of ERAS) {
    it(`${era}: approving completes the task and marks the approval; approving again changes nothing`, async () => {
      const acc = await seedAccount();
      const human = await connect(acc.human, era);
      const agent = await connect(acc.agent, era);
      const { task } = await human.ok("create_task", { title: "Publish the post" });
      const { approval } = await agent.ok("complete_task", { task_id: task.id });
      const r = await human.ok("approve_task", { task_id: task.id, note: "Looks great" });
      expect(r).toMatchObject({ changed: true, task: { status: "done" }, approval: { id: approval.id, status: "approved", decided_by: "human", reason: "Looks great" } });
      expect(r.task.completed_at).toEqual(expect.any(String));
      expect(r.approval.decided_at).toEqual(expect.any(String));
      const before = await snapshotDb();
      const again = await human.ok("approve_task", { task_id: task.id });
      expect(again).toMatchObject({ changed: false, task: r.task, approval: { id: approval.id, status: "approved" } });
      expect(await snapshotDb()).toBe(before);
      expect(await human.ok("get_approval", { approval_id: approval.id })).toMatchObject({
        approval: { status: "approved" },
        task: { id: task.id, status: "done", auto_ok: false },
      });
      await closeAll(human, agent);
    });

    it(`${era}: rejecting needs a reason, sends the task back to in_progress and records the reason as a comment and in the history`, async () => {
      const acc = await seedAccount();
      const human = await connect(acc.human, era);
      const agent = await connect(acc.agent, era);
      const { task } = await human.ok("create_task", { title: "Write release notes" });
      const { approval } = await agent.ok("complete_task", { task_id: task.id });
      const before = await snapshotDb();
      expect(await human.fails("reject_task", { task_id: task.id })).toMatch(/reason/);
      expect(await human.fails("reject_task", { task_id: task.id, reason: "   " })).toMatch(/reason: must not be empty/);
      expect(await human.fails("reject_task", { task_id: task.id, reason: "x".repeat(2001) })).toMatch(/reason/);
      expect(await snapshotDb()).toBe(before);

      const r = await human.ok("reject_task", { task_id: task.id, reason: "Mention the breaking change." });
      expect(r).toMatchObject({
        changed: true,
        task: { status: "in_progress" },
        approval: { id: approval.id, status: "rejected", reason: "Mention the breaking change.", decided_by: "human" },
        comment_id: expect.stringMatching(/^cmt_/),
      });
      const comment = await env.DB.prepare("SELECT author, author_token_id, body, task_id FROM comments WHERE id = ?").bind(r.comment_id).first();
      expect(comment).toEqual({ author: "human", author_token_id: acc.tokenIds.human, body: "Rejected: Mention the breaking change.", task_id: task.id });
      const history = (await activityOf(task.id)).filter((e) => e.tool === "reject_task");
      expect(history).toEqual([expect.objectContaining({ actor: "human", summary: expect.stringContaining("Mention the breaking change.") })]);

      const after = await snapshotDb();
      // A retry answers as the first call did (the same comment), changing nothing.
      expect(await human.ok("reject_task", { task_id: task.id, reason: "Mention the breaking change." })).toEqual({ ...r, changed: false });
      expect(await snapshotDb()).toBe(after);
      expect(await human.fails("reject_task", { task_id: task.id, reason: "Another thought" })).toMatch(/no pending approval .*nothing to reject/);

      const second = await agent.ok("complete_task", { task_id: task.id });
      expect(second.approval.id).not.toBe(approval.id);
      expect((await approvalsOf(task.id)).map((a) => a.status)).toEqual(["rejected", "pending"]);
      await closeAll(human, agent);
    });
  }

  it("refuses a task with nothing to decide, and unknown or foreign tasks, changing nothing", async () => {
    const acc = await seedAccount();
    const other = await seedAccount("Other");
    const human = await connect(acc.human);
    const stranger = await connect(other.human);
    const { task } = await human.ok("create_task", { title: "Nothing asked" });
    const before = await snapshotDb();
    expect(await human.fails("approve_task", { task_id: task.id })).toMatch(/has no pending approval \(it is open\); nothing to approve/);
    expect(await human.fails("reject_task", { task_id: task.id, reason: "no" })).toMatch(/nothing to reject/);
    expect(await stranger.fails("approve_task", { task_id: task.id })).toMatch(/No task .* in this account/);
    expect(await stranger.fails("reject_task", { task_id: task.id, reason: "no" })).toMatch(/No task .* in this account/);
    expect(await human.fails("approve_task", { task_id: MISSING.task })).toMatch(/No task/);
    expect(await snapshotDb()).toBe(before);
    await closeAll(human, stranger);
  });
});

describe("request_approval", () => {
  it("opens one pending approval per task; a second call returns the same one; the status stays", async () => {
    const acc = await seedAccount();
    const human = await connect(acc.human);
    const agent = await connect(acc.agent);
    const { task } = await agent.ok("create_task", { title: "Deploy to production" });
    await agent.ok("claim_task", { task_id: task.id });
    const first = await agent.ok("request_approval", { task_id: task.id, question: "Deploy now or after the weekend?" });
    expect(first).toMatchObject({ changed: true, approval: { status: "pending", question: "Deploy now or after the weekend?", requested_by: acc.agentName } });
    expect(first.approval.kind, "a request on unfinished work is a question").toBe("question");
    const before = await snapshotDb();
    const again = await agent.ok("request_approval", { task_id: task.id, question: "Deploy now or after the weekend?" });
    expect(again).toEqual({ changed: false, approval: first.approval, decide_url: `https://taskgate.test/tasks/${first.approval.task_id}` });
    const racing = await Promise.all([1, 2, 3].map(() => agent.ok("request_approval", { task_id: task.id, question: "Deploy now or after the weekend?" })));
    for (const r of racing) expect(r.approval.id).toBe(first.approval.id);
    const other = await agent.fails("request_approval", { task_id: task.id, question: "A different question" });
    expect(other).toContain(`already has a pending question from ${acc.agentName} (${first.approval.id}`);
    expect(other).toContain(`"Deploy now or after the weekend?"`);
    expect(await snapshotDb()).toBe(before);
    expect((await agent.ok("get_task", { task_id: task.id })).task.status).toBe("in_progress");

    // A pending question waits for the person (C3): the agent's completion is refused until it withdraws it.
    expect(await agent.fails("complete_task", { task_id: task.id })).toMatch(/has a pending question .*Only a person decides it, so the task was not completed.*"withdraw": true/);
    expect(await snapshotDb()).toBe(before);
    const withdrawn = await agent.ok("request_approval", { task_id: task.id, withdraw: true });
    expect(withdrawn).toMatchObject({ changed: true, approval: { id: first.approval.id, status: "withdrawn", decided_by: acc.agentName } });
    expect(await agent.ok("request_approval", { task_id: task.id, withdraw: true })).toEqual({ ...withdrawn, changed: false });
    const r = await agent.ok("complete_task", { task_id: task.id });
    expect(r).toMatchObject({ outcome: "awaiting_approval", approval: { kind: "signoff", status: "pending" } });
    expect(r.approval.id).not.toBe(first.approval.id);
    expect((await approvalsOf(task.id)).map((a) => a.status).sort()).toEqual(["pending", "withdrawn"]);
    await human.ok("approve_task", { task_id: task.id });
    expect(await human.fails("request_approval", { task_id: task.id, question: "Late?" })).toMatch(/is done; there is nothing left to ask about/);
    expect(await agent.fails("request_approval", { task_id: task.id, question: "" })).toMatch(/question: must not be empty/);
    await closeAll(human, agent);
  });

  it("concurrent first requests open exactly one approval", async () => {
    const acc = await seedAccount();
    const agent = await connect(acc.agent);
    const { task } = await agent.ok("create_task", { title: "Buy the domain" });
    const results = await Promise.all([1, 2, 3, 4].map((i) => agent.call("request_approval", { task_id: task.id, question: `Buy it? (${i})` })));
    const won = results.filter((r) => !r.isError);
    expect(won, results.map((r) => r.text).join("\n")).toHaveLength(1);
    for (const r of results.filter((x) => x.isError)) expect(r.text).toContain(`already has a pending question from bot (${won[0].structured.approval.id}`);
    expect(await approvalsOf(task.id)).toHaveLength(1);
    expect((await activityOf(task.id)).filter((e) => e.tool === "request_approval")).toHaveLength(1);
    await agent.close();
  });
});

describe("list_pending_approvals and get_approval", () => {
  it("lists pending approvals oldest first in cursor pages, by project, and hides trashed tasks and other accounts", async () => {
    const acc = await seedAccount();
    const other = await seedAccount("Other");
    const human = await connect(acc.human);
    const agent = await connect(acc.agent);
    const stranger = await connect(other.human);
    const { project } = await human.ok("create_project", { name: "Launch" });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const { task } = await human.ok("create_task", { title: `Task ${i}`, ...(i < 2 ? { project_id: project.id } : {}) });
      ids.push((await agent.ok("request_approval", { task_id: task.id, question: `Q${i}` })).approval.id);
    }
    const p1 = await human.ok("list_pending_approvals", { limit: 3 });
    expect(p1.items.map((a: { id: string }) => a.id)).toEqual(ids.slice(0, 3));
    expect(p1.next_cursor).toEqual(expect.any(String));
    const p2 = await agent.ok("list_pending_approvals", { limit: 3, cursor: p1.next_cursor });
    expect(p2.items.map((a: { id: string }) => a.id)).toEqual(ids.slice(3));
    expect(p2.next_cursor).toBeNull();
    expect((await human.ok("list_pending_approvals", { project_id: project.id })).items).toHaveLength(2);
    expect(await human.fails("list_pending_approvals", { cursor: "garbage!" })).toMatch(/cursor: not a cursor/);
    expect(await human.fails("list_pending_approvals", { limit: 101 })).toMatch(/limit/);
    expect((await stranger.ok("list_pending_approvals", {})).items).toEqual([]);

    const got = await agent.ok("get_approval", { approval_id: ids[0] });
    expect(got).toMatchObject({ approval: { id: ids[0], status: "pending", question: "Q0", task_title: "Task 0" }, task: { title: "Task 0", status: "open" } });
    expect(await stranger.fails("get_approval", { approval_id: ids[0] })).toMatch(/No approval .* in this account; list_pending_approvals/);
    expect(await human.fails("get_approval", { approval_id: MISSING.approval })).toMatch(/No approval/);

    const trashed = (await human.ok("get_approval", { approval_id: ids[4] })).approval.task_id;
    await asServer(env.DB, env.DB.prepare("UPDATE tasks SET trash_id = 'trs_test' WHERE id = ?").bind(trashed));
    expect((await human.ok("list_pending_approvals", {})).items).toHaveLength(4);
    expect(await human.fails("get_approval", { approval_id: ids[4] })).toMatch(/No approval/);
    await closeAll(human, agent, stranger);
  });
});
