import type { ToolName } from "../../src/catalog/effects.ts";
import { classOf } from "../../src/domain/columns.ts";
import type { Change, Snapshot } from "./observe.ts";
import { HOLDER, type StateName } from "./consent-situations.ts";
import type { HeldTask } from "./consent-shows.ts";

/**
 * The consent rules as judgements over rows (docs/approvals-and-claims.md,
 * C1–C5): given the rows before and after a call and who made it, every
 * change the rules forbid. Error texts are never read: a refusal that
 * changed a forbidden row is a breach, a success that changed none is not.
 */

export type Caller = { kind: "human" | "agent" | "reader"; name: string };

type Row = Record<string, unknown>;

/** Tables whose rows belong to one task (task_id): a held task's are its holder's and a person's to change. */
const TASK_PARTS = ["steps", "runs", "approvals", "task_labels", "calendar_links", "task_dependencies"] as const;

function rowOf(c: Change, snap: Snapshot): Row | undefined {
  return snap.get(c.table)?.get(c.key);
}

const substantiveColumn = (table: string, column: string | undefined) => column === undefined || classOf(table, column) !== "bookkeeping";

export interface Judged {
  breaches: string[];
  /** Whether the call changed a row of X's (its own, its parts', its place in the tree): the route reaches the held task. */
  reachedX: boolean;
}

export function judge(state: StateName, ids: Record<string, string>, caller: Caller, before: Snapshot, after: Snapshot, changes: Change[]): Judged {
  const X = ids.X;
  const xProject = [...(before.get("tasks")?.values() ?? [])].find((t) => t.id === X)?.project_id;
  const breaches: string[] = [];
  const changed = changes.filter((c) => c.effect !== "presence");
  const say = (rule: string, c: Change, what: string) =>
    breaches.push(`${rule}: ${what} (${c.op} ${c.table}${c.column ? `.${c.column}` : ""}${c.column ? ` ${JSON.stringify(c.from)} → ${JSON.stringify(c.to)}` : ""})`);
  const either = (c: Change) => ({ old: rowOf(c, before), now: rowOf(c, after) });

  // What of X the change touches: X's own row, a part of X, or X's place in the tree (a child added, moved, removed).
  const ofX = (c: Change): boolean => {
    const { old, now } = either(c);
    const rows = [old, now].filter(Boolean) as Row[];
    if (!substantiveColumn(c.table, c.column)) return false;
    // X's project archived or trashed: where X lives.
    if (c.table === "projects") return rows.some((r) => r.id === xProject) && (c.column === "archived_at" || c.column === "trash_id");
    if (c.table === "tasks") {
      if (rows.some((r) => r.id === X)) return true;
      return rows.some((r) => r.parent_id === X) && (c.op !== "update" || ["parent_id", "trash_id", "project_id"].includes(c.column as string));
    }
    if ((TASK_PARTS as readonly string[]).includes(c.table)) return rows.some((r) => r.task_id === X);
    if (c.table === "run_events") return rows.some((r) => r.run_id === ids.run);
    return false;
  };
  const reachedX = changed.some(ofX);

  if (caller.kind === "reader") {
    for (const c of changed) say("scope", c, "a read token changed a row");
    return { breaches, reachedX };
  }

  const agent = caller.kind === "agent";
  const holder = HOLDER[state];
  // C1: a held task's rows change only by its holder or a person.
  if (agent && holder !== null && holder !== caller.name) {
    for (const c of changed) if (ofX(c)) say("C1", c, `${caller.name} changed task X held by ${holder}`);
  }

  for (const c of changed) {
    const { old, now } = either(c);
    // C5: a paused agent is given nothing, by anyone.
    if (c.table === "tasks" && (c.op === "insert" || c.column === "assignee") && now?.assignee === "idle") say("C5", c, "a task was given to the paused agent idle");
    if (!agent) continue;
    // C2: consent fields are a person's.
    if (c.table === "tasks" && c.column === "auto_ok") say("C2", c, "an agent changed a task's auto-OK");
    if (c.table === "tasks" && c.op === "insert" && now?.auto_ok === 1 && !inheritsAutoOk(now, before)) say("C2", c, "an agent created a task with auto-OK no person chose");
    if (c.table === "projects" && (c.column === "default_auto_ok" || (c.op === "insert" && now?.default_auto_ok != null))) say("C2", c, "an agent set a project's default auto-OK");
    if (c.table === "accounts" && substantiveColumn(c.table, c.column)) say("C2", c, "an agent changed the account's settings");
    if (c.table === "agents" && (c.column === "paused_at" || c.column === "paused_by")) say("C2", c, "an agent paused or resumed an agent");
    if (c.table === "tokens" && c.column === "revoked_at") say("C2", c, "an agent revoked a token");
    // C3: decisions are a person's; the agent that asked may withdraw its own request.
    if (c.table === "approvals" && c.column === "status" && c.from === "pending" && !(c.to === "withdrawn" && old?.requested_by === caller.name)) {
      say("C3", c, `${caller.name} closed a request as ${String(c.to)}`);
    }
    // C4: agents do not undo what a person decided.
    if (state === "approved_by_person" && c.table === "tasks" && c.column === "status" && old?.id === X) say("C4", c, "an agent undid the person's approval");
    if (state === "trashed_by_person" && ((c.table === "trash" && c.op === "delete" && old?.id === ids.item) || (c.table === "tasks" && c.column === "trash_id" && old?.id === X))) {
      say("C4", c, "an agent restored what the person trashed");
    }
    if (state === "archived_by_person" && c.table === "projects" && c.column === "archived_at" && old?.id === ids.P) say("C4", c, "an agent unarchived the person's project");
    // C4: a person's gate is lifted only by a person, whoever holds the waiting task (a link of no recorded author counts as the person's).
    if (c.table === "task_dependencies" && c.op === "delete" && (old?.added_by ?? "human") === "human") say("C4", c, `${caller.name} lifted a dependency a person added`);
  }
  return { breaches, reachedX };
}

