import { describe, expect, it } from "vitest";
import { sha256Hex } from "../src/domain/canonical.ts";
import { sha256HexSync } from "../src/domain/sha256.ts";
import {
  CLAIM_GUARDED_TOOLS, CONVERGENT_TOOLS, DESTRUCTIVE_TOOLS, HUMAN_TOOLS, OPEN_WORLD_TOOLS, PLAIN_RESULT_TOOLS, SELF_ONLY_TOOLS,
  TOOL_NAMES, WRITE_TOOLS, type ToolName,
} from "../src/catalog/effects.ts";
import {
  CATALOG_KEY, catalogFingerprint, ENFORCEMENT_KEY, FINGERPRINT_KEY, fingerprintOf, HUMAN_ONLY_NOTE, TRUST_KEY, USER_INTERACTION_KEY,
} from "../src/catalog/contract.ts";
import { describeAllTools } from "../src/mcp/registry.ts";
import { detailedSchema } from "../src/mcp/json-schema.ts";
import { ALL_TOOLS } from "../src/tools/index.ts";
import { connect, ERAS, seedAccount, type Era } from "./helpers.ts";

/** The tools whose results the approvals view (MCP Apps) shows: exactly these link it. */
const APPROVALS_VIEW_TOOLS: string[] = ["list_pending_approvals", "get_approval", "complete_task", "request_approval"];

/**
 * What every tool publishes in `_meta` (src/catalog/contract.ts), checked
 * against the effect sets and against what the server does with a call.
 */

type Listed = { name: string; description?: string; _meta?: Record<string, any> };

/** The tools/list a host receives, with the result's own `_meta`. */
async function listed(secret: string, era: Era, headers: Record<string, string> = {}): Promise<{ tools: Listed[]; catalog: string }> {
  let result: { tools: Listed[]; _meta?: Record<string, string> } | undefined;
  const client = await connect(secret, era, {
    headers,
    onResponse: async (res, body) => {
      if (!body.includes('"tools/list"')) return;
      const text = await res.clone().text();
      result = JSON.parse(text.startsWith("event:") ? text.split("data: ")[1] : text).result;
    },
  });
  const tools = (await client.listTools()) as Listed[];
  await client.close();
  expect(result?.tools.map((t) => t.name)).toEqual(tools.map((t) => t.name));
  return { tools, catalog: result?._meta?.[CATALOG_KEY] as string };
}

/** The effect classes of a tool, read from the sets directly. */
function effectsFromSets(n: ToolName): string[] {
  return [
    WRITE_TOOLS.has(n) ? "write" : "read",
    ...(DESTRUCTIVE_TOOLS.has(n) ? ["destructive"] : []),
    ...(CONVERGENT_TOOLS.has(n) ? ["convergent"] : []),
    ...(OPEN_WORLD_TOOLS.has(n) ? ["open_world"] : []),
  ];
}

