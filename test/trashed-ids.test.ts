import { describe, expect, it } from "vitest";
import { describeAllTools, detailedInputSchema } from "../src/mcp/registry.ts";
import { connect, seedAccount, snapshotDb } from "./helpers.ts";
import { exampleArgs } from "./tool-args.ts";

/**
 * Tools that take a task id, from the registry; delete_task answers a trashed task with its trash item instead.
 * claim_task's task_id is optional (without it, the next ready task is claimed); given, it names the task as everywhere.
 */
const TASK_ID_TOOLS = describeAllTools().filter(
  (d) => (((d.inputSchema.required ?? []) as string[]).includes("task_id") || d.name === "claim_task") && d.name !== "delete_task",
);

/** Optional arguments some tools need to get as far as looking the task up. */
const EXTRA: Record<string, Record<string, unknown>> = { unlink_calendar_event: { provider: "google", event_id: "evt-1" } };

describe("a task id that is in the trash", () => {
  it("every tool that takes a task id says the task is in the trash and how to restore it, and writes nothing", async () => {
    expect(TASK_ID_TOOLS.map((d) => d.name)).toEqual(expect.arrayContaining(["claim_task", "complete_task", "start_run", "get_task", "add_steps"]));
    const acc = await seedAccount("Trash ids");
    const human = await connect(acc.human);
    const agent = await connect(acc.agent);
    const { project } = await human.ok("create_project", { name: "Somewhere" });
    const { task: live } = await human.ok("create_task", { title: "Live one" });
    const { steps } = await human.ok("add_steps", { task_id: live.id, steps: ["A step"] });
    const { task } = await human.ok("create_task", { title: "Binned" });
    const { trash_id } = await human.ok("delete_task", { task_id: task.id });
    const before = await snapshotDb();
    for (const d of TASK_ID_TOOLS) {
      const caller = d.name === "start_run" ? agent : human;
      const args = { ...exampleArgs(detailedInputSchema(d.name), { tsk: [live.id], prj: [project.id], stp: [steps[0].id] }), ...EXTRA[d.name], task_id: task.id };
      const text = await caller.fails(d.name, args);
      expect(text, d.name).toContain(`Task ${task.id} ("Binned") is in the trash (item ${trash_id}, purged after `);
      expect(text, d.name).toContain(`restore_from_trash with item_id ${trash_id} brings it back`);
    }
    expect(await snapshotDb()).toBe(before);

    await human.ok("restore_from_trash", { item_id: trash_id });
    expect((await agent.ok("claim_task", { task_id: task.id })).task.assignee).toBe(acc.agentName);
    await Promise.all([human.close(), agent.close()]);
  });

  it("a subtask deleted with its parent names the parent's trash item", async () => {
    const acc = await seedAccount("Trash subtask");
    const agent = await connect(acc.agent);
    const { task: parent } = await agent.ok("create_task", { title: "Parent" });
    const { task: child } = await agent.ok("create_task", { title: "Child", parent_id: parent.id });
    const { trash_id } = await agent.ok("delete_task", { task_id: parent.id });
    const text = await agent.fails("claim_task", { task_id: child.id });
    expect(text).toContain(`Task ${child.id} ("Child") is in the trash with its task ${parent.id} (item ${trash_id}`);
    expect(text).toContain(`restore_from_trash with item_id ${trash_id}`);
    await agent.close();
  });

  it("another account's trashed task still reads as not found, with no word of the trash", async () => {
    const owner = await seedAccount("Owner");
    const other = await seedAccount("Other");
    const human = await connect(owner.human);
    const stranger = await connect(other.agent);
    const { task } = await human.ok("create_task", { title: "Private and binned" });
    await human.ok("delete_task", { task_id: task.id });
    for (const tool of ["claim_task", "get_task", "complete_task", "start_run"]) {
      const text = await stranger.fails(tool, { task_id: task.id });
      expect(text, tool).toBe(`No task ${task.id} in this account; list_tasks or search_tasks finds task ids.`);
    }
    await Promise.all([human.close(), stranger.close()]);
  });
});

describe("parts of what is in the trash", () => {
  it("a step, comment, run or approval of a trashed task, and a trashed project, say they are in the trash and which item brings them back", async () => {
    const acc = await seedAccount("Trash parts");
    const human = await connect(acc.human);
    const agent = await connect(acc.agent, "legacy");
    const { task } = await human.ok("create_task", { title: "Binned work" });
    const [step] = (await human.ok("add_steps", { task_id: task.id, steps: ["One"] })).steps;
    const { comment } = await human.ok("comment_on_task", { task_id: task.id, body: "A note" });
    await agent.ok("claim_task", { task_id: task.id });
    const { run } = await agent.ok("start_run", { task_id: task.id });
    const { approval } = await agent.ok("request_approval", { task_id: task.id, question: "Go?" });
    const { trash_id } = await human.ok("delete_task", { task_id: task.id });
    const { project } = await human.ok("create_project", { name: "Old plans" });
    const { trash_id: projectItem } = await human.ok("delete_project", { project_id: project.id });
    const before = await snapshotDb();
    const cases: [string, Record<string, unknown>, string, string][] = [
      ["update_step", { step_id: step.id, text: "Two" }, `Step ${step.id}`, trash_id],
      ["edit_comment", { comment_id: comment.id, body: "Edited" }, `Comment ${comment.id}`, trash_id],
      ["get_run", { run_id: run.id }, `Run ${run.id}`, trash_id],
      ["get_approval", { approval_id: approval.id }, `Approval ${approval.id}`, trash_id],
      ["get_project", { project_id: project.id }, `Project ${project.id}`, projectItem],
    ];
    for (const [tool, args, subject, item] of cases) {
      const text = await human.fails(tool, args);
      expect(text, tool).toContain(`${subject} is in the trash`);
      expect(text, tool).toContain(`restore_from_trash with item_id ${item} brings it back`);
    }
    expect(await snapshotDb()).toBe(before);
    await Promise.all([human.close(), agent.close()]);
  });
});
