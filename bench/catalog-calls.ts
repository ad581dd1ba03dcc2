/**
 * One valid call of every tool of the catalog, each on state made for it just
 * before through the tools themselves. The benchmark counts the D1 round trips
 * of these calls (warm and on a token's first request), and the test suite
 * asserts the same bound for every tool (and for each call repeated right
 * after, warm, as an agent retrying would), so neither samples.
 *
 * `prepare` runs with the account's warm tokens and returns the arguments of
 * the measured call; `who` names the kind of token that makes it. `after`
 * undoes what would disturb later calls (a paused agent).
 */
import type { ToolName } from "../src/catalog/effects.ts";

/** D1 round trips a tools/call may take, the token lookup included (warm: a token this isolate resolved already, a repeat too; cold: its first request). */
export const ROUND_TRIP_LIMIT = 2;

/**
 * The one tool that takes more: save_context reads the app's credentials,
 * calls the app, and only then records what it saved; the call to the app
 * between its two round trips takes far longer than either.
 */
export const ROUND_TRIP_EXCEPTIONS: Partial<Record<ToolName, { warm: number; cold: number; why: string }>> = {
  save_context: { warm: 2, cold: 3, why: "reads the credentials, calls the app, then records the activity" },
};

/** Calls a tool and returns its structuredContent; throws when the call fails. */
export type Call = (name: string, args?: Record<string, unknown>) => Promise<any>;

export interface Fixture {
  human: Call;
  agent: Call;
  agentName: string;
  /** A word that search_tasks finds in the account. */
  searchWord: string;
  /** A token of the account that no measured call uses (revoke_token revokes it). */
  spareTokenId(): Promise<string>;
  /** Whether Drive, Slack and Notion answer (faked); without them the connector calls take their "not connected" path. */
  connectors: boolean;
}

export interface CatalogCall {
  who: "human" | "agent";
  prepare(f: Fixture): Promise<Record<string, unknown>>;
  after?(f: Fixture): Promise<void>;
  /** A call that cannot succeed in this fixture (no connected app): measured on its error path. */
  expectError?(f: Fixture): boolean;
}

let serial = 0;
const unique = (what: string) => `${what} ${Date.now().toString(36)}-${(serial++).toString(36)}`;
const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();

async function task(f: Fixture, args: Record<string, unknown> = {}): Promise<string> {
  const { task: t } = await f.human("create_task", { title: unique("Task"), ...args });
  return t.id;
}

async function project(f: Fixture, args: Record<string, unknown> = {}): Promise<string> {
  const { project: p } = await f.human("create_project", { name: unique("Project"), ...args });
  return p.id;
}

async function steps(f: Fixture): Promise<{ taskId: string; stepIds: string[] }> {
  const taskId = await task(f);
  const { steps: s } = await f.human("add_steps", { task_id: taskId, steps: ["Collect", "Draft", "Review"] });
  return { taskId, stepIds: s.map((x: { id: string }) => x.id) };
}

async function comment(f: Fixture): Promise<string> {
  const { comment: c } = await f.human("comment_on_task", { task_id: await task(f), body: unique("A comment") });
  return c.id;
}

async function run(f: Fixture): Promise<string> {
  const { run: r } = await f.agent("start_run", { task_id: await task(f) });
  return r.id;
}

/** A task an agent reported done without auto-OK: it waits for a person's approval. */
async function awaiting(f: Fixture): Promise<{ taskId: string; approvalId: string }> {
  const taskId = await task(f, { auto_ok: false });
  const { approval } = await f.agent("complete_task", { task_id: taskId, note: "Done, please check." });
  return { taskId, approvalId: approval.id };
}

async function label(f: Fixture): Promise<{ id: string; name: string }> {
  const { label: l } = await f.human("create_label", { name: unique("label").replace(/[^a-z0-9-]/g, "-") });
  return { id: l.id, name: l.name };
}

