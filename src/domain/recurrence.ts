/**
 * Recurring tasks: an RFC 5545 RRULE subset and the next occurrence of a
 * schedule, in the account's time zone. Pure: no I/O; times come in as
 * arguments.
 *
 * Parts: FREQ (DAILY, WEEKLY, MONTHLY, YEARLY), INTERVAL, BYDAY (weekdays;
 * with MONTHLY also ordinals like 1MO or -1FR), BYMONTHDAY (MONTHLY only;
 * negative counts from the month's end), COUNT, UNTIL (YYYYMMDD, or a
 * date-time, UTC with Z or local without).
 *
 * A schedule starts at the due time of the task the rule is set on (its first
 * occurrence, whether or not the rule would produce that date) and keeps that
 * local time of day: 09:00 stays 09:00 across daylight-saving changes. It is
 * kept as wall-clock times without a zone, so a change of the account's time
 * zone keeps the local times too.
 *
 * Where RFC 5545 would skip a month that lacks the day (BYMONTHDAY=31, or a
 * monthly series that started on the 31st), Taskgate takes the month's last
 * day: 30 April, 28 or 29 February, as a person expects of "monthly on the
 * 31st". A yearly series from 29 February falls on 28 February in other years.
 * An ordinal weekday a month lacks (5MO) is skipped.
 *
 * COUNT counts the occurrences of the schedule from the first one, including
 * any that were missed: completing late never piles up past occurrences, the
 * next one is the first that is after both the scheduled time of the one
 * completed and the time of completion.
 */
import { localDate, localDateTime, zonedTimeToMs } from "./zoned-time.ts";

export const FREQS = ["DAILY", "WEEKLY", "MONTHLY", "YEARLY"] as const;
export type Freq = (typeof FREQS)[number];
export const WEEKDAYS = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"] as const;
const PARTS = ["FREQ", "INTERVAL", "BYDAY", "BYMONTHDAY", "COUNT", "UNTIL"] as const;
const OTHER_RFC_PARTS = ["BYSECOND", "BYMINUTE", "BYHOUR", "BYWEEKNO", "BYYEARDAY", "BYMONTH", "BYSETPOS", "WKST"];
export const MAX_INTERVAL = 1000;
export const MAX_COUNT = 1000;

export interface WeekdayRule {
  /** 0 = Monday … 6 = Sunday. */
  weekday: number;
  /** 1..5 or -5..-1 (MONTHLY only): the nth such weekday of the month; null: every one. */
  ordinal: number | null;
}

export type Until = { kind: "date"; date: string } | { kind: "utc"; ms: number } | { kind: "local"; local: string };

export interface Rule {
  freq: Freq;
  interval: number;
  byDay: WeekdayRule[];
  byMonthDay: number[];
  count: number | null;
  until: Until | null;
}

/** One thing wrong with a rule: the RRULE part (or argument) at fault, and what to do instead. */
export interface RecurrenceProblem {
  part: string;
  message: string;
}

/**
 * A rule that cannot be used, with every problem found in it at once, each
 * naming its part; `part` is the first one's.
 */
export class RecurrenceError extends Error {
  readonly problems: readonly RecurrenceProblem[];
  constructor(problems: RecurrenceProblem[]) {
    super(problems.map((p) => `${p.part}: ${p.message}`).join("\n"));
    this.problems = problems;
  }
  get part(): string {
    return this.problems[0].part;
  }
}

/** Problems as they are found; a parser adds each and goes on to the next part. */
type Report = (part: string, message: string) => void;

function integer(part: string, value: string, min: number, max: number, report: Report): number | undefined {
  if (!/^[+-]?\d{1,6}$/.test(value) || +value < min || +value > max) {
    report(part, `"${value}" must be a whole number from ${min} to ${max}`);
    return undefined;
  }
  return +value;
}

/** Weekdays of BYDAY; `freq` null when FREQ itself is wrong (the checks that depend on it are left for then). */
function parseByDay(value: string, freq: Freq | null, report: Report): WeekdayRule[] {
  const out: WeekdayRule[] = [];
  for (const item of value.split(",")) {
    const m = /^([+-]?\d{1,2})?([A-Z]{2})$/.exec(item.trim());
    const weekday = m ? (WEEKDAYS as readonly string[]).indexOf(m[2]) : -1;
    if (!m || weekday < 0) {
      report("BYDAY", `"${item}" is not a weekday: use MO, TU, WE, TH, FR, SA or SU, comma-separated (FREQ=MONTHLY also takes 1MO … 5MO and -1MO … -5MO)`);
      continue;
    }
    let ordinal: number | null = null;
    if (m[1] !== undefined) {
      ordinal = +m[1];
      if (freq !== null && freq !== "MONTHLY") {
        report("BYDAY", `"${item}": an ordinal weekday (like 1MO or -1FR) needs FREQ=MONTHLY; use plain weekdays with FREQ=${freq}`);
        continue;
      }
      if (ordinal === 0 || Math.abs(ordinal) > 5) {
        report("BYDAY", `"${item}": the ordinal must be 1 to 5 or -1 to -5 (the first … fifth, or last … fifth-last, such weekday of the month)`);
        continue;
      }
    }
    if (!out.some((o) => o.weekday === weekday && o.ordinal === ordinal)) out.push({ weekday, ordinal });
  }
  return out.sort((a, b) => (a.ordinal ?? 0) - (b.ordinal ?? 0) || a.weekday - b.weekday);
}

