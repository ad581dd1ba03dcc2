import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ALL_TOOLS } from "../src/tools/index.ts";
import {
  annotationsFor, CONVERGENT_TOOLS, DESTRUCTIVE_TOOLS, HUMAN_TOOLS, OPEN_WORLD_TOOLS, TOOL_NAMES, WRITE_TOOLS,
} from "../src/catalog/effects.ts";
import { describeAllTools, installTools } from "../src/mcp/registry.ts";
import { connect, ERAS, seedAccount, snapshotDb } from "./helpers.ts";

const READ_TOOLS = TOOL_NAMES.filter((n) => !WRITE_TOOLS.has(n));

describe("the catalog and the effect sets", () => {
  it("registers every catalog tool exactly once, and nothing else", () => {
    const names = ALL_TOOLS.map((t) => t.name);
    expect(new Set(names).size).toBe(names.length);
    expect([...names].sort()).toEqual([...TOOL_NAMES].sort());
  });

  it("is given its tools once: the same list again changes nothing, another list is refused", () => {
    const before = describeAllTools();
    expect(() => installTools(ALL_TOOLS)).not.toThrow();
    expect(describeAllTools()).toBe(before);
    expect(() => installTools([...ALL_TOOLS])).toThrow(/already installed/);
    expect(describeAllTools()).toBe(before);
  });

  it("classifies as the catalog counts: 84 tools, 34 read, 50 write, 22 destructive, 41 idempotent writes, 3 open world, 9 human", () => {
    expect(TOOL_NAMES).toHaveLength(84);
    expect(READ_TOOLS).toHaveLength(34);
    expect(WRITE_TOOLS.size).toBe(50);
    expect(DESTRUCTIVE_TOOLS.size).toBe(22);
    expect(CONVERGENT_TOOLS.size).toBe(41);
    expect(OPEN_WORLD_TOOLS.size).toBe(3);
    expect(HUMAN_TOOLS.size).toBe(9);
  });

  it("keeps every narrower set inside WRITE_TOOLS (open world aside)", () => {
    for (const set of [DESTRUCTIVE_TOOLS, CONVERGENT_TOOLS, HUMAN_TOOLS]) {
      for (const name of set) expect(WRITE_TOOLS.has(name), name).toBe(true);
    }
  });

  it("derives read hints for every read tool", () => {
    for (const name of READ_TOOLS) {
      expect(annotationsFor(name), name).toMatchObject({ readOnlyHint: true, destructiveHint: false, idempotentHint: true });
    }
  });

  it("gives every tool a description and object schemas, and no tool carries hints of its own", () => {
    for (const tool of ALL_TOOLS) {
      expect(tool.description.length, tool.name).toBeGreaterThan(20);
      expect(tool.description.length, tool.name).toBeLessThan(400);
      expect(Object.keys(tool).sort(), tool.name).toEqual(["description", "handler", "input", "name", "output"]);
    }
  });
});

describe("tools/list per principal", () => {
  for (const era of ERAS) {
    it(`${era}: announces exactly what each token may call, with all four hints and a title from the sets`, async () => {
      const acc = await seedAccount();
      const expectations: [string, string[]][] = [
        [acc.human, [...TOOL_NAMES]],
        [acc.agent, TOOL_NAMES.filter((n) => !HUMAN_TOOLS.has(n))],
        [acc.humanRead, READ_TOOLS],
        [acc.agentRead, READ_TOOLS],
      ];
      for (const [secret, expected] of expectations) {
        const client = await connect(secret, era);
        const tools = await client.listTools();
        expect(tools.map((t) => t.name).sort()).toEqual([...expected].sort());
        for (const t of tools) {
          const a = annotationsFor(t.name as (typeof TOOL_NAMES)[number]);
          expect(t.title, t.name).toBe(a.title);
          expect(t.annotations, t.name).toEqual({
            readOnlyHint: a.readOnlyHint,
            destructiveHint: a.destructiveHint,
            idempotentHint: a.idempotentHint,
            openWorldHint: a.openWorldHint,
          });
          expect(t.inputSchema.type, t.name).toBe("object");
          expect(t.outputSchema?.type, t.name).toBe("object");
        }
        await client.close();
      }
    });
  }
});

describe("enforcement reads the same sets", () => {
  it("refuses every write tool to a read token and changes no row", async () => {
    const acc = await seedAccount();
    for (const secret of [acc.humanRead, acc.agentRead]) {
      const client = await connect(secret);
      const before = await snapshotDb();
      for (const name of WRITE_TOOLS) {
        const text = await client.fails(name, {});
        expect(text, name).toMatch(HUMAN_TOOLS.has(name) && secret === acc.agentRead ? /person/ : /scope write/);
      }
      expect(await snapshotDb()).toBe(before);
      await client.close();
    }
  });

  it("refuses every human-only tool to an agent's write token, saying a person must do it", async () => {
    const acc = await seedAccount();
    const client = await connect(acc.agent, "legacy");
    const before = await snapshotDb();
    for (const name of HUMAN_TOOLS) {
      expect(await client.fails(name, {}), name).toMatch(/a person must do it/);
    }
    expect(await snapshotDb()).toBe(before);
    await client.close();
  });

  it("answers an unknown tool with a JSON-RPC error, not a result", async () => {
    const acc = await seedAccount();
    for (const era of ERAS) {
      const client = await connect(acc.human, era);
      await expect(client.call("drop_database", {})).rejects.toThrow(/Unknown tool/);
      await client.close();
    }
  });

  it("names the field and the fix for invalid arguments, and writes nothing", async () => {
    const acc = await seedAccount();
    const client = await connect(acc.human);
    const before = await snapshotDb();
    const text = await client.fails("create_task", { title: "x".repeat(501), priority: "someday", colour: "red" });
    expect(text).toMatch(/title/);
    expect(text).toMatch(/priority/);
    expect(text).toMatch(/colour/);
    expect(text).toMatch(/Fix these fields/);
    expect(await snapshotDb()).toBe(before);
    await client.close();
  });

  it("appends one activity row with each write, in the same batch", async () => {
    const acc = await seedAccount();
    const client = await connect(acc.agent);
    const { task } = await client.ok("create_task", { title: "Log me" });
    const rows = await env.DB.prepare("SELECT token_id, actor, tool, target_id FROM activity WHERE account_id = ?").bind(acc.accountId).all();
    expect(rows.results).toEqual([{ token_id: acc.tokenIds.agent, actor: acc.agentName, tool: "create_task", target_id: task.id }]);
    await client.close();
  });

  it("replays an idempotency_key: same result, nothing new written", async () => {
    const acc = await seedAccount();
    const client = await connect(acc.human);
    const first = await client.ok("create_task", { title: "Once", idempotency_key: "k-1" });
    const before = await snapshotDb();
    const again = await client.ok("create_task", { title: "Once", idempotency_key: "k-1" });
    expect(again).toEqual(first);
    expect(await snapshotDb()).toBe(before);
    const racing = await Promise.all(Array.from({ length: 8 }, () => client.call("create_task", { title: "Race", idempotency_key: "k-2" })));
    const ids = new Set(racing.map((r) => r.structured.task?.id));
    expect(ids.size).toBe(1);
    const count = await env.DB.prepare("SELECT count(*) AS n FROM tasks WHERE account_id = ? AND title = 'Race'").bind(acc.accountId).first<{ n: number }>();
    expect(count?.n).toBe(1);
    await client.close();
  });
});
