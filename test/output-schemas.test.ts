import { afterEach, describe, expect, it, vi } from "vitest";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/server/validators/cf-worker";
import { CATALOG_CALLS, type Call, type Fixture } from "../bench/catalog-calls.ts";
import { TOOL_NAMES } from "../src/catalog/effects.ts";
import { connect, createToken, ERAS, seedAccount, type TestClient } from "./helpers.ts";
import { connectApp, fakeConnectedApps } from "./connectors-fakes.ts";

/**
 * Every tool, called for real (one valid call each, bench/catalog-calls.ts)
 * through SDK clients of both eras, returns structuredContent that satisfies
 * the output schema tools/list announced for it: the clients validate it
 * themselves (they fail the call on a mismatch) and the test checks again
 * with the JSON Schema validator the SDK ships, and every announced field is
 * in every result (the schemas do not repeat them under `required`). The server checks the same
 * results against the detailed zod schemas (VALIDATE_OUTPUT in the tests).
 */
afterEach(() => vi.restoreAllMocks());

const validator = new CfWorkerJsonSchemaValidator({ shortcircuit: false });

describe("every tool's structuredContent satisfies its announced output schema", () => {
  for (const era of ERAS) {
    it(`${era}: all ${TOOL_NAMES.length} tools, through the SDK client's own validation and the SDK's JSON Schema validator`, async () => {
      fakeConnectedApps();
      const acc = await seedAccount(`Output schemas ${era}`, "bot");
      for (const provider of ["drive", "slack", "notion"] as const) await connectApp(acc.accountId, provider);
      const human = await connect(acc.human, era);
      const agent = await connect(acc.agent, era);
      // Listing first: the clients validate a tool's structuredContent against the output schema they were given.
      const announced = new Map((await human.listTools()).map((t) => [t.name, t.outputSchema]));
      expect((await agent.listTools()).length).toBeGreaterThan(0);
      const seen: Record<string, unknown> = {};
      const checked = (c: TestClient): Call => async (name, args) => {
        const result = await c.call(name, args);
        if (result.isError) throw new Error(`${name} failed: ${result.text}`);
        seen[name] = result.structured;
        return result.structured;
      };
      const f: Fixture = {
        human: checked(human),
        agent: checked(agent),
        agentName: acc.agentName,
        searchWord: "quarterly",
        spareTokenId: async () => (await createToken({ accountId: acc.accountId, kind: "human", scope: "read" })).id,
        connectors: true,
      };
      await f.human("create_task", { title: "The quarterly report" });

      const called: string[] = [];
      for (const name of TOOL_NAMES) {
        const spec = CATALOG_CALLS[name];
        const args = await spec.prepare(f);
        await (spec.who === "agent" ? f.agent : f.human)(name, args);
        called.push(name);
        await spec.after?.(f);
      }
      expect(called).toEqual([...TOOL_NAMES]);

      const mismatches: string[] = [];
      for (const name of TOOL_NAMES) {
        const schema = announced.get(name);
        expect(schema, name).toMatchObject({ type: "object" });
        const verdict = validator.getValidator(schema as never)(seen[name]);
        if (!verdict.valid) mismatches.push(`${name}: ${verdict.errorMessage}`);
        // Every announced field is always there (null when empty), and nothing else is.
        const fields = Object.keys((schema as { properties: object }).properties).sort();
        const got = Object.keys(seen[name] as object).sort();
        if (JSON.stringify(got) !== JSON.stringify(fields)) mismatches.push(`${name}: fields ${got.join(",")}, announced ${fields.join(",")}`);
      }
      expect(mismatches).toEqual([]);
      await human.close();
      await agent.close();
    }, 180_000);
  }
});

describe("the checks above can fail", () => {
  it("the validator refuses a field of the wrong type; a result without an announced field is caught by the field check", async () => {
    const acc = await seedAccount();
    const human = await connect(acc.human);
    const schema = (await human.listTools()).find((t) => t.name === "create_task")!.outputSchema;
    const check = validator.getValidator(schema);
    expect(check({ task: "tsk_0123456789abcdef" }).valid).toBe(false);
    expect(check({ task: null }).valid).toBe(false);
    expect(check({ task: { id: "tsk_0123456789abcdef" } }).valid).toBe(true);
    expect(Object.keys(schema.properties)).toEqual(["task"]);
    await human.close();
  });
});
