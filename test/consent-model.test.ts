/**
 * The consent model with two agents and a person, through real SDK clients in
 * both protocol eras: a claim keeps other agents off a task, a question is
 * answered without closing the task while a sign-off completes it, and runs
 * end with their task.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { asServer, connect, createToken, type Era, ERAS, seedAccount, snapshotDb, type TestClient } from "./helpers.ts";
import { addHook, fakeReceivers, sleep, waitFor } from "./webhooks.helpers.ts";
import { act, flashOn, open, signedInPerson } from "./console.helpers.ts";

/** A person and two agents, alpha and beta, of one account. */
async function team(era: Era, name: string) {
  const acc = await seedAccount(name, "alpha");
  const beta = await createToken({ accountId: acc.accountId, kind: "agent", scope: "write", agent: "beta" });
  const clients = {
    person: await connect(acc.human, era),
    alpha: await connect(acc.agent, era),
    beta: await connect(beta.secret, era),
  };
  return { acc, ...clients, close: () => Promise.all(Object.values(clients).map((c: TestClient) => c.close())) };
}

async function taskRow(id: string) {
  return env.DB.prepare("SELECT status, assignee, claim_expires_at, claim_lease_minutes FROM tasks WHERE id = ?")
    .bind(id)
    .first<{ status: string; assignee: string | null; claim_expires_at: string | null; claim_lease_minutes: number | null }>();
}

/** Moves a claim's lease end into the past: how time passes here. */
async function lapse(taskId: string) {
  await asServer(env.DB, env.DB.prepare("UPDATE tasks SET claim_expires_at = ? WHERE id = ?").bind(new Date(Date.now() - 60_000).toISOString(), taskId));
}

