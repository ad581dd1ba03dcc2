import { createToken } from "../helpers.ts";
import { RIVAL, type Scenarios, type World } from "./harness.ts";
import { path } from "./scenarios-tasks.ts";
import {
  awaitingApproval, recurringTask, claimedTask, connectAll, EVENT, linkedTask, newTask, pendingQuestion, project, richTask, runningRun, soon, stepsOf, trashItemOf, trashedTask,
} from "./states.ts";

const firstStep = async (w: World) => (await stepsOf(w, await richTask(w)))[0];
const comment = async (w: World, by: "agent" | "person" = "agent") =>
  (await w[by].ok("comment_on_task", { task_id: await richTask(w), body: "First thoughts" })).comment.id as string;

/** The writes on projects, steps, comments, runs, agents, approvals, labels, links, the trash, apps and the account. */
export const MORE_SCENARIOS: Scenarios = {
  create_project: [path("a project", "agent", async () => ({ name: "Conference", description: "Talks and booth" }))],
  update_project: [
    path("name and description replaced", "person", async (w) => ({ project_id: await project(w), name: "Relaunch", description: "Second try" })),
    path("a setting not yet set", "person", async (w) => ({ project_id: await project(w), default_auto_ok: true })),
  ],
  archive_project: [path("a live project", "person", async (w) => ({ project_id: await project(w) }))],
  unarchive_project: [
    path("an archived project", "person", async (w) => {
      const id = await project(w);
      await w.person.ok("archive_project", { project_id: id });
      return { project_id: id };
    }),
  ],
  delete_project: [
    path("a project with tasks", "person", async (w) => {
      const id = await project(w);
      await richTask(w, { project_id: id });
      return { project_id: id };
    }),
  ],
  add_steps: [path("a task with steps", "agent", async (w) => ({ task_id: await richTask(w), steps: ["Proofread", "Publish"] }))],
  set_step_status: [path("a pending step", "agent", async (w) => ({ step_id: await firstStep(w), status: "done" }))],
  update_step: [path("a step's text", "person", async (w) => ({ step_id: await firstStep(w), text: "Outline, with headings" }))],
  delete_step: [path("a step", "person", async (w) => ({ step_id: await firstStep(w) }))],
  reorder_steps: [
    path("steps reversed", "person", async (w) => {
      const task = await richTask(w);
      return { task_id: task, step_ids: (await stepsOf(w, task)).reverse() };
    }),
  ],
  comment_on_task: [
    path("a task", "person", async (w) => ({ task_id: await richTask(w), body: "Looks good" })),
    path("a task another agent holds", "rival", async (w) => ({ task_id: await claimedTask(w), body: "I can help with the photos" })),
  ],
  edit_comment: [path("one's own comment", "agent", async (w) => ({ comment_id: await comment(w), body: "Second thoughts" }))],
  delete_comment: [path("one's own comment", "agent", async (w) => ({ comment_id: await comment(w) }))],
  start_run: [
    path("its claimed task", "agent", async (w) => ({ task_id: await claimedTask(w) })),
    path("an open task", "agent", async (w) => ({ task_id: await newTask(w) })),
  ],
  log_run_event: [
    path("a progress note", "agent", async (w) => ({ run_id: (await runningRun(w)).run, kind: "progress", message: "Draft done" })),
    path("an artifact", "agent", async (w) => ({ run_id: (await runningRun(w)).run, kind: "artifact", message: "The draft", url: "https://docs.example.com/d/1" })),
  ],
  finish_run: [
    path("succeeded", "agent", async (w) => ({ run_id: (await runningRun(w)).run, outcome: "succeeded", summary: "Draft written" })),
    path("failed", "agent", async (w) => ({ run_id: (await runningRun(w)).run, outcome: "failed", summary: "No access to the doc" })),
  ],
  cancel_run: [
    path("its own run", "agent", async (w) => ({ run_id: (await runningRun(w)).run, reason: "Superseded" })),
    path("without a reason", "agent", async (w) => ({ run_id: (await runningRun(w)).run })),
  ],
  pause_agent: [path("an active agent", "person", async () => ({ agent: RIVAL, reason: "Reviewing its work" }))],
  resume_agent: [
    path("a paused agent", "person", async (w) => {
      await w.person.ok("pause_agent", { agent: RIVAL });
      return { agent: RIVAL };
    }),
  ],
  request_approval: [
    path("a question mid-work", "agent", async (w) => ({ task_id: await claimedTask(w), question: "May I email the list?" })),
    path("a question on an open task", "agent", async (w) => ({ task_id: await newTask(w), question: "Should this wait for the redesign?" })),
    path("a person asks", "person", async (w) => ({ task_id: await newTask(w), question: "Is this still wanted?" })),
  ],
  approve_task: [
    path("a sign-off", "person", async (w) => ({ task_id: (await awaitingApproval(w)).task, note: "Ship it" })),
    path("a question", "person", async (w) => ({ task_id: (await pendingQuestion(w)).task })),
    path("a recurring task's sign-off", "person", async (w) => {
      const task = await recurringTask(w);
      await w.agent.ok("claim_task", { task_id: task });
      await w.agent.ok("complete_task", { task_id: task });
      return { task_id: task };
    }),
  ],
  reject_task: [
    path("a sign-off", "person", async (w) => ({ task_id: (await awaitingApproval(w)).task, reason: "Add the pricing table" })),
    path("a question", "person", async (w) => ({ task_id: (await pendingQuestion(w)).task, reason: "No budget this month" })),
  ],
  create_label: [
    path("a new label", "agent", async () => ({ name: "design", color: "#1f6feb" })),
    path("an existing label, same colour", "person", async (w) => {
      await w.person.ok("create_label", { name: "design", color: "#1f6feb" });
      return { name: "Design", color: "#1f6feb" };
    }),
    path(
      "an existing label, another colour",
      "person",
      async (w) => {
        await w.person.ok("create_label", { name: "design", color: "#1f6feb" });
        return { name: "design", color: "#ff0000" };
      },
      /already exists/,
    ),
  ],
  rename_label: [path("a label in use", "person", async (w) => ({ label_id: await labelInUse(w), name: "marketing" }))],
  delete_label: [path("a label in use", "person", async (w) => ({ label_id: await labelInUse(w) }))],
  label_task: [
    path("a task without labels", "agent", async (w) => ({ task_id: await newTask(w), labels: ["urgent", "backend"] })),
    path("a task with other labels", "agent", async (w) => ({ task_id: await richTask(w), labels: ["launch", "urgent"] })),
  ],
  unlabel_task: [path("a labelled task", "person", async (w) => ({ task_id: await richTask(w), labels: ["launch"] }))],
  link_calendar_event: [
    path("a new link", "agent", async (w) => ({ task_id: await richTask(w), ...EVENT })),
    path("linked the same", "person", async (w) => ({ task_id: (await linkedTask(w)).task, ...EVENT, url: "https://calendar.example.com/evt" })),
    path(
      "linked with another title and times",
      "person",
      async (w) => ({ task_id: (await linkedTask(w)).task, ...EVENT, title: "Launch review (moved)", starts_at: soon(2), ends_at: soon(2.05) }),
      /already linked/,
    ),
  ],
  unlink_calendar_event: [
    path("by link id", "person", async (w) => {
      const { task, link } = await linkedTask(w);
      return { task_id: task, link_id: link };
    }),
    path("by provider and event", "agent", async (w) => ({ task_id: (await linkedTask(w)).task, provider: EVENT.provider, event_id: EVENT.event_id })),
  ],
  restore_from_trash: [
    path("a task with subtasks", "person", async (w) => ({ item_id: await trashedTask(w) })),
    path("a step", "person", async (w) => {
      const step = await firstStep(w);
      await w.person.ok("delete_step", { step_id: step });
      return { item_id: await trashItemOf(w, step) };
    }),
    path("a comment", "agent", async (w) => {
      const id = await comment(w, "agent");
      await w.agent.ok("delete_comment", { comment_id: id });
      return { item_id: await trashItemOf(w, id) };
    }),
    path("a project", "agent", async (w) => {
      const id = await project(w);
      await richTask(w, { project_id: id });
      // The agent's own deletion: what a person trashed, only a person restores (C4).
      await w.agent.ok("delete_project", { project_id: id });
      return { item_id: await trashItemOf(w, id) };
    }),
  ],
  empty_trash: [
    path("one item", "person", async (w) => ({ item_ids: [await trashedTask(w)] })),
    path("everything", "person", async (w) => {
      await trashedTask(w);
      return { all: true };
    }),
  ],
  save_context: [
    path("a Slack message", "agent", async (w) => {
      await connectAll(w);
      return { provider: "slack", title: "Launch", content: "The post is live", target: "C0123ABCD" };
    }),

  ],
  disconnect_connector: [
    path("a connected app", "person", async (w) => {
      await connectAll(w);
      return { provider: "slack" };
    }),
  ],
  update_account_settings: [
    path("settings replaced", "person", async () => ({ time_zone: "Europe/Berlin", default_auto_ok: true, trash_retention_days: 7 })),
    path("one setting", "person", async () => ({ trash_retention_days: 14 })),
  ],
  revoke_token: [
    path("another token", "person", async (w) => ({ token_id: (await createToken({ accountId: w.acc.accountId, kind: "agent", scope: "write", agent: "spare" })).id })),
  ],
};

async function labelInUse(w: World): Promise<string> {
  const task = await newTask(w);
  const { labels } = await w.person.ok("label_task", { task_id: task, labels: ["launch"] });
  return labels[0].id;
}
