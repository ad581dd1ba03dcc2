import { describe, expect, it } from "vitest";
import { formatRule, nextOccurrence, parseRule, RecurrenceError, startSchedule, type Schedule } from "../src/domain/recurrence.ts";
import { localDateTime, zonedTimeToMs } from "../src/domain/zoned-time.ts";

const iso = (ms: number) => new Date(ms).toISOString();

/** The due times (UTC) of the next `n` occurrences, each completed at its own due time. */
function dues(rule: string, timeZone: string, firstDue: string, n: number, completedAt?: (dueMs: number) => number): string[] {
  let s: Schedule = startSchedule(rule, timeZone, Date.parse(firstDue));
  let due = Date.parse(firstDue);
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const next = nextOccurrence(s, timeZone, completedAt ? Math.max(due, completedAt(due)) : due);
    if (!next) break;
    out.push(iso(next.dueMs));
    s = { ...s, slot: next.slot, index: next.index };
    due = next.dueMs;
  }
  return out;
}

describe("zoned wall-clock times", () => {
  it("maps a time skipped by spring forward one gap later, and a repeated time to its first instant", () => {
    expect(iso(zonedTimeToMs("Europe/Berlin", "2027-03-28T02:30:00"))).toBe("2027-03-28T01:30:00.000Z"); // 03:30 CEST
    expect(iso(zonedTimeToMs("Europe/Berlin", "2027-10-31T02:30:00"))).toBe("2027-10-31T00:30:00.000Z"); // the first 02:30 (CEST)
    expect(iso(zonedTimeToMs("America/New_York", "2027-03-14T02:30:00"))).toBe("2027-03-14T07:30:00.000Z"); // 03:30 EDT
    expect(iso(zonedTimeToMs("America/New_York", "2027-11-07T01:30:00"))).toBe("2027-11-07T05:30:00.000Z"); // the first 01:30 (EDT)
    expect(localDateTime("Europe/Berlin", Date.parse("2027-07-01T07:00:00Z"))).toBe("2027-07-01T09:00:00");
  });
});

describe("next occurrences across daylight-saving changes", () => {
  it("Europe/Berlin: a daily 09:00 stays 09:00 local through both changes", () => {
    expect(dues("FREQ=DAILY", "Europe/Berlin", "2027-03-26T08:00:00Z", 3)).toEqual([
      "2027-03-27T08:00:00.000Z", // Saturday, CET
      "2027-03-28T07:00:00.000Z", // Sunday, CEST from 02:00
      "2027-03-29T07:00:00.000Z",
    ]);
    expect(dues("FREQ=DAILY", "Europe/Berlin", "2027-10-30T07:00:00Z", 2)).toEqual(["2027-10-31T08:00:00.000Z", "2027-11-01T08:00:00.000Z"]);
  });

  it("America/New_York: a weekly Sunday 09:00 stays 09:00 local; a 02:30 falls on 03:30 only on the spring-forward night", () => {
    expect(dues("FREQ=WEEKLY;BYDAY=SU", "America/New_York", "2027-03-07T14:00:00Z", 2)).toEqual(["2027-03-14T13:00:00.000Z", "2027-03-21T13:00:00.000Z"]);
    expect(dues("FREQ=WEEKLY", "America/New_York", "2027-10-31T13:00:00Z", 2)).toEqual(["2027-11-07T14:00:00.000Z", "2027-11-14T14:00:00.000Z"]);
    expect(dues("FREQ=DAILY", "America/New_York", "2027-03-13T07:30:00Z", 2)).toEqual([
      "2027-03-14T07:30:00.000Z", // 03:30 EDT: 02:30 does not exist that night
      "2027-03-15T06:30:00.000Z", // 02:30 EDT again
    ]);
  });
});

