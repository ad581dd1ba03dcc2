/**
 * The usual tools/call is answered without the SDK's per-request server
 * (src/mcp/fast-call.ts): the same bytes as the SDK's answer, in both eras,
 * for results, tool errors, refusals and argument errors; and every request
 * it does not know for sure goes to the SDK.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import "../src/index.ts";
import type { Env } from "../src/env.ts";
import { resolveTgToken } from "../src/http/token-lane.ts";
import { accountEnv } from "../src/db/shards.ts";
import { serveMcp } from "../src/mcp/server.ts";
import { fastCallEra } from "../src/mcp/fast-call.ts";
import type { CallScope } from "../src/mcp/registry.ts";
import { connect, MCP_URL, seedAccount } from "./helpers.ts";

type Era = "modern" | "legacy";
const META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "fast-call test", version: "1.0.0" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

interface Call {
  era: Era;
  name: string;
  args?: unknown;
  id?: unknown;
  meta?: unknown;
  headers?: Record<string, string>;
  version?: string;
}

function request(c: Call): Request {
  const params: Record<string, unknown> = { name: c.name };
  if (c.args !== undefined) params.arguments = c.args;
  const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json, text/event-stream" };
  if (c.era === "modern") {
    params._meta = c.meta ?? META;
    Object.assign(headers, { "mcp-protocol-version": c.version ?? "2026-07-28", "mcp-method": "tools/call", "mcp-name": c.name });
  } else {
    if (c.meta) params._meta = c.meta;
    if (c.version !== "") headers["mcp-protocol-version"] = c.version ?? "2025-06-18";
  }
  Object.assign(headers, c.headers);
  return new Request(MCP_URL, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id: "id" in c ? c.id : 1, method: "tools/call", params }) });
}

async function scopeOf(secret: string): Promise<CallScope> {
  const props = await resolveTgToken(secret, env as unknown as Env);
  if (!props) throw new Error("token refused");
  const { principal, shard } = props.resolution as { principal: CallScope["principal"]; shard: string };
  return { env: accountEnv(env as unknown as Env, shard), principal, requestId: "req-fast-call", waitUntil: () => {} };
}

async function both(scope: CallScope, c: Call): Promise<{ fast: boolean; sdk: string; ours: string }> {
  const probe = request(c);
  const body = JSON.parse(await probe.clone().text());
  const fast = fastCallEra(probe, body) !== null;
  const describe = async (res: Response) => JSON.stringify({ status: res.status, headers: [...res.headers], body: await res.text() });
  const sdk = await describe(await serveMcp(request(c), scope, { sdkOnly: true }));
  const ours = await describe(await serveMcp(request(c), scope));
  return { fast, sdk, ours };
}

describe("tools/call without the SDK's per-request server", () => {
  it("answers the reads, refusals and argument errors as the SDK does, byte for byte, in both eras", async () => {
    const acc = await seedAccount("Fast call");
    const person = await connect(acc.human);
    const { task } = await person.ok("create_task", { title: "Fast path", notes: "quarterly numbers" });
    await person.ok("add_steps", { task_id: task.id, steps: ["one", "two"] });
    await person.ok("comment_on_task", { task_id: task.id, body: "A comment." });
    await person.close();
    const human = await scopeOf(acc.human);
    const agent = await scopeOf(acc.agent);
    const reader = await scopeOf(acc.humanRead);
    const cases: [CallScope, Omit<Call, "era">][] = [
      [human, { name: "whoami", args: {} }],
      [human, { name: "whoami" }],
      [human, { name: "get_task", args: { task_id: task.id } }],
      [human, { name: "get_task", args: { task_id: "tsk_doesnotexist000" } }],
      [human, { name: "list_tasks", args: {}, id: "a-string-id" }],
      [human, { name: "list_tasks", args: { limit: 1000 } }],
      [human, { name: "list_tasks", args: { no_such_field: true } }],
      [human, { name: "search_tasks", args: { query: "quarterly" } }],
      [agent, { name: "list_my_tasks", args: {} }],
      [human, { name: "fleet_status", args: {} }],
      [human, { name: "list_pending_approvals", args: {} }],
      [agent, { name: "pause_agent", args: { name: "bot" } }],
      [reader, { name: "update_task", args: { task_id: task.id, title: "No" } }],
      [human, { name: "update_task", args: { task_id: "tsk_doesnotexist000", title: "No" } }],
      [human, { name: "get_task", args: { task_id: "tsk_\u0007bell" } }],
      [human, { name: "whoami", args: {}, version: "2025-11-25" }],
      [human, { name: "whoami", args: {}, version: "2025-03-26" }],
    ];
    for (const era of ["modern", "legacy"] as Era[]) {
      for (const [scope, c] of cases) {
        if (c.version && era === "modern") continue;
        const r = await both(scope, { ...c, era });
        expect(r.fast, `${era} ${c.name} takes the fast path`).toBe(true);
        expect(r.ours, `${era} ${c.name} ${JSON.stringify(c.args)}`).toBe(r.sdk);
      }
    }
  });

  it("leaves to the SDK every request it does not know for sure, and those answer as before", async () => {
    const acc = await seedAccount("Fast call, the SDK's");
    const scope = await scopeOf(acc.human);
    const others: Call[] = [
      { era: "modern", name: "whoami", args: {}, meta: { ...META, "io.modelcontextprotocol/clientCapabilities": { elicitation: { url: {} } } } },
      { era: "modern", name: "whoami", args: {}, meta: { ...META, "io.modelcontextprotocol/clientCapabilities": { extensions: { "io.modelcontextprotocol/tasks": {} } } } },
      { era: "modern", name: "whoami", args: {}, meta: { ...META, progressToken: 3 } },
      { era: "modern", name: "whoami", args: {}, headers: { "mcp-name": "get_task" } },
      { era: "modern", name: "whoami", args: {}, headers: { accept: "application/json" } },
      { era: "modern", name: "whoami", args: {}, headers: { "mcp-session-id": "x" } },
      { era: "modern", name: "whoami", args: [] },
      { era: "modern", name: "whoami", args: {}, id: 1.5 },
      { era: "modern", name: "no_such_tool", args: {} },
      { era: "legacy", name: "whoami", args: {}, version: "2024-01-01" },
      { era: "legacy", name: "whoami", args: {}, version: "2024-11-05" },
      { era: "legacy", name: "whoami", args: {}, headers: { "mcp-session-id": "x" } },
      { era: "legacy", name: "whoami", args: {}, headers: { accept: "application/json" } },
      { era: "legacy", name: "whoami", args: {}, meta: { progressToken: 1 } },
      { era: "legacy", name: "whoami", args: {}, version: "" },
      { era: "legacy", name: "whoami", args: "text" },
      { era: "legacy", name: "whoami", args: {}, id: null },
      { era: "legacy", name: "no_such_tool", args: {} },
    ];
    for (const c of others) {
      const r = await both(scope, c);
      expect(r.fast, JSON.stringify(c)).toBe(false);
      expect(r.ours, JSON.stringify(c)).toBe(r.sdk);
    }
  });
});