const event = (taskId: string) => ({
  task_id: taskId,
  provider: "google",
  event_id: unique("evt").replace(/\W/g, ""),
  title: "Review meeting",
  starts_at: inDays(1),
  ends_at: new Date(Date.now() + 86_400_000 + 3_600_000).toISOString(),
});

async function trashItem(f: Fixture): Promise<string> {
  const taskId = await task(f);
  await f.human("create_task", { title: unique("Subtask"), parent_id: taskId });
  const { trash_id } = await f.human("delete_task", { task_id: taskId });
  return trash_id;
}

const none = async () => ({});
const noConnectors = (f: Fixture) => !f.connectors;

export const CATALOG_CALLS: Record<ToolName, CatalogCall> = {
  // Tasks
  list_my_tasks: { who: "agent", prepare: none },
  list_tasks: { who: "human", prepare: none },
  get_task: { who: "human", prepare: async (f) => ({ task_id: (await steps(f)).taskId }) },
  search_tasks: { who: "human", prepare: async (f) => ({ query: f.searchWord }) },
  list_subtasks: {
    who: "human",
    prepare: async (f) => {
      const id = await task(f);
      await f.human("decompose_task", { task_id: id, subtasks: [{ title: "One" }, { title: "Two" }] });
      return { task_id: id };
    },
  },
  list_blocked_tasks: { who: "human", prepare: none },
  list_due_tasks: { who: "human", prepare: none },
  get_task_history: { who: "human", prepare: async (f) => ({ task_id: await task(f) }) },
  list_dependencies: {
    who: "human",
    prepare: async (f) => {
      const [a, b] = [await task(f), await task(f)];
      await f.human("add_dependency", { task_id: a, depends_on_id: b });
      return { task_id: a };
    },
  },
  create_task: {
    who: "agent",
    prepare: async (f) => ({ title: unique("Created"), project_id: await project(f, { default_auto_ok: true }), assignee: f.agentName, due_at: inDays(3) }),
  },
  update_task: {
    who: "human",
    prepare: async (f) => ({ task_id: await task(f), title: unique("Renamed"), priority: "high", expected_version: 1 }),
  },
  delete_task: {
    who: "human",
    prepare: async (f) => {
      const id = await task(f);
      await f.human("create_task", { title: unique("Subtask"), parent_id: id });
      return { task_id: id };
    },
  },
  complete_task: { who: "agent", prepare: async (f) => ({ task_id: await task(f, { auto_ok: false }), note: "Finished." }) },
  reopen_task: {
    who: "human",
    prepare: async (f) => ({ task_id: (await awaiting(f)).taskId, reason: "One more change." }),
  },
  block_task: { who: "agent", prepare: async (f) => ({ task_id: await task(f), reason: "Waiting for the numbers." }) },
  unblock_task: {
    who: "agent",
    prepare: async (f) => {
      const id = await task(f);
      await f.human("block_task", { task_id: id, reason: "Waiting." });
      return { task_id: id };
    },
  },
  claim_task: { who: "agent", prepare: async (f) => ({ task_id: await task(f) }) },
  assign_task: { who: "human", prepare: async (f) => ({ task_id: await task(f), assignee: f.agentName }) },
  move_task: {
    who: "human",
    prepare: async (f) => {
      const id = await task(f, { project_id: await project(f) });
      await f.human("create_task", { title: unique("Subtask"), parent_id: id });
      return { task_id: id, project_id: await project(f) };
    },
  },
  snooze_task: { who: "human", prepare: async (f) => ({ task_id: await task(f), until: inDays(2) }) },
  decompose_task: {
    who: "agent",
    prepare: async (f) => ({ task_id: await task(f), subtasks: [{ title: "First part" }, { title: "Second part", notes: "Later." }] }),
  },
  add_dependency: { who: "human", prepare: async (f) => ({ task_id: await task(f), depends_on_id: await task(f) }) },
  remove_dependency: {
    who: "human",
    prepare: async (f) => {
      const [a, b] = [await task(f), await task(f)];
      await f.human("add_dependency", { task_id: a, depends_on_id: b });
      return { task_id: a, depends_on_id: b };
    },
  },
  set_auto_ok: { who: "human", prepare: async (f) => ({ task_id: await task(f, { auto_ok: false }), auto_ok: true }) },
  // Projects
  list_projects: { who: "human", prepare: none },
  get_project: {
    who: "human",
    prepare: async (f) => {
      const id = await project(f);
      await task(f, { project_id: id });
      return { project_id: id };
    },
  },
  export_project: {
    who: "human",
    prepare: async (f) => {
      const id = await project(f);
      await task(f, { project_id: id });
      return { project_id: id };
    },
  },
  create_project: { who: "human", prepare: async () => ({ name: unique("New project"), description: "Made by the catalog run." }) },
  update_project: { who: "human", prepare: async (f) => ({ project_id: await project(f), name: unique("Renamed project"), expected_version: 1 }) },
  archive_project: { who: "human", prepare: async (f) => ({ project_id: await project(f) }) },
  unarchive_project: {
    who: "human",
    prepare: async (f) => {
      const id = await project(f);
      await f.human("archive_project", { project_id: id });
      return { project_id: id };
    },
  },
  delete_project: {
    who: "human",
    prepare: async (f) => {
      const id = await project(f);
      await task(f, { project_id: id });
      return { project_id: id };
    },
  },
  // Steps
  list_steps: { who: "agent", prepare: async (f) => ({ task_id: (await steps(f)).taskId }) },
  add_steps: { who: "agent", prepare: async (f) => ({ task_id: await task(f), steps: ["Plan", "Do", "Check"] }) },
  set_step_status: { who: "agent", prepare: async (f) => ({ step_id: (await steps(f)).stepIds[0], status: "done" }) },
  update_step: { who: "human", prepare: async (f) => ({ step_id: (await steps(f)).stepIds[1], text: "Draft the summary" }) },
  delete_step: { who: "human", prepare: async (f) => ({ step_id: (await steps(f)).stepIds[2] }) },
  reorder_steps: {
    who: "human",
    prepare: async (f) => {
      const s = await steps(f);
      return { task_id: s.taskId, step_ids: [...s.stepIds].reverse() };
    },
  },
  // Comments
  list_comments: {
    who: "agent",
    prepare: async (f) => {
      const id = await task(f);
      await f.human("comment_on_task", { task_id: id, body: "First." });
      return { task_id: id };
    },
  },
  comment_on_task: { who: "agent", prepare: async (f) => ({ task_id: await task(f), body: "Progress: half done." }) },
  edit_comment: { who: "human", prepare: async (f) => ({ comment_id: await comment(f), body: unique("Edited") }) },
  delete_comment: { who: "human", prepare: async (f) => ({ comment_id: await comment(f) }) },
  // Runs
  list_runs: { who: "human", prepare: none },
  get_run: {
    who: "human",
    prepare: async (f) => {
      const id = await run(f);
      await f.agent("log_run_event", { run_id: id, kind: "progress", message: "Halfway." });
      return { run_id: id };
    },
  },
  start_run: { who: "agent", prepare: async (f) => ({ task_id: await task(f) }) },
  log_run_event: {
    who: "agent",
    prepare: async (f) => ({ run_id: await run(f), kind: "artifact", message: "Draft ready.", url: "https://example.com/draft" }),
  },
  finish_run: { who: "agent", prepare: async (f) => ({ run_id: await run(f), outcome: "succeeded", summary: "All done." }) },
  cancel_run: { who: "agent", prepare: async (f) => ({ run_id: await run(f), reason: "Superseded." }) },
  // Fleet
  fleet_status: { who: "human", prepare: none },
  list_agents: { who: "human", prepare: none },
  get_agent: { who: "human", prepare: async (f) => ({ agent: f.agentName }) },
  get_workload: { who: "human", prepare: none },
  pause_agent: {
    who: "human",
    prepare: async (f) => ({ agent: f.agentName, reason: "Checking its work." }),
    after: async (f) => void (await f.human("resume_agent", { agent: f.agentName })),
  },
  resume_agent: {
    who: "human",
    prepare: async (f) => {
      await f.human("pause_agent", { agent: f.agentName });
      return { agent: f.agentName };
    },
  },
  // Approvals
  list_pending_approvals: { who: "human", prepare: none },
  get_approval: { who: "human", prepare: async (f) => ({ approval_id: (await awaiting(f)).approvalId }) },
  request_approval: { who: "agent", prepare: async (f) => ({ task_id: await task(f), question: "May I send it?" }) },
  approve_task: { who: "human", prepare: async (f) => ({ task_id: (await awaiting(f)).taskId, note: "Good." }) },
  reject_task: { who: "human", prepare: async (f) => ({ task_id: (await awaiting(f)).taskId, reason: "Add last year's figures." }) },
  // Labels
  list_labels: { who: "human", prepare: none },
  create_label: { who: "human", prepare: async () => ({ name: unique("label").replace(/[^a-z0-9-]/g, "-"), color: "#1f6feb" }) },
  rename_label: { who: "human", prepare: async (f) => ({ label_id: (await label(f)).id, name: unique("renamed").replace(/[^a-z0-9-]/g, "-") }) },
  delete_label: {
    who: "human",
    prepare: async (f) => {
      const l = await label(f);
      await f.human("label_task", { task_id: await task(f), labels: [l.name] });
      return { label_id: l.id };
    },
  },
  label_task: { who: "agent", prepare: async (f) => ({ task_id: await task(f), labels: [(await label(f)).name, unique("fresh").replace(/[^a-z0-9-]/g, "-")] }) },
  unlabel_task: {
    who: "human",
    prepare: async (f) => {
      const [id, l] = [await task(f), await label(f)];
      await f.human("label_task", { task_id: id, labels: [l.name] });
      return { task_id: id, labels: [l.name] };
    },
  },
  // Calendar links
  list_calendar_links: { who: "human", prepare: async () => ({ from: inDays(-1), to: inDays(7) }) },
  get_agenda: { who: "human", prepare: none },
  link_calendar_event: { who: "human", prepare: async (f) => event(await task(f)) },
  unlink_calendar_event: {
    who: "human",
    prepare: async (f) => {
      const e = event(await task(f));
      const { link } = await f.human("link_calendar_event", e);
      return { task_id: e.task_id, link_id: link.id };
    },
  },
  // Trash
  list_trash: { who: "human", prepare: none },
  restore_from_trash: { who: "human", prepare: async (f) => ({ item_id: await trashItem(f) }) },
  empty_trash: { who: "human", prepare: async (f) => ({ item_ids: [await trashItem(f)] }) },
  // Overview
  get_digest: { who: "human", prepare: none },
  list_activity: { who: "human", prepare: none },
  whoami: { who: "agent", prepare: none },
  // Connectors
  list_connectors: { who: "human", prepare: none },
  search_context: { who: "agent", prepare: async () => ({ query: "quarterly report" }), expectError: noConnectors },
  read_context: { who: "agent", prepare: async () => ({ ref: "notion:a1b2c3d4e5f647898abcdef012345678", max_chars: 2000 }), expectError: noConnectors },
  save_context: {
    who: "agent",
    prepare: async () => ({ provider: "slack", title: "Status", content: "Half done.", target: "C0123ABCD" }),
    expectError: noConnectors,
  },
  disconnect_connector: { who: "human", prepare: async () => ({ provider: "drive" }) },
  // Account
  get_account_settings: { who: "human", prepare: none },
  list_tokens: { who: "human", prepare: none },
  update_account_settings: {
    who: "human",
    prepare: async (f) => {
      const { settings } = await f.human("get_account_settings");
      return { trash_retention_days: settings.trash_retention_days === 30 ? 31 : 30 };
    },
  },
  revoke_token: { who: "human", prepare: async (f) => ({ token_id: await f.spareTokenId() }) },
};
