import { describe, expect, it } from "vitest";
import { snapshot, snapshotFileNames, snapshotOrder } from "./tool-snapshots.ts";
import { formatToolBytes, measureTools, TOOL_BYTES_TARGETS } from "../bench/tool-bytes.ts";
import { describeAllTools } from "../src/mcp/registry.ts";
import { optionalOutputFields } from "../src/mcp/json-schema.ts";
import { ALL_TOOLS } from "../src/tools/index.ts";
import { TOOLS_LIST_CACHE } from "../src/mcp/server.ts";
import { HUMAN_TOOLS, TOOL_NAMES, TOOL_TITLES } from "../src/catalog/effects.ts";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { connect, ERAS, MCP_URL, seedAccount, workerFetch } from "./helpers.ts";

/**
 * The whole tools/list, as hosts receive it: compared with the committed
 * snapshot (one file a tool in test/snapshots/tools/, the order in
 * test/snapshots/tools-order.json) so that every change to a name, hint,
 * description or schema is a reviewed diff of that tool's file. To accept a
 * change, run `npm run -s snapshot:tools` and commit the files with the change.
 */
/** Words that add nothing to a field's name: "the agent's name" says `agent`. */
const FILLER = new Set(["the", "a", "an", "of", "its", "s", "name", "id", "this", "that"]);
const HINTS = ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] as const;

