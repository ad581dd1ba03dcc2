import { z } from "zod";
import { taskStatus } from "./shapes.ts";
import { invalid } from "../domain/errors.ts";
import { ID_PREFIX, newId } from "../domain/ids.ts";
import { actorName, personRef } from "../domain/principal.ts";
import { nextOccurrence, parseRule, RecurrenceError, startSchedule, type RecurrenceProblem, type Schedule } from "../domain/recurrence.ts";
import type { TaskState } from "../db/lifecycle.ts";
import { insertOccurrence, occurrenceActivity, SERIES_SHOWN, type OccurrenceRow } from "../db/series.ts";
import type { Approval } from "../db/approvals.ts";
import { newTaskValue, scheduleOf, toTask, type NewTask, type Task, type TaskRow } from "../db/tasks.ts";
import type { ToolContext } from "../catalog/tool.ts";
import { CREATED_OCCURRENCE, NEXT_OCCURRENCE, SERIES_ENDS } from "../db/summaries.ts";

export const recurrenceRule = z
  .string()
  .trim()
  .min(1, "must not be empty")
  .max(300)
  .meta({
    detail:
      "repeat rule, RFC 5545 RRULE subset (FREQ=DAILY|WEEKLY|MONTHLY|YEARLY; INTERVAL, BYDAY, BYMONTHDAY, COUNT, UNTIL), in the account's time zone, starting at due_at (required) and keeping its local time. Completing an occurrence creates the next; a day past a month's end falls on its last day",
  });

/** The problems of a rule (and of the due time it starts from) in one answer, each naming its field and part. */
function recurrenceRefusal(e: RecurrenceError) {
  const lines = e.problems.map((p) => (p.part === "due_at" ? `due_at: ${p.message}` : `recurrence: ${p.part}: ${p.message}`));
  if (lines.length === 1) return invalid(`${lines[0]}.`);
  return invalid(`${lines.length} problems with the recurrence; fix each and call again:\n${lines.map((l) => `- ${l}`).join("\n")}`);
}

/** A new schedule whose first occurrence is the task due at `dueAt`; every mistake of the caller's is named at once. */
export function scheduleFor(rule: string, timeZone: string, dueAt: string | null): Schedule {
  const due: RecurrenceProblem[] = [];
  if (!dueAt) {
    due.push({ part: "due_at", message: "a recurring task needs one: the first occurrence's due time (its local time of day is kept for every occurrence); pass due_at too" });
  } else if (dueAt < "1970") {
    due.push({ part: "due_at", message: "a recurring task's first due time must be in 1970 or later" });
  }
  try {
    if (due.length) parseRule(rule, due);
    return startSchedule(rule, timeZone, Date.parse(dueAt as string));
  } catch (e) {
    if (e instanceof RecurrenceError) throw recurrenceRefusal(e);
    throw e;
  }
}

export const newSeriesId = () => newId(ID_PREFIX.series);

export interface FollowUp {
  /** What the completed occurrence's transition also sets: it gives up the schedule. */
  change: { recurrence?: null };
  statements: D1PreparedStatement[];
  next: Task | null;
  summary: string;
}

/**
 * What completing a recurring task's live occurrence adds to the batch: the
 * next occurrence (due at the schedule's next local time after both its slot
 * and now), or the end of the series. Nothing for a task that doesn't recur.
 */
export function followUp(ctx: ToolContext, t: TaskRow, timeZone: string): FollowUp {
  if (!t.recurrence) return { change: {}, statements: [], next: null, summary: "" };
  const schedule = scheduleOf(t.recurrence);
  const dueMs = t.due_at ? Date.parse(t.due_at) : ctx.nowMs;
  const occurrence = nextOccurrence(schedule, timeZone, Math.max(dueMs, ctx.nowMs));
  if (!occurrence) return { change: { recurrence: null }, statements: [], next: null, summary: SERIES_ENDS.text({ series: t.series_id as string, rule: schedule.rule }) };
  const p = ctx.principal;
  const next: NewTask = {
    id: newId(ID_PREFIX.task),
    accountId: p.accountId,
    projectId: t.project_id,
    parentId: t.parent_id,
    title: t.title,
    notes: t.notes,
    priority: t.priority,
    dueAt: new Date(occurrence.dueMs).toISOString(),
    estimateMinutes: t.estimate_minutes,
    assignee: t.assignee,
    // The next occurrence is the same person's, as this one was.
    assigneePerson: personRef(t.assignee_person_id, t.assignee_person_name),
    autoOk: t.auto_ok === 1,
    createdBy: t.created_by,
    now: ctx.now,
    schedule: { ...schedule, slot: occurrence.slot, index: occurrence.index },
    seriesId: t.series_id,
  };
  const activity = occurrenceActivity(ctx.db, {
    accountId: p.accountId,
    tokenId: p.tokenId,
    actor: actorName(p),
    tool: "create_task",
    taskId: next.id,
    personId: p.person?.id ?? null,
    summary: CREATED_OCCURRENCE.text({ title: t.title, index: occurrence.index, series: t.series_id as string, rule: schedule.rule, after: t.id, due: String(next.dueAt) }),
    now: ctx.now,
  });
  return {
    change: { recurrence: null },
    statements: [...insertOccurrence(ctx.db, next, t.id), activity],
    next: newTaskValue(next),
    summary: NEXT_OCCURRENCE.text({ task: next.id, due: String(next.dueAt) }),
  };
}

export const recurrenceView = z
  .object({
    rule: z.string(),
    time_zone: z.string(),
    occurrence: z.number().describe("this occurrence's number in the schedule (COUNT counts them)"),
    next_due_at: z.string().nullable().describe("due time of the next occurrence if this one is completed now; null: the series ends with it"),
  })
  .nullable();

export const seriesView = z
  .object({
    id: z.string(),
    occurrences: z
      .array(z.object({ id: z.string(), status: taskStatus, due_at: z.string().nullable(), completed_at: z.string().nullable() }))
      .describe(`the latest ${SERIES_SHOWN}, newest first`),
    total: z.number(),
  })
  .nullable();

export function describeRecurrence(t: TaskRow, timeZone: string, nowMs: number): z.infer<typeof recurrenceView> {
  if (!t.recurrence) return null;
  const s = scheduleOf(t.recurrence);
  const dueMs = t.due_at ? Date.parse(t.due_at) : nowMs;
  const next = nextOccurrence(s, timeZone, Math.max(dueMs, nowMs));
  return { rule: s.rule, time_zone: timeZone, occurrence: s.index, next_due_at: next ? new Date(next.dueMs).toISOString() : null };
}

export function describeSeries(t: TaskRow, rows: OccurrenceRow[], total: number): z.infer<typeof seriesView> {
  return t.series_id ? { id: t.series_id, occurrences: rows, total } : null;
}

/**
 * What a completion answered, for a repeat that finds the task done: the
 * approval it decided and the next occurrence it created (each made at the
 * time of the completion), so the repeat answers as the first call did.
 */
export function completedWith({ task: t, latest, next }: TaskState): { approval: Approval | null; next_occurrence: Task | null } {
  return { approval: latest && latest.decided_at === t.completed_at ? latest : null, next_occurrence: next ? toTask(next) : null };
}
