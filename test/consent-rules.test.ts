/**
 * Each point of what broke in the consent model, as two agents and a person
 * meet it through real SDK clients in both protocol eras: the rules C1–C5 of
 * docs/approvals-and-claims.md hold whatever route a call takes to the rows.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createToken, ERAS, snapshotDb, team } from "./helpers.ts";

const row = (sql: string, ...binds: unknown[]) => env.DB.prepare(sql).bind(...binds).first<Record<string, unknown>>();

describe.each(ERAS)("consent rules (%s era)", (era) => {
  it("1. C2: an agent gives itself no auto-OK, through a task's field or a project's default; a person's tasks keep theirs", async () => {
    const { person, alpha, close } = await team(era, "Auto-OK");
    const { project } = await person.ok("create_project", { name: "Person's project" });
    const before = await snapshotDb();
    for (const [tool, args] of [
      ["create_task", { title: "Ship it", auto_ok: true }],
      ["create_task", { title: "Ship it", project_id: project.id, auto_ok: false }],
      ["create_project", { name: "Mine", default_auto_ok: true }],
      ["update_project", { project_id: project.id, default_auto_ok: true }],
    ] as const) {
      const text = await alpha.fails(tool, args as Record<string, unknown>);
      expect(text, tool).toMatch(/auto_ok`? is the person's choice, and an agent may not set it \(nothing was written\).*set_auto_ok/);
    }
    expect(await snapshotDb()).toBe(before);
    expect((await person.ok("get_project", { project_id: project.id })).new_tasks_auto_ok).toBe(false);
    // The person's task in that project starts without auto-OK; the agent's completion waits for a sign-off.
    const { task } = await person.ok("create_task", { title: "Publish", project_id: project.id });
    expect(task.auto_ok).toBe(false);
    await alpha.ok("claim_task", { task_id: task.id });
    expect((await alpha.ok("complete_task", { task_id: task.id })).outcome).toBe("awaiting_approval");
    await close();
  });

  it("2. C1: a claim holds through the parent and the project: move, delete, delete_project and a new subtask are refused, naming the holder", async () => {
    const { person, alpha, beta, close } = await team(era, "Tree");
    const { project } = await person.ok("create_project", { name: "Launch" });
    const { project: other } = await person.ok("create_project", { name: "Elsewhere" });
    const { task: parent } = await person.ok("create_task", { title: "Website", project_id: project.id });
    const { task: x } = await person.ok("create_task", { title: "Write the copy", parent_id: parent.id });
    await alpha.ok("claim_task", { task_id: x.id });
    const { run } = await alpha.ok("start_run", { task_id: x.id });
    const before = await snapshotDb();
    const refusals = [
      await beta.fails("move_task", { task_id: parent.id, project_id: other.id }),
      await beta.fails("delete_task", { task_id: parent.id }),
      await beta.fails("delete_project", { project_id: project.id }),
      await beta.fails("archive_project", { project_id: project.id }),
      await beta.fails("create_task", { title: "Sneaky subtask", parent_id: x.id }),
    ];
    for (const text of refusals) {
      // Named through its parent or project: whose task stood in the way; named itself: the claim rule's own words.
      expect(text).toMatch(new RegExp(`task ${x.id} (\\("Write the copy"\\) is held by|is claimed by) agent alpha`));
      expect(text).toMatch(/beta may not/);
    }
    expect(refusals[0]).toContain(`task ${x.id} ("Write the copy") is held by agent alpha (in progress`);
    expect(await snapshotDb(), "nothing written").toBe(before);
    expect(await row("SELECT status FROM runs WHERE id = ?", run.id)).toEqual({ status: "running" });
    // The holder and the person may.
    expect((await alpha.ok("create_task", { title: "My subtask", parent_id: x.id })).task.parent_id).toBe(x.id);
    expect((await person.ok("move_task", { task_id: parent.id, project_id: other.id })).moved).toBe(3);
    await close();
  });

  it("3. C1: a claim holds awaiting sign-off, blocked, and when the person holds the task", async () => {
    const { person, alpha, beta, close } = await team(era, "States");
    const { task: awaiting } = await person.ok("create_task", { title: "Release notes", notes: "alpha's notes" });
    await alpha.ok("claim_task", { task_id: awaiting.id });
    const { approval } = await alpha.ok("complete_task", { task_id: awaiting.id });
    const { task: blocked } = await person.ok("create_task", { title: "Migrate" });
    await alpha.ok("claim_task", { task_id: blocked.id });
    await alpha.ok("block_task", { task_id: blocked.id, reason: "waiting on the vendor" });
    const { task: persons } = await person.ok("create_task", { title: "Person's", notes: "the person's notes" });
    await person.ok("claim_task", { task_id: persons.id });
    const before = await snapshotDb();
    expect(await beta.fails("update_task", { task_id: awaiting.id, notes: "overwritten" })).toMatch(/held by agent alpha \(awaiting a person's sign-off\)/);
    expect(await beta.fails("reopen_task", { task_id: awaiting.id })).toMatch(/held by agent alpha \(awaiting a person's sign-off\), so beta may not/);
    expect(await beta.fails("unblock_task", { task_id: blocked.id })).toMatch(/held by agent alpha \(blocked\)/);
    expect(await beta.fails("update_task", { task_id: persons.id, notes: "overwritten" })).toMatch(/held by the person/);
    expect(await alpha.fails("assign_task", { task_id: persons.id, assignee: "alpha" })).toMatch(/held by the person/);
    expect(await snapshotDb()).toBe(before);
    // The sign-off still waits in the person's queue.
    const queue = (await person.ok("list_pending_approvals", {})).items as { id: string }[];
    expect(queue.map((a) => a.id)).toContain(approval.id);
    await close();
  });

  it("4. C3 and C4: agents neither decide a person's requests nor undo what a person decided; the asker withdraws its own", async () => {
    const { acc, person, alpha, beta, close } = await team(era, "Decisions");
    // A question: the asking agent's completion waits; beta cannot close it; alpha withdraws it.
    const { task: q } = await person.ok("create_task", { title: "Buy photos" });
    await alpha.ok("claim_task", { task_id: q.id });
    const asked = await alpha.ok("request_approval", { task_id: q.id, question: "May I spend 20 EUR?" });
    expect(await alpha.fails("complete_task", { task_id: q.id })).toMatch(/pending question .*Only a person decides it/);
    expect(await beta.fails("request_approval", { task_id: q.id, withdraw: true })).toMatch(/held by agent alpha|is claimed by agent alpha|asked by alpha/);
    expect(await row("SELECT status FROM approvals WHERE id = ?", asked.approval.id)).toEqual({ status: "pending" });
    const w = await alpha.ok("request_approval", { task_id: q.id, withdraw: true });
    expect(w.approval).toMatchObject({ status: "withdrawn", decided_by: "alpha" });
    expect(((await person.ok("list_pending_approvals", {})).items as { id: string }[]).map((a) => a.id)).not.toContain(asked.approval.id);
    expect(await row("SELECT count(*) AS n FROM activity WHERE account_id = ? AND tool = 'request_approval' AND summary LIKE 'withdrew%'", acc.accountId)).toEqual({ n: 1 });

    // What the person approved, trashed or archived stays so.
    const { task: approved } = await person.ok("create_task", { title: "Approved" });
    await alpha.ok("claim_task", { task_id: approved.id });
    await alpha.ok("complete_task", { task_id: approved.id });
    await person.ok("approve_task", { task_id: approved.id });
    const { task: trashed } = await person.ok("create_task", { title: "Trashed" });
    const { trash_id } = await person.ok("delete_task", { task_id: trashed.id });
    const { project } = await person.ok("create_project", { name: "Archived" });
    await person.ok("archive_project", { project_id: project.id });
    const before = await snapshotDb();
    for (const [tool, args] of [
      ["reopen_task", { task_id: approved.id }],
      ["restore_from_trash", { item_id: trash_id }],
      ["unarchive_project", { project_id: project.id }],
    ] as const) {
      expect(await alpha.fails(tool, args), tool).toMatch(/a person decided this .* an agent may not undo it/);
      expect(await beta.fails(tool, args), tool).toMatch(/a person decided this/);
    }
    expect(await snapshotDb()).toBe(before);
    expect((await person.ok("reopen_task", { task_id: approved.id })).task.status).toBe("open");
    // What an agent closed under auto-OK, it may reopen.
    const { task: own } = await person.ok("create_task", { title: "Auto", auto_ok: true });
    await alpha.ok("claim_task", { task_id: own.id });
    await alpha.ok("complete_task", { task_id: own.id });
    expect((await alpha.ok("reopen_task", { task_id: own.id })).task.status).toBe("open");
    await close();
  });

  it("5. C5: a paused agent is given nothing, by any route and by anyone", async () => {
    const { acc, person, alpha, close } = await team(era, "Paused");
    await createToken({ accountId: acc.accountId, kind: "agent", scope: "write", agent: "idle" });
    await person.ok("pause_agent", { agent: "idle" });
    const { task } = await person.ok("create_task", { title: "Free" });
    const before = await snapshotDb();
    for (const client of [person, alpha]) {
      expect(await client.fails("create_task", { title: "For idle", assignee: "idle" })).toMatch(/idle is paused/);
      expect(await client.fails("assign_task", { task_id: task.id, assignee: "idle" })).toMatch(/idle is paused/);
    }
    expect(await snapshotDb()).toBe(before);
    await close();
  });

  it("C7: a repeat answers as the first call did, value for value (delete_label, restore_from_trash, unlink_calendar_event)", async () => {
    const { person, close } = await team(era, "Repeats");
    const { task } = await person.ok("create_task", { title: "Plan the offsite" });
    await person.ok("label_task", { task_id: task.id, labels: ["travel"] });
    const { label } = await person.ok("create_label", { name: "travel" });
    const firstDelete = await person.ok("delete_label", { label_id: label.id });
    expect(firstDelete).toMatchObject({ name: "travel", removed_from_tasks: 1, changed: true });
    expect(await person.ok("delete_label", { label_id: label.id })).toEqual({ ...firstDelete, changed: false });

    const { trash_id } = await person.ok("delete_task", { task_id: task.id });
    const firstRestore = await person.ok("restore_from_trash", { item_id: trash_id });
    expect(firstRestore).toMatchObject({ restored: true, kind: "task", target_id: task.id, item_count: 1 });
    expect(await person.ok("restore_from_trash", { item_id: trash_id })).toEqual({ ...firstRestore, restored: false });
    expect(await person.ok("restore_from_trash", { item_id: task.id })).toEqual({ ...firstRestore, restored: false });

    const start = new Date(Date.now() + 86_400_000).toISOString();
    const end = new Date(Date.now() + 90_000_000).toISOString();
    const { link } = await person.ok("link_calendar_event", { task_id: task.id, provider: "google", event_id: "evt-offsite", title: "Offsite", starts_at: start, ends_at: end, url: "https://calendar.example.com/e" });
    const firstUnlink = await person.ok("unlink_calendar_event", { task_id: task.id, link_id: link.id });
    expect(firstUnlink).toMatchObject({ removed: true, link: { id: link.id, title: "Offsite" } });
    expect(await person.ok("unlink_calendar_event", { task_id: task.id, link_id: link.id })).toEqual({ ...firstUnlink, removed: false });
    expect(await person.ok("unlink_calendar_event", { task_id: task.id, provider: "google", event_id: "evt-offsite" })).toEqual({ ...firstUnlink, removed: false });
    await close();
  });

  it("an agent completes no task that waits on unfinished work, and is told what it waits on; a person may", async () => {
    const { person, alpha, close } = await team(era, "Waits");
    const { task: first } = await person.ok("create_task", { title: "Get the quote" });
    const { task: then } = await person.ok("create_task", { title: "Order the chairs" });
    await person.ok("add_dependency", { task_id: then.id, depends_on_id: first.id });
    await alpha.ok("claim_task", { task_id: then.id });
    const before = await snapshotDb();
    expect(await alpha.fails("complete_task", { task_id: then.id })).toMatch(new RegExp(`task ${then.id} waits on unfinished work: ${first.id} \\("Get the quote", open\\)`));
    expect(await snapshotDb()).toBe(before);
    await person.ok("complete_task", { task_id: first.id });
    expect((await alpha.ok("complete_task", { task_id: then.id })).outcome).toBe("awaiting_approval");
    await close();
  });
});