describe("tools/list as announced", () => {
  it("the snapshot holds one file for each tool of the catalog, and none for a tool it lacks", () => {
    expect([...snapshotFileNames].sort()).toEqual([...TOOL_NAMES].sort());
    expect([...snapshotOrder].sort()).toEqual([...TOOL_NAMES].sort());
  });

  for (const era of ERAS) {
    it(`${era}: a person's write token gets exactly the committed snapshot (npm run -s snapshot:tools updates it)`, async () => {
      const acc = await seedAccount();
      const client = await connect(acc.human, era);
      const tools = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(snapshot.map((t) => t.name));
      for (const [i, t] of tools.entries()) expect(t, `${t.name} differs from test/snapshots/tools/${t.name}.json: run npm run -s snapshot:tools and review the diff`).toEqual(snapshot[i]);
      await client.close();
    });

    it(`${era}: lists tools in one fixed order, the same for every token (each token's list is the catalog's order, filtered)`, async () => {
      const acc = await seedAccount();
      const order = snapshot.map((t) => t.name);
      for (const secret of [acc.human, acc.agent, acc.humanRead, acc.agentRead]) {
        const client = await connect(secret, era);
        const first = (await client.listTools()).map((t) => t.name);
        const again = (await client.listTools()).map((t) => t.name);
        expect(again).toEqual(first);
        expect(first).toEqual(order.filter((n) => first.includes(n)));
        await client.close();
      }
      const agent = await connect(acc.agent, era);
      expect((await agent.listTools()).map((t) => t.name)).toEqual(order.filter((n) => !HUMAN_TOOLS.has(n as never)));
      await agent.close();
    });
  }

  it("every tool keeps its title and all four hints, explicit booleans", () => {
    for (const d of describeAllTools()) {
      expect(d.title, d.name).toBe(TOOL_TITLES[d.name]);
      expect(Object.keys(d.annotations).sort(), d.name).toEqual([...HINTS].sort());
      for (const h of HINTS) expect(typeof d.annotations[h], `${d.name}.${h}`).toBe("boolean");
    }
    expect(describeAllTools().map((d) => d.name).sort()).toEqual([...TOOL_NAMES].sort());
  });

  it("every field of every tool's result is always there (null when empty), and its output schema requires each", () => {
    const optional = ALL_TOOLS.flatMap((t) => optionalOutputFields(t.output).map((f) => `${t.name}.${f}`));
    expect(optional).toEqual([]);
    for (const d of describeAllTools()) expect([...(d.outputSchema.required as string[])].sort(), d.name).toEqual(Object.keys(d.outputSchema.properties as object).sort());
  });

  it("no input or output schema is a union at its top: each is one object with properties; input schemas are inline (models read them)", () => {
    const unions: string[] = [];
    for (const d of describeAllTools()) {
      for (const [which, s] of [["input", d.inputSchema], ["output", d.outputSchema]] as const) {
        for (const k of ["anyOf", "oneOf", "allOf", "not", "if", "$ref"]) if (k in s) unions.push(`${d.name} ${which}: ${k}`);
        if (s.type !== "object" || typeof s.properties !== "object") unions.push(`${d.name} ${which}: not an object with properties`);
      }
      if (JSON.stringify(d.inputSchema).match(/"(\$ref|\$defs)"/)) unions.push(`${d.name} input: a reference`);
      // A nullable field is anyOf its type and null: a list of types is read as one string by several clients (the Inspector's type-union warning).
      for (const [which, sch] of [["input", d.inputSchema], ["output", d.outputSchema]] as const) if (JSON.stringify(sch).includes('"type":[')) unions.push(`${d.name} ${which}: a list of types`);
      // Below the top, an output field is a union only to allow null.
      const visit = (s: Record<string, any>, path: string): void => {
        if (!s || typeof s !== "object") return;
        if (Array.isArray(s.anyOf) && !(s.anyOf.length === 2 && s.anyOf.some((b: Record<string, unknown>) => b.type === "null"))) unions.push(`${d.name} output${path}: a union beyond null`);
        for (const k of ["oneOf", "allOf", "not", "if"]) if (k in s) unions.push(`${d.name} output${path}: ${k}`);
        for (const [k, v] of Object.entries(s)) if (k !== "enum" && k !== "required" && typeof v === "object") visit(v as Record<string, any>, `${path}.${k}`);
      };
      visit(d.outputSchema, "");
    }
    expect(unions).toEqual([]);
  });

  it("says nothing twice: no description that only repeats a field's name, no bounds of a JSON number, no validator-ignored keys", () => {
    const problems: string[] = [];
    const visit = (tool: string, path: string, s: Record<string, any>) => {
      for (const k of ["$schema", "detail", "id", "examples", "title"]) if (k in s) problems.push(`${tool}${path}: ${k}`);
      if (s.maximum === Number.MAX_SAFE_INTEGER || s.minimum === Number.MIN_SAFE_INTEGER) problems.push(`${tool}${path}: safe-integer bound`);
      const name = path.split(".").pop()!.replace(/\[\]$/, "");
      if (typeof s.description === "string" && name) {
        const words = s.description.toLowerCase().split(/[^a-z]+/).filter((w: string) => w && !FILLER.has(w));
        if (words.every((w: string) => name.split("_").includes(w))) problems.push(`${tool}${path}: description "${s.description}" repeats the name`);
      }
      if (typeof s.description === "string" && /\bid \([a-z]{3}_…\)$/.test(s.description)) problems.push(`${tool}${path}: description repeats the id pattern`);
      for (const [k, v] of Object.entries(s.properties ?? {})) visit(tool, `${path}.${k}`, v as Record<string, any>);
      if (s.items) visit(tool, `${path}[]`, s.items);
      for (const b of s.anyOf ?? []) visit(tool, path, b);
    };
    for (const d of describeAllTools()) {
      visit(d.name, "", d.inputSchema);
      visit(d.name, " output", d.outputSchema);
    }
    expect(problems).toEqual([]);
  });

  it(`stays within ${TOOL_BYTES_TARGETS.total} bytes a tool in all and ${TOOL_BYTES_TARGETS.model} for what a model reads (a person's write token, as received)`, async () => {
    const acc = await seedAccount();
    const client = await connect(acc.human);
    const tools = await client.listTools();
    const bytes = measureTools(tools);
    expect(bytes.tools).toBe(TOOL_NAMES.length);
    // What the client received is what the registry describes: the bench's figures are the same.
    expect(bytes).toEqual(measureTools(describeAllTools() as never));
    expect(bytes.ok, formatToolBytes(bytes)).toEqual({ total: true, model: true, meta: true });
    await client.close();
  });

  it("2026-07-28: the result carries ttlMs and cacheScope private; a legacy result carries neither", async () => {
    const acc = await seedAccount();
    for (const era of ERAS) {
      const bodies: Record<string, unknown>[] = [];
      const client = await connect(acc.human, era, {
        onResponse: async (res, body) => {
          if (!body.includes('"tools/list"')) return;
          const text = await res.clone().text();
          bodies.push(JSON.parse(text.startsWith("event:") ? text.split("data: ")[1] : text));
        },
      });
      await client.listTools();
      expect(bodies, era).toHaveLength(1);
      const result = (bodies[0] as { result: Record<string, unknown> }).result;
      if (era === "modern") {
        expect(result).toMatchObject({ ttlMs: TOOLS_LIST_CACHE.ttlMs, cacheScope: "private" });
        expect(TOOLS_LIST_CACHE.ttlMs).toBeGreaterThan(0);
      } else {
        expect(result).not.toHaveProperty("ttlMs");
        expect(result).not.toHaveProperty("cacheScope");
      }
      await client.close();
    }
  });

  it("2026-07-28: a 2.x client answers tools/list from its cache for ttlMs, and asks again on refresh", async () => {
    const acc = await seedAccount();
    let lists = 0;
    const fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
      if (typeof init?.body === "string" && init.body.includes('"tools/list"')) lists++;
      return workerFetch(input, init);
    };
    const client = new Client({ name: "cache-test", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
    await client.connect(new StreamableHTTPClientTransport(new URL(MCP_URL), { fetch, requestInit: { headers: { authorization: `Bearer ${acc.human}` } } }));
    const first = await client.listTools();
    const cached = await client.listTools();
    expect(cached.tools.map((t) => t.name)).toEqual(first.tools.map((t) => t.name));
    expect(lists).toBe(1);
    await client.listTools(undefined, { cacheMode: "refresh" });
    expect(lists).toBe(2);
    await client.close();
  });
});