function parseByMonthDay(value: string, report: Report): number[] {
  const days: number[] = [];
  for (const item of value.split(",")) {
    const n = /^[+-]?\d{1,2}$/.test(item.trim()) ? +item.trim() : NaN;
    if (!Number.isInteger(n) || n === 0 || Math.abs(n) > 31) {
      report("BYMONTHDAY", `"${item}" must be a day of the month from 1 to 31, or -1 to -31 counted from the month's end`);
    } else {
      days.push(n);
    }
  }
  return [...new Set(days)].sort((a, b) => a - b);
}

const dayNumber = (y: number, m: number, d: number) => Math.floor(Date.UTC(y, m - 1, d) / 86_400_000);
const isoDate = (dn: number) => new Date(dn * 86_400_000).toISOString().slice(0, 10);
/** 0 = Monday (1970-01-01, day 0, was a Thursday). */
const weekdayOf = (dn: number) => (((dn + 3) % 7) + 7) % 7;
const daysInMonth = (y: number, m: number) => new Date(Date.UTC(y, m, 0)).getUTCDate();

function ymd(date: string): { y: number; m: number; d: number; dn: number } {
  const [y, m, d] = date.split("-").map(Number);
  return { y, m, d, dn: dayNumber(y, m, d) };
}

function parseUntil(value: string, report: Report): Until | null {
  const v = value.replace(/[-:]/g, "");
  const m = /^(\d{4})(\d{2})(\d{2})(?:T(\d{2})(\d{2})(\d{2})(Z)?)?$/.exec(v);
  const date = m ? `${m[1]}-${m[2]}-${m[3]}` : "";
  const valid =
    m && isoDate(dayNumber(+m[1], +m[2], +m[3])) === date && +m[1] >= 1970 && (m[4] === undefined || (+m[4] <= 23 && +m[5] <= 59 && +m[6] <= 59));
  if (!m || !valid) {
    report("UNTIL", `"${value}" is not a date or date-time: use YYYYMMDD (the last day), YYYYMMDDTHHMMSSZ (UTC) or YYYYMMDDTHHMMSS (the account's time zone)`);
    return null;
  }
  if (m[4] === undefined) return { kind: "date", date };
  const local = `${date}T${m[4]}:${m[5]}:${m[6]}`;
  return m[7] ? { kind: "utc", ms: Date.parse(`${local}Z`) } : { kind: "local", local };
}

/**
 * Parses an RRULE (an optional `RRULE:` prefix, parts in any order and case).
 * Throws one RecurrenceError with every problem found, each naming its part;
 * `also` adds the caller's own problems (an argument the rule needs) to the same answer.
 */
