import { env } from "cloudflare:workers";
import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { describeAllTools, detailedInputSchema } from "../../src/mcp/registry.ts";
import { HUMAN_TOOLS, WRITE_TOOLS, type ToolName } from "../../src/catalog/effects.ts";
import { connect, seedAccount, snapshotDb, type TestClient, type ToolCallResult } from "../helpers.ts";
import { connectApp, fakeUpstream, unexpected } from "../connectors-fakes.ts";
import { fromSchema, type IdPool, type Schema } from "./arbitrary.ts";
import { seedShapes } from "./shapes.ts";

/**
 * Tenancy, generated from the registry: every tool whose arguments carry a
 * reference to a record (a prefixed id, an id of several kinds, a free-form
 * record id, an app ref or an agent's name) is called from account B's tokens
 * with account A's references. Every call that names one of A's records by id,
 * read or write, is refused as not found in this account (a read does not
 * answer an empty list as if the record were there and empty); a call that
 * names only an agent of A finds nothing; and no row of either account changes.
 */
const SEED = 20261206;
const SAMPLES = 12;

afterEach(() => vi.restoreAllMocks());

/** Keeps the run quiet: the SDK's one-time notice about JSON responses is dropped, anything else still shows. */
function quietSdkNotice(): void {
  for (const level of ["warn", "error"] as const) {
    const original = console[level].bind(console);
    vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
      if (!String(args[0]).startsWith("responseMode:")) original(...args);
    });
  }
}

interface Refs {
  /** A's ids by prefix. */
  pool: IdPool;
  /** Every id of A, any prefix. */
  all: string[];
  /** Names of A's agents that B does not have. */
  agentNames: string[];
}

const ID_PATTERN = /^\^\(?([a-z]{3}(?:\|[a-z]{3})*)\)?_/;
const NAME_PROPS = new Set(["agent", "assignee"]);

/** The arbitrary for a property that refers to one of A's records, or null when it refers to none. */
function referenceArb(prop: string, s: Schema, refs: Refs): fc.Arbitrary<unknown> | null {
  if (s.type === "string") {
    const m = typeof s.pattern === "string" ? ID_PATTERN.exec(s.pattern) : null;
    if (m) {
      const ids = m[1].split("|").flatMap((prefix) => refs.pool.byPrefix[prefix] ?? []);
      return ids.length ? fc.constantFrom(...ids) : null;
    }
    if (NAME_PROPS.has(prop) && refs.agentNames.length) return fc.constantFrom(...refs.agentNames);
    if (prop === "ref") return fc.constantFrom(...refs.all).map((id) => `drive:${id}`);
    if (/_id$/.test(prop) && !s.pattern && /record/.test(s.description ?? "")) return fc.constantFrom(...refs.all);
    return null;
  }
  if (s.type === "array" && s.items) {
    const item = referenceArb(prop.replace(/s$/, ""), s.items as Schema, refs);
    return item ? fc.array(item, { minLength: Math.max(1, s.minItems ?? 1), maxLength: Math.min(s.maxItems ?? 3, 3) }) : null;
  }
  if (Array.isArray(s.anyOf)) {
    for (const branch of s.anyOf as Schema[]) {
      const arb = referenceArb(prop, { ...branch, description: s.description }, refs);
      if (arb) return arb;
    }
  }
  return null;
}

/**
 * Well-formed arguments with at least one reference, every reference pointing
 * at A; the rest valid values. Cursors are left out: only the server can issue one.
 */
function tenancyArgs(
  schema: Schema,
  refs: Refs,
): { arb: fc.Arbitrary<Record<string, unknown>>; references: string[]; idReferences: string[] } {
  const props = (schema.properties ?? {}) as Record<string, Schema>;
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  const references: string[] = [];
  for (const [k, v] of Object.entries(props)) {
    if (k === "cursor") continue;
    const ref = referenceArb(k, v, refs);
    if (ref) references.push(k);
    model[k] = ref ?? fromSchema(v, refs.pool, 1, { valid: true });
  }
  const record = fc.record(model, { requiredKeys: (schema.required as string[]) ?? [] }) as fc.Arbitrary<Record<string, unknown>>;
  const idReferences = references.filter((k) => !(NAME_PROPS.has(k) && !ID_PATTERN.test(String(props[k].pattern ?? ""))));
  return { arb: record.filter((args) => references.some((k) => k in args)), references, idReferences };
}

const NOT_FOUND = /in this account|is not connected to this account|No app is connected to this account/;

/**
 * A write that may succeed with A's ids because it writes nothing: empty_trash
 * lists ids it does not find under not_in_trash, as it does for ids already purged.
 */
const harmlessSuccess = (name: string, result: Record<string, any>) => name === "empty_trash" && result.purged?.length === 0;

/** A's ids or texts in `text` that the caller did not pass in itself. */
function leaks(text: string, args: unknown, needles: string[]): string[] {
  const given = JSON.stringify(args);
  return needles.filter((n) => text.includes(n) && !given.includes(n));
}