/** A new task's auto-OK as a person chose it before: its project's default, else the account's; its parent's; its series'. */
function inheritsAutoOk(task: Row, before: Snapshot): boolean {
  const project = [...(before.get("projects")?.values() ?? [])].find((p) => p.id === task.project_id);
  const account = [...(before.get("accounts")?.values() ?? [])][0];
  const byDefault = project?.default_auto_ok ?? account?.default_auto_ok ?? 0;
  const tasks = [...(before.get("tasks")?.values() ?? [])];
  const parent = tasks.find((t) => t.id === task.parent_id);
  const series = task.series_id ? tasks.find((t) => t.series_id === task.series_id && t.id !== task.id) : undefined;
  return byDefault === 1 || parent?.auto_ok === 1 || series?.auto_ok === 1;
}

/**
 * Write tools open to every caller on a held task: comments (C1: the
 * holder's comment renews its lease, anyone else's changes nothing of the
 * task). Every other write that names a held task is its holder's and a
 * person's: the catalog's claim_guarded set, and the tools that reach what a
 * held task shows through other rows (rename_label, restore_from_trash).
 */
export const OPEN_TO_ALL: ReadonlySet<ToolName> = new Set(["comment_on_task"]);

/** Every string an argument holds, arrays flattened; `except` leaves arguments out. */
function argValues(args: Record<string, unknown>, except: string[] = []): string[] {
  return Object.entries(args)
    .filter(([k]) => !except.includes(k))
    .flatMap(([, v]) => (Array.isArray(v) ? v : [v]))
    .filter((v): v is string => typeof v === "string");
}

/**
 * What a call names as the task it acts on or under. `depends_on_id` names
 * the task another one waits on: making a task wait on a held task, or
 * lifting that wait, is the waiting task's gate (the held task shows it in
 * `blocks`, which stays open to others' work).
 */
const actsOn = (args: Record<string, unknown>) => new Set(argValues(args, ["depends_on_id"]));

/** The records of a task (by table) a call can name instead of the task. */
const TASK_RECORDS = ["steps", "runs", "approvals", "calendar_links", "comments"];