describe("each tool says in _meta what the server enforces", () => {
  for (const era of ERAS) {
    it(`${era}: enforcement, trust and the consent flag of every tool are the effect sets' (a person's write token lists all)`, async () => {
      const acc = await seedAccount();
      const { tools } = await listed(acc.human, era);
      expect(tools.map((t) => t.name).sort()).toEqual([...TOOL_NAMES].sort());
      for (const t of tools) {
        const n = t.name as ToolName;
        expect(t._meta?.[ENFORCEMENT_KEY], n).toEqual({
          scope: WRITE_TOOLS.has(n) ? "tasks:write" : "tasks:read",
          human_only: HUMAN_TOOLS.has(n),
          claim_guarded: CLAIM_GUARDED_TOOLS.has(n),
          effects: effectsFromSets(n),
        });
        expect(t._meta?.[TRUST_KEY], n).toEqual({ untrustedContentHint: !PLAIN_RESULT_TOOLS.has(n), privateHint: !SELF_ONLY_TOOLS.has(n) });
        expect(t._meta?.[USER_INTERACTION_KEY], n).toBe(HUMAN_TOOLS.has(n) ? true : undefined);
        const view = APPROVALS_VIEW_TOOLS.includes(n);
        expect(Object.keys(t._meta ?? {}).sort(), n).toEqual(
          [ENFORCEMENT_KEY, TRUST_KEY, FINGERPRINT_KEY, ...(HUMAN_TOOLS.has(n) ? [USER_INTERACTION_KEY] : []), ...(view ? ["ui", "ui/resourceUri"] : [])].sort(),
        );
        if (view) expect([(t._meta?.ui as { resourceUri?: string }).resourceUri, t._meta?.["ui/resourceUri"]], n).toEqual(["ui://taskgate/approvals", "ui://taskgate/approvals"]);
      }
    });

    it(`${era}: a read token is refused exactly where scope is tasks:write, an agent exactly where human_only`, async () => {
      const acc = await seedAccount(`Contract ${era}`);
      const { tools } = await listed(acc.human, era);
      const read = await connect(acc.humanRead, era);
      const agent = await connect(acc.agent, era);
      const mismatches: string[] = [];
      for (const t of tools) {
        const e = t._meta?.[ENFORCEMENT_KEY];
        // Refusals come before the arguments are read: empty arguments show them, and a read token writes nothing.
        const byScope = /needs a token with scope write/.test((await read.call(t.name, {})).text);
        if (byScope !== (e.scope === "tasks:write")) mismatches.push(`${t.name}: read token refused=${byScope}, scope ${e.scope}`);
        const asAgent = await agent.call(t.name, { task_id: "tsk_missing", agent: "nobody", provider: "drive", token_id: "tok_missing", item_ids: ["trs_missing"] });
        const byKind = /an agent's token can never call it/.test(asAgent.text);
        if (byKind !== e.human_only) mismatches.push(`${t.name}: agent refused=${byKind}, human_only ${e.human_only}`);
      }
      await read.close();
      await agent.close();
      expect(mismatches).toEqual([]);
    });
  }

  it("consent tools end their description with the one derived sentence; no tool file writes it by hand", () => {
    for (const d of describeAllTools()) {
      const occurrences = d.description.split(HUMAN_ONLY_NOTE).length - 1;
      expect(occurrences, d.name).toBe(HUMAN_TOOLS.has(d.name) ? 1 : 0);
      if (HUMAN_TOOLS.has(d.name)) expect(d.description.endsWith(` ${HUMAN_ONLY_NOTE}`), d.name).toBe(true);
    }
    for (const t of ALL_TOOLS) expect(t.description, t.name).not.toContain(HUMAN_ONLY_NOTE);
  });
});

/** Strings of a result that an agent or an outsider cannot have written: ids, times, cursors, zones, names a person chose. */
const SERVER_OR_PERSON = /^(id|\w+_id|\w+_ids|detached|\w+_at|purge_after|next_cursor|time_zone|assignee|paused_by)$/;
const PERSON_NAMED = (tool: string, path: string) => /^\.(agent|settings)\.name$/.test(path) || (tool === "list_agents" && path === ".items[].name");

/** Paths of the free-text strings (no enum, const or format) of a JSON Schema. */
function freeStrings(s: any, path: string, out: string[] = []): string[] {
  if (!s || typeof s !== "object") return out;
  if ([s.type].flat().includes("string") && !s.enum && s.const === undefined && !s.format) out.push(path);
  for (const [k, v] of Object.entries(s.properties ?? {})) freeStrings(v, `${path}.${k}`, out);
  if (s.items) freeStrings(s.items, `${path}[]`, out);
  for (const b of [...(s.anyOf ?? []), ...(s.oneOf ?? [])]) freeStrings(b, path, out);
  return out;
}

