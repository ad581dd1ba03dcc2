/**
 * Calendar days in an IANA time zone, with Intl only (no tz database of our
 * own). A day is [its first instant, the next day's first instant), so a day
 * across a daylight-saving change lasts 23 or 25 hours.
 */

const dayFormatters = new Map<string, Intl.DateTimeFormat>();

function dayFormatter(timeZone: string): Intl.DateTimeFormat {
  let f = dayFormatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" });
    if (dayFormatters.size > 200) dayFormatters.clear();
    dayFormatters.set(timeZone, f);
  }
  return f;
}

/** The canonical name of an IANA zone (`europe/berlin` → `Europe/Berlin`), or null if Intl does not know it. Offsets like `+01:00` are refused. */
export function canonicalTimeZone(name: string): string | null {
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/.test(name)) return null;
  try {
    return new Intl.DateTimeFormat("en-US", { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

/** The calendar date (YYYY-MM-DD) of an instant in a zone. */
export function localDate(timeZone: string, ms: number): string {
  const parts = dayFormatter(timeZone).formatToParts(new Date(ms));
  const get = (t: string) => parts.find((p) => p.type === t)?.value ?? "";
  return `${get("year").padStart(4, "0")}-${get("month")}-${get("day")}`;
}

export const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

export function addDays(date: string, n: number): string {
  const m = DATE.exec(date) as RegExpExecArray;
  return new Date(Date.UTC(+m[1], +m[2] - 1, +m[3] + n)).toISOString().slice(0, 10);
}

/** The first instant (ms) of a calendar date in a zone: found by bisection, so gaps and repeated hours need no special cases. */
export function dayStartMs(timeZone: string, date: string): number {
  const m = DATE.exec(date) as RegExpExecArray;
  const wall = Date.UTC(+m[1], +m[2] - 1, +m[3]);
  let lo = Math.floor((wall - 15 * 3_600_000) / 1000);
  let hi = Math.ceil((wall + 15 * 3_600_000) / 1000);
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (localDate(timeZone, mid * 1000) >= date) hi = mid;
    else lo = mid;
  }
  return hi * 1000;
}

const wallFormatters = new Map<string, Intl.DateTimeFormat>();

function wallFormatter(timeZone: string): Intl.DateTimeFormat {
  let f = wallFormatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit",
    });
    if (wallFormatters.size > 200) wallFormatters.clear();
    wallFormatters.set(timeZone, f);
  }
  return f;
}

/** A local wall-clock time without a zone: `YYYY-MM-DDTHH:MM:SS`. */
export const LOCAL_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})$/;

/** The wall-clock time (`YYYY-MM-DDTHH:MM:SS`, seconds dropped below) of an instant in a zone. */
export function localDateTime(timeZone: string, ms: number): string {
  const parts = wallFormatter(timeZone).formatToParts(new Date(ms));
  const get = (t: string) => parts.find((p) => p.type === t)?.value ?? "";
  return `${get("year").padStart(4, "0")}-${get("month")}-${get("day")}T${get("hour")}:${get("minute")}:${get("second")}`;
}

/** A wall-clock time read as if it were UTC: the arithmetic value of `YYYY-MM-DDTHH:MM:SS`. */
function wallAsUtcMs(local: string): number {
  const m = LOCAL_DATE_TIME.exec(local) as RegExpExecArray;
  return Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]);
}

/** How far the zone's clock is ahead of UTC at an instant (ms). */
function offsetMs(timeZone: string, ms: number): number {
  const whole = Math.floor(ms / 1000) * 1000;
  return wallAsUtcMs(localDateTime(timeZone, whole)) - whole;
}

/**
 * The instant a wall-clock time names in a zone. A time repeated when the
 * clocks go back is its first (earlier) instant; a time skipped when they go
 * forward moves on by the length of the gap (02:30 on a spring-forward night
 * is 03:30), as RFC 5545 reads such times.
 */
export function zonedTimeToMs(timeZone: string, local: string): number {
  const wall = wallAsUtcMs(local);
  const before = offsetMs(timeZone, wall - 86_400_000);
  const after = offsetMs(timeZone, wall + 86_400_000);
  const valid = [wall - before, wall - after].filter((t) => localDateTime(timeZone, t) === local);
  if (valid.length > 0) return Math.min(...valid);
  return wall - before;
}