describe.each(ERAS)("claims (%s era)", (era) => {
  it("another agent can neither change nor take a claimed task, whatever the tool; comments stay open; a person may do anything", async () => {
    const { person, alpha, beta, close } = await team(era, "Claimed");
    const { project } = await person.ok("create_project", { name: "Elsewhere" });
    const { task } = await person.ok("create_task", { title: "Migrate the billing tables", auto_ok: false });
    const { task: other } = await person.ok("create_task", { title: "Another task" });
    const { steps } = await person.ok("add_steps", { task_id: task.id, steps: ["Copy", "Verify"] });
    await alpha.ok("claim_task", { task_id: task.id });
    const { run } = await alpha.ok("start_run", { task_id: task.id });

    const attempts: [string, Record<string, unknown>][] = [
      ["claim_task", { task_id: task.id }],
      ["assign_task", { task_id: task.id, assignee: "beta" }],
      ["update_task", { task_id: task.id, title: "Mine now" }],
      ["block_task", { task_id: task.id, reason: "I say so" }],
      ["move_task", { task_id: task.id, project_id: project.id }],
      ["delete_task", { task_id: task.id }],
      ["snooze_task", { task_id: task.id, until: new Date(Date.now() + 86_400_000).toISOString() }],
      ["complete_task", { task_id: task.id }],
      ["request_approval", { task_id: task.id, question: "May I take this over?" }],
      ["start_run", { task_id: task.id }],
      ["add_steps", { task_id: task.id, steps: ["Mine"] }],
      ["set_step_status", { step_id: steps[0].id, status: "done" }],
      ["update_step", { step_id: steps[1].id, text: "Skip it" }],
      ["delete_step", { step_id: steps[1].id }],
      ["decompose_task", { task_id: task.id, subtasks: [{ title: "Part" }] }],
      ["add_dependency", { task_id: task.id, depends_on_id: other.id }],
      ["label_task", { task_id: task.id, labels: ["urgent"] }],
    ];
    const before = await snapshotDb();
    for (const [tool, args] of attempts) {
      const text = await beta.fails(tool, args);
      expect(text, tool).toContain(`task ${task.id} is claimed by agent alpha`);
      expect(text, tool).toContain(`so beta may not`);
      expect(text, tool).toContain("Ask a person to decide");
      expect(text, tool).toContain("or pick another task");
      if (tool !== "assign_task") expect(text, `${tool} suggests no way around`).not.toContain("assign_task");
    }
    expect(await snapshotDb(), "nothing written by the refused calls").toBe(before);

    // Comments stay open to all; the holder works on.
    expect((await beta.ok("comment_on_task", { task_id: task.id, body: "I can help with Verify" })).comment.author).toBe("beta");
    await alpha.ok("log_run_event", { run_id: run.id, kind: "progress", message: "half copied" });
    await alpha.ok("set_step_status", { step_id: steps[0].id, status: "done" });

    // A person may do anything, on a claimed task too.
    expect((await person.ok("update_task", { task_id: task.id, notes: "Keep the old ids" })).changed).toBe(true);
    expect((await person.ok("assign_task", { task_id: task.id, assignee: "beta" })).task.assignee).toBe("beta");
    // The person's reassignment made beta the holder: now alpha is the other agent.
    expect(await alpha.fails("update_task", { task_id: task.id, title: "Back to me" })).toContain("is claimed by agent beta");
    expect((await beta.ok("start_run", { task_id: task.id })).run.agent).toBe("beta");
    await close();
  });

  it("an agent's assign_task to itself is a claim with a lease, refused while another agent holds the task, taken over once it lapses", async () => {
    const { person, alpha, beta, close } = await team(era, "Self-assigned");
    const { task } = await person.ok("create_task", { title: "Rotate the keys" });

    const assigned = await beta.ok("assign_task", { task_id: task.id, assignee: "beta" });
    expect(assigned.task.assignee).toBe("beta");
    const row = await taskRow(task.id);
    expect(row?.claim_lease_minutes, "the same lease as claim_task's default").toBe(30);
    expect(Math.abs(Date.parse(row!.claim_expires_at!) - (Date.now() + 30 * 60_000))).toBeLessThan(15_000);
    await beta.ok("start_run", { task_id: task.id });
    expect((await person.ok("get_task", { task_id: task.id })).claim_expires_at).toBe(row!.claim_expires_at);

    // alpha can take it by neither tool, nor hand it on.
    expect(await alpha.fails("claim_task", { task_id: task.id })).toContain("is claimed by agent beta");
    expect(await alpha.fails("assign_task", { task_id: task.id, assignee: "alpha" })).toContain("is claimed by agent beta");
    expect(await alpha.fails("assign_task", { task_id: task.id, assignee: null })).toContain("is claimed by agent beta");

    // The lease lapses like any claim's: then alpha may take the task over.
    await lapse(task.id);
    const took = await alpha.ok("claim_task", { task_id: task.id });
    expect(took).toMatchObject({ taken_over_from: "beta", task: { assignee: "alpha", status: "in_progress" } });
    expect(await beta.fails("assign_task", { task_id: task.id, assignee: "beta" })).toContain("is claimed by agent alpha");

    // An unheld task an agent may hand to another agent: that is a claim with a lease too.
    const { task: free } = await person.ok("create_task", { title: "Free" });
    await alpha.ok("assign_task", { task_id: free.id, assignee: "beta" });
    expect((await taskRow(free.id))?.claim_lease_minutes).toBe(30);
    // A person's assignment has none: it never lapses.
    await person.ok("assign_task", { task_id: free.id, assignee: "alpha" });
    expect(await taskRow(free.id)).toMatchObject({ assignee: "alpha", claim_expires_at: null, claim_lease_minutes: null });
    await close();
  });

  it("no one may assign a task to a paused agent; the refusal says how to go on and writes nothing", async () => {
    const { person, alpha, close } = await team(era, "Paused assignee");
    const { task } = await person.ok("create_task", { title: "Needs hands" });
    await person.ok("pause_agent", { agent: "beta", reason: "misbehaving" });
    const before = await snapshotDb();
    for (const caller of [person, alpha]) {
      const text = await caller.fails("assign_task", { task_id: task.id, assignee: "beta" });
      expect(text).toMatch(/^agent beta is paused \(since .*\), so no task can be assigned to it\. A person's resume_agent lifts the pause; or assign another agent/);
    }
    expect(await snapshotDb()).toBe(before);
    await person.ok("resume_agent", { agent: "beta" });
    expect((await alpha.ok("assign_task", { task_id: task.id, assignee: "beta" })).task.assignee).toBe("beta");
    await close();
  });
});

describe.each(ERAS)("questions and sign-offs (%s era)", (era) => {
  it("a question is answered yes or no and leaves the task where it was; the agent reads the answer in get_task; a sign-off's approval completes the task", async () => {
    const seen = fakeReceivers();
    const { acc, person, alpha, close } = await team(era, "Questions");
    const hook = await addHook(acc.accountId, `https://hooks.example.test/questions-${era}`, "approval.answered,task.completed,task.rejected");
    const mine = () => seen.filter((r) => r.url === hook.webhook.url);
    const { task } = await person.ok("create_task", { title: "Shrink the database", auto_ok: false });
    await alpha.ok("claim_task", { task_id: task.id });
    const { run } = await alpha.ok("start_run", { task_id: task.id });

    const asked = await alpha.ok("request_approval", { task_id: task.id, question: "May I drop the unused index?" });
    expect(asked.approval).toMatchObject({ kind: "question", status: "pending", requested_by: "alpha" });
    const queue = await person.ok("list_pending_approvals", {});
    expect(queue.items.map((i: { id: string; kind: string }) => [i.id, i.kind])).toEqual([[asked.approval.id, "question"]]);
    expect((await alpha.ok("get_task", { task_id: task.id })).pending_approval).toMatchObject({ id: asked.approval.id, kind: "question" });

    // Yes: go on. The task stays in progress, the run keeps running, nothing completes.
    const yes = await person.ok("approve_task", { task_id: task.id, note: "Yes, it has not been read in a year." });
    expect(yes).toMatchObject({ changed: true, task: { status: "in_progress" }, approval: { id: asked.approval.id, kind: "question", status: "approved" } });
    expect((await person.ok("approve_task", { task_id: task.id, note: "Yes, it has not been read in a year." })).changed, "the same answer again").toBe(false);
    let view = await alpha.ok("get_task", { task_id: task.id });
    expect(view.task.status).toBe("in_progress");
    expect(view.pending_approval).toBeNull();
    expect(view.latest_answer).toMatchObject({ id: asked.approval.id, question: "May I drop the unused index?", answer: "yes", reason: "Yes, it has not been read in a year.", decided_by: "human" });
    expect((await alpha.ok("get_run", { run_id: run.id })).run.status).toBe("running");

    // No, with the reason: the task stays where it was too.
    const second = await alpha.ok("request_approval", { task_id: task.id, question: "May I also drop the audit view?" });
    const no = await person.ok("reject_task", { task_id: task.id, reason: "Finance still reads it." });
    expect(no).toMatchObject({ changed: true, comment_id: null, task: { status: "in_progress" }, approval: { id: second.approval.id, status: "rejected" } });
    view = await alpha.ok("get_task", { task_id: task.id });
    expect(view.task.status).toBe("in_progress");
    expect(view.latest_answer).toMatchObject({ id: second.approval.id, answer: "no", reason: "Finance still reads it." });

    // A sign-off: rejected, the task goes back to work; approved, it is done.
    const signoff = await alpha.ok("complete_task", { task_id: task.id, note: "Index dropped, 4 GB freed." });
    expect(signoff).toMatchObject({ outcome: "awaiting_approval", approval: { kind: "signoff" } });
    expect((await person.ok("reject_task", { task_id: task.id, reason: "Vacuum it too." })).task.status).toBe("in_progress");
    await alpha.ok("complete_task", { task_id: task.id, note: "Vacuumed." });
    const approved = await person.ok("approve_task", { task_id: task.id });
    expect(approved).toMatchObject({ task: { status: "done" }, approval: { kind: "signoff", status: "approved" } });

    await waitFor("the answers, the rejection and the completion", () => mine().length >= 4);
    await sleep(1000);
    const events = mine().map((r) => r.event);
    expect(events.map((e) => e.type)).toEqual(["approval.answered", "approval.answered", "task.rejected", "task.completed"]);
    expect(events[0].data).toMatchObject({ answer: "yes", answered_by: "human", approval: { id: asked.approval.id }, task: { id: task.id, status: "in_progress" } });
    expect(events[1].data).toMatchObject({ answer: "no", reason: "Finance still reads it.", approval: { id: second.approval.id } });
    expect(events[3].data).toMatchObject({ approval_id: approved.approval.id, task: { status: "done" } });
    await close();
  });

  it("a second, different question while one is pending is refused with the pending one quoted; the same question again returns it", async () => {
    const { person, alpha, beta, close } = await team(era, "One question at a time");
    const { task } = await person.ok("create_task", { title: "Pick a logo" });
    const first = await alpha.ok("request_approval", { task_id: task.id, question: "Blue or green?" });
    const before = await snapshotDb();
    for (const [who, client] of [["beta", beta], ["person", person], ["alpha", alpha]] as const) {
      const text = await client.fails("request_approval", { task_id: task.id, question: "Round or square?" });
      expect(text, who).toBe(
        `task ${task.id} already has a pending question from alpha (${first.approval.id}, asked ${first.approval.created_at}): "Blue or green?". ` +
          "One request waits at a time: a person answers it first (get_task shows the answer); meanwhile comment_on_task adds to it.",
      );
    }
    const again = await beta.ok("request_approval", { task_id: task.id, question: "Blue or green?" });
    expect(again).toEqual({ changed: false, approval: first.approval, decide_url: `https://taskgate.test/tasks/${first.approval.task_id}` });
    expect(await snapshotDb()).toBe(before);
    await close();
  });
});

describe("the console tells a question from a sign-off", () => {
  it("the inbox shows each with its own wording and buttons, and answering yes leaves the task in progress", async () => {
    const p = await signedInPerson("Console questions");
    const alpha = await connect(p.acc.agent);
    const beta = await connect((await createToken({ accountId: p.acc.accountId, kind: "agent", scope: "write", agent: "beta" })).secret, "legacy");
    const { task: q } = await alpha.ok("create_task", { title: "Write the migration" });
    await alpha.ok("claim_task", { task_id: q.id });
    await alpha.ok("request_approval", { task_id: q.id, question: "Can I lock the table for a minute?" });
    const { task: s } = await beta.ok("create_task", { title: "Update the docs" });
    await beta.ok("claim_task", { task_id: s.id });
    await beta.ok("complete_task", { task_id: s.id, note: "Docs updated." });

    const { html } = await open(p.b, "/");
    const card = (title: string) => html.slice(html.lastIndexOf("<article", html.indexOf(title)), html.indexOf("</article>", html.indexOf(title)));
    const question = card("Write the migration");
    expect(question).toContain(">question<");
    expect(question).toContain("Can I lock the table for a minute?");
    expect(question).toContain('action="/act/answer_yes"');
    expect(question).toContain(">Answer yes</button>");
    expect(question).toContain(">Answer no</button>");
    expect(question).not.toContain(">Approve</button>");
    const signoff = card("Update the docs");
    expect(signoff).toContain(">sign-off<");
    expect(signoff).toContain(">Approve</button>");
    expect(signoff).toContain(">Reject</button>");
    expect(signoff).not.toContain("Answer yes");

    expect((await act(p.b, "/", "answer_yes", { task_id: q.id })).status).toBe(303);
    expect(await flashOn(p.b, "/")).toBe("ok: Answered yes to “Can I lock the table for a minute?”: the agent goes on, and “Write the migration” stays in progress.");
    expect((await alpha.ok("get_task", { task_id: q.id })).latest_answer).toMatchObject({ answer: "yes", decided_by: "human" });
    expect((await alpha.ok("get_task", { task_id: q.id })).task.status).toBe("in_progress");
    await alpha.ok("request_approval", { task_id: q.id, question: "And drop the old column?" });
    await act(p.b, "/", "answer_no", { task_id: q.id, reason: "Not before the release." });
    expect(await flashOn(p.b, "/")).toBe("ok: Answered no to “And drop the old column?”: the agent reads your reason, and “Write the migration” stays in progress.");
    await act(p.b, "/", "approve", { task_id: s.id });
    expect((await beta.ok("get_task", { task_id: s.id })).task.status).toBe("done");
    await Promise.all([alpha.close(), beta.close()]);
  });
});

async function runOf(client: TestClient, runId: string) {
  return (await client.ok("get_run", { run_id: runId })).run as { status: string; summary: string | null; finished_at: string | null };
}

describe.each(ERAS)("runs end with their task (%s era)", (era) => {
  it("done, approved, reassigned, taken over or deleted: the running runs end in the same write, cancelled with the reason", async () => {
    const { person, alpha, beta, close } = await team(era, "Runs end");
    const started = async (agent: TestClient, title: string, extra: Record<string, unknown> = {}) => {
      const { task } = await person.ok("create_task", { title, auto_ok: false, ...extra });
      await agent.ok("claim_task", { task_id: task.id });
      const { run } = await agent.ok("start_run", { task_id: task.id });
      return { taskId: task.id as string, runId: run.id as string };
    };

    const completed = await started(alpha, "Completed by the person");
    await person.ok("complete_task", { task_id: completed.taskId });
    expect(await runOf(person, completed.runId)).toMatchObject({ status: "cancelled", summary: "the task was completed by human" });

    const autoOk = await started(alpha, "Completed under auto-OK", { auto_ok: true });
    await alpha.ok("complete_task", { task_id: autoOk.taskId });
    expect(await runOf(person, autoOk.runId)).toMatchObject({ status: "cancelled", summary: "the task was completed by alpha" });

    const signedOff = await started(alpha, "Signed off");
    await alpha.ok("complete_task", { task_id: signedOff.taskId });
    expect((await runOf(person, signedOff.runId)).status, "awaiting a sign-off, the work may go on").toBe("running");
    await person.ok("approve_task", { task_id: signedOff.taskId });
    expect(await runOf(person, signedOff.runId)).toMatchObject({ status: "cancelled", summary: "the task was completed by human" });

    const reassigned = await started(alpha, "Reassigned");
    await person.ok("assign_task", { task_id: reassigned.taskId, assignee: "beta" });
    expect(await runOf(person, reassigned.runId)).toMatchObject({ status: "cancelled", summary: "the task was reassigned to beta by human" });
    expect(await alpha.fails("log_run_event", { run_id: reassigned.runId, kind: "note", message: "still here" })).toContain(
      `run ${reassigned.runId} has ended (cancelled): the task was reassigned to beta by human`,
    );
    const { run: betaRun } = await beta.ok("start_run", { task_id: reassigned.taskId });

    const takenOver = await started(beta, "Taken over");
    const expired = new Date(Date.now() - 60_000).toISOString();
    await asServer(env.DB, env.DB.prepare("UPDATE tasks SET claim_expires_at = ? WHERE id = ?").bind(expired, takenOver.taskId));
    await alpha.ok("claim_task", { task_id: takenOver.taskId });
    expect(await runOf(person, takenOver.runId)).toMatchObject({
      status: "cancelled",
      summary: `stale: the claim of beta lapsed at ${expired} and alpha took the task over`,
    });

    const deleted = await started(alpha, "Deleted");
    const { trash_id } = await person.ok("delete_task", { task_id: deleted.taskId });
    const row = await env.DB.prepare("SELECT status, summary FROM runs WHERE id = ?").bind(deleted.runId).first();
    expect(row).toEqual({ status: "cancelled", summary: `the task was deleted by human (trash item ${trash_id})` });

    // The only run still running is the one whose work goes on.
    const running = await person.ok("list_runs", { status: ["running"] });
    expect(running.items.map((r: { id: string }) => r.id)).toEqual([betaRun.id]);
    await close();
  });
});

describe("the inbox shows every run of a task", () => {
  it("with each run's events, the agent that did the work included, not only the latest run", async () => {
    const p = await signedInPerson("Console runs");
    const alpha = await connect(p.acc.agent);
    const beta = await connect((await createToken({ accountId: p.acc.accountId, kind: "agent", scope: "write", agent: "beta" })).secret, "legacy");
    const { task } = await alpha.ok("create_task", { title: "Port the importer" });
    await alpha.ok("claim_task", { task_id: task.id });
    const { run: first } = await alpha.ok("start_run", { task_id: task.id });
    await alpha.ok("log_run_event", { run_id: first.id, kind: "progress", message: "Parsed the CSV side" });
    await lapse(task.id);
    await beta.ok("claim_task", { task_id: task.id });
    const { run: second } = await beta.ok("start_run", { task_id: task.id });
    await beta.ok("log_run_event", { run_id: second.id, kind: "progress", message: "Wrote the database side" });
    await beta.ok("finish_run", { run_id: second.id, outcome: "succeeded", summary: "Importer ported" });
    await beta.ok("complete_task", { task_id: task.id, note: "Ready" });

    const { html } = await open(p.b, "/");
    for (const text of ["Parsed the CSV side", "Wrote the database side", "Importer ported", "took the task over", `Run by ${p.acc.agentName}`, "Run by beta"]) {
      expect(html, text).toContain(text);
    }
    await Promise.all([alpha.close(), beta.close()]);
  });
});
