import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { describeAllTools, detailedInputSchema } from "../../src/mcp/registry.ts";
import { WRITE_TOOLS, type ToolName } from "../../src/catalog/effects.ts";
import { MCP_URL, seedAccount, workerFetch } from "../helpers.ts";
import { argumentsFor, type IdPool } from "./arbitrary.ts";
import { seedShapes } from "./shapes.ts";

/**
 * Property: whatever arguments arrive, for every tool, in either protocol era,
 * the server answers with a JSON-RPC error or a tool result — never a 5xx,
 * never an unhandled exception — and a refused or failed write leaves no rows
 * behind. Seeded, so a failure reproduces with the printed seed.
 */
const SEED = 20261202;
const CASES = 10_000;

const MODERN_META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "fuzz", version: "1.0.0" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

function toolCall(secret: string, name: string, args: unknown, modern: boolean, id: number): Promise<Response> {
  const params: Record<string, unknown> = { name, arguments: args };
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    authorization: `Bearer ${secret}`,
  };
  if (modern) {
    params._meta = MODERN_META;
    headers["mcp-protocol-version"] = "2026-07-28";
    headers["mcp-method"] = "tools/call";
    headers["mcp-name"] = name;
  }
  return workerFetch(MCP_URL, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params }) });
}

async function readAnswer(res: Response): Promise<any> {
  const text = await res.text();
  const data = text.startsWith("event:") ? text.split("\n").find((l) => l.startsWith("data: "))?.slice(6) : text;
  return JSON.parse(data ?? "null");
}

/** A cheap fingerprint of every table the tools write: counts and the latest change. */
async function fingerprint(): Promise<string> {
  const row = await env.DB.prepare(
    `SELECT (SELECT count(*) || '/' || total(version) || '/' || coalesce(max(updated_at), '') FROM tasks) AS tasks,
            (SELECT count(*) || '/' || total(version) FROM projects) AS projects,
            (SELECT count(*) || '/' || coalesce(max(updated_at), '') FROM steps) AS steps,
            (SELECT count(*) || '/' || coalesce(max(updated_at), '') FROM comments) AS comments,
            (SELECT count(*) FROM labels) || '/' || (SELECT count(*) FROM task_labels) AS labels,
            (SELECT count(*) FROM task_dependencies) AS deps,
            (SELECT count(*) FROM runs) || '/' || (SELECT count(*) FROM run_events) AS runs,
            (SELECT count(*) || '/' || coalesce(max(decided_at), '') FROM approvals) AS approvals,
            (SELECT count(*) FROM calendar_links) AS links,
            (SELECT count(*) FROM trash) AS trash,
            (SELECT count(*) FROM activity) AS activity,
            (SELECT count(*) FROM idempotency_keys) AS keys,
            (SELECT count(*) FROM connectors) AS connectors,
            (SELECT count(*) || '/' || coalesce(max(revoked_at), '') FROM tokens) AS tokens,
            (SELECT coalesce(max(updated_at), '') FROM accounts) AS accounts`,
  ).first();
  return JSON.stringify(row);
}

describe("fuzz", () => {
  it(`${CASES} seeded cases over every tool: no 5xx, always a JSON-RPC answer, no partial writes`, async () => {
    const acc = await seedAccount("Fuzz");
    const other = await seedAccount("Fuzz other");
    const mine = await seedShapes(acc);
    const theirs = await seedShapes(other);
    const pool: IdPool = { byPrefix: {} };
    for (const shapes of [mine, theirs]) {
      for (const [prefix, ids] of Object.entries(shapes.ids)) (pool.byPrefix[prefix] ??= []).push(...ids);
    }
    const tools = describeAllTools();
    const secrets = [acc.human, acc.human, acc.agent, acc.humanRead];
    const caseArb = fc.record({
      tool: fc.integer({ min: 0, max: tools.length - 1 }),
      caller: fc.integer({ min: 0, max: secrets.length - 1 }),
      modern: fc.boolean(),
      seed: fc.integer(),
    });
    let n = 0;
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        const tool = tools[c.tool];
        const [args] = fc.sample(argumentsFor(detailedInputSchema(tool.name), pool), { seed: c.seed, numRuns: 1 });
        const write = WRITE_TOOLS.has(tool.name as ToolName);
        const before = write ? await fingerprint() : "";
        const res = await toolCall(secrets[c.caller], tool.name, args, c.modern, ++n);
        expect(res.status, `${tool.name} ${JSON.stringify(args)}`).toBeLessThan(500);
        const body = await readAnswer(res);
        expect(body?.jsonrpc).toBe("2.0");
        if (body.error) {
          expect(typeof body.error.code).toBe("number");
        } else {
          expect(Array.isArray(body.result?.content), `${tool.name}: ${JSON.stringify(body).slice(0, 300)}`).toBe(true);
          if (body.result.isError) {
            expect(body.result.content[0].text).not.toMatch(/Internal error/);
            if (write) expect(await fingerprint(), `${tool.name} failed but wrote: ${JSON.stringify(args)}`).toBe(before);
          }
        }
      }),
      { seed: SEED, numRuns: CASES, endOnFailure: true },
    );
  }, 600_000);

  it("malformed JSON-RPC bodies get 4xx or a JSON-RPC error, never a 5xx", async () => {
    const acc = await seedAccount("Fuzz bodies");
    const bodyArb = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.json({ maxDepth: 3 }),
      fc.record({ jsonrpc: fc.oneof(fc.constant("2.0"), fc.string()), id: fc.oneof(fc.integer(), fc.string(), fc.constant(null)), method: fc.string(), params: fc.anything() }).map((o) => JSON.stringify(o)),
      fc.constantFrom("", "{", "[]", "[{}]", "null", '{"jsonrpc":"2.0"}', '{"jsonrpc":"2.0","id":1,"method":"tools/call"}', '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":42}}'),
    );
    await fc.assert(
      fc.asyncProperty(bodyArb, fc.boolean(), async (body, modern) => {
        const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${acc.human}` };
        if (modern) Object.assign(headers, { "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call" });
        const res = await workerFetch(MCP_URL, { method: "POST", headers, body });
        expect(res.status, body.slice(0, 200)).toBeLessThan(500);
        await res.text();
      }),
      { seed: SEED, numRuns: 1_000 },
    );
  }, 300_000);
});
