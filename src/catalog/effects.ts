/**
 * The one source of truth for what each tool does to the account's data.
 *
 * tools/list derives every tool's hints from these sets, and the registry's
 * permission check reads the very same sets before a handler runs. No tool
 * definition carries hints of its own, so what a host is told and what the
 * server enforces cannot drift apart.
 */

/** Every tool of the catalog, with the title a host shows for it. */
export const TOOL_TITLES = {
  // Tasks
  list_my_tasks: "List my tasks",
  list_tasks: "List tasks",
  get_task: "Get task",
  search_tasks: "Search tasks",
  list_subtasks: "List subtasks",
  list_blocked_tasks: "List blocked tasks",
  list_due_tasks: "List due tasks",
  get_task_history: "Get task history",
  list_dependencies: "List dependencies",
  create_task: "Create task",
  update_task: "Update task",
  delete_task: "Delete task",
  complete_task: "Complete task",
  reopen_task: "Reopen task",
  block_task: "Block task",
  unblock_task: "Unblock task",
  claim_task: "Claim task",
  assign_task: "Assign task",
  move_task: "Move task",
  snooze_task: "Snooze task",
  decompose_task: "Decompose task",
  add_dependency: "Add dependency",
  remove_dependency: "Remove dependency",
  set_auto_ok: "Set auto-OK",
  // Projects
  list_projects: "List projects",
  get_project: "Get project",
  export_project: "Export project",
  create_project: "Create project",
  update_project: "Update project",
  archive_project: "Archive project",
  unarchive_project: "Unarchive project",
  delete_project: "Delete project",
  // Steps
  list_steps: "List steps",
  add_steps: "Add steps",
  set_step_status: "Set step status",
  update_step: "Update step",
  delete_step: "Delete step",
  reorder_steps: "Reorder steps",
  // Comments
  list_comments: "List comments",
  comment_on_task: "Comment on task",
  edit_comment: "Edit comment",
  delete_comment: "Delete comment",
  // Runs
  list_runs: "List runs",
  get_run: "Get run",
  start_run: "Start run",
  log_run_event: "Log run event",
  finish_run: "Finish run",
  cancel_run: "Cancel run",
  // Agents
  fleet_status: "Fleet status",
  list_agents: "List agents",
  get_agent: "Get agent",
  get_workload: "Get workload",
  pause_agent: "Pause agent",
  resume_agent: "Resume agent",
  // Approvals
  list_pending_approvals: "List pending approvals",
  get_approval: "Get approval",
  request_approval: "Request approval",
  approve_task: "Approve task",
  reject_task: "Reject task",
  // Labels
  list_labels: "List labels",
  create_label: "Create label",
  rename_label: "Rename label",
  delete_label: "Delete label",
  label_task: "Label task",
  unlabel_task: "Unlabel task",
  // Calendar links
  list_calendar_links: "List calendar links",
  get_agenda: "Get agenda",
  link_calendar_event: "Link calendar event",
  unlink_calendar_event: "Unlink calendar event",
  // Trash
  list_trash: "List trash",
  restore_from_trash: "Restore from trash",
  empty_trash: "Empty trash",
  // Overview
  get_digest: "Get digest",
  list_activity: "List activity",
  whoami: "Who am I",
  // Connectors
  list_connectors: "List connectors",
  search_context: "Search connected apps",
  read_context: "Read from a connected app",
  save_context: "Save to a connected app",
  disconnect_connector: "Disconnect app",
  // Account
  get_account_settings: "Get account settings",
  list_tokens: "List tokens",
  update_account_settings: "Update account settings",
  revoke_token: "Revoke token",
} as const;

export type ToolName = keyof typeof TOOL_TITLES;

export const TOOL_NAMES = Object.keys(TOOL_TITLES) as ToolName[];

const set = (...names: ToolName[]): ReadonlySet<ToolName> => new Set(names);

/** Calls that can change something. Everything else is a read. */
export const WRITE_TOOLS = set(
  "create_task", "update_task", "delete_task", "complete_task", "reopen_task",
  "block_task", "unblock_task", "claim_task", "assign_task", "move_task",
  "snooze_task", "decompose_task", "add_dependency", "remove_dependency", "set_auto_ok",
  "create_project", "update_project", "archive_project", "unarchive_project", "delete_project",
  "add_steps", "set_step_status", "update_step", "delete_step", "reorder_steps",
  "comment_on_task", "edit_comment", "delete_comment",
  "start_run", "log_run_event", "finish_run", "cancel_run",
  "pause_agent", "resume_agent",
  "request_approval", "approve_task", "reject_task",
  "create_label", "rename_label", "delete_label", "label_task", "unlabel_task",
  "link_calendar_event", "unlink_calendar_event",
  "restore_from_trash", "empty_trash",
  "save_context", "disconnect_connector",
  "update_account_settings", "revoke_token",
);

