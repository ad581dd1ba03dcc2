import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { CATALOG_CALLS, ROUND_TRIP_EXCEPTIONS, ROUND_TRIP_LIMIT } from "../bench/catalog-calls.ts";
import { catalogFixture } from "./catalog-fixture.ts";
import { TOOL_NAMES } from "../src/catalog/effects.ts";
import { forgetResolvedTokens } from "../src/db/principals.ts";
import { connect, createToken, ERAS, seedAccount, type Era, type TestClient } from "./helpers.ts";
import { connectApp, fakeConnectedApps } from "./connectors-fakes.ts";

/**
 * Every tool of the catalog, on a real call with valid arguments, answers
 * within two D1 round trips including auth (the x-d1-calls header): with a
 * token already resolved in this isolate (warm), the same call repeated right
 * after (as an agent retrying would; answered or refused, it is counted), and
 * on a token's first request (cold: the token lookup is one of the two).
 */
afterEach(() => vi.restoreAllMocks());

/** An SDK client that notes the x-d1-calls of its last tools/call. */
async function metered(secret: string, era: Era): Promise<{ client: TestClient; lastCalls(): number | null }> {
  let last: number | null = null;
  const client = await connect(secret, era, {
    onResponse: (res, body) => {
      if (body.includes('"tools/call"')) last = Number(res.headers.get("x-d1-calls"));
    },
  });
  return { client, lastCalls: () => last };
}

