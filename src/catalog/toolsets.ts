/**
 * Toolsets: named groups of tools a connection may narrow itself to
 * (`/mcp/x/tasks,runs`, `?toolsets=`, `X-MCP-Toolsets`), plus presets that
 * span groups, and the read-only view (`/mcp/readonly`, `X-MCP-Readonly`).
 * They only choose among tools; what a principal may call, and every hint,
 * still comes from the effect sets alone.
 */
import { TOOL_NAMES, WRITE_TOOLS, type ToolName } from "./effects.ts";

export interface Toolset {
  name: string;
  /** Other names a connection may use for it. */
  aliases?: readonly string[];
  /** As the catalog of docs/tools.md heads the group. */
  title: string;
  description: string;
  tools: readonly ToolName[];
}

/** The catalog's groups, in catalog order: every tool in exactly one. */
export const TOOLSETS: readonly Toolset[] = [
  {
    name: "tasks",
    title: "Tasks",
    description: "Find, create, change, claim, complete, block, move, snooze, split and link tasks.",
    tools: [
      "list_my_tasks", "list_tasks", "get_task", "search_tasks", "list_subtasks", "list_blocked_tasks", "list_due_tasks",
      "get_task_history", "list_dependencies", "create_task", "update_task", "delete_task", "complete_task", "reopen_task",
      "block_task", "unblock_task", "claim_task", "assign_task", "move_task", "snooze_task", "decompose_task",
      "add_dependency", "remove_dependency", "set_auto_ok",
    ],
  },
  {
    name: "projects",
    title: "Projects",
    description: "List, export, create, rename, archive and delete projects.",
    tools: ["list_projects", "get_project", "export_project", "create_project", "update_project", "archive_project", "unarchive_project", "delete_project"],
  },
  {
    name: "steps",
    title: "Steps",
    description: "A task's checklist: add, tick off, edit, reorder and delete steps.",
    tools: ["list_steps", "add_steps", "set_step_status", "update_step", "delete_step", "reorder_steps"],
  },
  {
    name: "comments",
    title: "Comments",
    description: "Read, write, edit and delete comments on tasks.",
    tools: ["list_comments", "comment_on_task", "edit_comment", "delete_comment"],
  },
  {
    name: "runs",
    title: "Runs",
    description: "An agent's runs on tasks and their event logs.",
    tools: ["list_runs", "get_run", "start_run", "log_run_event", "finish_run", "cancel_run"],
  },
  {
    name: "agents",
    aliases: ["fleet"],
    title: "Agents",
    description: "The agents: status, workload, pause and resume.",
    tools: ["fleet_status", "list_agents", "get_agent", "get_workload", "pause_agent", "resume_agent"],
  },
  {
    name: "approvals",
    title: "Approvals",
    description: "Ask a person to sign off; approve or reject.",
    tools: ["list_pending_approvals", "get_approval", "request_approval", "approve_task", "reject_task"],
  },
  {
    name: "labels",
    title: "Labels",
    description: "Create, rename and delete labels; label and unlabel tasks.",
    tools: ["list_labels", "create_label", "rename_label", "delete_label", "label_task", "unlabel_task"],
  },
  {
    name: "calendar",
    title: "Calendar links",
    description: "Calendar events linked to tasks, and the agenda of a day.",
    tools: ["list_calendar_links", "get_agenda", "link_calendar_event", "unlink_calendar_event"],
  },
  {
    name: "trash",
    title: "Trash",
    description: "What was deleted: list, restore, purge.",
    tools: ["list_trash", "restore_from_trash", "empty_trash"],
  },
  {
    name: "digest",
    aliases: ["overview"],
    title: "Overview",
    description: "The digest, the audit feed and who this token is.",
    tools: ["get_digest", "list_activity", "whoami"],
  },
  {
    name: "connectors",
    title: "Connectors",
    description: "Search, read and save in connected Drive, Slack and Notion.",
    tools: ["list_connectors", "search_context", "read_context", "save_context", "disconnect_connector"],
  },
  {
    name: "account",
    title: "Account",
    description: "Account settings and tokens.",
    tools: ["get_account_settings", "list_tokens", "update_account_settings", "revoke_token"],
  },
];

/** Selections across groups for a common way of working. */
export const PRESETS: readonly Toolset[] = [
  {
    name: "agent",
    title: "Agent's working loop",
    description: "An agent's loop: find and claim its tasks, work through steps and runs, comment, complete or ask for approval.",
    tools: [
      "whoami", "list_my_tasks", "list_tasks", "search_tasks", "get_task", "claim_task", "block_task", "unblock_task",
      "decompose_task", "complete_task", "list_steps", "add_steps", "set_step_status", "list_comments", "comment_on_task",
      "start_run", "log_run_event", "finish_run", "cancel_run", "request_approval",
    ],
  },
];

/** Every name a connection may ask for: the groups, then the presets (aliases aside). */
export const TOOLSET_NAMES: readonly string[] = [...TOOLSETS, ...PRESETS].map((t) => t.name);

