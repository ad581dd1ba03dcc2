import { z } from "zod";
import { conflict, invalid } from "../domain/errors.ts";
import { ID_PREFIX, newId } from "../domain/ids.ts";
import { addDays, dayStartMs, localDate } from "../domain/zoned-time.ts";
import { selectTimeZone } from "../db/series.ts";
import {
  deleteLinkOf, insertLink, linkCondition, linkSummary, selectLinkOf, selectLinks, selectUnlinkEntries, tasksDueIn, unlinkedLinkIn, unlinkedSummarySql,
  type AgendaTaskRow, type LinkKey, type LinkRow,
} from "../db/calendar.ts";
import { decodeCursor, page } from "../db/cursor.ts";
import { requireTask, selectTask, throwTaskMissing, type TaskRow } from "../db/tasks.ts";
import { AGAIN, defineTool, named, type AnyTool } from "../catalog/tool.ts";
import { readBatch } from "../db/batch.ts";
import { LINKED_EVENT } from "../db/summaries.ts";
import { calendarDate, cursor, id, isoTime, limit, PRIORITIES, taskId, title, toUtc } from "./schemas.ts";
import { taskStatus } from "./shapes.ts";

const provider = z
  .string()
  .regex(/^[a-z][a-z0-9]{1,19}$/, "expected a short lowercase word, e.g. google, outlook or ical")
  .describe("e.g. google, outlook, ical");
const eventId = z.string().min(1).max(1024).meta({ detail: "the event's id in that calendar" });
const linkId = id("cal", "calendar link");

const httpsUrl = z
  .string()
  .max(2048)
  .refine((s) => {
    try {
      const u = new URL(s);
      return u.protocol === "https:" && u.hostname !== "";
    } catch {
      return false;
    }
  }, "expected an https:// URL")
  .meta({ format: "uri", detail: "https link to the event" });

const linkShape = z.object({
  id: z.string(),
  task_id: z.string(),
  task_title: z.string(),
  provider: z.string(),
  event_id: z.string(),
  title: z.string(),
  starts_at: z.string(),
  ends_at: z.string(),
  url: z.string().nullable(),
  created_at: z.string(),
});

const listLinks = defineTool({
  name: "list_calendar_links",
  description: "Calendar events linked to tasks, by start: of one task, or overlapping from–to, or both.",
  input: z.strictObject({
    task_id: taskId.optional(),
    from: isoTime.optional().meta({ detail: "range start (with to)" }),
    to: isoTime.optional().meta({ detail: "range end, exclusive (with from)" }),
    limit,
    cursor,
  }),
  output: z.object({ items: z.array(linkShape), next_cursor: z.string().nullable() }),
  async handler(ctx, args) {
    const a = ctx.principal.accountId;
    if ((args.from === undefined) !== (args.to === undefined)) throw invalid("Pass both from and to for a range, or neither.");
    if (!args.task_id && !args.from) throw invalid("Pass task_id, or a range with from and to (or both).");
    const from = args.from ? toUtc(args.from) : undefined;
    const to = args.to ? toUtc(args.to) : undefined;
    if (from && to && to <= from) throw invalid("to: must be after from.");
    if (args.task_id) await requireTask(ctx.db, a, args.task_id);
    const { results } = await selectLinks(ctx.db, a, { taskId: args.task_id, from, to }, decodeCursor(args.cursor), args.limit).all<LinkRow>();
    return page(results, args.limit, (r) => ({ k: r.starts_at, id: r.id }));
  },
});

const agendaTask = z.object({
  id: z.string(),
  title: z.string(),
  status: taskStatus,
  priority: z.enum(PRIORITIES),
  due_at: z.string(),
  assignee: z.string().nullable(),
  project_id: z.string().nullable(),
});

const AGENDA_ROWS = 500;