describe("tenancy", () => {
  it("every tool that takes a reference: another account's ids are refused as not in this account, leak nothing and change nothing", async () => {
    quietSdkNotice();
    const a = await seedAccount("Tenant A", "bot");
    const b = await seedAccount("Tenant B", "bot");
    const shapesA = await seedShapes(a);
    await seedShapes(b);
    const connectorA = await connectApp(a.accountId, "notion");
    fakeUpstream(unexpected);

    const byPrefix: Record<string, string[]> = { ...shapesA.ids, con: [connectorA] };
    byPrefix.tok = [...(byPrefix.tok ?? []), ...Object.values(a.tokenIds)];
    byPrefix.acc = [a.accountId];
    const agentsOf = async (account: string) =>
      (await env.DB.prepare("SELECT name FROM agents WHERE account_id = ?").bind(account).all<{ name: string }>()).results.map((r) => r.name);
    const namesB = new Set(await agentsOf(b.accountId));
    const refs: Refs = {
      pool: { byPrefix },
      all: Object.values(byPrefix).flat(),
      agentNames: (await agentsOf(a.accountId)).filter((n) => !namesB.has(n)),
    };
    expect(refs.agentNames.length).toBeGreaterThan(0);
    for (const prefix of ["tsk", "prj", "stp", "cmt", "lbl", "run", "apr", "cal", "trs", "tok", "agt", "evt"]) {
      expect(byPrefix[prefix]?.length ?? 0, `seeded ${prefix} ids`).toBeGreaterThan(0);
    }
    const needles = [...refs.all, ...shapesA.titles, ...refs.agentNames];

    const callers: { label: string; client: TestClient; kind: "human" | "agent" }[] = [
      { label: "B human", client: await connect(b.human), kind: "human" },
      { label: "B agent", client: await connect(b.agent, "legacy"), kind: "agent" },
    ];
    const covered: string[] = [];
    const refusedById: string[] = [];
    const nameOnly: string[] = [];
    const reached = new Map<string, number>();
    const problems: string[] = [];
    const before = await snapshotDb();

    for (const tool of describeAllTools()) {
      const name = tool.name as ToolName;
      const { arb, references, idReferences } = tenancyArgs(detailedInputSchema(tool.name) as Schema, refs);
      if (references.length === 0) continue;
      covered.push(name);
      if (idReferences.length === 0) nameOnly.push(name);
      const write = WRITE_TOOLS.has(name);
      const samples = fc.sample(arb, { seed: SEED + covered.length, numRuns: SAMPLES });
      for (const caller of callers) {
        if (caller.kind === "agent" && HUMAN_TOOLS.has(name)) continue;
        for (const args of samples) {
          const r: ToolCallResult = await caller.client.call(name, args);
          const where = `${caller.label} → ${name} ${JSON.stringify(args).slice(0, 300)}`;
          const body = r.isError ? r.text : JSON.stringify(r.structured);
          const leaked = leaks(body + (r.isError ? "" : r.text), args, needles);
          if (leaked.length) problems.push(`${where} leaked ${leaked.slice(0, 3).join(", ")}: ${body.slice(0, 300)}`);
          const byId = idReferences.some((k) => k in args);
          if (r.isError) {
            if (/Internal error/.test(r.text)) problems.push(`${where} crashed: ${r.text}`);
            if (NOT_FOUND.test(r.text)) {
              reached.set(name, (reached.get(name) ?? 0) + 1);
              if (byId && !refusedById.includes(name)) refusedById.push(name);
            }
          } else if (byId) {
            if (!harmlessSuccess(name, r.structured)) problems.push(`${where} answered as if A's record were B's: ${body.slice(0, 300)}`);
            reached.set(name, (reached.get(name) ?? 0) + 1);
          } else if (write) {
            if (!harmlessSuccess(name, r.structured)) problems.push(`${where} succeeded: ${body.slice(0, 300)}`);
            reached.set(name, (reached.get(name) ?? 0) + 1);
          } else {
            reached.set(name, (reached.get(name) ?? 0) + 1);
          }
        }
      }
    }
    await Promise.all(callers.map((c) => c.client.close()));

    expect(problems).toEqual([]);
    expect(covered.filter((n) => !reached.has(n)), "tools where no sample got past validation to the lookup").toEqual([]);
    expect(
      covered.filter((n) => !refusedById.includes(n) && n !== "empty_trash" && !nameOnly.includes(n)),
      "tools never refused with \"in this account\" for another account's id",
    ).toEqual([]);
    for (const n of ["list_tasks", "list_my_tasks", "list_due_tasks", "list_blocked_tasks", "search_tasks", "list_activity"]) {
      expect(refusedById, `${n} refuses another account's id`).toContain(n);
    }
    for (const n of [
      "get_task", "update_task", "delete_task", "restore_from_trash", "empty_trash", "revoke_token", "read_context", "list_activity",
      "unlink_calendar_event", "get_agent", "pause_agent", "reorder_steps", "get_approval", "log_run_event", "edit_comment", "rename_label",
    ]) {
      expect(covered, `${n} is covered`).toContain(n);
    }
    expect(await snapshotDb(), "rows changed during the cross-account calls").toBe(before);
  }, 120_000);
});
