/**
 * claim_task without task_id through real SDK clients, both eras, against real
 * D1: eight agents asking at once over eight ready tasks each get a different
 * one, none of the tasks that are not ready (waiting on unfinished work,
 * snoozed, held by another agent) is handed out, and a ninth call is told
 * nothing is ready, with what waits.
 */
import { describe, expect, it } from "vitest";
import { connect, createToken, ERAS, seedAccount, type Era, type TestClient } from "./helpers.ts";

async function agentClient(accountId: string, name: string, era: Era): Promise<TestClient> {
  return connect((await createToken({ accountId, kind: "agent", scope: "write", agent: name })).secret, era);
}

const DAY = 86_400_000;

describe.each(ERAS)("claim_task, the next ready task (%s)", (era) => {
  it("eight agents at once over eight ready tasks: eight distinct claims, none of the waiting ones, then nothing ready", async () => {
    const acc = await seedAccount(`Next ${era}`, "holder");
    const person = await connect(acc.human, era);
    const holder = await connect(acc.agent, era);
    const agents = await Promise.all(Array.from({ length: 8 }, (_, i) => agentClient(acc.accountId, `worker${i}`, era)));
    const late = await agentClient(acc.accountId, "late", era);

    // Not ready: held by another agent, waiting on it, snoozed.
    const held = (await person.ok("create_task", { title: "Held by holder", priority: "urgent" })).task.id as string;
    await holder.ok("claim_task", { task_id: held });
    const waits = (await person.ok("create_task", { title: "Waits on the held one", priority: "urgent" })).task.id as string;
    await person.ok("add_dependency", { task_id: waits, depends_on_id: held });
    const snoozed = (await person.ok("create_task", { title: "Snoozed", priority: "urgent" })).task.id as string;
    await person.ok("snooze_task", { task_id: snoozed, until: new Date(Date.now() + DAY).toISOString() });
    const notReady = new Set([held, waits, snoozed]);

    const ready: string[] = [];
    for (let i = 0; i < 8; i++) {
      const priority = i === 5 ? "urgent" : "normal";
      ready.push((await person.ok("create_task", { title: `Ready ${i}`, priority })).task.id);
    }

    const answers = await Promise.all(agents.map((c) => c.call("claim_task", {})));
    expect(answers.filter((r) => r.isError).map((r) => r.text)).toEqual([]);
    const got = answers.map((r) => r.structured.task?.id as string);
    expect(new Set(got).size).toBe(8);
    expect(new Set(got)).toEqual(new Set(ready));
    for (const id of got) expect(notReady.has(id)).toBe(false);
    for (const [i, r] of answers.entries()) {
      expect(r.structured.task.assignee).toBe(`worker${i}`);
      expect(r.structured.task.status).toBe("in_progress");
      expect(r.structured.chosen.reason).toMatch(/^most urgent ready task: priority (urgent|normal)/);
      expect(r.structured.claim_expires_at).not.toBeNull();
    }
    // The urgent one went first: to whichever call ran first, which saw 7 more ready.
    const first = answers.find((r) => r.structured.task.id === ready[5]);
    expect(first?.structured.chosen.ready_left).toBe(7);

    const none = await late.ok("claim_task", {});
    expect(none.task).toBeNull();
    expect(none.changed).toBe(false);
    expect(none.nothing_ready).toMatchObject({ waiting_on_dependencies: 1, snoozed: 1, held: 9, scoped_out: 0 });
    expect(none.nothing_ready.earliest_ready_at).not.toBeNull();

    await Promise.all([person, holder, late, ...agents].map((c) => c.close()));
  });

  it("narrows by project and label, prefers urgency then due time, and refuses project_id beside task_id", async () => {
    const acc = await seedAccount(`Narrow ${era}`, "bot");
    const person = await connect(acc.human, era);
    const bot = await connect(acc.agent, era);
    const { project } = await person.ok("create_project", { name: "Launch" });
    const outside = (await person.ok("create_task", { title: "Outside", priority: "urgent" })).task.id;
    const later = (await person.ok("create_task", { title: "Due later", project_id: project.id, due_at: new Date(Date.now() + 3 * DAY).toISOString() })).task.id;
    const sooner = (await person.ok("create_task", { title: "Due sooner", project_id: project.id, due_at: new Date(Date.now() + DAY).toISOString() })).task.id;
    const labelled = (await person.ok("create_task", { title: "Labelled" })).task.id;
    await person.ok("label_task", { task_id: labelled, labels: ["ops"] });

    expect((await bot.ok("claim_task", { project_id: project.id })).task.id).toBe(sooner);
    expect((await bot.ok("claim_task", { project_id: project.id })).task.id).toBe(later);
    expect((await bot.ok("claim_task", { project_id: project.id })).task).toBeNull();
    expect((await bot.ok("claim_task", { label: "ops" })).task.id).toBe(labelled);
    expect((await bot.ok("claim_task", {})).task.id).toBe(outside);
    expect(await bot.fails("claim_task", { task_id: outside, project_id: project.id })).toMatch(/leave them out when you name task_id/);
    await Promise.all([person, bot].map((c) => c.close()));
  });
});
