import { describe, expect, it } from "vitest";
import { activityCount, connect, createToken, ERAS, seedAccount, snapshotDb } from "./helpers.ts";

/**
 * A tool that is not destructive never replaces what someone wrote: it refuses
 * and says what to call instead. An idempotent tool that finds its work done
 * answers as it did the first time. A person and two agents, in both eras.
 */
async function team(era: (typeof ERAS)[number]) {
  const acc = await seedAccount("Team", "builder");
  const other = await createToken({ accountId: acc.accountId, kind: "agent", scope: "write", agent: "reviewer" });
  const [person, builder, reviewer] = await Promise.all([connect(acc.human, era), connect(acc.agent, era), connect(other.secret, era)]);
  return { acc, person, builder, reviewer, close: () => Promise.all([person.close(), builder.close(), reviewer.close()]) };
}

describe("no overwrite by a tool that is not destructive", () => {
  for (const era of ERAS) {
    it(`${era}: block_task keeps the reason it has; link_calendar_event keeps a link's details; create_label keeps a color`, async () => {
      const { acc, person, builder, reviewer, close } = await team(era);
      const { task } = await person.ok("create_task", { title: "Ship the release" });
      await builder.ok("block_task", { task_id: task.id, reason: "waiting on legal" });
      const event = { task_id: task.id, provider: "google", event_id: "evt-1", title: "Release review", starts_at: "2031-03-03T10:00:00Z", ends_at: "2031-03-03T11:00:00Z" };
      const linked = await builder.ok("link_calendar_event", event);
      const label = await builder.ok("create_label", { name: "release", color: "#1f6feb" });

      const before = await snapshotDb();
      const entries = await activityCount(acc.accountId);
      expect(await reviewer.fails("block_task", { task_id: task.id, reason: "waiting on QA" })).toBe(
        `task ${task.id} is already blocked for "waiting on legal"; unblock_task clears that block first, or comment_on_task adds what else it waits for.`,
      );
      expect(await person.fails("link_calendar_event", { ...event, title: "Release review (moved)", starts_at: "2031-03-04T10:00:00Z", ends_at: "2031-03-04T11:00:00Z" })).toMatch(
        /^google event evt-1 is already linked to task tsk_\w+ as "Release review" \(2031-03-03T10:00:00.000Z – 2031-03-03T11:00:00.000Z\) \[link cal_\w+\]; a link is not overwritten: unlink_calendar_event removes it/,
      );
      expect(await reviewer.fails("create_label", { name: "Release", color: "#ff0000" })).toMatch(/a label named "release" already exists with color #1f6feb, not #ff0000/);
      expect(await snapshotDb()).toBe(before);
      expect(await activityCount(acc.accountId)).toBe(entries);

      // The same values again converge, answering as the first call did.
      expect(await reviewer.ok("block_task", { task_id: task.id, reason: "waiting on legal" })).toMatchObject({ changed: false, task: { blocked_reason: "waiting on legal" } });
      expect(await person.ok("link_calendar_event", event)).toEqual({ ...linked, created: false, changed: false });
      expect(await reviewer.ok("create_label", { name: "RELEASE" })).toEqual({ ...label, created: false });
      expect(await snapshotDb()).toBe(before);

      // What to call instead works: unblock then block, unlink then link.
      await person.ok("unblock_task", { task_id: task.id });
      expect((await reviewer.ok("block_task", { task_id: task.id, reason: "waiting on QA" })).task.blocked_reason).toBe("waiting on QA");
      await person.ok("unlink_calendar_event", { task_id: task.id, link_id: linked.link.id });
      expect((await person.ok("link_calendar_event", { ...event, title: "Release review (moved)" })).link.title).toBe("Release review (moved)");
      await close();
    });
  }
});

describe("a repeat answers as the first call did", () => {
  for (const era of ERAS) {
    it(`${era}: reject_task twice with the same reason, complete_task twice on a recurring task`, async () => {
      const { acc, person, builder, close } = await team(era);
      const { task } = await person.ok("create_task", { title: "Draft the notes" });
      await builder.ok("claim_task", { task_id: task.id });
      await builder.ok("complete_task", { task_id: task.id });
      const rejected = await person.ok("reject_task", { task_id: task.id, reason: "Add the migration steps" });
      const before = await snapshotDb();
      const entries = await activityCount(acc.accountId);
      expect(await person.ok("reject_task", { task_id: task.id, reason: "Add the migration steps" })).toEqual({ ...rejected, changed: false });
      expect(await snapshotDb()).toBe(before);
      expect(await activityCount(acc.accountId)).toBe(entries);

      const { task: daily } = await person.ok("create_task", { title: "Stand-up", due_at: "2031-01-06T09:00:00Z", recurrence: "FREQ=DAILY" });
      const done = await person.ok("complete_task", { task_id: daily.id });
      expect(done.next_occurrence).toMatchObject({ title: "Stand-up", status: "open" });
      expect(await person.ok("complete_task", { task_id: daily.id })).toEqual({ ...done, changed: false });
      await close();
    });
  }
});
