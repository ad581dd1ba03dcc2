/**
 * The one parser for every date and time a caller sends. `Date.parse` rolls an
 * impossible date over (2026-02-30 becomes March 2nd) and accepts hour 24;
 * here a date or time that does not exist is refused with the reason, so a
 * tool never stores a moment the caller did not mean.
 */

export type Parsed<T> = { ok: true; value: T } | { ok: false; problem: string };

const MONTHS = [
  "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December",
] as const;

export function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

export function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** Why year-month-day is not a calendar date, or null when it is one. */
function dateProblem(year: number, month: number, day: number): string | null {
  if (month < 1 || month > 12) return `month ${String(month).padStart(2, "0")} does not exist (months are 01–12)`;
  const last = daysInMonth(year, month);
  if (day < 1 || day > last) {
    const leap = month === 2 && day === 29 ? ` (${year} is not a leap year)` : "";
    return `${MONTHS[month - 1]} ${year} has no day ${String(day).padStart(2, "0")}: it has ${last} days${leap}`;
  }
  return null;
}

/** Milliseconds since the epoch of a UTC wall time; years 0–99 are meant literally (Date.UTC would add 1900). */
function utcMs(year: number, month: number, day: number, h = 0, m = 0, s = 0, ms = 0): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(h, m, s, ms);
  return d.getTime();
}

const DATE_FORMAT = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME_FORMAT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|([+-])(\d{2}):(\d{2}))$/;

export const DATE_EXAMPLE = "2026-10-25";
export const TIME_EXAMPLE = "2026-12-24T18:00:00Z";

/** A calendar date, YYYY-MM-DD. */
export function parseCalendarDate(text: string): Parsed<string> {
  const m = DATE_FORMAT.exec(text);
  if (!m) return { ok: false, problem: `expected a date as YYYY-MM-DD, e.g. ${DATE_EXAMPLE}` };
  const problem = dateProblem(+m[1], +m[2], +m[3]);
  return problem ? { ok: false, problem: `${text} is not a real date: ${problem}` } : { ok: true, value: text };
}

const LATEST_MS = utcMs(9999, 12, 31, 23, 59, 59, 999);
const EARLIEST_MS = utcMs(0, 1, 1);

/**
 * An ISO 8601 / RFC 3339 time with a zone (Z or ±hh:mm), to the instant it
 * names as UTC with milliseconds (`2026-12-24T17:00:00.000Z`). Seconds and
 * their fraction may be left out; digits past milliseconds are dropped.
 */
export function parseIsoTime(text: string): Parsed<string> {
  const m = TIME_FORMAT.exec(text);
  if (!m) return { ok: false, problem: `expected an ISO 8601 time with a zone, e.g. ${TIME_EXAMPLE}` };
  const [year, month, day, hour, minute] = [+m[1], +m[2], +m[3], +m[4], +m[5]];
  const second = m[6] === undefined ? 0 : +m[6];
  const bad = (problem: string): Parsed<string> => ({ ok: false, problem: `${text} is not a real time: ${problem}` });
  const date = dateProblem(year, month, day);
  if (date) return { ok: false, problem: `${text} is not a real date: ${date}` };
  if (hour > 23) return bad(`hour ${m[4]} does not exist (hours are 00–23; midnight is 00:00 of the next day)`);
  if (minute > 59) return bad(`minute ${m[5]} does not exist (minutes are 00–59)`);
  if (second > 59) return bad(`second ${m[6]} does not exist (seconds are 00–59)`);
  let offsetMinutes = 0;
  if (m[8] !== "Z") {
    const [oh, om] = [+m[10], +m[11]];
    if (oh > 23 || om > 59) return bad(`the offset ${m[8]} does not exist (offsets are -23:59 to +23:59, e.g. +02:00)`);
    offsetMinutes = (m[9] === "-" ? -1 : 1) * (oh * 60 + om);
  }
  const millis = m[7] === undefined ? 0 : +m[7].padEnd(3, "0").slice(0, 3);
  const ms = utcMs(year, month, day, hour, minute, second, millis) - offsetMinutes * 60_000;
  if (ms < EARLIEST_MS || ms > LATEST_MS) return bad("it falls outside the years 0000–9999 in UTC");
  return { ok: true, value: new Date(ms).toISOString() };
}
