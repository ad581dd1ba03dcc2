import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { connect, ERAS, seedAccount, snapshotDb, type TestClient } from "./helpers.ts";
import { activityOf } from "./lifecycle.helpers.ts";

/** An account in `timeZone` with a person's and an agent's client. */
async function setup(timeZone: string) {
  const acc = await seedAccount(`Recurring ${timeZone}`);
  const human = await connect(acc.human);
  const agent = await connect(acc.agent, "legacy");
  await human.ok("update_account_settings", { time_zone: timeZone });
  return { acc, human, agent };
}

async function seriesRows(seriesId: string) {
  return (
    await env.DB.prepare("SELECT id, status, due_at, recurrence IS NOT NULL AS holds_rule, trash_id FROM tasks WHERE series_id = ? ORDER BY created_at, rowid")
      .bind(seriesId)
      .all<{ id: string; status: string; due_at: string; holds_rule: number; trash_id: string | null }>()
  ).results;
}

async function completeAll(client: TestClient, first: string, times: number): Promise<string[]> {
  const dues: string[] = [];
  let id = first;
  for (let i = 0; i < times; i++) {
    const r = await client.ok("complete_task", { task_id: id });
    if (!r.next_occurrence) break;
    dues.push(r.next_occurrence.due_at);
    id = r.next_occurrence.id;
  }
  return dues;
}

