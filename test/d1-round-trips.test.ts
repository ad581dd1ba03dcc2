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
 * token already resolved in this isolate (warm), and on a token's first
 * request (cold: the token lookup is one of the two).
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
    it(`${era}${shard === "DB" ? "" : ` in ${shard}`}: every tool answers within ${ROUND_TRIP_LIMIT} D1 calls including auth, warm and cold`, async () => {
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

      const counts: Record<string, { warm: number | null; cold: number | null }> = {};
      for (const name of TOOL_NAMES) {
        const spec = CATALOG_CALLS[name];
        // Warm: the token is resolved in this isolate (the client's connect did it, after anything prepare cleared).
        const warmArgs = await spec.prepare(f);
        const warm = await metered(spec.who === "agent" ? acc.agent : acc.human, era);
        await warm.client.ok(name, warmArgs);
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
        counts[name] = { warm: warm.lastCalls(), cold: cold.lastCalls() };
      }
      const over = Object.entries(counts)
        .filter(([name, c]) => {
          const limit = ROUND_TRIP_EXCEPTIONS[name as keyof typeof ROUND_TRIP_EXCEPTIONS] ?? { warm: ROUND_TRIP_LIMIT, cold: ROUND_TRIP_LIMIT };
          return c.warm === null || c.cold === null || c.warm > limit.warm || c.cold > limit.cold;
        })
        .map(([n, c]) => `${n} ${c.warm}/${c.cold}`);
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