describe("D1 round trips of every tool", () => {
  // Both eras on the first database, and an account in the second one (its tokens name it; the directory is not asked).
  const cases = [...ERAS.map((era) => [era, "DB"] as const), ["modern", "DB_1"] as const];
  for (const [era, shard] of cases) {
    const db = env[shard];
    it(`${era}${shard === "DB" ? "" : ` in ${shard}`}: every tool answers within ${ROUND_TRIP_LIMIT} D1 calls including auth, warm, repeated and cold`, async () => {
      fakeConnectedApps();
      const acc = await seedAccount(`Round trips ${era} ${shard}`, "bot", shard);
      for (const provider of ["drive", "slack", "notion"] as const) await connectApp(acc.accountId, provider, undefined, undefined, db);
      const human = await connect(acc.human);
      const agent = await connect(acc.agent);
      const f = catalogFixture(acc, human, agent, db);
      await f.human("create_task", { title: "The quarterly report" });
      const blocked = await f.human("create_task", { title: "Waits on the numbers" });
      const numbers = await f.human("create_task", { title: "The numbers" });
      await f.human("add_dependency", { task_id: blocked.task.id, depends_on_id: numbers.task.id });

      const counts: Record<string, { warm: number | null; repeat: number | null; cold: number | null }> = {};
      for (const name of TOOL_NAMES) {
        const spec = CATALOG_CALLS[name];
        // Warm: the token is resolved in this isolate (the client's connect did it, after anything prepare cleared).
        const warmArgs = await spec.prepare(f);
        const warm = await metered(spec.who === "agent" ? acc.agent : acc.human, era);
        await warm.client.ok(name, warmArgs);
        const first = warm.lastCalls();
        // Repeat: the same call again right after, as an agent retrying would; answered or refused, it is counted.
        await warm.client.call(name, warmArgs);
        const repeat = warm.lastCalls();
        await spec.after?.(f);
        await warm.client.close();

        // Cold: a token of the same kind whose tools/call is its first request this isolate resolves.
        const fresh = await createToken(
          spec.who === "agent"
            ? { accountId: acc.accountId, kind: "agent", scope: "write", agent: acc.agentName }
            : { accountId: acc.accountId, kind: "human", scope: "write" },
          db,
        );
        const coldArgs = await spec.prepare(f);
        const cold = await metered(fresh.secret, era);
        forgetResolvedTokens();
        await cold.client.ok(name, coldArgs);
        await spec.after?.(f);
        await cold.client.close();
        counts[name] = { warm: first, repeat, cold: cold.lastCalls() };
      }
      const over = Object.entries(counts)
        .filter(([name, c]) => {
          const limit = ROUND_TRIP_EXCEPTIONS[name as keyof typeof ROUND_TRIP_EXCEPTIONS] ?? { warm: ROUND_TRIP_LIMIT, cold: ROUND_TRIP_LIMIT };
          return c.warm === null || c.repeat === null || c.cold === null || c.warm > limit.warm || c.repeat > limit.warm || c.cold > limit.cold;
        })
        .map(([n, c]) => `${n} ${c.warm}/${c.repeat}/${c.cold}`);
      expect(over).toEqual([]);
      // The bound is met by the calls themselves: most tools take one round trip besides the token lookup.
      expect(Object.values(counts).filter((c) => c.warm === 1).length).toBeGreaterThan(80);
      await human.close();
      await agent.close();
    }, 180_000);
  }

  for (const era of ERAS) {
    it(`${era}: a read filtered by a project or a target checks it in the same round trip as the unfiltered read, found or refused`, async () => {
      const acc = await seedAccount(`Filter round trips ${era}`, "bot");
      const setup = await connect(acc.human, era);
      const project = (await setup.ok("create_project", { name: "Quarter" })).project.id;
      const taskId = (await setup.ok("create_task", { title: "The quarterly report", project_id: project })).task.id;
      await setup.close();
      const { client, lastCalls } = await metered(acc.human, era);
      const cases: [string, Record<string, unknown>, Record<string, unknown>][] = [
        ["list_tasks", {}, { project_id: project }],
        ["list_my_tasks", {}, { project_id: project }],
        ["list_due_tasks", {}, { project_id: project }],
        ["list_blocked_tasks", {}, { project_id: project }],
        ["search_tasks", { query: "quarterly" }, { query: "quarterly", project_id: project }],
        ["list_activity", {}, { target_id: taskId }],
      ];
      const counts: Record<string, number[]> = {};
      for (const [name, plain, filtered] of cases) {
        await client.ok(name, plain);
        const unfiltered = lastCalls()!;
        await client.ok(name, filtered);
        const found = lastCalls()!;
        const missing = { ...filtered, ...("project_id" in filtered ? { project_id: "prj_0000000000000000" } : { target_id: "tsk_0000000000000000" }) };
        expect(await client.fails(name, missing)).toMatch(/in this account/);
        counts[name] = [unfiltered, found, lastCalls()!];
      }
      expect(counts).toEqual(Object.fromEntries(cases.map(([name]) => [name, [1, 1, 1]])));
      await client.close();
    });
  }

  for (const era of ERAS) {
    it(`${era}: restore_from_trash by trash id or by the deleted record's id, first and repeated, with parts detached or refused, within two round trips`, async () => {
      const acc = await seedAccount(`Restore round trips ${era}`, "bot");
      const c = await connect(acc.human, era);
      const { client, lastCalls } = await metered(acc.human, era);
      const counts: Record<string, number | null> = {};
      const restore = async (path: string, item_id: string) => {
        const r = await client.call("restore_from_trash", { item_id });
        counts[path] = lastCalls();
        return r;
      };
      const task = async (title: string, more: Record<string, unknown> = {}) => (await c.ok("create_task", { title, ...more })).task.id as string;
      const trash = async (task_id: string) => (await c.ok("delete_task", { task_id })).trash_id as string;

      // A task with a subtask, restored by its trash id, then again by that id and by the task's.
      const one = await task("One");
      await task("One's part", { parent_id: one });
      const oneItem = await trash(one);
      const first = (await restore("trash id", oneItem)).structured;
      expect(first).toEqual({ restored: true, trash_id: oneItem, kind: "task", target_id: one, item_count: 2, detached: [] });
      expect((await restore("trash id, repeated", oneItem)).structured).toEqual({ ...first, restored: false });
      expect((await restore("record id, after its item was restored", one)).structured).toEqual({ ...first, restored: false });

      // Restored by the task's id, then again by it and by the trash id.
      const two = await task("Two");
      const twoItem = await trash(two);
      const second = (await restore("record id", two)).structured;
      expect(second).toEqual({ restored: true, trash_id: twoItem, kind: "task", target_id: two, item_count: 1, detached: [] });
      expect((await restore("record id, repeated", two)).structured).toEqual({ ...second, restored: false });
      expect((await restore("trash id, after a restore by record id", twoItem)).structured).toEqual({ ...second, restored: false });

      // A subtask deleted on its own, whose parent was then deleted and purged: it comes back detached, and says so again.
      const parent = await task("Parent");
      const orphan = await task("Orphan", { parent_id: parent });
      const orphanItem = await trash(orphan);
      await c.ok("empty_trash", { item_ids: [await trash(parent)] });
      const detached = (await restore("trash id, detaching a purged parent", orphanItem)).structured;
      expect(detached).toMatchObject({ restored: true, detached: [orphan] });
      expect((await restore("record id, repeated after detaching", orphan)).structured).toEqual({ ...detached, restored: false });
      expect((await restore("trash id, repeated after detaching", orphanItem)).structured).toEqual({ ...detached, restored: false });

      // A task whose project was deleted and purged, restored by its id: it comes back without the project.
      const project = (await c.ok("create_project", { name: "Gone" })).project.id;
      const inProject = await task("In the project", { project_id: project });
      await trash(inProject);
      await c.ok("empty_trash", { item_ids: [(await c.ok("delete_project", { project_id: project })).trash_id] });
      expect((await restore("record id, detaching a purged project", inProject)).structured).toMatchObject({ restored: true, detached: [inProject] });

      // A subtask whose parent is itself in the trash: refused, by either id, and again; restored once the parent is back.
      const holder = await task("Holder");
      const held = await task("Held", { parent_id: holder });
      const heldItem = await trash(held);
      const holderItem = await trash(holder);
      const refusal = new RegExp(`parent task ${holder} is itself in the trash as item ${holderItem}`);
      expect((await restore("trash id, parent in the trash (refused)", heldItem)).text).toMatch(refusal);
      expect((await restore("record id, parent in the trash (refused)", held)).text).toMatch(refusal);
      expect((await restore("record id, parent in the trash (refused), repeated", held)).text).toMatch(refusal);
      expect((await restore("record id of a parent whose subtask is in the trash", holder)).structured).toMatchObject({ restored: true, trash_id: holderItem });
      expect((await restore("record id, once the parent is back", held)).structured).toMatchObject({ restored: true, trash_id: heldItem });

      // A task deleted with its parent, named by its own id: refused, naming the parent's item.
      const whole = await task("Whole");
      const part = await task("Part", { parent_id: whole });
      const wholeItem = await trash(whole);
      expect((await restore("record id inside another item (refused)", part)).text).toMatch(new RegExp(wholeItem));

      // A task whose label was deleted, and one whose dependency was deleted and purged meanwhile.
      const labelled = await task("Labelled");
      await c.ok("label_task", { task_id: labelled, labels: ["fleeting"] });
      const labelledItem = await trash(labelled);
      await c.ok("delete_label", { label_id: (await c.ok("list_labels")).items.find((l: { name: string }) => l.name === "fleeting").id });
      expect((await restore("trash id, its label deleted", labelledItem)).structured).toMatchObject({ restored: true, detached: [] });
      expect((await restore("trash id, its label deleted, repeated", labelledItem)).structured).toMatchObject({ restored: false });
      const waiting = await task("Waiting");
      const waitedOn = await task("Waited on");
      await c.ok("add_dependency", { task_id: waiting, depends_on_id: waitedOn });
      const waitingItem = await trash(waiting);
      const waitedOnItem = await trash(waitedOn);
      expect((await restore("record id, its dependency in the trash", waiting)).structured).toMatchObject({ restored: true, trash_id: waitingItem });
      await trash(waiting);
      await c.ok("empty_trash", { item_ids: [waitedOnItem] });
      expect((await restore("record id, its dependency purged", waiting)).structured).toMatchObject({ restored: true });

      // A step and a comment, by their own ids, and repeated.
      const stepped = await task("Stepped");
      const step = (await c.ok("add_steps", { task_id: stepped, steps: ["Only step"] })).steps[0].id;
      const comment = (await c.ok("comment_on_task", { task_id: stepped, body: "Only comment" })).comment.id;
      await c.ok("delete_step", { step_id: step });
      await c.ok("delete_comment", { comment_id: comment });
      expect((await restore("record id of a step", step)).structured).toMatchObject({ restored: true, kind: "step" });
      expect((await restore("record id of a step, repeated", step)).structured).toMatchObject({ restored: false, kind: "step" });
      expect((await restore("record id of a comment", comment)).structured).toMatchObject({ restored: true, kind: "comment" });

      // Nothing of that id in this account.
      expect((await restore("unknown trash id (refused)", "trs_0000000000000000")).text).toMatch(/No trash item/);
      expect((await restore("unknown task id (refused)", "tsk_0000000000000000")).text).toMatch(/No task/);

      // A trash id: the restore's batch, and on a miss one read of the item, its blockers and its first restore's record.
      // A record's id: one read of its item, the item's blockers, the record's place and its last restore; then the restore's batch.
      expect(counts).toEqual({
        "trash id": 1,
        "trash id, repeated": 2,
        "record id, after its item was restored": 1,
        "record id": 2,
        "record id, repeated": 1,
        "trash id, after a restore by record id": 2,
        "trash id, detaching a purged parent": 1,
        "record id, repeated after detaching": 1,
        "trash id, repeated after detaching": 2,
        "record id, detaching a purged project": 2,
        "trash id, parent in the trash (refused)": 2,
        "record id, parent in the trash (refused)": 1,
        "record id, parent in the trash (refused), repeated": 1,
        "record id of a parent whose subtask is in the trash": 2,
        "record id, once the parent is back": 2,
        "record id inside another item (refused)": 1,
        "trash id, its label deleted": 1,
        "trash id, its label deleted, repeated": 2,
        "record id, its dependency in the trash": 2,
        "record id, its dependency purged": 2,
        "record id of a step": 2,
        "record id of a step, repeated": 1,
        "record id of a comment": 2,
        "unknown trash id (refused)": 2,
        "unknown task id (refused)": 1,
      });
      expect(Math.max(...Object.values(counts).map(Number))).toBeLessThanOrEqual(ROUND_TRIP_LIMIT);
      await c.close();
      await client.close();
    });
  }

  for (const era of ERAS) {
    it(`${era}: a repeated approve_task or complete_task answers as the first call did (the occurrence it created included) in two round trips`, async () => {
      const acc = await seedAccount(`Repeats ${era}`, "bot");
      const setup = await connect(acc.human, era);
      const agentSetup = await connect(acc.agent, era);
      const signed = (await setup.ok("create_task", { title: "Weekly report", recurrence: "FREQ=WEEKLY", due_at: "2027-03-01T09:00:00Z", auto_ok: false })).task.id;
      await agentSetup.ok("claim_task", { task_id: signed });
      await agentSetup.ok("complete_task", { task_id: signed, note: "Please check." });
      const auto = (await setup.ok("create_task", { title: "Daily backup", recurrence: "FREQ=DAILY", due_at: "2027-03-01T09:00:00Z", auto_ok: true })).task.id;
      const human = await metered(acc.human, era);
      const agent = await metered(acc.agent, era);
      const approved = await human.client.ok("approve_task", { task_id: signed });
      const completed = await agent.client.ok("complete_task", { task_id: auto });
      for (const [who, name, taskId, first] of [
        [human, "approve_task", signed, approved],
        [agent, "complete_task", auto, completed],
      ] as const) {
        expect(first.next_occurrence?.id, `${name}'s first answer names the next occurrence`).toMatch(/^tsk_/);
        const again = await who.client.ok(name, { task_id: taskId });
        expect(again.changed).toBe(false);
        expect(again.next_occurrence?.id, `${name} repeated`).toBe(first.next_occurrence.id);
        expect(again.approval?.id ?? null).toBe(first.approval?.id ?? null);
        expect(who.lastCalls(), `${name} repeated: D1 round trips`).toBeLessThanOrEqual(2);
      }
      for (const c of [setup, agentSetup, human.client, agent.client]) await c.close();
    });
  }
});
