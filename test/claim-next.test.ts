/**
 * claim_task without task_id through real SDK clients, both eras, against real
 * D1: eight agents asking at once over eight ready tasks each get a different
 * one, none of the tasks that are not ready (waiting on unfinished work,
 * snoozed, held by another agent, overlapping the scope of a held task) is
 * handed out, and a ninth call is told nothing is ready, with what waits.
 * Scopes: an agent's claim by id of a task overlapping a held scope is
 * refused naming the holder and the areas, the next-ready claim skips it,
 * disjoint scopes go ahead, and a person is told of the overlap, not refused.
 */
import { describe, expect, it } from "vitest";
import { connect, createToken, ERAS, seedAccount, type Era, type TestClient } from "./helpers.ts";
import { open, signedInPerson } from "./console.helpers.ts";

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

    // Not ready: held by another agent, waiting on it, snoozed, overlapping the held one's scope.
    const held = (await person.ok("create_task", { title: "Held by holder", priority: "urgent", scope: ["src/db/**"] })).task.id as string;
    await holder.ok("claim_task", { task_id: held });
    const waits = (await person.ok("create_task", { title: "Waits on the held one", priority: "urgent" })).task.id as string;
    await person.ok("add_dependency", { task_id: waits, depends_on_id: held });
    const snoozed = (await person.ok("create_task", { title: "Snoozed", priority: "urgent" })).task.id as string;
    await person.ok("snooze_task", { task_id: snoozed, until: new Date(Date.now() + DAY).toISOString() });
    const scopedOut = (await person.ok("create_task", { title: "Same files", priority: "urgent", scope: ["src/db/tasks.ts"] })).task.id as string;
    const notReady = new Set([held, waits, snoozed, scopedOut]);

    const ready: string[] = [];
    for (let i = 0; i < 8; i++) {
      const priority = i === 5 ? "urgent" : "normal";
      // One with a scope beside the held one's: disjoint, so ready.
      const scope = i === 2 ? { scope: ["docs/**", "billing"] } : {};
      ready.push((await person.ok("create_task", { title: `Ready ${i}`, priority, ...scope })).task.id);
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
    expect(none.nothing_ready).toMatchObject({ waiting_on_dependencies: 1, snoozed: 1, held: 9, scoped_out: 1 });
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
    // A project id of no project in this account is named as such, not answered as "nothing ready".
    expect(await bot.fails("claim_task", { project_id: "prj_0000000000000000" })).toMatch(/^No project prj_0000000000000000 in this account/);
    await Promise.all([person, bot].map((c) => c.close()));
  });

  it("scopes: an overlapping claim by id is refused naming holder and areas, skipped by the next-ready claim; disjoint goes ahead; a person is told", async () => {
    const acc = await seedAccount(`Scopes ${era}`, "alpha");
    const person = await connect(acc.human, era);
    const alpha = await connect(acc.agent, era);
    const beta = await agentClient(acc.accountId, "beta", era);
    const mk = async (title: string, scope: string[], priority = "normal") => (await person.ok("create_task", { title, scope, priority })).task.id as string;
    const migration = await mk("Migrate the tasks table", ["src/db/**", "Billing"]);
    await alpha.ok("claim_task", { task_id: migration });
    expect((await person.ok("get_task", { task_id: migration })).scope).toEqual(["src/db/**", "billing"]);

    const overlapping = await mk("Index the tasks table", ["src/db/tasks.ts"], "urgent");
    const byName = await mk("Invoice layout", ["billing"], "urgent");
    const disjoint = await mk("Docs", ["docs/*.md", "src/web/**"]);

    const refused = await beta.fails("claim_task", { task_id: overlapping });
    expect(refused).toContain(`held by alpha`);
    expect(refused).toContain(migration);
    expect(refused).toContain("src/db/tasks.ts overlaps src/db/**");
    expect(await beta.fails("claim_task", { task_id: byName })).toContain("billing overlaps billing");
    // fleet_status says who holds which areas.
    const fleet = await person.ok("fleet_status", {});
    const held = fleet.agents.find((a: { name: string }) => a.name === "alpha").claimed_tasks.find((t: { id: string }) => t.id === migration);
    expect(held.scope).toEqual(["src/db/**", "billing"]);
    // The holder itself is not held back by its own scope.
    const next = await beta.ok("claim_task", {});
    expect(next.task.id).toBe(disjoint);
    const none = await beta.ok("claim_task", {});
    expect(none.task).toBeNull();
    expect(none.nothing_ready.scoped_out).toBe(2);

    // A person is never refused for a scope, but is told.
    const mine = await person.ok("claim_task", { task_id: overlapping });
    expect(mine.task.assignee).toBe("human");
    expect(mine.scope_overlap).toContain(`task ${migration}`);
    expect(mine.scope_overlap).toContain("held by alpha");
    const freed = await person.ok("claim_task", {});
    expect(freed.task.id).toBe(byName);
    expect(freed.scope_overlap).toContain("billing overlaps billing");

    // update_task sets and clears it; bad input is named.
    await person.ok("update_task", { task_id: disjoint, scope: [] });
    expect((await person.ok("get_task", { task_id: disjoint })).scope).toEqual([]);
    expect(await person.fails("update_task", { task_id: disjoint, scope: ["../up"] })).toMatch(/scope\.0: must not contain `\.\.`/);
    await Promise.all([person, alpha, beta].map((c) => c.close()));
  });

  it("the next-ready claim, and nothing ready, each answer within 2 D1 calls (warm)", async () => {
    const acc = await seedAccount(`Next trips ${era}`, "bot");
    const person = await connect(acc.human, era);
    let last: number | null = null;
    const bot = await connect(acc.agent, era, {
      onResponse: (res, body) => {
        if (body.includes('"tools/call"')) last = Number(res.headers.get("x-d1-calls"));
      },
    });
    await bot.ok("whoami", {});
    await person.ok("create_task", { title: "Only one", scope: ["src/**"] });
    expect((await bot.ok("claim_task", {})).task.title).toBe("Only one");
    expect(last).toBeLessThanOrEqual(2);
    expect((await bot.ok("claim_task", {})).task).toBeNull();
    expect(last).toBeLessThanOrEqual(2);
    await Promise.all([person, bot].map((c) => c.close()));
  });
});

describe("a task's scope on its console page", () => {
  it("shows one line in the heading, and nothing when it has none", async () => {
    const p = await signedInPerson("Scope page");
    const human = await connect(p.acc.human);
    const scoped = (await human.ok("create_task", { title: "Scoped", scope: ["src/db/", "Billing"] })).task.id;
    const plain = (await human.ok("create_task", { title: "Plain" })).task.id;
    expect((await open(p.b, `/tasks/${scoped}`)).html).toMatch(/<span>scope: <bdi[^>]*>src\/db\/\*\*, billing<\/bdi><\/span>/);
    expect((await open(p.b, `/tasks/${plain}`)).html).not.toContain("scope: ");
    await human.close();
  });
});
