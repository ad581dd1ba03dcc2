import type { Actor, Path, Scenarios, World } from "./harness.ts";

/**
 * The reads, each over one account that holds every state at once (see
 * `populate`): tasks in every status, a claim and a lapsed claim, runs
 * running and gone stale, questions and sign-offs, links, the trash, a
 * series, a paused agent and connected apps.
 */
const read = (name: string, by: Actor, args: (w: World) => Record<string, unknown>): Path => ({ name, by, setup: async (w) => args(w) });
const both = (args: (w: World) => Record<string, unknown>): Path[] => [read("as the agent", "agent", args), read("as the person", "person", args)];
const none = () => ({});

export const READ_SCENARIOS: Scenarios = {
  list_my_tasks: both(none),
  list_tasks: [read("everything", "agent", () => ({ limit: 100 })), read("by project", "person", (w) => ({ project_id: w.ids.project }))],
  get_task: [
    read("a task with everything", "agent", (w) => ({ task_id: w.ids.rich })),
    read("a lapsed claim", "person", (w) => ({ task_id: w.ids.lapsed })),
    read("awaiting approval", "rival", (w) => ({ task_id: w.ids.awaiting })),
  ],
  search_tasks: [read("titles, notes and comments", "agent", () => ({ query: "launch" }))],
  list_subtasks: [read("children", "agent", (w) => ({ task_id: w.ids.rich, recursive: true }))],
  list_blocked_tasks: both(none),
  list_due_tasks: [read("this week", "agent", () => ({ days: 7 }))],
  get_task_history: [read("a busy task", "agent", (w) => ({ task_id: w.ids.claimed }))],
  list_dependencies: [read("waits on a blocked task", "agent", (w) => ({ task_id: w.ids.rich }))],
  list_projects: [read("with the archived", "agent", () => ({ include_archived: true }))],
  get_project: [read("with counts", "agent", (w) => ({ project_id: w.ids.project }))],
  export_project: [read("the whole project", "person", (w) => ({ project_id: w.ids.project }))],
  list_steps: [read("a checklist", "agent", (w) => ({ task_id: w.ids.rich }))],
  list_comments: [read("newest first", "rival", (w) => ({ task_id: w.ids.rich, newest_first: true }))],
  list_runs: [read("running and stale", "agent", () => ({ status: ["running"] }))],
  get_run: [read("a run gone stale", "agent", (w) => ({ run_id: w.ids.stale })), read("a live run", "person", (w) => ({ run_id: w.ids.run }))],
  fleet_status: both(none),
  list_agents: [read("a paused one among them", "person", none)],
  get_agent: [read("itself", "agent", () => ({ agent: "bot" })), read("a paused agent", "person", () => ({ agent: "idle" }))],
  get_workload: [read("every assignee", "agent", () => ({ include_snoozed: true }))],
  list_pending_approvals: both(none),
  get_approval: [read("a sign-off", "person", (w) => ({ approval_id: w.ids.approval })), read("a question", "agent", (w) => ({ approval_id: w.ids.question }))],
  list_labels: [read("with counts", "agent", none)],
  list_calendar_links: [read("of a task", "agent", (w) => ({ task_id: w.ids.linked }))],
  get_agenda: [read("a week", "person", () => ({ days: 7 }))],
  list_trash: both(none),
  get_digest: both(none),
  list_activity: [read("the feed", "person", () => ({ limit: 100 }))],
  whoami: both(none),
  list_connectors: [read("three apps", "agent", none)],
  search_context: [read("every app", "agent", () => ({ query: "launch plan" }))],
  read_context: [read("a Notion page", "agent", () => ({ ref: "notion:a1b2c3d4-e5f6-4789-8abc-def012345678" }))],
  get_account_settings: [read("settings", "agent", none)],
  list_tokens: both(none),
};