describe("month ends", () => {
  it("monthly from the 31st falls on each month's last day, the 31st again where there is one", () => {
    expect(dues("FREQ=MONTHLY", "UTC", "2027-01-31T09:00:00Z", 5).map((d) => d.slice(0, 10))).toEqual([
      "2027-02-28", "2027-03-31", "2027-04-30", "2027-05-31", "2027-06-30",
    ]);
    expect(dues("FREQ=MONTHLY;BYMONTHDAY=31", "UTC", "2028-01-31T09:00:00Z", 2).map((d) => d.slice(0, 10))).toEqual(["2028-02-29", "2028-03-31"]);
    expect(dues("FREQ=MONTHLY;BYMONTHDAY=30", "UTC", "2027-01-30T09:00:00Z", 2).map((d) => d.slice(0, 10))).toEqual(["2027-02-28", "2027-03-30"]);
  });

  it("BYMONTHDAY=-1 is the last day; 15,-1 twice a month; ordinal weekdays; a missing 5th weekday is skipped", () => {
    expect(dues("FREQ=MONTHLY;BYMONTHDAY=-1", "UTC", "2027-01-31T09:00:00Z", 2).map((d) => d.slice(0, 10))).toEqual(["2027-02-28", "2027-03-31"]);
    expect(dues("FREQ=MONTHLY;BYMONTHDAY=15,-1", "UTC", "2027-02-15T09:00:00Z", 3).map((d) => d.slice(0, 10))).toEqual(["2027-02-28", "2027-03-15", "2027-03-31"]);
    expect(dues("FREQ=MONTHLY;BYDAY=-1FR", "UTC", "2027-01-29T09:00:00Z", 2).map((d) => d.slice(0, 10))).toEqual(["2027-02-26", "2027-03-26"]);
    expect(dues("FREQ=MONTHLY;BYDAY=5MO", "UTC", "2027-03-29T09:00:00Z", 2).map((d) => d.slice(0, 10))).toEqual(["2027-05-31", "2027-08-30"]);
  });

  it("yearly from 29 February falls on 28 February in common years", () => {
    expect(dues("FREQ=YEARLY", "UTC", "2028-02-29T09:00:00Z", 4).map((d) => d.slice(0, 10))).toEqual(["2029-02-28", "2030-02-28", "2031-02-28", "2032-02-29"]);
  });
});

describe("schedules", () => {
  it("WEEKLY with INTERVAL and BYDAY keeps the weeks of the first occurrence; the first may be off the rule", () => {
    // Wednesday 2027-03-03; every second week on Monday and Thursday.
    expect(dues("FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,TH", "UTC", "2027-03-03T09:00:00Z", 4).map((d) => d.slice(0, 10))).toEqual([
      "2027-03-04", "2027-03-15", "2027-03-18", "2027-03-29",
    ]);
    expect(dues("FREQ=DAILY;BYDAY=MO,TU,WE,TH,FR", "UTC", "2027-03-05T09:00:00Z", 2).map((d) => d.slice(0, 10))).toEqual(["2027-03-08", "2027-03-09"]);
  });

  it("COUNT ends the series after that many occurrences, the first included", () => {
    expect(dues("FREQ=DAILY;COUNT=3", "UTC", "2027-03-01T09:00:00Z", 10)).toHaveLength(2);
    expect(dues("FREQ=DAILY;COUNT=1", "UTC", "2027-03-01T09:00:00Z", 10)).toHaveLength(0);
  });

  it("UNTIL (a date: that whole local day; a UTC time; a local time) ends the series", () => {
    expect(dues("FREQ=DAILY;UNTIL=20270303", "Europe/Berlin", "2027-03-01T08:00:00Z", 10).map((d) => d.slice(0, 10))).toEqual(["2027-03-02", "2027-03-03"]);
    expect(dues("FREQ=DAILY;UNTIL=20270303T075959Z", "Europe/Berlin", "2027-03-01T08:00:00Z", 10)).toHaveLength(1);
    expect(dues("FREQ=DAILY;UNTIL=20270303T090000", "Europe/Berlin", "2027-03-01T08:00:00Z", 10)).toHaveLength(2);
  });

  it("a late completion skips what was missed (counted by COUNT) and lands on the first slot after now", () => {
    const s = startSchedule("FREQ=DAILY;COUNT=10", "UTC", Date.parse("2027-03-01T09:00:00Z"));
    const late = nextOccurrence(s, "UTC", Date.parse("2027-03-05T12:00:00Z"));
    expect(late && { due: iso(late.dueMs), index: late.index }).toEqual({ due: "2027-03-06T09:00:00.000Z", index: 6 });
    const early = nextOccurrence(s, "UTC", Date.parse("2027-02-20T09:00:00Z"));
    expect(early && iso(early.dueMs)).toBe("2027-03-02T09:00:00.000Z");
    expect(nextOccurrence(s, "UTC", Date.parse("2027-03-12T00:00:00Z"))).toBeNull();
  });

  it("keeps local times when the account moves to another zone", () => {
    const s = startSchedule("FREQ=DAILY", "Europe/Berlin", Date.parse("2027-06-01T07:00:00Z"));
    expect(iso(nextOccurrence(s, "America/New_York", Date.parse("2027-06-01T07:00:00Z"))!.dueMs)).toBe("2027-06-02T13:00:00.000Z");
  });
});

