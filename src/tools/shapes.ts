import { z } from "zod";
import { PRIORITIES, TASK_STATUSES } from "./schemas.ts";
import { STEP_STATUSES } from "../domain/vocabulary.ts";
import { RUN_EVENT_KINDS, RUN_STATUSES } from "../db/runs.ts";

/** Result shapes shared by several tool groups. */
export const taskStatus = z.enum(TASK_STATUSES);
export const stepStatus = z.enum(STEP_STATUSES);
export const runStatus = z.enum(RUN_STATUSES);
export const runEventKind = z.enum(RUN_EVENT_KINDS);

/** A person of the account, as outputs name one: the id and the name shown for them now. */
export const personShape = z.object({ id: z.string(), name: z.string() });

/** A task named in another record's answer. */
export const taskRef = z.object({ id: z.string(), title: z.string(), status: taskStatus });

export const taskShape = z.object({
  id: z.string(),
  project_id: z.string().nullable(),
  parent_id: z.string().nullable(),
  title: z.string(),
  notes: z.string(),
  status: z.enum(TASK_STATUSES),
  priority: z.enum(PRIORITIES),
  due_at: z.string().nullable(),
  estimate_minutes: z.number().nullable(),
  assignee: z.string().nullable(),
  assignee_person: personShape.nullable().describe("the person, when `human`"),
  auto_ok: z.boolean().describe("agents complete it without sign-off"),
  blocked_reason: z.string().nullable(),
  snoozed_until: z.string().nullable(),
  version: z.number().describe("pass as expected_version to update_task"),
  created_by: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
  completed_at: z.string().nullable(),
  recurrence: z.string().nullable().describe("RRULE, in the account's time zone"),
  series_id: z.string().nullable(),
});

export const taskList = z.object({ items: z.array(taskShape), next_cursor: z.string().nullable() });

export const CLAIM_EXPIRES = z
  .string()
  .nullable()
  .describe("when an agent's claim lapses unless renewed; null: a person's claim or none");

/** What every delete that moves a record to the trash returns, whatever the record. */
export const trashedShape = z.object({
  trash_id: z.string().describe("the trash item; restore_from_trash with it brings it all back"),
  purge_after: z.string().describe("when the trash item is purged for good"),
  item_count: z.number().describe("records in the item: the record and what went with it (subtasks, a project's tasks)"),
  already_in_trash: z.boolean().describe("true when it was already in the trash: nothing changed, the answer names its item"),
});

/**
 * Where a person decides an approval (the console's task page): the MCP server
 * sets it from the origin it serves; a call made from the console has none.
 */
export const decideUrl = z.string().nullable().default(null).describe("the Taskgate page where a person reads it and approves or rejects");
export const waitingDecideUrl = z.string().nullable().default(null).describe("while an approval waits: the Taskgate page where a person decides it");

/** A task another waits on: in the trash it still counts as unfinished, and names the item that brings it back. */
export const waitsOnRef = z.object({
  id: z.string(),
  title: z.string(),
  status: taskStatus,
  trash_id: z.string().nullable().describe("the trash item holding it (restore_from_trash brings it back), or null"),
});

/** A row a call names, as a person recognises it (a dry run's and a pending action's `touches`). */
export const reachedRow = z.object({
  kind: z.string().describe("project, task, step, comment, run, approval, label, calendar_link or trash_item"),
  id: z.string(),
  name: z.string(),
  project_id: z.string().nullable(),
  project_name: z.string().nullable(),
  status: z.string().nullable(),
  subtasks: z.number().nullable(),
});
