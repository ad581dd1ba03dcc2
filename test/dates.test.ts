import { describe, expect, it } from "vitest";
import { parseCalendarDate, parseIsoTime } from "../src/domain/dates.ts";
import { describeAllTools, detailedInputSchema } from "../src/mcp/registry.ts";
import { connect, seedAccount, snapshotDb, type TestClient } from "./helpers.ts";
import { exampleArgs, fieldsOf, type IdPool } from "./tool-args.ts";

/** Times that do not exist, each with what the refusal must say. */
const IMPOSSIBLE_TIMES: [string, RegExp][] = [
  ["2026-02-30T10:00:00Z", /February 2026 has no day 30/],
  ["2026-04-31T10:00:00Z", /April 2026 has no day 31/],
  ["2027-02-29T10:00:00Z", /2027 is not a leap year/],
  ["2100-02-29T10:00:00Z", /2100 is not a leap year/],
  ["2026-13-01T10:00:00Z", /month 13 does not exist/],
  ["2026-00-10T10:00:00Z", /month 00 does not exist/],
  ["2026-06-00T10:00:00Z", /June 2026 has no day 00/],
  ["2026-06-01T24:00:00Z", /hour 24 does not exist/],
  ["2026-06-01T10:60:00Z", /minute 60 does not exist/],
  ["2026-06-01T10:00:60Z", /second 60 does not exist/],
  ["2026-06-01T10:00:00+25:00", /offset \+25:00 does not exist/],
  ["2026-06-01T10:00:00-03:60", /offset -03:60 does not exist/],
  ["2026-06-01 10:00:00Z", /expected an ISO 8601 time with a zone/],
  ["2026-06-01T10:00:00", /expected an ISO 8601 time with a zone/],
];

const IMPOSSIBLE_DATES: [string, RegExp][] = [
  ["2026-02-30", /February 2026 has no day 30/],
  ["2026-09-31", /September 2026 has no day 31/],
  ["2027-02-29", /2027 is not a leap year/],
  ["2026-13-01", /month 13 does not exist/],
  ["2026-6-1", /expected a date as YYYY-MM-DD/],
];

describe("the date and time parser", () => {
  it("turns real times into UTC with milliseconds, whatever the offset or precision", () => {
    const cases: [string, string][] = [
      ["2026-12-24T18:00:00Z", "2026-12-24T18:00:00.000Z"],
      ["2026-12-24T18:00Z", "2026-12-24T18:00:00.000Z"],
      ["2026-03-29T02:30:00+01:00", "2026-03-29T01:30:00.000Z"],
      ["2026-12-31T23:30:00-02:00", "2027-01-01T01:30:00.000Z"],
      ["2026-01-01T00:15:00+14:00", "2025-12-31T10:15:00.000Z"],
      ["2028-02-29T12:00:00.5Z", "2028-02-29T12:00:00.500Z"],
      ["2000-02-29T00:00:00.123456789Z", "2000-02-29T00:00:00.123Z"],
      ["0099-05-01T00:00:00Z", "0099-05-01T00:00:00.000Z"],
    ];
    for (const [input, utc] of cases) expect(parseIsoTime(input), input).toEqual({ ok: true, value: utc });
    for (const [input, why] of IMPOSSIBLE_TIMES) {
      const r = parseIsoTime(input);
      expect(r.ok, input).toBe(false);
      if (!r.ok) expect(r.problem, input).toMatch(why);
    }
    expect(parseIsoTime("9999-12-31T23:00:00-05:00").ok).toBe(false);
  });

  it("accepts real calendar dates only", () => {
    for (const d of ["2026-10-25", "2028-02-29", "2000-02-29", "2026-12-31"]) expect(parseCalendarDate(d), d).toEqual({ ok: true, value: d });
    for (const [input, why] of IMPOSSIBLE_DATES) {
      const r = parseCalendarDate(input);
      expect(r.ok, input).toBe(false);
      if (!r.ok) expect(r.problem, input).toMatch(why);
    }
  });
});

interface DateField {
  tool: string;
  field: string;
  format: "date-time" | "date";
}

/** Every date and time argument of every tool, from the input schemas tools/list announces. */
function dateFields(): DateField[] {
  return describeAllTools().flatMap((d) =>
    fieldsOf(d.inputSchema, (_, s) => s.format === "date-time" || s.format === "date").map((f) => ({
      tool: d.name,
      field: f.path,
      format: f.schema.format,
    })),
  );
}

