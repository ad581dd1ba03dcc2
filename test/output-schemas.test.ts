import { afterEach, describe, expect, it, vi } from "vitest";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/server/validators/cf-worker";
import { CATALOG_CALLS, type Call, type Fixture } from "../bench/catalog-calls.ts";
import { TOOL_NAMES } from "../src/catalog/effects.ts";
import { connect, createToken, ERAS, seedAccount, type TestClient } from "./helpers.ts";
import { connectApp, fakeConnectedApps } from "./connectors-fakes.ts";
import { checkOutput, compiledOutput, outputChecks, takeOutputFailures } from "./output-check.ts";
import { describeAllTools } from "../src/mcp/registry.ts";

/**
 * Every tool, called for real (one valid call each, bench/catalog-calls.ts)
 * through SDK clients of both eras, returns structuredContent that satisfies
 * the output schema tools/list announced for it: the clients validate it
 * themselves (they fail the call on a mismatch), and the test checks again
 * with the JSON Schema validator the SDK ships and with Ajv (draft 2020-12,
 * strict). The schemas describe the whole answer (every key required, every
 * object closed, lists with their items), so a missing or extra key anywhere
 * fails. The server checks the same results against the zod schemas they are
 * made from (VALIDATE_OUTPUT in the tests), and every other test's clients
 * check theirs too (test/output-check.ts).
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
        const strict = compiledOutput(name);
        if (!strict(seen[name])) mismatches.push(`${name} (Ajv): ${JSON.stringify(strict.errors)}`);
      }
      expect(mismatches).toEqual([]);
      await human.close();
      await agent.close();
    }, 180_000);
  }
});

describe("every output schema describes the whole answer", () => {
  it("every object lists all its fields under required and is closed; every array has items; every nested record has its fields", () => {
    const problems: string[] = [];
    const visit = (tool: string, path: string, s: Record<string, any>, defs: Record<string, any>) => {
      if (s.$ref) {
        const name = String(s.$ref).replace("#/$defs/", "");
        if (!defs[name]) problems.push(`${tool}${path}: $ref ${s.$ref} resolves to nothing`);
        return;
      }
      for (const b of s.anyOf ?? []) visit(tool, path, b, defs);
      const types = Array.isArray(s.type) ? s.type : [s.type];
      if (!s.anyOf && !s.enum && s.type === undefined) problems.push(`${tool}${path}: no type`);
      if (types.includes("object")) {
        const fields = Object.keys(s.properties ?? {});
        if (!fields.length) problems.push(`${tool}${path}: an object without fields`);
        if (JSON.stringify([...(s.required ?? [])].sort()) !== JSON.stringify([...fields].sort())) problems.push(`${tool}${path}: required ${s.required} is not every field`);
        if (s.additionalProperties !== false) problems.push(`${tool}${path}: not closed`);
        for (const [k, v] of Object.entries(s.properties ?? {})) visit(tool, `${path}.${k}`, v as Record<string, any>, defs);
      }
      if (types.includes("array")) {
        if (!s.items) problems.push(`${tool}${path}: an array without items`);
        else visit(tool, `${path}[]`, s.items, defs);
      }
    };
    let objects = 0;
    for (const d of describeAllTools()) {
      const defs = (d.outputSchema.$defs ?? {}) as Record<string, any>;
      visit(d.name, "", d.outputSchema, defs);
      for (const [name, def] of Object.entries(defs)) visit(d.name, ` $defs.${name}`, def, defs);
      objects += (JSON.stringify(d.outputSchema).match(/"additionalProperties":false/g) ?? []).length;
    }
    expect(problems).toEqual([]);
    expect(objects).toBeGreaterThan(TOOL_NAMES.length);
  });

  it("a shape said twice in one answer is said once under $defs, and every $defs entry is used at least twice", () => {
    for (const d of describeAllTools()) {
      const text = JSON.stringify(d.outputSchema);
      for (const name of Object.keys((d.outputSchema.$defs ?? {}) as object)) {
        expect(text.split(`"#/$defs/${name}"`).length - 1, `${d.name} $defs.${name}`).toBeGreaterThanOrEqual(2);
      }
    }
    const getTask = describeAllTools().find((d) => d.name === "approve_task")!.outputSchema as Record<string, any>;
    // The task (the answer's and the next occurrence's), and a person (the approval's decider, a task's human assignee).
    expect(Object.keys(getTask.$defs ?? {})).toEqual(["task", "decided_by_person"]);
  });
});

describe("the checks above can fail", () => {
  it("the published schema refuses a missing field, an undeclared key, a wrong enum, and a nested record or list item missing a field", async () => {
    const acc = await seedAccount();
    const human = await connect(acc.human);
    const tools = await human.listTools();
    const created = await human.ok("create_task", { title: "Shape check" });
    const detail = await human.ok("get_task", { task_id: created.task.id });
    for (const [name, good] of [["create_task", created], ["get_task", detail]] as const) {
      const schema = tools.find((t) => t.name === name)!.outputSchema;
      const cf = validator.getValidator(schema);
      const strict = compiledOutput(name);
      const bad: [string, unknown][] = [
        ["a missing field", Object.fromEntries(Object.entries(good).slice(1))],
        ["an undeclared key", { ...good, extra: 1 }],
        ["a task missing its title", { ...good, task: (({ title: _t, ...t }) => t)(good.task) }],
        ["a task with an undeclared key", { ...good, task: { ...good.task, secret: "x" } }],
        ["a status outside its enum", { ...good, task: { ...good.task, status: "finished" } }],
        ["a null where a value is required", { ...good, task: { ...good.task, title: null } }],
      ];
      if (name === "get_task") bad.push(["a list item missing a field", { ...good, labels: [{ id: "lbl_0123456789abcdef" }] }]);
      expect(cf(good).valid, name).toBe(true);
      expect(strict(good), name).toBe(true);
      for (const [what, value] of bad) {
        expect(cf(value).valid, `${name}: ${what} (the SDK's validator)`).toBe(false);
        expect(strict(value), `${name}: ${what} (Ajv 2020-12, strict)`).toBe(false);
      }
    }
    await human.close();
  });

  it("a result that breaks its published schema is recorded as a failure of the test that received it", () => {
    const before = outputChecks.validated;
    checkOutput("create_task", { task: { id: "tsk_0123456789abcdef" } });
    expect(outputChecks.validated).toBe(before + 1);
    const failures = takeOutputFailures();
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatch(/^create_task: .*must have required property 'title'/);
  });
});
