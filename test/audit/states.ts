import { env } from "cloudflare:workers";
import { connectApp } from "../connectors-fakes.ts";
import { asServer, createToken } from "../helpers.ts";
import { clientOf, type Actor, type World } from "./harness.ts";

/**
 * The states a tool can meet, each built through the tools themselves. Only
 * time is made to pass in SQL (a lease that ran out, a run gone silent), and
 * connected apps and extra tokens are seeded as the admin CLI seeds them.
 */

const DAY = 86_400_000;
export const soon = (days = 1) => new Date(Date.now() + days * DAY).toISOString();

export async function newTask(w: World, extra: Record<string, unknown> = {}, by: Actor = "person"): Promise<string> {
  return (await clientOf(w, by).ok("create_task", { title: "Plain task", ...extra })).task.id;
}

/** A task with notes, a due date, a priority, an estimate, labels, steps and a comment. */
export async function richTask(w: World, extra: Record<string, unknown> = {}): Promise<string> {
  const id = await newTask(w, { title: "Write the launch post", notes: "Draft in the shared doc", due_at: soon(2), priority: "high", estimate_minutes: 90, ...extra });
  await w.person.ok("label_task", { task_id: id, labels: ["launch", "writing"] });
  await w.person.ok("add_steps", { task_id: id, steps: ["Outline", "Draft", "Review"] });
  await w.person.ok("comment_on_task", { task_id: id, body: "Keep it under 800 words" });
  return id;
}

export async function project(w: World, name = "Launch", extra: Record<string, unknown> = {}): Promise<string> {
  return (await w.person.ok("create_project", { name, description: "Everything for the launch", ...extra })).project.id;
}

export async function blockedTask(w: World, reason = "waiting on the vendor's quote"): Promise<string> {
  const id = await richTask(w);
  await w.person.ok("block_task", { task_id: id, reason });
  return id;
}

/** Claimed (and started) by an agent, with the lease running. */
export async function claimedTask(w: World, by: Actor = "agent", extra: Record<string, unknown> = {}): Promise<string> {
  const id = await richTask(w, extra);
  await clientOf(w, by).ok("claim_task", { task_id: id });
  return id;
}

/** An agent's claim whose lease ran out: time is made to pass. */
export async function lapsedClaim(w: World, by: Actor = "agent"): Promise<string> {
  const id = await claimedTask(w, by);
  await clientOf(w, by).ok("start_run", { task_id: id });
  await asServer(env.DB, env.DB.prepare("UPDATE tasks SET claim_expires_at = ? WHERE id = ?").bind(new Date(Date.now() - 60_000).toISOString(), id));
  return id;
}

/** The agent finished its work and asks a person to sign it off. */
export async function awaitingApproval(w: World): Promise<{ task: string; approval: string }> {
  const task = await claimedTask(w);
  const done = await w.agent.ok("complete_task", { task_id: task, note: "Published the draft" });
  return { task, approval: done.approval.id };
}

/** The agent, mid-work, asks a question. */
export async function pendingQuestion(w: World): Promise<{ task: string; approval: string }> {
  const task = await claimedTask(w);
  const asked = await w.agent.ok("request_approval", { task_id: task, question: "May I spend 20 EUR on stock photos?" });
  return { task, approval: asked.approval.id };
}

export const EVENT = { provider: "google", event_id: "evt_launch_review", title: "Launch review", starts_at: soon(1), ends_at: soon(1.05) };

export async function linkedTask(w: World): Promise<{ task: string; link: string }> {
  const task = await richTask(w);
  const linked = await w.person.ok("link_calendar_event", { task_id: task, ...EVENT, url: "https://calendar.example.com/evt" });
  return { task, link: linked.link.id };
}

/** The agent's run on its claimed task, with a progress event. */
export async function runningRun(w: World): Promise<{ task: string; run: string }> {
  const task = await claimedTask(w);
  const run = (await w.agent.ok("start_run", { task_id: task })).run.id;
  await w.agent.ok("log_run_event", { run_id: run, kind: "progress", message: "Outline done" });
  return { task, run };
}

/** A running run that has been silent past the stale window. */
export async function staleRun(w: World): Promise<string> {
  const { run } = await runningRun(w);
  await asServer(env.DB, env.DB.prepare("UPDATE runs SET last_event_at = ? WHERE id = ?").bind(new Date(Date.now() - DAY).toISOString(), run));
  return run;
}

/** The trash item of what `del` deleted, found through list_trash. */
export async function trashItemOf(w: World, targetId: string): Promise<string> {
  const items = (await w.person.ok("list_trash", { limit: 100 })).items as { id: string; target_id: string }[];
  const item = items.find((i) => i.target_id === targetId);
  if (!item) throw new Error(`${targetId} is not in the trash`);
  return item.id;
}

export async function trashedTask(w: World): Promise<string> {
  const id = await richTask(w, { title: "Old idea" });
  await w.person.ok("decompose_task", { task_id: id, subtasks: [{ title: "Part one" }] });
  await w.person.ok("delete_task", { task_id: id });
  return trashItemOf(w, id);
}

export async function recurringTask(w: World): Promise<string> {
  return newTask(w, { title: "Water the plants", due_at: soon(1), recurrence: "FREQ=DAILY" });
}

export async function stepsOf(w: World, task: string): Promise<string[]> {
  return ((await w.person.ok("list_steps", { task_id: task })).steps as { id: string }[]).map((s) => s.id);
}

export async function connectAll(w: World): Promise<void> {
  for (const p of ["drive", "slack", "notion"] as const) await connectApp(w.acc.accountId, p);
}

/**
 * One account holding every state at once, for the reads: each read is
 * observed over all of them (and must change none).
 */
export async function populate(w: World): Promise<void> {
  const ids = w.ids;
  ids.project = await project(w, "Launch");
  ids.archived = await project(w, "Old site");
  await w.person.ok("archive_project", { project_id: ids.archived });
  ids.rich = await richTask(w, { project_id: ids.project, assignee: "bot" });
  ids.subtask = (await w.person.ok("decompose_task", { task_id: ids.rich, subtasks: [{ title: "Pick photos" }] })).tasks[0].id;
  ids.blocked = await blockedTask(w);
  await w.person.ok("add_dependency", { task_id: ids.rich, depends_on_id: ids.blocked });
  ids.claimed = await claimedTask(w, "agent", { project_id: ids.project });
  const awaiting = await awaitingApproval(w);
  ids.awaiting = awaiting.task;
  ids.approval = awaiting.approval;
  ids.question = (await pendingQuestion(w)).approval;
  ids.linked = (await linkedTask(w)).task;
  const running = await runningRun(w);
  ids.run = running.run;
  ids.stale = await staleRun(w);
  ids.lapsed = await lapsedClaim(w, "rival");
  ids.trash = await trashedTask(w);
  ids.recurring = await recurringTask(w);
  ids.done = await newTask(w, { title: "Done already" });
  await w.person.ok("complete_task", { task_id: ids.done });
  ids.snoozed = await newTask(w, { title: "Later" });
  await w.person.ok("snooze_task", { task_id: ids.snoozed, until: soon(3) });
  ids.label = (await w.person.ok("create_label", { name: "launch" })).label.id;
  ids.comment = (await w.person.ok("list_comments", { task_id: ids.rich })).items[0].id;
  await createToken({ accountId: w.acc.accountId, kind: "agent", scope: "write", agent: "idle" });
  await w.person.ok("pause_agent", { agent: "idle" });
  await connectAll(w);
}