/**
 * Valid arguments for a tool with every date field of it set to a leap day in
 * `year`, later fields later (from < to, starts_at < ends_at). A past and a
 * future leap year, because some fields want the past (since) and some the
 * future (a snooze).
 */
function validArgs(tool: string, pool: IdPool, year = 2096): Record<string, unknown> {
  const args = exampleArgs(detailedInputSchema(tool), pool);
  const fields = dateFields().filter((f) => f.tool === tool);
  fields.forEach((f, i) => {
    args[f.field] = f.format === "date" ? `${year}-02-29` : `${year}-02-29T${String(10 + i).padStart(2, "0")}:00:00+01:00`;
  });
  return args;
}

/** What a refusal of a date that does not exist says; a real date must never get it. */
const DATE_REFUSAL = /is not a real (date|time)|expected an ISO 8601 time|expected a date as/;

async function pool(client: TestClient): Promise<IdPool> {
  const { project } = await client.ok("create_project", { name: "Dates" });
  const { task } = await client.ok("create_task", { title: "Dated", project_id: project.id });
  return { tsk: [task.id], prj: [project.id] };
}

describe("every date and time argument of every tool refuses a date that does not exist", () => {
  it("finds the date fields in the registry (a tool that gains one is covered here)", () => {
    const names = dateFields().map((f) => `${f.tool}.${f.field}`);
    expect(names).toEqual(expect.arrayContaining(["create_task.due_at", "update_task.due_at", "snooze_task.until", "link_calendar_event.ends_at", "get_agenda.date"]));
    expect(names.length).toBeGreaterThanOrEqual(12);
  });

  for (const era of ["modern", "legacy"] as const) {
    it(`${era}: impossible → isError naming the field and the problem, nothing written; real (leap day) → accepted`, async () => {
      const acc = await seedAccount();
      const client = await connect(acc.human, era);
      const ids = await pool(client);
      for (const { tool, field, format } of dateFields()) {
        const cases = format === "date" ? IMPOSSIBLE_DATES : IMPOSSIBLE_TIMES;
        const before = await snapshotDb();
        for (const [value, why] of cases) {
          const r = await client.call(tool, { ...validArgs(tool, ids), [field]: value });
          expect(r.isError, `${tool}.${field} = ${value} was accepted: ${r.text}`).toBe(true);
          expect(r.text, `${tool}.${field} = ${value}`).toContain(`${field}: `);
          expect(r.text, `${tool}.${field} = ${value}`).toMatch(why);
        }
        expect(await snapshotDb(), `${tool}.${field}: a refused call wrote something`).toBe(before);
        const real = await Promise.all([2024, 2096].map((year) => client.call(tool, validArgs(tool, ids, year))));
        for (const r of real) expect(r.text, `${tool}: a real leap day was refused as impossible`).not.toMatch(DATE_REFUSAL);
        expect(real.some((r) => !r.isError), `${tool} refused both a past and a future leap day: ${real.map((r) => r.text).join(" / ")}`).toBe(true);
      }
      await client.close();
    });
  }

  it("stores the instant that was meant: a due date at +01:00 on a leap day, as UTC", async () => {
    const acc = await seedAccount();
    const client = await connect(acc.human);
    const { task } = await client.ok("create_task", { title: "Leap", due_at: "2096-02-29T00:30:00+01:00" });
    expect(task.due_at).toBe("2096-02-28T23:30:00.000Z");
    await client.close();
  });

  it("time zone arguments refuse what is not an IANA zone, naming the field", async () => {
    const acc = await seedAccount();
    const client = await connect(acc.human);
    const zoneFields = describeAllTools().flatMap((d) => fieldsOf(d.inputSchema, (name) => /time_zone$/.test(name)).map((f) => [d.name, f.path]));
    expect(zoneFields).toEqual([["update_account_settings", "time_zone"]]);
    for (const [tool, field] of zoneFields) {
      for (const bad of ["Mars/Olympus_Mons", "+25:00", "UTC+25", "Europe/Berlinn"]) {
        const text = await client.fails(tool, { [field]: bad });
        expect(text, bad).toContain(`${field}: "${bad}" is not an IANA time zone`);
      }
      expect((await client.ok(tool, { [field]: "europe/berlin" })).settings.time_zone).toBe("Europe/Berlin");
    }
    await client.close();
  });
});
