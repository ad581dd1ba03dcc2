/**
 * The benchmark's floor: a tools/call answered through the same edge, token
 * lane and registry as /mcp, without the SDK (no server, no transport, no
 * result projection). `npm run bench` compares each read call with it to show
 * what the protocol layer itself costs. Served only at FLOOR_PATH and only
 * when the Worker runs with BENCH_FLOOR=1, which the bench passes to its own
 * `wrangler dev` and no deployment sets; anywhere else the path is not an MCP
 * endpoint (404).
 */
import type { Env } from "../env.ts";
import { callTool, type CallScope } from "./registry.ts";

export const FLOOR_PATH = "/mcp/bench-floor";

/** Whether this request is for the floor on a Worker that serves it. */
export function isFloorRequest(request: Request, env: Env): boolean {
  return env.BENCH_FLOOR === "1" && new URL(request.url).pathname === FLOOR_PATH;
}

/** One JSON-RPC tools/call in, its registry result out as JSON; anything else is refused with 400. */
export async function serveFloor(request: Request, scope: CallScope): Promise<Response> {
  let message: { id?: unknown; method?: unknown; params?: { name?: unknown; arguments?: unknown } };
  try {
    message = JSON.parse(await request.text());
  } catch {
    return Response.json({ error: "the floor takes one JSON-RPC tools/call" }, { status: 400 });
  }
  if (message?.method !== "tools/call" || typeof message.params?.name !== "string") {
    return Response.json({ error: "the floor takes one JSON-RPC tools/call" }, { status: 400 });
  }
  const result = await callTool(scope, message.params.name, message.params.arguments ?? {});
  return Response.json({ jsonrpc: "2.0", id: message.id ?? null, result });
}