export function parseRule(text: string, also: RecurrenceProblem[] = []): Rule {
  const problems: RecurrenceProblem[] = [];
  const report: Report = (part, message) => problems.push({ part, message });
  const body = text.trim().replace(/^RRULE:/i, "");
  const parts = new Map<string, string>();
  for (const segment of body.split(";")) {
    if (!segment.trim()) continue;
    const eq = segment.indexOf("=");
    if (eq <= 0) {
      report(segment.trim(), `"${segment.trim()}" is not NAME=VALUE; parts are separated by ";", e.g. FREQ=WEEKLY;BYDAY=MO`);
      continue;
    }
    const name = segment.slice(0, eq).trim().toUpperCase();
    const value = segment.slice(eq + 1).trim().toUpperCase();
    if (!(PARTS as readonly string[]).includes(name)) {
      const what = OTHER_RFC_PARTS.includes(name) ? "is not supported" : "is not an RRULE part";
      report(name, `${what}; the parts are ${PARTS.join(", ")}`);
    } else if (parts.has(name)) {
      report(name, "is given twice");
    } else if (!value) {
      report(name, "has no value");
    } else {
      parts.set(name, value);
    }
  }
  const freqText = parts.get("FREQ");
  let freq: Freq | null = null;
  if (!freqText) {
    if (!problems.some((p) => p.part === "FREQ")) report("FREQ", "is required: DAILY, WEEKLY, MONTHLY or YEARLY, e.g. FREQ=WEEKLY;BYDAY=MO");
  } else if (!(FREQS as readonly string[]).includes(freqText)) {
    report("FREQ", `"${freqText}" is not supported: use DAILY, WEEKLY, MONTHLY or YEARLY`);
  } else {
    freq = freqText as Freq;
  }
  const rule: Rule = { freq: freq ?? "DAILY", interval: 1, byDay: [], byMonthDay: [], count: null, until: null };
  const interval = parts.get("INTERVAL");
  if (interval !== undefined) rule.interval = integer("INTERVAL", interval, 1, MAX_INTERVAL, report) ?? 1;
  const count = parts.get("COUNT");
  if (count !== undefined) rule.count = integer("COUNT", count, 1, MAX_COUNT, report) ?? null;
  const until = parts.get("UNTIL");
  if (until !== undefined) {
    if (count !== undefined) report("UNTIL", "give COUNT or UNTIL, not both");
    else rule.until = parseUntil(until, report);
  }
  const byDay = parts.get("BYDAY");
  if (byDay !== undefined) {
    if (freq === "YEARLY") {
      report("BYDAY", "is not supported with FREQ=YEARLY (a yearly task repeats on the date of its first due time); use FREQ=MONTHLY;INTERVAL=12 with BYDAY");
    } else {
      rule.byDay = parseByDay(byDay, freq, report);
    }
  }
  const byMonthDay = parts.get("BYMONTHDAY");
  if (byMonthDay !== undefined) {
    if (freq !== null && freq !== "MONTHLY") report("BYMONTHDAY", `needs FREQ=MONTHLY (got FREQ=${freq})`);
    rule.byMonthDay = parseByMonthDay(byMonthDay, report);
  }
  if (problems.length || also.length) throw new RecurrenceError([...problems, ...also]);
  return rule;
}

function formatUntil(u: Until): string {
  if (u.kind === "date") return u.date.replace(/-/g, "");
  if (u.kind === "local") return u.local.replace(/[-:]/g, "");
  return new Date(u.ms).toISOString().slice(0, 19).replace(/[-:]/g, "") + "Z";
}

/** The rule in one canonical form (what the tools show and store). */
export function formatRule(r: Rule): string {
  const out = [`FREQ=${r.freq}`];
  if (r.interval !== 1) out.push(`INTERVAL=${r.interval}`);
  if (r.byDay.length) out.push(`BYDAY=${r.byDay.map((b) => `${b.ordinal ?? ""}${WEEKDAYS[b.weekday]}`).join(",")}`);
  if (r.byMonthDay.length) out.push(`BYMONTHDAY=${r.byMonthDay.join(",")}`);
  if (r.count !== null) out.push(`COUNT=${r.count}`);
  if (r.until) out.push(`UNTIL=${formatUntil(r.until)}`);
  return out.join(";");
}

/**
 * Where a series stands: its rule (canonical), its first occurrence's local
 * time (`start`), and the scheduled local time and number of the current one.
 */
export interface Schedule {
  rule: string;
  start: string;
  slot: string;
  index: number;
}

export interface Occurrence {
  /** Its scheduled local time, `YYYY-MM-DDTHH:MM:SS`. */
  slot: string;
  /** Its number in the schedule (1 is the first). */
  index: number;
  /** Its due time (ms since the epoch). */
  dueMs: number;
}

/** The days (day numbers, ascending) that period `p` of the schedule offers, or null past the year 9999. */
function periodDays(r: Rule, s: ReturnType<typeof ymd>, p: number): number[] | null {
  const weekdays = (dn: number) => r.byDay.length === 0 || r.byDay.some((b) => b.weekday === weekdayOf(dn));
  switch (r.freq) {
    case "DAILY": {
      const dn = s.dn + p * r.interval;
      if (dn > MAX_DAY) return null;
      return weekdays(dn) ? [dn] : [];
    }
    case "WEEKLY": {
      const weekStart = s.dn - weekdayOf(s.dn) + 7 * r.interval * p;
      if (weekStart > MAX_DAY) return null;
      const days = r.byDay.length ? [...new Set(r.byDay.map((b) => b.weekday))] : [weekdayOf(s.dn)];
      return days.sort((a, b) => a - b).map((w) => weekStart + w);
    }
    case "MONTHLY": {
      const months = s.m - 1 + r.interval * p;
      const y = s.y + Math.floor(months / 12);
      if (y > 9999) return null;
      return monthDays(r, y, (months % 12) + 1, s.d);
    }
    case "YEARLY": {
      const y = s.y + r.interval * p;
      if (y > 9999) return null;
      return [dayNumber(y, s.m, Math.min(s.d, daysInMonth(y, s.m)))];
    }
  }
}

const MAX_DAY = dayNumber(9999, 12, 31);