const BY_NAME = new Map<string, Toolset>(
  [...TOOLSETS, ...PRESETS].flatMap((t) => [t.name, ...(t.aliases ?? [])].map((n) => [n, t] as const)),
);

/** The toolset of a name or alias, if there is one. */
export function toolsetNamed(name: string): Toolset | undefined {
  return BY_NAME.get(name);
}

/**
 * What a connection asked for: the toolset lists it gave (each sorted; null:
 * none, all tools) and whether it is read-only. `key` names the selection for
 * caches: equal selections have equal keys.
 */
export interface ToolSelection {
  toolsets: readonly (readonly string[])[] | null;
  readonly: boolean;
  key: string;
  /** The tools it admits (before the principal's own limits). */
  tools: ReadonlySet<ToolName>;
}

const selections = new Map<string, ToolSelection>();

function build(toolsets: readonly (readonly string[])[] | null, readonly: boolean, key: string): ToolSelection {
  let tools: ToolName[] = [...TOOL_NAMES];
  for (const list of toolsets ?? []) {
    const chosen = new Set(list.flatMap((n) => (BY_NAME.get(n) as Toolset).tools));
    tools = tools.filter((t) => chosen.has(t));
  }
  if (readonly) tools = tools.filter((t) => !WRITE_TOOLS.has(t));
  return { toolsets, readonly, key, tools: new Set(tools) };
}

/** All tools, writes included: the selection of a plain `/mcp`. */
export const ALL_TOOLS_SELECTED: ToolSelection = build(null, false, "all");

export class UnknownToolsetError extends Error {
  readonly unknown: string[];
  constructor(unknown: string[]) {
    const shown = unknown.slice(0, 10).map((n) => (n.length > 40 ? `${n.slice(0, 40)}…` : n));
    super(`Unknown toolset${unknown.length === 1 ? "" : "s"}: ${shown.join(", ")}. Valid toolsets: ${TOOLSET_NAMES.join(", ")}.`);
    this.unknown = unknown;
  }
}

/**
 * The selection for the toolset lists a request gave (each a comma-separated
 * string of names; several lists narrow each other, an empty one narrows
 * nothing) and its read-only flag. Unknown names throw UnknownToolsetError.
 * Built once per distinct selection (this cache is safe to lose), so a
 * request pays a parse and a lookup.
 */
export function selectTools(lists: readonly string[], readonly: boolean): ToolSelection {
  const parsed: string[][] = [];
  const unknown = new Set<string>();
  for (const list of lists) {
    const given = list.split(",").map((s) => s.trim().toLowerCase()).filter(Boolean);
    for (const n of given) if (!BY_NAME.has(n)) unknown.add(n);
    const names = [...new Set(given.map((n) => BY_NAME.get(n)?.name ?? n))].sort();
    if (names.length > 0) parsed.push(names);
  }
  if (unknown.size > 0) throw new UnknownToolsetError([...unknown]);
  if (parsed.length === 0 && !readonly) return ALL_TOOLS_SELECTED;
  const key = `${parsed.length ? parsed.map((l) => l.join(",")).sort().join("&") : "all"}${readonly ? "/readonly" : ""}`;
  let s = selections.get(key);
  if (!s) {
    if (selections.size >= 512) selections.clear();
    s = build(parsed.length ? parsed : null, readonly, key);
    selections.set(key, s);
  }
  return s;
}

const GROUP_OF = new Map<ToolName, Toolset>(TOOLSETS.flatMap((t) => t.tools.map((n) => [n, t] as const)));

/** The toolset lists of a selection that leave this tool out (none: its toolsets admit it, whatever the read-only view does). */
export function listsWithout(selection: ToolSelection, tool: ToolName): (readonly string[])[] {
  return (selection.toolsets ?? []).filter((list) => !list.some((n) => (BY_NAME.get(n) as Toolset).tools.includes(tool)));
}

/**
 * Why a tool of the catalog is not offered on a connection whose selection
 * leaves it out, and how to get a connection that offers it: the toolset that
 * holds it, or a connection that is not read-only. Answered as an isError
 * result like any other refusal; only a name outside the catalog is an unknown tool.
 */
export function outsideSelection(selection: ToolSelection, tool: ToolName): string {
  const group = (GROUP_OF.get(tool) as Toolset).name;
  const lists = listsWithout(selection, tool);
  const why: string[] = [];
  if (lists.length) {
    const example = [...lists[0], group].join(",");
    why.push(
      `${tool} is outside this connection's toolsets (${lists.map((l) => l.join(",")).join("; ")}); it is in the toolset \`${group}\`. ` +
        `To call it, connect with toolsets that include ${group} (/mcp/x/${example}, ?toolsets=${example} or X-MCP-Toolsets: ${example}) or with none (/mcp); ` +
        `an app connected through OAuth keeps the toolsets chosen when it was allowed, so allow it again with ${group} among them.`,
    );
  }
  if (selection.readonly && WRITE_TOOLS.has(tool)) {
    why.push(`${tool} writes, and this connection is read-only (/mcp/readonly, …/readonly or X-MCP-Readonly: true); a connection without that offers it.`);
  }
  return `${why.join(" ")} tools/list names the tools this connection offers.`;
}
