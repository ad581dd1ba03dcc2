/**
 * What a held task shows, reached through another row: the task it waits on,
 * a label it carries, a trash item, the project the person archived; and
 * refusals that name only what the call reached. Two agents and a person,
 * through real SDK clients in both protocol eras.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ERAS, snapshotDb, team } from "./helpers.ts";

const row = (sql: string, ...binds: unknown[]) => env.DB.prepare(sql).bind(...binds).first<Record<string, unknown>>();

describe.each(ERAS)("consent routes (%s era)", (era) => {
  it("the gate through the task waited on: trashing it keeps the gate closed, get_task shows it with its trash item; a person's dependency is lifted only by a person", async () => {
    const { person, alpha, beta, close } = await team(era, "Gates");
    const { task: t } = await person.ok("create_task", { title: "Ship the release" });
    const { task: q } = await person.ok("create_task", { title: "Legal review" });
    await person.ok("add_dependency", { task_id: t.id, depends_on_id: q.id });
    await alpha.ok("claim_task", { task_id: t.id });
    expect(await alpha.fails("complete_task", { task_id: t.id })).toMatch(/waits on unfinished work/);

    // The holder may not lift the person's gate.
    const before = await snapshotDb();
    const lifted = await alpha.fails("remove_dependency", { task_id: t.id, depends_on_id: q.id });
    expect(lifted).toMatch(/only a person lifts that gate, so alpha may not remove it through remove_dependency; nothing was written/);
    expect(await snapshotDb()).toBe(before);
    // A link an agent added, the agent may remove.
    const { task: own } = await person.ok("create_task", { title: "Alpha's own prerequisite" });
    await alpha.ok("add_dependency", { task_id: t.id, depends_on_id: own.id });
    expect(await row("SELECT added_by FROM task_dependencies WHERE task_id = ? AND depends_on_id = ?", t.id, own.id)).toEqual({ added_by: "alpha" });
    expect((await alpha.ok("remove_dependency", { task_id: t.id, depends_on_id: own.id })).changed).toBe(true);

    // Another agent trashes what the task waits on: the gate stays closed, and the task shows where it went.
    const { trash_id } = await beta.ok("delete_task", { task_id: q.id });
    const got = await alpha.ok("get_task", { task_id: t.id });
    expect(got.waits_on).toEqual([{ id: q.id, title: "Legal review", status: "open", trash_id }]);
    const deps = await alpha.ok("list_dependencies", { task_id: t.id });
    expect(deps.ready).toBe(false);
    expect(deps.waits_on[0]).toMatchObject({ id: q.id, trash_id });
    const refused = await alpha.fails("complete_task", { task_id: t.id });
    expect(refused).toContain(`${q.id} ("Legal review", open, in the trash as ${trash_id})`);
    expect((await alpha.ok("get_task", { task_id: t.id })).task.status).toBe("in_progress");
    expect(await row("SELECT count(*) AS n FROM task_dependencies WHERE task_id = ?", t.id)).toEqual({ n: 1 });

    // Restored and finished, the gate opens; a person's removal lifts it too.
    await person.ok("restore_from_trash", { item_id: trash_id });
    await person.ok("complete_task", { task_id: q.id });
    expect((await alpha.ok("complete_task", { task_id: t.id })).outcome).toBe("awaiting_approval");
    const { task: t2 } = await person.ok("create_task", { title: "Second" });
    await person.ok("add_dependency", { task_id: t2.id, depends_on_id: t.id });
    expect((await person.ok("remove_dependency", { task_id: t2.id, depends_on_id: t.id })).changed).toBe(true);
    await close();
  });

  it("a label rename reaches every task that carries it: refused for an agent while another holds one, and shown in each task's history", async () => {
    const { person, alpha, beta, close } = await team(era, "Labels");
    const { task: x } = await person.ok("create_task", { title: "Sign the contract" });
    const { task: y } = await person.ok("create_task", { title: "File the invoice" });
    await person.ok("label_task", { task_id: x.id, labels: ["needs-review"] });
    await person.ok("label_task", { task_id: y.id, labels: ["needs-review"] });
    const label = (await person.ok("list_labels", {})).items.find((l: { name: string }) => l.name === "needs-review");
    await alpha.ok("claim_task", { task_id: x.id });
    await alpha.ok("complete_task", { task_id: x.id });
    const before = await snapshotDb();
    const text = await beta.fails("rename_label", { label_id: label.id, name: "approved-by-human" });
    expect(text).toContain(`task ${x.id} ("Sign the contract") is held by agent alpha (awaiting a person's sign-off)`);
    expect(text).toMatch(/beta may not change it or what belongs to it through rename_label/);
    expect(await snapshotDb()).toBe(before);
    expect((await person.ok("get_task", { task_id: x.id })).labels).toEqual([{ id: label.id, name: "needs-review" }]);
    // The holder and the person may; each labelled task's history says so.
    await alpha.ok("rename_label", { label_id: label.id, name: "reviewed" });
    await person.ok("rename_label", { label_id: label.id, name: "done-review" });
    for (const t of [x, y]) {
      const history = (await person.ok("get_task_history", { task_id: t.id })).items as { tool: string; actor: string; summary: string }[];
      const renames = history.filter((h) => h.tool === "rename_label").map((h) => `${h.actor}: ${h.summary}`);
      expect(renames, t.title).toEqual(['human: renamed label "reviewed" to "done-review"', 'alpha: renamed label "needs-review" to "reviewed"']);
    }
    await close();
  });

  it("restore reaches a held task: another agent may not bring back what its holder trashed; the holder and the person may", async () => {
    const { person, alpha, beta, close } = await team(era, "Restore");
    const { task: r } = await person.ok("create_task", { title: "Rotate the keys" });
    await beta.ok("claim_task", { task_id: r.id });
    const { trash_id } = await beta.ok("delete_task", { task_id: r.id });
    const before = await snapshotDb();
    for (const item_id of [trash_id, r.id]) {
      const text = await alpha.fails("restore_from_trash", { item_id });
      expect(text).toMatch(new RegExp(`task ${r.id} (\\("Rotate the keys"\\) is held by|is claimed by) agent beta`));
      expect(text).toMatch(/alpha may not|nothing was written/);
    }
    expect(await snapshotDb()).toBe(before);
    expect((await beta.ok("restore_from_trash", { item_id: trash_id })).restored).toBeTruthy();
    expect((await person.ok("get_task", { task_id: r.id })).task.assignee).toBe("beta");
    await close();
  });

  it("a non-holder is never answered as if it acted: complete_task on another agent's task awaiting sign-off is refused, naming the holder", async () => {
    const { person, alpha, beta, close } = await team(era, "Non-holder");
    const { task: s } = await person.ok("create_task", { title: "Write the changelog" });
    await alpha.ok("claim_task", { task_id: s.id });
    const { approval } = await alpha.ok("complete_task", { task_id: s.id });
    const text = await beta.fails("complete_task", { task_id: s.id });
    expect(text).toContain(`task ${s.id} ("Write the changelog") is held by agent alpha (awaiting a person's sign-off)`);
    expect(text).not.toContain("decide_url");
    // The holder's repeat is answered with its own sign-off, unchanged.
    const again = await alpha.ok("complete_task", { task_id: s.id });
    expect(again).toMatchObject({ outcome: "awaiting_approval", changed: false });
    expect(again.approval.id).toBe(approval.id);
    await close();
  });

  it("a refusal names only the tasks the call reached and was stopped by", async () => {
    const { person, alpha, beta, close } = await team(era, "Names");
    const { project } = await person.ok("create_project", { name: "Launch" });
    const { project: other } = await person.ok("create_project", { name: "Elsewhere" });
    const { task: t1 } = await person.ok("create_task", { title: "T1", project_id: project.id });
    const { task: s4 } = await person.ok("create_task", { title: "S4", parent_id: t1.id });
    const { task: w } = await person.ok("create_task", { title: "W", project_id: other.id });
    const { task: u } = await person.ok("create_task", { title: "U", project_id: project.id });
    const { steps } = await person.ok("add_steps", { task_id: t1.id, steps: ["one", "two"] });
    for (const t of [w, u, t1]) await alpha.ok("claim_task", { task_id: t.id });
    await alpha.ok("claim_task", { task_id: s4.id });
    await alpha.ok("block_task", { task_id: s4.id, reason: "waiting on the vendor" });
    const ids = (text: string) => [...text.matchAll(/tsk_[0-9a-z]{16}/g)].map((m) => m[0]);

    const reorder = await beta.fails("reorder_steps", { task_id: t1.id, step_ids: [steps[1].id, steps[0].id] });
    expect(ids(reorder), reorder).toEqual([t1.id]);
    const unblock = await beta.fails("unblock_task", { task_id: s4.id });
    expect(ids(unblock), unblock).toEqual([s4.id]);
    const move = await beta.fails("move_task", { task_id: t1.id, project_id: other.id });
    expect(ids(move), move).toEqual([t1.id]);
    await close();
  });

  it("a project the person archived takes no new tasks, moves or renames from agents; the person may", async () => {
    const { person, alpha, close } = await team(era, "Archived");
    const { project } = await person.ok("create_project", { name: "Old launch" });
    const { project: live } = await person.ok("create_project", { name: "Now" });
    const { task: inside } = await person.ok("create_task", { title: "Inside", project_id: project.id });
    const { task: outside } = await person.ok("create_task", { title: "Outside", project_id: live.id });
    await person.ok("archive_project", { project_id: project.id });
    const before = await snapshotDb();
    for (const [tool, args] of [
      ["create_task", { title: "Sneak in", project_id: project.id }],
      ["move_task", { task_id: outside.id, project_id: project.id }],
      ["move_task", { task_id: inside.id, project_id: live.id }],
      ["update_project", { project_id: project.id, name: "Renamed" }],
    ] as const) {
      expect(await alpha.fails(tool, args as Record<string, unknown>), tool).toMatch(/a person decided this .*archived the project.*an agent may not undo it/);
    }
    expect(await snapshotDb()).toBe(before);
    expect((await person.ok("update_project", { project_id: project.id, name: "Renamed" })).project.name).toBe("Renamed");
    expect((await person.ok("move_task", { task_id: outside.id, project_id: project.id })).moved).toBe(1);
    await close();
  });
});
