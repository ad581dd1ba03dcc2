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
