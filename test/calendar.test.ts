import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { activityCount, asServer, connect, ERAS, seedAccount, snapshotDb, type TestClient } from "./helpers.ts";


const EVENT = {
  provider: "google",
  event_id: "evt-42@google.com",
  title: "Kick-off",
  starts_at: "2026-05-04T09:00:00+02:00",
  ends_at: "2026-05-04T10:00:00+02:00",
  url: "https://calendar.google.com/event?eid=42",
};

async function task(c: TestClient, title: string, extra: Record<string, unknown> = {}): Promise<string> {
  return (await c.ok("create_task", { title, ...extra })).task.id;
}

describe("link_calendar_event / unlink_calendar_event", () => {
  for (const era of ERAS) {
    it(`${era}: links once per event and task, writes nothing when equal, refuses other details`, async () => {
      const acc = await seedAccount();
      const c = await connect(acc.agent, era);
      const t = await task(c, "Prepare kick-off");

      const first = await c.ok("link_calendar_event", { task_id: t, ...EVENT });
      expect(first).toMatchObject({ created: true, changed: true });
      expect(first.link).toMatchObject({
        id: expect.stringMatching(/^cal_/),
        task_id: t,
        task_title: "Prepare kick-off",
        provider: "google",
        event_id: EVENT.event_id,
        title: "Kick-off",
        starts_at: "2026-05-04T07:00:00.000Z",
        ends_at: "2026-05-04T08:00:00.000Z",
        url: EVENT.url,
      });

      const n = await activityCount(acc.accountId);
      const same = await c.ok("link_calendar_event", { task_id: t, ...EVENT });
      expect(same).toEqual({ link: first.link, created: false, changed: false });
      const sameWithoutUrl = await c.ok("link_calendar_event", { task_id: t, ...EVENT, url: undefined });
      expect(sameWithoutUrl.changed).toBe(false);
      expect(await activityCount(acc.accountId)).toBe(n);

      // Other details for a linked event are refused: a link is never overwritten; unlinking first is the way.
      const before = await snapshotDb();
      const moved = { task_id: t, ...EVENT, title: "Kick-off (moved)", ends_at: "2026-05-04T11:00:00+02:00" };
      expect(await c.fails("link_calendar_event", moved)).toBe(
        `google event ${EVENT.event_id} is already linked to task ${t} as "Kick-off" (2026-05-04T07:00:00.000Z – 2026-05-04T08:00:00.000Z, ${EVENT.url}) [link ${first.link.id}]; ` +
          "a link is not overwritten: unlink_calendar_event removes it, then link_calendar_event links the event with its new details.",
      );
      expect(await c.fails("link_calendar_event", { task_id: t, ...EVENT, url: "https://calendar.example.com/other" })).toMatch(/already linked/);
      expect(await snapshotDb()).toBe(before);
      expect(await activityCount(acc.accountId)).toBe(n);
      const history = await c.ok("list_activity", { target_id: t });
      expect(history.items[0]).toMatchObject({ tool: "link_calendar_event", actor: acc.agentName });

      const instant = await c.ok("link_calendar_event", { task_id: t, provider: "ical", event_id: "x", title: "Deadline", starts_at: "2026-05-05T12:00:00Z", ends_at: "2026-05-05T12:00:00Z" });
      expect(instant.link.url).toBeNull();

      const byTask = await c.ok("list_calendar_links", { task_id: t });
      expect(byTask.items.map((l: { id: string }) => l.id)).toEqual([first.link.id, instant.link.id]);

      const gone = await c.ok("unlink_calendar_event", { task_id: t, provider: "google", event_id: EVENT.event_id });
      expect(gone).toMatchObject({ removed: true, link: { id: first.link.id } });
      const m = await activityCount(acc.accountId);
      // A repeat answers as the first call did, by either name of the link (C7).
      expect(await c.ok("unlink_calendar_event", { task_id: t, provider: "google", event_id: EVENT.event_id })).toEqual({ ...gone, removed: false });
      expect(await c.ok("unlink_calendar_event", { task_id: t, link_id: first.link.id })).toEqual({ ...gone, removed: false });
      expect(await activityCount(acc.accountId)).toBe(m);
      expect((await c.ok("unlink_calendar_event", { task_id: t, link_id: instant.link.id })).removed).toBe(true);
      expect((await c.ok("list_calendar_links", { task_id: t })).items).toEqual([]);
      // Unlinked, the event links again with its new details.
      const relinked = await c.ok("link_calendar_event", moved);
      expect(relinked).toMatchObject({ created: true, changed: true, link: { title: "Kick-off (moved)", ends_at: "2026-05-04T09:00:00.000Z" } });
      await c.close();
    });
  }

  it("refuses bad input and other accounts' tasks, changing nothing", async () => {
    const acc = await seedAccount();
    const stranger = await seedAccount("Someone else");
    const c = await connect(acc.human);
    const s = await connect(stranger.human);
    const t = await task(c, "Mine");
    const theirs = await task(s, "Theirs");
    const theirLink = (await s.ok("link_calendar_event", { task_id: theirs, ...EVENT })).link;
    const before = await snapshotDb();
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ ...EVENT, task_id: theirs }, /No task .* list_tasks/],
      [{ ...EVENT, task_id: "tsk_0000000000000000" }, /No task/],
      [{ ...EVENT, task_id: t, ends_at: "2026-05-04T08:59:00+02:00" }, /ends_at.*before starts_at/],
      [{ ...EVENT, task_id: t, url: "http://calendar.example.com/e/1" }, /url: expected an https/],
      [{ ...EVENT, task_id: t, url: "javascript:alert(1)" }, /url/],
      [{ ...EVENT, task_id: t, provider: "Google Calendar" }, /provider/],
      [{ ...EVENT, task_id: t, title: "" }, /title/],
      [{ ...EVENT, task_id: t, title: "x".repeat(501) }, /title/],
      [{ ...EVENT, task_id: t, starts_at: "next monday" }, /starts_at/],
      [{ ...EVENT, task_id: t, event_id: "" }, /event_id/],
    ];
    for (const [args, message] of cases) expect(await c.fails("link_calendar_event", args)).toMatch(message);
    expect(await c.fails("unlink_calendar_event", { task_id: theirs, link_id: theirLink.id })).toMatch(/No task/);
    expect(await c.fails("unlink_calendar_event", { task_id: t, link_id: theirLink.id, provider: "google" })).toMatch(/either by link_id/);
    expect(await c.fails("unlink_calendar_event", { task_id: t, provider: "google" })).toMatch(/either by link_id/);
    expect(await c.fails("list_calendar_links", { task_id: theirs })).toMatch(/No task/);
    expect(await c.fails("list_calendar_links", {})).toMatch(/task_id, or a range/);
    expect(await c.fails("list_calendar_links", { from: "2026-05-01T00:00:00Z" })).toMatch(/both from and to/);
    expect(await c.fails("list_calendar_links", { from: "2026-05-02T00:00:00Z", to: "2026-05-01T00:00:00Z" })).toMatch(/to: must be after from/);
    expect(await snapshotDb()).toBe(before);
    expect(await c.ok("unlink_calendar_event", { task_id: t, link_id: theirLink.id })).toEqual({ removed: false, link: null });
    expect((await c.ok("list_calendar_links", { from: "2026-05-01T00:00:00Z", to: "2026-06-01T00:00:00Z" })).items).toEqual([]);
    expect(await snapshotDb()).toBe(before);
  });

  it("lists links in a range by overlap, in pages, without those of trashed tasks", async () => {
    const acc = await seedAccount();
    const c = await connect(acc.human);
    const t1 = await task(c, "One");
    const t2 = await task(c, "Two");
    const link = (tid: string, event_id: string, starts_at: string, ends_at: string) =>
      c.ok("link_calendar_event", { task_id: tid, provider: "outlook", event_id, title: event_id, starts_at, ends_at }).then((r) => r.link.id as string);
    const before = await link(t1, "before", "2026-06-01T08:00:00Z", "2026-06-01T09:00:00Z");
    const endsAtFrom = await link(t1, "ends-at-from", "2026-06-01T09:00:00Z", "2026-06-01T10:00:00Z");
    const spans = await link(t2, "spans", "2026-05-31T00:00:00Z", "2026-06-03T00:00:00Z");
    const inside = await link(t1, "inside", "2026-06-01T12:00:00Z", "2026-06-01T13:00:00Z");
    const instantAtFrom = await link(t2, "instant", "2026-06-01T10:00:00Z", "2026-06-01T10:00:00Z");
    const atTo = await link(t2, "at-to", "2026-06-02T10:00:00Z", "2026-06-02T11:00:00Z");
    void before;
    void endsAtFrom;
    void atTo;
    const range = { from: "2026-06-01T10:00:00Z", to: "2026-06-02T10:00:00Z" };
    const all = await c.ok("list_calendar_links", range);
    expect(all.items.map((l: { id: string }) => l.id)).toEqual([spans, instantAtFrom, inside]);
    const p1 = await c.ok("list_calendar_links", { ...range, limit: 2 });
    const p2 = await c.ok("list_calendar_links", { ...range, limit: 2, cursor: p1.next_cursor });
    expect([...p1.items, ...p2.items]).toEqual(all.items);
    expect(p2.next_cursor).toBeNull();
    const both = await c.ok("list_calendar_links", { ...range, task_id: t1 });
    expect(both.items.map((l: { id: string }) => l.id)).toEqual([inside]);

    await asServer(env.DB, env.DB.prepare("UPDATE tasks SET trash_id = 'trs_hidden0000000000' WHERE id = ?").bind(t2));
    expect((await c.ok("list_calendar_links", range)).items.map((l: { id: string }) => l.id)).toEqual([inside]);
    expect(await c.fails("link_calendar_event", { task_id: t2, ...EVENT })).toMatch(/No task/);
  });
});

