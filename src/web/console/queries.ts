/**
 * From a page's query string to the read it makes. Anything malformed is
 * dropped rather than refused: a filter link must never break the page.
 */
import type { ActivityFilter } from "../../db/activity.ts";
import type { CursorKey } from "../../db/cursor.ts";
import { decodeCursor } from "../../db/cursor.ts";
import type { TaskListFilter } from "../../db/task-views.ts";
import type { SearchQuery } from "../../db/task-search.ts";
import { searchWords } from "../../domain/search-terms.ts";
import { ToolError } from "../../domain/errors.ts";
import { TASK_STATUSES } from "../../domain/vocabulary.ts";
import { LIMITS } from "../../tools/schemas.ts";
import { DUE_CHOICES, type DueChoice, type TaskQuery } from "./pages/tasks.tsx";

/** Tasks per page: the tools' default page, so a page of whole 500-character titles stays small. */
export const TASKS_PAGE = LIMITS.pageDefault;
const ACTIVITY_PAGE = 50;
const NAME = /^[a-z0-9][a-z0-9_.-]{0,62}$/;
const PROJECT_ID = /^prj_[0-9a-z]{16}$/;
const UNFINISHED = ["open", "in_progress", "blocked", "awaiting_approval"];

function pick(raw: string | undefined, ok: (v: string) => boolean): string {
  const v = (raw ?? "").trim();
  return v && ok(v) ? v : "";
}

export function taskQuery(q: Record<string, string>): TaskQuery {
  return {
    project: pick(q.project, (v) => PROJECT_ID.test(v)),
    status: pick(q.status, (v) => v === "unfinished" || (TASK_STATUSES as readonly string[]).includes(v)),
    assignee: pick(q.assignee, (v) => v === "none" || NAME.test(v)),
    label: pick(q.label, (v) => v.length <= 100),
    due: pick(q.due, (v) => Object.hasOwn(DUE_CHOICES, v)) as DueChoice | "",
    q: pick(q.q, (v) => v.length <= 500),
  };
}

export function safeCursor(raw: string | undefined): CursorKey | null {
  try {
    return decodeCursor(raw);
  } catch {
    return null;
  }
}

/** Search words of a query, or why it searches for nothing (punctuation only): the list is shown instead, with that message. */
function searchOf(text: string): { words: string[] } | { problem: string } {
  try {
    return { words: searchWords(text) };
  } catch (e) {
    if (e instanceof ToolError) return { problem: `Search: ${e.message.replace(/^query: /, "")} Showing the tasks without a search.` };
    throw e;
  }
}

/** The list filter (or the search) a task query asks for, and why a search was not made. */
export function tasksRead(q: TaskQuery, cursor: string | undefined, now: string): { filter: TaskListFilter; search: Omit<SearchQuery, "accountId"> | null; problem: string | null } {
  const nowMs = Date.parse(now);
  const statuses = q.status === "unfinished" || (q.due && !q.status) ? UNFINISHED : q.status ? [q.status] : undefined;
  const days = q.due === "week" ? 7 : q.due === "month" ? 30 : 0;
  const filter: TaskListFilter = {
    projectId: q.project || undefined,
    statuses,
    label: q.label || undefined,
    assignee: q.assignee && q.assignee !== "none" ? q.assignee : undefined,
    unassigned: q.assignee === "none" || undefined,
    dueBefore: q.due === "overdue" ? now : days ? new Date(nowMs + days * 86_400_000).toISOString() : undefined,
    after: safeCursor(cursor),
    limit: TASKS_PAGE,
  };
  const searched = q.q ? searchOf(q.q) : null;
  const search = searched && "words" in searched ? { words: searched.words, projectId: q.project || undefined, statuses, offset: 0, limit: TASKS_PAGE } : null;
  return { filter, search, problem: searched && "problem" in searched ? searched.problem : null };
}

/** The task page's search for a task to wait on (`?dep=`): what was typed, its words, or why it finds nothing. */
export interface DepSearch {
  text: string;
  words: string[] | null;
  problem: string | null;
}

export function depSearch(raw: string | undefined): DepSearch {
  const text = (raw ?? "").trim().slice(0, 500);
  if (!text) return { text, words: null, problem: null };
  const searched = searchOf(text);
  return "words" in searched
    ? { text, words: searched.words, problem: null }
    : { text, words: null, problem: "Give at least one word or number of the task's title." };
}

export function activityFilter(q: Record<string, string>, after: CursorKey | null): { query: Record<"actor" | "tool" | "target", string>; filter: ActivityFilter } {
  const query = {
    actor: pick(q.actor, (v) => NAME.test(v)),
    tool: pick(q.tool, (v) => /^[a-z_]{1,40}$/.test(v)),
    target: pick(q.target, (v) => /^[a-z]{3}_[0-9a-z]{16}$/.test(v)),
  };
  return {
    query,
    filter: { actor: query.actor || undefined, tool: query.tool || undefined, targetId: query.target || undefined, after, limit: ACTIVITY_PAGE },
  };
}