function monthDays(r: Rule, y: number, m: number, startDay: number): number[] {
  const len = daysInMonth(y, m);
  const first = dayNumber(y, m, 1);
  const fromMonthDays = r.byMonthDay.map((n) => (n > 0 ? Math.min(n, len) : Math.max(1, len + n + 1)));
  let days: number[];
  if (r.byDay.length) {
    const matching = new Set<number>();
    for (const b of r.byDay) {
      const all: number[] = [];
      for (let d = ((b.weekday - weekdayOf(first) + 7) % 7) + 1; d <= len; d += 7) all.push(d);
      if (b.ordinal === null) all.forEach((d) => matching.add(d));
      else {
        const pick = b.ordinal > 0 ? all[b.ordinal - 1] : all[all.length + b.ordinal];
        if (pick !== undefined) matching.add(pick);
      }
    }
    days = r.byMonthDay.length ? fromMonthDays.filter((d) => matching.has(d)) : [...matching];
  } else {
    days = r.byMonthDay.length ? fromMonthDays : [Math.min(startDay, len)];
  }
  return [...new Set(days)].sort((a, b) => a - b).map((d) => first + d - 1);
}

/** The period (0 = the first's) that holds day `dn`. */
function periodOf(r: Rule, s: ReturnType<typeof ymd>, dn: number): number {
  const d = ymd(isoDate(dn));
  const span = {
    DAILY: dn - s.dn,
    WEEKLY: (dn - weekdayOf(dn) - (s.dn - weekdayOf(s.dn))) / 7,
    MONTHLY: d.y * 12 + d.m - (s.y * 12 + s.m),
    YEARLY: d.y - s.y,
  }[r.freq];
  return Math.max(0, Math.floor(span / r.interval));
}

/** Periods in 400 years, the Gregorian cycle: a rule that offers no day within it never will. */
const CYCLE: Record<Freq, number> = { DAILY: 146_097, WEEKLY: 20_872, MONTHLY: 4_800, YEARLY: 400 };

/** The latest local time an occurrence may have, or null without UNTIL. */
function untilLocal(u: Until | null, timeZone: string): string | null {
  if (!u) return null;
  if (u.kind === "date") return `${u.date}T23:59:59`;
  if (u.kind === "local") return u.local;
  return localDateTime(timeZone, u.ms);
}

function next(s: Schedule, r: Rule, timeZone: string, afterMs: number): Occurrence | null {
  const [startDate, time] = s.start.split("T");
  const start = ymd(startDate);
  const slotDay = ymd(s.slot.slice(0, 10)).dn;
  const afterDay = ymd(localDate(timeZone, afterMs)).dn;
  const until = untilLocal(r.until, timeZone);
  const from = periodOf(r, start, slotDay);
  const last = Math.max(from, periodOf(r, start, afterDay)) + Math.ceil(CYCLE[r.freq] / r.interval) + 1;
  let index = s.index;
  for (let p = from; p <= last; p++) {
    const days = periodDays(r, start, p);
    if (days === null) return null;
    for (const dn of days) {
      if (dn <= slotDay) continue;
      index++;
      if (r.count !== null && index > r.count) return null;
      const slot = `${isoDate(dn)}T${time}`;
      if (until !== null && slot > until) return null;
      if (dn < afterDay - 1) continue;
      const dueMs = zonedTimeToMs(timeZone, slot);
      if (dueMs > afterMs) return { slot, index, dueMs };
    }
  }
  return null;
}

/** The next occurrence after `afterMs` (and after the current one's slot), or null when the series has ended. */
export function nextOccurrence(s: Schedule, timeZone: string, afterMs: number): Occurrence | null {
  return next(s, parseRule(s.rule), timeZone, afterMs);
}

/**
 * A new schedule whose first occurrence is due at `dueMs`. Refuses a rule
 * whose UNTIL is before that, and one that offers no later date at all
 * (like BYDAY=5MO;BYMONTHDAY=1).
 */
export function startSchedule(ruleText: string, timeZone: string, dueMs: number): Schedule {
  const rule = parseRule(ruleText);
  const start = localDateTime(timeZone, dueMs);
  const until = untilLocal(rule.until, timeZone);
  if (until !== null && start > until) {
    throw new RecurrenceError([
      {
        part: "UNTIL",
        message: `${formatUntil(rule.until as Until)} is before the first due time (${start.replace("T", " ")} ${timeZone}); the series would end before it starts`,
      },
    ]);
  }
  const schedule: Schedule = { rule: formatRule(rule), start, slot: start, index: 1 };
  if (!next(schedule, { ...rule, count: null, until: null }, timeZone, dueMs)) {
    throw new RecurrenceError([
      { part: rule.byMonthDay.length ? "BYMONTHDAY" : "BYDAY", message: "no date matches this rule; check that BYDAY and BYMONTHDAY can fall on the same day" },
    ]);
  }
  return schedule;
}