const getAgenda = defineTool({
  name: "get_agenda",
  description: "Up to 14 days from date in the account's time zone: per day the open tasks due and linked events.",
  input: z.strictObject({
    date: calendarDate.optional().describe("first day (default: today)"),
    days: z.number().int().min(1).max(14).default(1),
    include_snoozed: z.boolean().default(false),
  }),
  output: z.object({
    time_zone: z.string(),
    days: z.array(
      z.object({
        date: z.string(),
        starts_at: z.string().describe("the day's first instant, UTC"),
        ends_at: z.string().describe("the next day's first instant, UTC"),
        tasks: z.array(agendaTask),
        events: z.array(linkShape),
      }),
    ),
    truncated: z.boolean().describe(`true when more than ${AGENDA_ROWS} tasks or events fell in the range; ask for fewer days`),
  }),
  async handler(ctx, args) {
    const { db, principal: p } = ctx;
    // One batch: the account's time zone, and the rows of the widest range the days can span in any zone
    // (local midnights lie within UTC-14h..UTC+12h of UTC midnight); the zone's days are then cut from those.
    // Only when that range holds more rows than a read may return are the zone's exact bounds asked again.
    const HOUR = 3_600_000;
    const utcToday = localDate("UTC", ctx.nowMs);
    const earliest = args.date ?? addDays(utcToday, -1);
    const latest = addDays(args.date ?? addDays(utcToday, 1), args.days);
    const wide = { from: new Date(dayStartMs("UTC", earliest) - 15 * HOUR).toISOString(), to: new Date(dayStartMs("UTC", latest) + 13 * HOUR).toISOString() };
    const WIDE_ROWS = 2 * AGENDA_ROWS + 1;
    const read = (range: { from: string; to: string }, rows: number) => ({
      tasks: tasksDueIn(db, p.accountId, range.from, range.to, { includeSnoozed: args.include_snoozed, now: ctx.now, limit: rows + 1 }),
      links: selectLinks(db, p.accountId, range, null, rows),
    });
    const wideRead = await readBatch(db, { zone: selectTimeZone(db, p.accountId), ...read(wide, WIDE_ROWS) });
    const zone = (wideRead.zone as { time_zone: string }[]).at(0)?.time_zone ?? "UTC";
    const first = args.date ?? localDate(zone, ctx.nowMs);
    const bounds = Array.from({ length: args.days + 1 }, (_, i) => dayStartMs(zone, addDays(first, i)));
    const from = new Date(bounds[0]).toISOString();
    const to = new Date(bounds[args.days]).toISOString();
    let taskRows = wideRead.tasks as AgendaTaskRow[];
    let linkRows = wideRead.links as LinkRow[];
    if (taskRows.length > WIDE_ROWS || linkRows.length > WIDE_ROWS) {
      const exact = await readBatch(db, read({ from, to }, AGENDA_ROWS));
      taskRows = exact.tasks as AgendaTaskRow[];
      linkRows = exact.links as LinkRow[];
    } else {
      taskRows = taskRows.filter((t) => t.due_at >= from && t.due_at < to).slice(0, AGENDA_ROWS + 1);
      linkRows = linkRows.filter((l) => l.starts_at < to && (l.ends_at > from || l.starts_at >= from)).slice(0, AGENDA_ROWS + 1);
    }
    const truncated = taskRows.length > AGENDA_ROWS || linkRows.length > AGENDA_ROWS;
    const days = Array.from({ length: args.days }, (_, i) => {
      const start = bounds[i];
      const end = bounds[i + 1];
      return {
        date: addDays(first, i),
        starts_at: new Date(start).toISOString(),
        ends_at: new Date(end).toISOString(),
        tasks: taskRows
          .slice(0, AGENDA_ROWS)
          .filter((t) => Date.parse(t.due_at) >= start && Date.parse(t.due_at) < end)
          .map((t) => ({ ...t, priority: PRIORITIES[t.priority] ?? "normal" })),
        events: linkRows.slice(0, AGENDA_ROWS).filter((l) => {
          const s = Date.parse(l.starts_at);
          const e = Date.parse(l.ends_at);
          return s < end && (e > start || s >= start);
        }),
      };
    });
    return { time_zone: zone, days, truncated };
  },
});