describe("untrusted content is labelled", () => {
  it("a tool's result is marked untrusted exactly when its output schema has a string an agent or an outsider may have written", () => {
    const wrong: string[] = [];
    for (const t of ALL_TOOLS) {
      const written = freeStrings(detailedSchema(t.output, "output"), "").filter(
        (p) => !SERVER_OR_PERSON.test(p.split(".").pop()!.replace(/\[\]$/, "")) && !PERSON_NAMED(t.name, p),
      );
      const untrusted = !PLAIN_RESULT_TOOLS.has(t.name);
      if (untrusted !== written.length > 0) wrong.push(`${t.name}: untrusted=${untrusted}, free text: ${written.join(" ") || "none"}`);
    }
    expect(wrong).toEqual([]);
  });

  it("only whoami's result leaves out the account's private data", () => {
    const notPrivate = describeAllTools().filter((d) => !(d._meta[TRUST_KEY] as { privateHint: boolean }).privateHint).map((d) => d.name);
    expect(notPrivate).toEqual(["whoami"]);
  });
});

describe("a catalog hosts can pin", () => {
  it("the synchronous SHA-256 gives WebCrypto's digest", async () => {
    for (const text of ["", "abc", "x".repeat(55), "x".repeat(56), "x".repeat(64), "é€😀 ".repeat(300), JSON.stringify(describeAllTools())]) {
      expect(sha256HexSync(text)).toBe(await sha256Hex(text));
    }
  });

  it("every tool's fingerprint and the list's are the same for every call, in both eras, for every token of one kind and toolset", async () => {
    const acc = await seedAccount();
    const other = await seedAccount("Another account", "other-bot");
    const published = new Map(describeAllTools().map((d) => [d.name, d._meta[FINGERPRINT_KEY]]));
    const catalogs = new Map<string, Set<string>>();
    const cases: [string, string, Record<string, string>?][] = [
      ["human", acc.human], ["human", other.human], ["human-read", acc.humanRead], ["agent", acc.agent], ["agent", other.agent],
      ["agent/tasks", acc.agent, { "x-mcp-toolsets": "tasks" }], ["agent/tasks", other.agent, { "x-mcp-toolsets": "tasks" }],
    ];
    for (const era of ERAS) {
      for (const [kind, secret, headers] of cases) {
        for (let i = 0; i < 2; i++) {
          const { tools, catalog } = await listed(secret, era, headers);
          expect(catalog).toMatch(/^[0-9a-f]{64}$/);
          expect(catalog).toBe(catalogFingerprint(tools as never));
          for (const t of tools) expect(t._meta?.[FINGERPRINT_KEY], t.name).toBe(published.get(t.name as ToolName));
          catalogs.set(kind, (catalogs.get(kind) ?? new Set()).add(catalog));
        }
      }
    }
    for (const [kind, seen] of catalogs) expect(seen.size, kind).toBe(1);
    // Different lists, different catalogs.
    expect(new Set([...catalogs.values()].map((s) => [...s][0])).size).toBe(catalogs.size);
  });

  it("a fingerprint is the SHA-256 of the tool's canonical JSON, and any change to a definition changes it", () => {
    const tools = describeAllTools();
    const d = tools.find((t) => t.name === "delete_task")!;
    expect(d._meta[FINGERPRINT_KEY]).toBe(fingerprintOf(d));
    const variants = [
      { ...d, description: `${d.description} ` },
      { ...d, title: "Remove task" },
      { ...d, annotations: { ...d.annotations, destructiveHint: false } },
      { ...d, inputSchema: { ...d.inputSchema, properties: { ...(d.inputSchema.properties as object), force: { type: "boolean" } } } },
      { ...d, outputSchema: { ...d.outputSchema, properties: {} } },
      { ...d, _meta: { ...d._meta, [ENFORCEMENT_KEY]: { ...(d._meta[ENFORCEMENT_KEY] as object), claim_guarded: false } } },
    ];
    const seen = new Set([fingerprintOf(d)]);
    for (const v of variants) seen.add(fingerprintOf(v));
    expect(seen.size).toBe(variants.length + 1);
    const catalog = catalogFingerprint(tools);
    expect(catalogFingerprint(tools.map((t) => (t === d ? variants[0] : t)))).not.toBe(catalog);
    expect(catalogFingerprint([...tools].reverse())).not.toBe(catalog);
    // The fingerprint itself is left out of what is hashed: a stale one changes nothing.
    expect(fingerprintOf({ ...d, _meta: { ...d._meta, [FINGERPRINT_KEY]: "stale" } })).toBe(fingerprintOf(d));
  });
});