describe("get_agenda", () => {
  it("Europe/Berlin: the day the clocks go back lasts 25 hours and tasks and events fall on their local day", async () => {
    const acc = await seedAccount();
    const c = await connect(acc.human);
    await c.ok("update_account_settings", { time_zone: "Europe/Berlin" });
    const early = await task(c, "00:30 CEST on the 25th", { due_at: "2026-10-24T22:30:00Z" });
    const late = await task(c, "23:30 CET on the 25th", { due_at: "2026-10-25T22:30:00Z" });
    const next = await task(c, "00:30 CET on the 26th", { due_at: "2026-10-25T23:30:00Z" });
    const before = await task(c, "23:30 CEST on the 24th", { due_at: "2026-10-24T21:30:00Z" });
    const done = await task(c, "done", { due_at: "2026-10-25T10:00:00Z" });
    const snoozed = await task(c, "snoozed", { due_at: "2026-10-25T11:00:00Z" });
    const trashed = await task(c, "trashed", { due_at: "2026-10-25T12:00:00Z" });
    await asServer(env.DB, [
      env.DB.prepare("UPDATE tasks SET status = 'done', completed_at = ? WHERE id = ?").bind(new Date().toISOString(), done),
      env.DB.prepare("UPDATE tasks SET snoozed_until = '2099-01-01T00:00:00.000Z' WHERE id = ?").bind(snoozed),
      env.DB.prepare("UPDATE tasks SET trash_id = 'trs_hidden0000000000' WHERE id = ?").bind(trashed),
    ]);
    const overnight = (await c.ok("link_calendar_event", {
      task_id: late, provider: "google", event_id: "night", title: "Night shift", starts_at: "2026-10-25T22:00:00Z", ends_at: "2026-10-26T01:00:00Z",
    })).link;

    const agenda = await c.ok("get_agenda", { date: "2026-10-25", days: 2 });
    expect(agenda.time_zone).toBe("Europe/Berlin");
    expect(agenda.truncated).toBe(false);
    const [d25, d26] = agenda.days;
    expect(d25).toMatchObject({ date: "2026-10-25", starts_at: "2026-10-24T22:00:00.000Z", ends_at: "2026-10-25T23:00:00.000Z" });
    expect(d26).toMatchObject({ date: "2026-10-26", starts_at: "2026-10-25T23:00:00.000Z", ends_at: "2026-10-26T23:00:00.000Z" });
    expect(Date.parse(d25.ends_at) - Date.parse(d25.starts_at)).toBe(25 * 3_600_000);
    expect(d25.tasks.map((t: { id: string }) => t.id)).toEqual([early, late]);
    expect(d26.tasks.map((t: { id: string }) => t.id)).toEqual([next]);
    expect(d25.tasks[0]).toMatchObject({ title: "00:30 CEST on the 25th", status: "open", priority: "normal", due_at: "2026-10-24T22:30:00.000Z" });
    expect(d25.events.map((e: { id: string }) => e.id)).toEqual([overnight.id]);
    expect(d26.events.map((e: { id: string }) => e.id)).toEqual([overnight.id]);
    expect(JSON.stringify(agenda)).not.toContain(before);

    const withSnoozed = await c.ok("get_agenda", { date: "2026-10-25", include_snoozed: true });
    expect(withSnoozed.days).toHaveLength(1);
    expect(withSnoozed.days[0].tasks.map((t: { id: string }) => t.id)).toEqual([early, snoozed, late]);

    const spring = await c.ok("get_agenda", { date: "2026-03-29" });
    expect(spring.days[0]).toMatchObject({ starts_at: "2026-03-28T23:00:00.000Z", ends_at: "2026-03-29T22:00:00.000Z" });
  });

  it("America/New_York around 2026-11-01, the default day, and bad input", async () => {
    const acc = await seedAccount();
    const c = await connect(acc.human);
    await c.ok("update_account_settings", { time_zone: "America/New_York" });
    const lateNight = await task(c, "23:30 EST on Nov 1", { due_at: "2026-11-02T04:30:00Z" });
    const repeated = await task(c, "01:30 EST (the second one)", { due_at: "2026-11-01T06:30:00Z" });
    const agenda = await c.ok("get_agenda", { date: "2026-10-31", days: 3 });
    expect(agenda.days.map((d: { date: string; starts_at: string }) => [d.date, d.starts_at])).toEqual([
      ["2026-10-31", "2026-10-31T04:00:00.000Z"],
      ["2026-11-01", "2026-11-01T04:00:00.000Z"],
      ["2026-11-02", "2026-11-02T05:00:00.000Z"],
    ]);
    expect(agenda.days[1].ends_at).toBe("2026-11-02T05:00:00.000Z");
    expect(agenda.days[1].tasks.map((t: { id: string }) => t.id)).toEqual([repeated, lateNight]);
    expect(agenda.days[0].tasks).toEqual([]);
    expect(agenda.days[2].tasks).toEqual([]);

    const today = await c.ok("get_agenda", {});
    const localToday = new Intl.DateTimeFormat("en-CA", { timeZone: "America/New_York" }).format(new Date());
    expect(today.days).toHaveLength(1);
    expect(today.days[0].date).toBe(localToday);

    const fortnight = await c.ok("get_agenda", { date: "2026-12-20", days: 14 });
    expect(fortnight.days).toHaveLength(14);
    expect(fortnight.days[13].date).toBe("2027-01-02");

    expect(await c.fails("get_agenda", { days: 15 })).toMatch(/days/);
    expect(await c.fails("get_agenda", { days: 0 })).toMatch(/days/);
    expect(await c.fails("get_agenda", { date: "2026-02-30" })).toMatch(/date: 2026-02-30 is not a real date: February 2026 has no day 30/);
    expect(await c.fails("get_agenda", { date: "31.10.2026" })).toMatch(/date/);
  });
});