/** Writes that remove a record or replace a value someone wrote. */
export const DESTRUCTIVE_TOOLS = set(
  "update_task", "delete_task", "assign_task", "move_task", "snooze_task", "remove_dependency", "set_auto_ok",
  "update_project", "delete_project",
  "update_step", "delete_step", "reorder_steps",
  "edit_comment", "delete_comment",
  "rename_label", "delete_label", "unlabel_task",
  "unlink_calendar_event",
  "empty_trash",
  "disconnect_connector",
  "update_account_settings", "revoke_token",
);

/** Writes where a second identical call leaves the state of the first. */
export const CONVERGENT_TOOLS = set(
  "update_task", "delete_task", "complete_task", "reopen_task", "block_task", "unblock_task",
  "assign_task", "move_task", "snooze_task", "add_dependency", "remove_dependency",
  "set_auto_ok",
  "update_project", "archive_project", "unarchive_project", "delete_project",
  "set_step_status", "update_step", "delete_step", "reorder_steps",
  "edit_comment", "delete_comment",
  "finish_run", "cancel_run",
  "pause_agent", "resume_agent",
  "request_approval", "approve_task", "reject_task",
  "create_label", "rename_label", "delete_label", "label_task", "unlabel_task",
  "link_calendar_event", "unlink_calendar_event",
  "restore_from_trash", "empty_trash",
  "disconnect_connector",
  "update_account_settings", "revoke_token",
);

/** Calls that reach into an app the user connected, outside the account's records. */
export const OPEN_WORLD_TOOLS = set("search_context", "read_context", "save_context");

/** Calls that give or take away consent: only a person's token may make them. */
export const HUMAN_TOOLS = set(
  "set_auto_ok", "pause_agent", "resume_agent", "approve_task", "reject_task",
  "empty_trash", "disconnect_connector", "update_account_settings", "revoke_token",
);

/**
 * Writes that can reach the rows of a held task (C1 of
 * docs/approvals-and-claims.md): the task itself, its steps, runs, requests,
 * labels, dependencies and links, its subtasks, and its project. While a task
 * is held, a call by anyone but its holder or a person changes none of those
 * rows, whatever the tool and whichever route reaches them: the triggers of
 * schema.sql refuse each such row inside the write's own batch. This set is
 * what each tool publishes as `claim_guarded`; the consent audit
 * (test/consent-audit-*.test.ts) holds it to the tools whose calls it saw
 * reach a held task's rows. Comments stay open to everyone.
 */
export const CLAIM_GUARDED_TOOLS = set(
  "create_task", "update_task", "delete_task", "complete_task", "reopen_task", "block_task", "unblock_task",
  "assign_task", "move_task", "snooze_task", "decompose_task",
  "add_dependency", "remove_dependency",
  "archive_project", "delete_project",
  "add_steps", "set_step_status", "update_step", "delete_step", "reorder_steps",
  "start_run", "log_run_event", "finish_run", "cancel_run",
  "request_approval",
  "delete_label", "label_task", "unlabel_task",
  "link_calendar_event", "unlink_calendar_event",
  "restore_from_trash",
);

/**
 * Calls whose result holds only what the server or a person wrote: ids,
 * counts, states, settings, and agent names a person chose. Every other
 * tool's result may carry text an agent or an outsider wrote (titles, notes,
 * comments, run events, questions, label and project names, OAuth apps'
 * names, what the connected apps hold): a model should read it as data,
 * never as instructions. A new tool is untrusted until it is listed here.
 */
export const PLAIN_RESULT_TOOLS = set(
  "delete_task", "delete_project", "delete_step", "delete_comment", "restore_from_trash",
  "list_agents", "get_workload", "pause_agent", "resume_agent",
  "disconnect_connector", "get_account_settings", "update_account_settings",
);

/** Results that may carry text an agent or an outsider wrote (every tool but PLAIN_RESULT_TOOLS). */
export const UNTRUSTED_CONTENT_TOOLS: ReadonlySet<ToolName> = new Set(TOOL_NAMES.filter((n) => !PLAIN_RESULT_TOOLS.has(n)));

/**
 * Calls whose result describes only the caller itself (its token, its
 * account's name, the limits that apply), none of the account's records.
 * Every other tool returns the account's private data: tasks, projects,
 * comments, runs, agents, settings, tokens, or what a connected app holds.
 */
export const SELF_ONLY_TOOLS = set("whoami");

/** Results that carry the account's private data (every tool but SELF_ONLY_TOOLS). */
export const PRIVATE_DATA_TOOLS: ReadonlySet<ToolName> = new Set(TOOL_NAMES.filter((n) => !SELF_ONLY_TOOLS.has(n)));

export interface ToolAnnotations {
  title: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** All four hints and the title, derived from the sets above. */
export function annotationsFor(name: ToolName): ToolAnnotations {
  const write = WRITE_TOOLS.has(name);
  return {
    title: TOOL_TITLES[name],
    readOnlyHint: !write,
    destructiveHint: write && DESTRUCTIVE_TOOLS.has(name),
    idempotentHint: !write || CONVERGENT_TOOLS.has(name),
    openWorldHint: OPEN_WORLD_TOOLS.has(name),
  };
}

export function isToolName(name: string): name is ToolName {
  return Object.hasOwn(TOOL_TITLES, name);
}