describe("parsing", () => {
  it("takes an RRULE: prefix, any case and order, and shows one canonical form", () => {
    expect(formatRule(parseRule("rrule:byday=fr,mo;freq=weekly;interval=2;until=2027-12-31"))).toBe("FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,FR;UNTIL=20271231");
    expect(formatRule(parseRule("FREQ=MONTHLY;BYDAY=-1FR;COUNT=12"))).toBe("FREQ=MONTHLY;BYDAY=-1FR;COUNT=12");
  });

  const bad: [string, string, RegExp][] = [
    ["", "FREQ", /required/],
    ["INTERVAL=2", "FREQ", /required/],
    ["FREQ=HOURLY", "FREQ", /DAILY, WEEKLY, MONTHLY or YEARLY/],
    ["FREQ=DAILY;FREQ=WEEKLY", "FREQ", /twice/],
    ["FREQ=DAILY;INTERVAL=0", "INTERVAL", /1 to 1000/],
    ["FREQ=DAILY;INTERVAL=x", "INTERVAL", /whole number/],
    ["FREQ=DAILY;COUNT=0", "COUNT", /1 to 1000/],
    ["FREQ=DAILY;COUNT=3;UNTIL=20271231", "UNTIL", /not both/],
    ["FREQ=DAILY;UNTIL=20270231", "UNTIL", /not a date/],
    ["FREQ=DAILY;UNTIL=tomorrow", "UNTIL", /YYYYMMDD/],
    ["FREQ=WEEKLY;BYDAY=XX", "BYDAY", /not a weekday/],
    ["FREQ=WEEKLY;BYDAY=1MO", "BYDAY", /needs FREQ=MONTHLY/],
    ["FREQ=MONTHLY;BYDAY=6MO", "BYDAY", /1 to 5/],
    ["FREQ=YEARLY;BYDAY=MO", "BYDAY", /YEARLY/],
    ["FREQ=WEEKLY;BYMONTHDAY=1", "BYMONTHDAY", /needs FREQ=MONTHLY/],
    ["FREQ=MONTHLY;BYMONTHDAY=0", "BYMONTHDAY", /1 to 31/],
    ["FREQ=MONTHLY;BYMONTHDAY=32", "BYMONTHDAY", /1 to 31/],
    ["FREQ=DAILY;BYHOUR=9", "BYHOUR", /not supported/],
    ["FREQ=DAILY;WKST=SU", "WKST", /not supported/],
    ["FREQ=DAILY;COLOR=red", "COLOR", /not an RRULE part/],
    ["FREQ=DAILY;COUNT=", "COUNT", /no value/],
    ["FREQ=DAILY;BYDAY", "BYDAY", /NAME=VALUE/],
  ];
  for (const [rule, part, why] of bad) {
    it(`refuses ${rule || "an empty rule"}, naming ${part}`, () => {
      let error: unknown;
      try {
        parseRule(rule);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(RecurrenceError);
      expect((error as RecurrenceError).part).toBe(part);
      expect((error as Error).message).toMatch(new RegExp(`^${part}: `));
      expect((error as Error).message).toMatch(why);
    });
  }

  it("names every problem of a rule at once, each with its part, in the order of the parts", () => {
    let error: unknown;
    try {
      parseRule("FREQ=YEARLY;INTERVAL=x;COUNT=0;BYDAY=MO;BYMONTHDAY=0,2;COLOR=red;WKST");
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RecurrenceError);
    expect((error as RecurrenceError).problems.map((p) => p.part)).toEqual(["COLOR", "WKST", "INTERVAL", "COUNT", "BYDAY", "BYMONTHDAY", "BYMONTHDAY"]);
    expect((error as RecurrenceError).part).toBe("COLOR");
    expect((error as Error).message.split("\n")).toHaveLength(7);
    // A wrong FREQ leaves out the checks that depend on it, and still checks each part's own values.
    try {
      parseRule("FREQ=SOMETIMES;BYDAY=1MO,ZZ;BYMONTHDAY=15");
    } catch (e) {
      error = e;
    }
    expect((error as RecurrenceError).problems).toEqual([
      { part: "FREQ", message: '"SOMETIMES" is not supported: use DAILY, WEEKLY, MONTHLY or YEARLY' },
      { part: "BYDAY", message: expect.stringMatching(/^"ZZ" is not a weekday/) },
    ]);
  });

  it("refuses a schedule whose UNTIL is before its first due time, or that no date can match", () => {
    expect(() => startSchedule("FREQ=DAILY;UNTIL=20270101", "UTC", Date.parse("2027-03-01T09:00:00Z"))).toThrow(/^UNTIL: .*before the first due time/);
    expect(() => startSchedule("FREQ=MONTHLY;BYDAY=5MO;BYMONTHDAY=1", "UTC", Date.parse("2027-03-01T09:00:00Z"))).toThrow(/^BYMONTHDAY: no date matches/);
  });
});