describe("recurring tasks through MCP", () => {
  it("completing an auto-OK occurrence creates the next in the same batch: same title, notes, labels, steps (reset), assignee, auto-OK; 09:00 Berlin stays 09:00 across the spring change", async () => {
    const { acc, human, agent } = await setup("Europe/Berlin");
    const { task } = await human.ok("create_task", {
      title: "Water the plants",
      notes: "the big ficus too",
      priority: "high",
      due_at: "2027-03-27T09:00:00+01:00",
      assignee: acc.agentName,
      auto_ok: true,
      estimate_minutes: 10,
      recurrence: "FREQ=DAILY",
    });
    expect(task.recurrence).toBe("FREQ=DAILY");
    expect(task.series_id).toMatch(/^ser_/);
    await human.ok("label_task", { task_id: task.id, labels: ["home", "plants"] });
    const { steps } = await human.ok("add_steps", { task_id: task.id, steps: ["fill the can", "water"] });
    await agent.ok("set_step_status", { step_id: steps[0].id, status: "done" });

    const done = await agent.ok("complete_task", { task_id: task.id });
    expect(done.outcome).toBe("completed");
    expect(done.task).toMatchObject({ status: "done", recurrence: null, series_id: task.series_id });
    const next = done.next_occurrence;
    expect(next).toMatchObject({
      title: "Water the plants", notes: "the big ficus too", priority: "high", assignee: acc.agentName, auto_ok: true,
      estimate_minutes: 10, status: "open", recurrence: "FREQ=DAILY", series_id: task.series_id, due_at: "2027-03-28T07:00:00.000Z",
    });
    const shown = await agent.ok("get_task", { task_id: next.id });
    expect(shown.labels.map((l: { name: string }) => l.name).sort()).toEqual(["home", "plants"]);
    expect(shown.steps.map((s: { text: string; status: string }) => [s.text, s.status])).toEqual([["fill the can", "pending"], ["water", "pending"]]);
    expect(shown.recurrence).toEqual({ rule: "FREQ=DAILY", time_zone: "Europe/Berlin", occurrence: 2, next_due_at: "2027-03-29T07:00:00.000Z" });
    expect(shown.series).toMatchObject({ id: task.series_id, total: 2 });
    expect(shown.series.occurrences.map((o: { id: string }) => o.id)).toEqual([next.id, task.id]);
    const old = await agent.ok("get_task", { task_id: task.id });
    expect(old.recurrence).toBeNull();
    expect(old.series.total).toBe(2);
    expect((await activityOf(next.id)).map((e) => e.summary)[0]).toMatch(/occurrence 2 of series ser_/);
    expect(await agent.ok("complete_task", { task_id: next.id })).toMatchObject({ next_occurrence: { due_at: "2027-03-29T07:00:00.000Z" } });
    await Promise.all([human.close(), agent.close()]);
  });

  it("America/New_York: a weekly Sunday 09:00 stays 09:00 local across the autumn change; the tasks list shows the rule", async () => {
    const { human, agent } = await setup("America/New_York");
    const { task } = await human.ok("create_task", { title: "Weekly review", due_at: "2027-10-31T09:00:00-04:00", recurrence: "RRULE:freq=weekly;byday=su" });
    expect(task.recurrence).toBe("FREQ=WEEKLY;BYDAY=SU");
    expect(await completeAll(human, task.id, 2)).toEqual(["2027-11-07T14:00:00.000Z", "2027-11-14T14:00:00.000Z"]);
    const open = await agent.ok("list_tasks", { status: ["open"] });
    expect(open.items).toHaveLength(1);
    expect(open.items[0]).toMatchObject({ recurrence: "FREQ=WEEKLY;BYDAY=SU", due_at: "2027-11-14T14:00:00.000Z" });
    await Promise.all([human.close(), agent.close()]);
  });

  it("month ends: monthly on the 31st falls on the last day of shorter months", async () => {
    const { human } = await setup("UTC");
    const { task } = await human.ok("create_task", { title: "Invoice", due_at: "2027-01-31T10:00:00Z", recurrence: "FREQ=MONTHLY;BYMONTHDAY=31" });
    const dues = await completeAll(human, task.id, 3);
    expect(dues).toEqual(["2027-02-28T10:00:00.000Z", "2027-03-31T10:00:00.000Z", "2027-04-30T10:00:00.000Z"]);
    await human.close();
  });

  it("COUNT and UNTIL end the series: the last completion creates nothing and leaves no live occurrence", async () => {
    const { human } = await setup("UTC");
    const counted = (await human.ok("create_task", { title: "Three times", due_at: "2027-05-01T08:00:00Z", recurrence: "FREQ=DAILY;COUNT=3" })).task;
    expect(await completeAll(human, counted.id, 10)).toEqual(["2027-05-02T08:00:00.000Z", "2027-05-03T08:00:00.000Z"]);
    const rows = await seriesRows(counted.series_id);
    expect(rows.map((r) => [r.status, r.holds_rule])).toEqual([["done", 0], ["done", 0], ["done", 0]]);
    const last = await human.ok("get_task", { task_id: rows[2].id });
    expect(last.recurrence).toBeNull();
    expect(last.series.total).toBe(3);

    const until = (await human.ok("create_task", { title: "Until Friday", due_at: "2027-05-05T08:00:00Z", recurrence: "FREQ=DAILY;UNTIL=20270507" })).task;
    expect((await human.ok("get_task", { task_id: until.id })).recurrence.next_due_at).toBe("2027-05-06T08:00:00.000Z");
    expect(await completeAll(human, until.id, 10)).toEqual(["2027-05-06T08:00:00.000Z", "2027-05-07T08:00:00.000Z"]);
    await human.close();
  });

  it("a completion retried with the same idempotency key, even racing, creates exactly one next occurrence", async () => {
    const { acc, agent } = await setup("Europe/Berlin");
    const human = await connect(acc.human);
    const { task } = await human.ok("create_task", { title: "Stand-up notes", due_at: "2027-04-01T09:00:00+02:00", recurrence: "FREQ=DAILY", auto_ok: true });
    const first = await agent.ok("complete_task", { task_id: task.id, idempotency_key: "done-1" });
    const again = await agent.ok("complete_task", { task_id: task.id, idempotency_key: "done-1" });
    expect(again).toEqual(first);
    const racing = await Promise.all(Array.from({ length: 6 }, () => agent.call("complete_task", { task_id: first.next_occurrence.id, idempotency_key: "done-2" })));
    expect(racing.every((r) => !r.isError)).toBe(true);
    expect(new Set(racing.map((r) => r.structured.next_occurrence?.id)).size).toBe(1);
    const plain = await Promise.all(Array.from({ length: 4 }, () => agent.call("complete_task", { task_id: racing[0].structured.next_occurrence.id })));
    // One of them completed it; each answers with the one next occurrence it created.
    expect(plain.filter((r) => r.structured.changed).length).toBe(1);
    expect(new Set(plain.map((r) => r.structured.next_occurrence?.id)).size).toBe(1);
    expect(plain[0].structured.next_occurrence).toBeTruthy();
    const rows = await seriesRows(task.series_id);
    expect(rows).toHaveLength(4);
    expect(rows.filter((r) => r.holds_rule).length).toBe(1);
    expect(rows.filter((r) => r.status === "open").length).toBe(1);
    await Promise.all([human.close(), agent.close()]);
  });

  it("the approval path: an agent's completion waits for a person; approve_task creates the next occurrence", async () => {
    const { acc, human, agent } = await setup("Europe/Berlin");
    const { task } = await human.ok("create_task", { title: "Publish the newsletter", due_at: "2027-06-04T10:00:00+02:00", recurrence: "FREQ=WEEKLY;BYDAY=FR", assignee: acc.agentName });
    const waiting = await agent.ok("complete_task", { task_id: task.id, note: "sent to the printer" });
    expect(waiting).toMatchObject({ outcome: "awaiting_approval", next_occurrence: null });
    expect((await seriesRows(task.series_id)).length).toBe(1);
    const approved = await human.ok("approve_task", { task_id: task.id, idempotency_key: "ok-1" });
    expect(approved.task.status).toBe("done");
    expect(approved.next_occurrence).toMatchObject({ due_at: "2027-06-11T08:00:00.000Z", assignee: acc.agentName, auto_ok: false, recurrence: "FREQ=WEEKLY;BYDAY=FR" });
    expect(await human.ok("approve_task", { task_id: task.id, idempotency_key: "ok-1" })).toEqual(approved);
    expect((await human.ok("approve_task", { task_id: task.id })).changed).toBe(false);
    expect((await seriesRows(task.series_id)).length).toBe(2);
    await Promise.all([human.close(), agent.close()]);
  });

  it("rescheduling moves one occurrence and keeps the rule; update_task changes or clears the rule", async () => {
    const { human } = await setup("UTC");
    const { task } = await human.ok("create_task", { title: "Backup", due_at: "2027-07-05T06:00:00Z", recurrence: "FREQ=WEEKLY;BYDAY=MO" });
    const moved = await human.ok("update_task", { task_id: task.id, due_at: "2027-07-07T06:00:00Z" });
    expect(moved.task).toMatchObject({ recurrence: "FREQ=WEEKLY;BYDAY=MO", due_at: "2027-07-07T06:00:00.000Z" });
    const n1 = (await human.ok("complete_task", { task_id: task.id })).next_occurrence;
    expect(n1.due_at).toBe("2027-07-12T06:00:00.000Z");

    const moveBack = await human.ok("update_task", { task_id: n1.id, due_at: "2027-07-09T06:00:00Z" });
    expect(moveBack.changed).toBe(true);
    const n2 = (await human.ok("complete_task", { task_id: n1.id })).next_occurrence;
    expect(n2.due_at).toBe("2027-07-19T06:00:00.000Z");

    const changed = await human.ok("update_task", { task_id: n2.id, due_at: "2027-07-21T07:00:00Z", recurrence: "FREQ=WEEKLY;BYDAY=WE" });
    expect(changed.task).toMatchObject({ recurrence: "FREQ=WEEKLY;BYDAY=WE", series_id: task.series_id });
    expect((await human.ok("update_task", { task_id: n2.id, due_at: "2027-07-21T07:00:00Z", recurrence: "FREQ=WEEKLY;BYDAY=WE" })).changed).toBe(false);
    expect((await human.ok("get_task", { task_id: n2.id })).recurrence).toMatchObject({ occurrence: 1, next_due_at: "2027-07-28T07:00:00.000Z" });

    const cleared = await human.ok("update_task", { task_id: n2.id, recurrence: null });
    expect(cleared.task.recurrence).toBeNull();
    expect((await human.ok("complete_task", { task_id: n2.id })).next_occurrence).toBeNull();
    const history = (await human.ok("get_task_history", { task_id: n2.id })).items.map((e: { summary: string }) => e.summary);
    expect(history.some((s: string) => /updated due_at, recurrence \(repeating FREQ=WEEKLY;BYDAY=WE\)/.test(s))).toBe(true);
    await human.close();
  });

  it("deleting the live occurrence ends the series; restoring it brings the series back", async () => {
    const { human } = await setup("Europe/Berlin");
    const { task } = await human.ok("create_task", { title: "Pay rent", due_at: "2027-08-01T09:00:00+02:00", recurrence: "FREQ=MONTHLY" });
    const n1 = (await human.ok("complete_task", { task_id: task.id })).next_occurrence;
    const { trash_id } = await human.ok("delete_task", { task_id: n1.id });
    expect((await seriesRows(task.series_id)).filter((r) => r.trash_id === null && r.holds_rule).length).toBe(0);
    expect((await human.ok("list_tasks", { status: ["open"] })).items).toHaveLength(0);
    expect((await human.ok("get_task", { task_id: task.id })).series.total).toBe(1);

    await human.ok("restore_from_trash", { item_id: trash_id });
    const back = await human.ok("get_task", { task_id: n1.id });
    expect(back.recurrence).toMatchObject({ rule: "FREQ=MONTHLY", occurrence: 2, next_due_at: "2027-10-01T07:00:00.000Z" });
    expect(back.series.total).toBe(2);
    expect((await human.ok("complete_task", { task_id: n1.id })).next_occurrence.due_at).toBe("2027-10-01T07:00:00.000Z");
    await human.close();
  });

  it("refuses a wrong rule naming the part, a rule without due_at, a recurring task without a due time, and a rule on a finished task; nothing is written", async () => {
    const { human } = await setup("UTC");
    const { task } = await human.ok("create_task", { title: "Repeat me", due_at: "2027-09-01T09:00:00Z", recurrence: "FREQ=DAILY" });
    const plain = (await human.ok("create_task", { title: "Done once" })).task;
    await human.ok("complete_task", { task_id: plain.id });
    const before = await snapshotDb();
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ["create_task", { title: "x", due_at: "2027-09-01T09:00:00Z", recurrence: "FREQ=FORTNIGHTLY" }, /recurrence: FREQ: "FORTNIGHTLY" is not supported/],
      ["create_task", { title: "x", due_at: "2027-09-01T09:00:00Z", recurrence: "FREQ=WEEKLY;BYDAY=MON" }, /recurrence: BYDAY: "MON" is not a weekday/],
      ["create_task", { title: "x", due_at: "2027-09-01T09:00:00Z", recurrence: "FREQ=DAILY;INTERVAL=-1" }, /recurrence: INTERVAL:/],
      ["create_task", { title: "x", due_at: "2027-09-01T09:00:00Z", recurrence: "FREQ=DAILY;COUNT=5000" }, /recurrence: COUNT:/],
      ["create_task", { title: "x", due_at: "2027-09-01T09:00:00Z", recurrence: "FREQ=DAILY;UNTIL=2027" }, /recurrence: UNTIL:/],
      ["create_task", { title: "x", due_at: "2027-09-01T09:00:00Z", recurrence: "FREQ=DAILY;BYMONTHDAY=3" }, /recurrence: BYMONTHDAY: needs FREQ=MONTHLY/],
      ["create_task", { title: "x", due_at: "2027-09-01T09:00:00Z", recurrence: "FREQ=DAILY;BYSETPOS=1" }, /recurrence: BYSETPOS: is not supported/],
      ["create_task", { title: "x", recurrence: "FREQ=DAILY" }, /^due_at: a recurring task needs one/],
      ["update_task", { task_id: task.id, due_at: null }, /due_at: a recurring task needs a due time/],
      ["update_task", { task_id: plain.id, recurrence: "FREQ=DAILY" }, /is done: only an unfinished task can repeat/],
      ["update_task", { task_id: task.id, recurrence: "FREQ=DAILY;UNTIL=20200101" }, /recurrence: UNTIL: .*before the first due time/],
    ];
    for (const [tool, args, why] of cases) expect(await human.fails(tool, args), JSON.stringify(args)).toMatch(why);
    expect(await snapshotDb()).toBe(before);
    await human.close();
  });

  for (const era of ERAS) {
    it(`${era}: a rule with several mistakes is refused once, naming every field and part with its fix; nothing is written`, async () => {
      const { acc, human: setupClient, agent } = await setup("UTC");
      await Promise.all([setupClient.close(), agent.close()]);
      const human = await connect(acc.human, era);
      const { task } = await human.ok("create_task", { title: "Repeat me", due_at: "2027-09-01T09:00:00Z" });
      const before = await snapshotDb();
      const text = await human.fails("create_task", { title: "x", recurrence: "FREQ=HOURLY;INTERVAL=0;BYDAY=MO,XX;BYMONTHDAY=40;COUNT=3;UNTIL=20271231;BYHOUR=9" });
      expect(text.split("\n")).toEqual([
        "7 problems with the recurrence; fix each and call again:",
        "- recurrence: BYHOUR: is not supported; the parts are FREQ, INTERVAL, BYDAY, BYMONTHDAY, COUNT, UNTIL",
        '- recurrence: FREQ: "HOURLY" is not supported: use DAILY, WEEKLY, MONTHLY or YEARLY',
        '- recurrence: INTERVAL: "0" must be a whole number from 1 to 1000',
        "- recurrence: UNTIL: give COUNT or UNTIL, not both",
        '- recurrence: BYDAY: "XX" is not a weekday: use MO, TU, WE, TH, FR, SA or SU, comma-separated (FREQ=MONTHLY also takes 1MO … 5MO and -1MO … -5MO)',
        '- recurrence: BYMONTHDAY: "40" must be a day of the month from 1 to 31, or -1 to -31 counted from the month\'s end',
        "- due_at: a recurring task needs one: the first occurrence's due time (its local time of day is kept for every occurrence); pass due_at too",
      ]);
      const update = await human.fails("update_task", { task_id: task.id, recurrence: "FREQ=WEEKLY;BYDAY=1MO;COUNT=0" });
      expect(update.split("\n")).toEqual([
        "2 problems with the recurrence; fix each and call again:",
        "- recurrence: COUNT: \"0\" must be a whole number from 1 to 1000",
        '- recurrence: BYDAY: "1MO": an ordinal weekday (like 1MO or -1FR) needs FREQ=MONTHLY; use plain weekdays with FREQ=WEEKLY',
      ]);
      // One mistake still reads as one line.
      expect(await human.fails("create_task", { title: "x", due_at: "2027-09-01T09:00:00Z", recurrence: "FREQ=DAILY;COUNT=0" })).toBe(
        'recurrence: COUNT: "0" must be a whole number from 1 to 1000.',
      );
      expect(await snapshotDb()).toBe(before);
      await human.close();
    });
  }
});
