import { z } from "zod";

/** Shared argument and result pieces, with the limits of architecture.md. */
export const LIMITS = {
  title: 500,
  text: 20_000,
  batch: 50,
  pageDefault: 25,
  pageMax: 100,
} as const;

export const id = (prefix: string, what: string) =>
  z
    .string()
    .regex(new RegExp(`^${prefix}_[0-9a-z]{16}$`), `expected a ${what} id like ${prefix}_0123456789abcdef`)
    .describe(`${what} id (${prefix}_…)`);

export const taskId = id("tsk", "task");
export const projectId = id("prj", "project");
export const stepId = id("stp", "step");
export const commentId = id("cmt", "comment");
export const labelId = id("lbl", "label");
export const runId = id("run", "run");
export const approvalId = id("apr", "approval");

export const title = z.string().trim().min(1, "must not be empty").max(LIMITS.title);
export const longText = z.string().max(LIMITS.text);
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** An ISO 8601 time with a zone. Checked in code rather than by a long pattern, to keep tools/list small. */
export const isoTime = z
  .string()
  .max(40)
  .refine((s) => ISO_TIME.test(s) && !Number.isNaN(Date.parse(s)), "expected an ISO 8601 time with a zone, e.g. 2026-12-24T18:00:00Z")
  .meta({ format: "date-time" })
  .describe("ISO 8601 time, e.g. 2026-12-24T18:00:00Z");

export const limit = z.number().int().min(1).max(LIMITS.pageMax).default(LIMITS.pageDefault).describe("page size, 1–100 (default 25)");
export const cursor = z.string().max(500).optional().describe("next_cursor of the previous page");
export const idempotencyKey = z
  .string()
  .min(1)
  .max(200)
  .optional()
  .describe("retry key: a repeated call with the same key returns the first result and writes nothing new");

export const nextCursor = z.string().nullable().describe("pass as cursor for the next page; null when this is the last");

export const PRIORITIES = ["low", "normal", "high", "urgent"] as const;
export const priority = z.enum(PRIORITIES);
export const TASK_STATUSES = ["open", "in_progress", "blocked", "awaiting_approval", "done", "cancelled"] as const;
export const taskStatus = z.enum(TASK_STATUSES);

export const assigneeName = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_.-]{0,62}$/, "expected `human` or an agent's name (lowercase letters, digits, _ . -)")
  .describe("`human` for the account's person, or an agent's name");

/** Times are stored as ISO 8601 UTC with milliseconds. */
export function toUtc(time: string): string {
  return new Date(time).toISOString();
}