const linkEvent = defineTool({
  name: "link_calendar_event",
  description: "Link a calendar event to a task; the same event with other details is refused (unlink it first). Returns link.",
  input: z.strictObject({
    task_id: taskId,
    provider,
    event_id: eventId,
    title,
    starts_at: isoTime,
    ends_at: isoTime.meta({ detail: "not before starts_at" }),
    url: httpsUrl.optional(),
  }),
  output: z.object({ link: linkShape, created: z.boolean(), changed: z.boolean() }),
  async handler(ctx, args) {
    const { db, principal: p } = ctx;
    const startsAt = toUtc(args.starts_at);
    const endsAt = toUtc(args.ends_at);
    if (endsAt < startsAt) throw invalid(`ends_at: ${args.ends_at} is before starts_at ${args.starts_at}; an event ends at or after its start.`);
    const key = { provider: args.provider, eventId: args.event_id };
    const a = p.accountId;
    return ctx.write({
      subject: `task ${args.task_id}`,
      // A live task without a link for this event; the link is read back after the insert.
      apply: (miss) =>
        ctx.commit(
          {
            statements: [
              ctx.guard(linkCondition(a, args.task_id, key, false), miss),
              insertLink(db, {
                id: newId(ID_PREFIX.calendarLink), accountId: a, taskId: args.task_id, provider: args.provider, eventId: args.event_id,
                title: args.title, startsAt, endsAt, url: args.url ?? null, now: ctx.now,
              }),
              named("link", selectLinkOf(db, a, args.task_id, key)),
            ],
            activity: { target: args.task_id, summary: LINKED_EVENT.text({ provider: args.provider, event: args.event_id, title: args.title, starts: startsAt, ends: endsAt }) },
          },
          (rows) => ({ link: rows.link[0] as LinkRow, created: true, changed: true }),
        ),
      // Missed: the task is missing or in the trash, or the event is linked already: with these details (a no-op) or others.
      async diagnose() {
        // The task and its link of this event, in one round trip.
        const read = await readBatch(db, { task: selectTask(db, a, args.task_id), link: selectLinkOf(db, a, args.task_id, key) });
        const task = (read.task[0] as TaskRow | undefined) ?? (await throwTaskMissing(db, a, args.task_id));
        const existing = read.link[0] as LinkRow | undefined;
        if (!existing) return AGAIN;
        const sameUrl = args.url === undefined || args.url === existing.url;
        if (existing.title === args.title && existing.starts_at === startsAt && existing.ends_at === endsAt && sameUrl) {
          return { link: existing, created: false, changed: false };
        }
        throw conflict(
          `${args.provider} event ${args.event_id} is already linked to task ${task.id} as "${existing.title}" (${existing.starts_at} – ${existing.ends_at}${existing.url ? `, ${existing.url}` : ""}) [link ${existing.id}]; ` +
            "a link is not overwritten: unlink_calendar_event removes it, then link_calendar_event links the event with its new details.",
        );
      },
    });
  },
});

const unlinkEvent = defineTool({
  name: "unlink_calendar_event",
  description: "Remove a task's calendar link, by link_id or by provider and event_id. Returns link.",
  input: z.strictObject({
    task_id: taskId,
    link_id: linkId.optional(),
    provider: provider.optional(),
    event_id: eventId.optional(),
  }),
  output: z.object({ removed: z.boolean().describe("false when the task had no such link"), link: linkShape.nullable() }),
  async handler(ctx, args) {
    const { db, principal: p } = ctx;
    const a = p.accountId;
    const byEvent = args.provider !== undefined || args.event_id !== undefined;
    if (args.link_id ? byEvent : !(args.provider && args.event_id)) {
      throw invalid("Name the link either by link_id, or by provider and event_id (list_calendar_links with task_id shows them).");
    }
    const key: LinkKey = args.link_id ? { id: args.link_id } : { provider: args.provider as string, eventId: args.event_id as string };
    return ctx.write({
      subject: `task ${args.task_id}`,
      // The task is live and has the link: it is read, then deleted.
      apply: (miss) =>
        ctx.commit(
          {
            statements: [ctx.guard(linkCondition(a, args.task_id, key, true), miss), named("link", selectLinkOf(db, a, args.task_id, key)), deleteLinkOf(db, a, args.task_id, key)],
            activity: { target: args.task_id, summarySql: linkSummary(a, args.task_id, key, unlinkedSummarySql) },
          },
          (rows) => ({ removed: true, link: rows.link[0] as LinkRow }),
        ),
      // Missed: the task is missing or in the trash, or has no such link: a repeat answers as the first call did (C7), from that call's history line.
      async diagnose() {
        // The task, the link and the task's unlink history lines, in one round trip.
        const read = await readBatch(db, {
          task: selectTask(db, a, args.task_id),
          link: selectLinkOf(db, a, args.task_id, key),
          unlinked: selectUnlinkEntries(db, a, args.task_id),
        });
        const task = (read.task[0] as TaskRow | undefined) ?? (await throwTaskMissing(db, a, args.task_id));
        if (read.link.length > 0) return AGAIN;
        const first = unlinkedLinkIn(task.id, key, read.unlinked);
        return { removed: false, link: first && { ...first, task_title: task.title } };
      },
    });
  },
});

export const calendarTools: AnyTool[] = [listLinks, getAgenda, linkEvent, unlinkEvent];