/**
 * The tasks a call's arguments reach, read from the rows before it, in the
 * order a refusal names them by (docs/approvals-and-claims.md, C1): the
 * tasks it names (a task, the task of a step, run, request, link or comment
 * it names, a trash item's task); the tasks below them; their parents and
 * ancestors (a subtask lives in its top-level parent's project) and what
 * they wait on (the gate a completion is stopped by); the tasks of a
 * project, a label or a trash item it names.
 */
export function reachedTasks(args: Record<string, unknown>, before: Snapshot): { named: Set<string>; below: Set<string>; above: Set<string>; grouped: Set<string> } {
  const rows = (table: string) => [...(before.get(table)?.values() ?? [])];
  const tasks = rows("tasks");
  const byId = new Map(tasks.map((t) => [String(t.id), t]));
  const values = argValues(args);
  const named = new Set<string>();
  for (const v of values) {
    if (byId.has(v)) named.add(v);
    for (const table of TASK_RECORDS) for (const r of rows(table)) if (r.id === v || (r.trash_id != null && r.trash_id === v)) named.add(String(r.task_id));
    for (const item of rows("trash")) if (item.id === v && byId.has(String(item.target_id))) named.add(String(item.target_id));
  }
  const below = new Set<string>();
  const down = (id: string) => {
    for (const c of tasks) if (c.parent_id === id && !below.has(String(c.id))) (below.add(String(c.id)), down(String(c.id)));
  };
  const above = new Set<string>();
  for (const id of named) {
    down(id);
    for (let p = byId.get(id)?.parent_id; p != null && !above.has(String(p)); p = byId.get(String(p))?.parent_id) above.add(String(p));
    for (const d of rows("task_dependencies")) if (d.task_id === id) above.add(String(d.depends_on_id));
  }
  const grouped = new Set<string>();
  for (const v of values) {
    for (const t of tasks) if (t.project_id === v || t.trash_id === v) grouped.add(String(t.id));
    for (const l of rows("task_labels")) if (l.label_id === v) grouped.add(String(l.task_id));
  }
  return { named, below, above, grouped };
}

const TASK_ID = /tsk_[0-9a-z]{16}/g;

/**
 * What the call answered, judged: a non-holder agent's write that names a
 * held task and answers ok is a breach even when it changed nothing (it must
 * be refused, naming the holder, never answered as if it acted); and a
 * refusal names only tasks the call's arguments reached.
 */
export function judgeAnswer(
  tool: ToolName,
  caller: Caller,
  args: Record<string, unknown>,
  answer: { isError: boolean; text: string },
  held: HeldTask[],
  before: Snapshot,
): string[] {
  const breaches: string[] = [];
  const named = actsOn(args);
  if (!answer.isError && caller.kind === "agent" && !OPEN_TO_ALL.has(tool)) {
    for (const h of held) {
      if (h.holder !== caller.name && named.has(h.id)) breaches.push(`answer: ${caller.name} was answered ok on task ${h.id} held by ${h.holder} (it must be refused, naming the holder)`);
    }
  }
  if (answer.isError) {
    const tiers = reachedTasks(args, before);
    const ids = [...new Set(answer.text.match(TASK_ID) ?? [])];
    const reached = new Set(Object.values(tiers).flatMap((t) => [...t]));
    const strays = ids.filter((id) => !reached.has(id));
    if (strays.length) breaches.push(`refusal: names ${strays.join(", ")}, which the call did not reach (${answer.text.slice(0, 200)})`);
    // The held tasks it names come from the nearest route only: the tasks named, else those below, else above, else the project's, label's or item's.
    const heldIds = new Set(held.map((h) => h.id));
    const nearest = [tiers.named, tiers.below, tiers.above, tiers.grouped].map((t) => [...t].filter((id) => heldIds.has(id))).find((t) => t.length) ?? [];
    const far = ids.filter((id) => heldIds.has(id) && reached.has(id) && !nearest.includes(id));
    if (far.length) breaches.push(`refusal: names held ${far.join(", ")} beside the nearest held ${nearest.join(", ")} (${answer.text.slice(0, 200)})`);
  }
  return breaches;
}
