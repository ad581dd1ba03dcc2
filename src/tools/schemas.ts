import { parseScope, scopeColumn } from "../domain/scopes.ts";
import { z } from "zod";
import { PRIORITIES, TASK_STATUSES } from "../domain/vocabulary.ts";

export { PRIORITIES, TASK_STATUSES };
import { DATE_EXAMPLE, parseCalendarDate, parseIsoTime, TIME_EXAMPLE, type Parsed } from "../domain/dates.ts";
import { canonicalTimeZone } from "../domain/zoned-time.ts";

/**
 * Shared argument and result pieces, with the limits of architecture.md.
 * `detail` (see src/mcp/json-schema.ts) words an argument error quotes; they
 * are not announced where the field's name, format or pattern says it.
 */
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
    .meta({ detail: `${what} id (${prefix}_…)` });

export const taskId = id("tsk", "task");
export const projectId = id("prj", "project");
export const stepId = id("stp", "step");
export const commentId = id("cmt", "comment");
export const labelId = id("lbl", "label");
export const runId = id("run", "run");
export const approvalId = id("apr", "approval");

export const title = z.string().trim().min(1, "must not be empty").max(LIMITS.title);
export const longText = z.string().max(LIMITS.text);
/** The years a date argument may name: a year 0000 or 9999 is a typo, never a plan. */
export const DATE_YEARS = { first: 1970, last: 2200 } as const;

/** A zod check from one of the domain's parsers: the parser's reason becomes the field's message; a date must fall in DATE_YEARS. */
function parsedBy(parse: (text: string) => Parsed<string>) {
  return (text: string, ctx: z.core.$RefinementCtx<string>) => {
    const r = parse(text);
    if (!r.ok) ctx.addIssue({ code: "custom", message: r.problem, input: text });
    else if (+r.value.slice(0, 4) < DATE_YEARS.first || +r.value.slice(0, 4) > DATE_YEARS.last) {
      ctx.addIssue({
        code: "custom",
        message: `${text} is outside the years ${DATE_YEARS.first}–${DATE_YEARS.last} (UTC); send a date from ${DATE_YEARS.first}-01-01 to ${DATE_YEARS.last}-12-31`,
        input: text,
      });
    }
  };
}

/**
 * An ISO 8601 time with a zone that exists (no February 30th, no hour 24, no
 * offset +25:00). Checked in code rather than by a long pattern, to keep
 * tools/list small; `toUtc` turns it into the stored form.
 */
export const isoTime = z
  .string()
  .max(40)
  .superRefine(parsedBy(parseIsoTime))
  .meta({ format: "date-time", detail: `ISO 8601 time, 1970–2200, e.g. ${TIME_EXAMPLE}` });

/** A calendar date, YYYY-MM-DD, that exists. */
export const calendarDate = z
  .string()
  .max(10)
  .superRefine(parsedBy(parseCalendarDate))
  .meta({ format: "date", detail: `date, YYYY-MM-DD, 1970–2200, e.g. ${DATE_EXAMPLE}` });

/** An IANA time zone name that Intl knows (`Europe/Berlin`, `UTC`); offsets like +01:00 are not zones. */
export const timeZoneName = z
  .string()
  .min(1)
  .max(64)
  .superRefine((name, ctx) => {
    if (!canonicalTimeZone(name)) {
      ctx.addIssue({ code: "custom", message: `"${name}" is not an IANA time zone; use a name like Europe/Berlin, America/New_York or UTC`, input: name });
    }
  })
  .meta({ detail: "IANA time zone, e.g. Europe/Berlin or America/New_York" });

export const limit = z.number().int().min(1).max(LIMITS.pageMax).default(LIMITS.pageDefault);
export const cursor = z.string().max(500).optional().meta({ detail: "next_cursor of the previous page" });
export const idempotencyKey = z
  .string()
  .min(1)
  .max(200)
  .optional()
  .meta({ detail: "retry key: a repeated call with the same key returns the first result and writes nothing new" });

export const nextCursor = z.string().nullable().describe("pass as cursor for the next page; null when this is the last");

export const priority = z.enum(PRIORITIES);
export const taskStatus = z.enum(TASK_STATUSES);

/** `human` or an agent's name (lowercase letters, digits, _ . -). */
export const actorNameArg = z.string().regex(/^[a-z0-9][a-z0-9_.-]{0,62}$/, "expected `human` or an agent's name (lowercase letters, digits, _ . -)");

export const assigneeName = actorNameArg.describe("`human` or an agent's name");

/** Times are stored as ISO 8601 UTC with milliseconds; `time` has passed `isoTime`. */
export function toUtc(time: string): string {
  const r = parseIsoTime(time);
  if (!r.ok) throw new Error(`toUtc got an unchecked time: ${r.problem}`);
  return r.value;
}

/** A task's scope (src/domain/scopes.ts): up to 20 paths, globs or names; checked whole, with the first problem named. */
export const scopeArg = z
  .array(z.string())
  .superRefine((areas, c) => {
    const r = parseScope(areas);
    if ("problem" in r) c.addIssue({ code: "custom", message: r.problem });
  })
  .meta({ detail: "areas it works in: paths, globs (src/db/**) or names; [] clears" });

/** The scope column for a checked scope argument. */
export const scopeValue = (areas: string[]): string | null => {
  const r = parseScope(areas);
  return "areas" in r ? scopeColumn(r.areas) : null;
};
