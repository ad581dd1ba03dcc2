/**
 * Where a tools/list spends its time beyond /health, in Node: the MCP handler
 * alone (no HTTP, no auth, no D1), its parts measured one by one, and the
 * same request answered through the SDK and from the kept answer.
 * Run: npm run -s bench:profile
 */
import { serveMcp } from "../src/mcp/server.ts";
import { installTools, listToolsFor } from "../src/mcp/registry.ts";
import { ALL_TOOLS } from "../src/tools/index.ts";
import { forgetKeptLists } from "../src/mcp/list-cache.ts";
import type { Principal } from "../src/domain/principal.ts";

installTools(ALL_TOOLS);

const principal = { accountId: "acc_x", tokenId: "tok_x", kind: "human", scope: "write", agentName: null, paused: false } as unknown as Principal;
const scope = { env: {} as never, principal, requestId: "r", waitUntil: () => {} };

function req(era: "modern" | "legacy", method: string, params: unknown = {}) {
  const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json, text/event-stream" };
  const body: Record<string, unknown> = { jsonrpc: "2.0", id: 1, method, params };
  if (era === "legacy") headers["mcp-protocol-version"] = "2025-06-18";
  else {
    headers["mcp-protocol-version"] = "2026-07-28";
    headers["mcp-method"] = method;
    body.params = { ...(params as object), _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientInfo": { name: "bench", version: "1" }, "io.modelcontextprotocol/clientCapabilities": {} } };
  }
  return new Request("https://taskgate.test/mcp", { method: "POST", headers, body: JSON.stringify(body) });
}

const N = 400;

async function time(label: string, n: number, f: () => Promise<unknown> | unknown) {
  for (let i = 0; i < 50; i++) await f();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await f();
  const ms = (performance.now() - t0) / n;
  console.log(`${label.padEnd(44)} ${ms.toFixed(3)} ms`);
  return ms;
}

const first = await serveMcp(req("modern", "tools/list"), scope as never);
const bytes = (await first.arrayBuffer()).byteLength;
console.log(`tools/list of a person's write token: ${bytes} bytes; each line is the mean of ${N} calls after 50 warm-up calls`);

const read = async (r: Response | Promise<Response>) => (await r).arrayBuffer();
await time("baseline: new Request, read its body", N, () => read(new Response(req("modern", "ping").body)));
await time("listToolsFor (the cached array)", N, () => listToolsFor(principal));
await time("JSON.stringify of the tools", N, () => JSON.stringify({ tools: listToolsFor(principal) }));
for (const era of ["modern", "legacy"] as const) {
  await time(`${era}: ping through the SDK`, N, () => read(serveMcp(req(era, "ping"), scope as never)));
  await time(`${era}: tools/list through the SDK`, N, () => {
    forgetKeptLists();
    return read(serveMcp(req(era, "tools/list"), scope as never));
  });
  await time(`${era}: tools/list kept`, N, () => read(serveMcp(req(era, "tools/list"), scope as never)));
}

// A read call: whoami, with a D1 that answers at once (so what is left is the SDK, the registry and JSON).
const row = { id: "acc_x", name: "Bench", time_zone: "UTC" };
const fakeDb = {
  prepare: () => ({ bind: () => ({ first: async () => row, all: async () => ({ results: [row] }), run: async () => ({}) }) }),
  batch: async () => [],
};
const readScope = { env: { DB: fakeDb } as never, principal, requestId: "r", waitUntil: () => {} };
function call(era: "modern" | "legacy", name: string, args: Record<string, unknown>) {
  const r = req(era, "tools/call", { name, arguments: args });
  if (era === "modern") r.headers.set("mcp-name", name);
  return r;
}
for (const era of ["modern", "legacy"] as const) {
  await time(`${era}: tools/call whoami (D1 answers at once)`, N, () => read(serveMcp(call(era, "whoami", {}), readScope as never)));
}
const { callTool } = await import("../src/mcp/registry.ts");
await time("callTool whoami alone (registry, no SDK)", N, () => callTool(readScope as never, "whoami", {}));
console.log((await (await serveMcp(call("modern", "whoami", {}), readScope as never)).text()).slice(0, 300));
console.log((await (await serveMcp(call("legacy", "whoami", {}), readScope as never)).text()).slice(0, 300));
