/** The task page's part actions' own arithmetic: wall times in a zone to ISO with offset, a link's span in words, label marks. */
import { describe, expect, it } from "vitest";
import { labelMark, spanWords, zonedIso } from "../src/web/console/actions/task-parts.ts";

describe("task part actions", () => {
  it("reads a datetime-local value in the account's zone as an ISO time with that moment's offset", () => {
    expect(zonedIso("2026-07-01T14:00", "Europe/Berlin")).toBe("2026-07-01T14:00:00+02:00");
    expect(zonedIso("2026-12-07T09:00", "Europe/Berlin")).toBe("2026-12-07T09:00:00+01:00");
    expect(zonedIso("2026-01-01T00:00:30", "America/St_Johns")).toBe("2026-01-01T00:00:30-03:30");
    // A time the clocks skip names the instant after the gap.
    expect(Date.parse(zonedIso("2026-03-29T02:30", "Europe/Berlin"))).toBe(Date.parse("2026-03-29T01:30:00Z"));
    // Anything else goes to the tool as typed, for it to refuse.
    expect(zonedIso("tomorrow", "UTC")).toBe("tomorrow");
  });

  it("says a link's times in the zone, the end's date only when it is another day", () => {
    expect(spanWords("2026-12-07T08:00:00.000Z", "2026-12-07T09:30:00.000Z", "Europe/Berlin")).toBe("7 Dec 2026, 09:00 – 10:30");
    expect(spanWords("2026-12-07T22:00:00.000Z", "2026-12-08T09:30:00.000Z", "Europe/Berlin")).toBe("7 Dec 2026, 23:00 – 8 Dec 2026, 10:30");
  });

  it("marks label names without regard to ASCII case", () => {
    expect(labelMark("Docs")).toBe(labelMark("docs"));
    expect(labelMark("docs")).not.toBe(labelMark("doc"));
  });
});
