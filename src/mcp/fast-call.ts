/**
 * The usual tools/call, answered without building the SDK's per-request
 * server and transport: a plain call in either era, whose answer the SDK
 * would give as the registry's result wrapped in JSON-RPC and nothing else.
 *
 * What the SDK does for such a call and this does too: the registry's
 * result (callTool), its decide link (withDecideLink), the era's projection
 * (identity for an object structuredContent, which every result has), and in
 * 2026-07-28 the result's `resultType: "complete"` and the server's identity
 * in `_meta`; then `{"result":…,"jsonrpc":"2.0","id":…}` as application/json.
 *
 * Anything else goes to the SDK, unchanged: any key, header, version,
 * capability or shape this does not know for sure the SDK accepts (so every
 * refusal, every wait for a person, requestState, progress tokens,
 * notifications, batches and other methods are the SDK's). A test holds the
 * two paths to the same bytes (test/fast-call.test.ts).
 */
import { SERVER_INFO_META_KEY, type CallToolResult } from "@modelcontextprotocol/server";
import { isToolName } from "../catalog/effects.ts";
import { VERSION } from "../env.ts";
import { withDecideLink } from "./app-view.ts";
import { callTool, type CallScope } from "./registry.ts";

export const MODERN_VERSION = "2026-07-28";
/** 2025-era protocol versions the SDK's stateless transport serves (an absent header is the SDK's to default). */
const LEGACY_VERSIONS = new Set(["2025-11-25", "2025-06-18", "2025-03-26"]);
const ENVELOPE_KEYS = ["io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientInfo", "io.modelcontextprotocol/clientCapabilities"];
const MODERN_HEADERS = new Set(["mcp-protocol-version", "mcp-method", "mcp-name"]);
/** What the SDK's server says it is (server.ts makes its Server with the same). */
export const SERVER_INFO = { name: "taskgate", title: "Taskgate", version: VERSION };

type Plain = Record<string, unknown>;
const isPlain = (v: unknown): v is Plain => typeof v === "object" && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;
const keysWithin = (o: Plain, allowed: readonly string[]) => Object.keys(o).every((k) => allowed.includes(k));

/** Whether Accept names both JSON and SSE exactly (what both eras' transports accept without question). */
function acceptsBoth(accept: string | null): boolean {
  if (!accept) return false;
  const types = accept.split(",").map((t) => t.split(";")[0].trim().toLowerCase());
  return types.includes("application/json") && types.includes("text/event-stream");
}

/** The envelope of a 2026-07-28 call that can wait for nothing: the three keys, a plain client, no capabilities. */
function plainEnvelope(meta: unknown): boolean {
  if (!isPlain(meta) || Object.keys(meta).length !== 3 || !keysWithin(meta, ENVELOPE_KEYS)) return false;
  const client = meta["io.modelcontextprotocol/clientInfo"];
  const caps = meta["io.modelcontextprotocol/clientCapabilities"];
  return (
    meta["io.modelcontextprotocol/protocolVersion"] === MODERN_VERSION &&
    isPlain(client) && keysWithin(client, ["name", "version"]) && typeof client.name === "string" && typeof client.version === "string" &&
    isPlain(caps) && Object.keys(caps).length === 0
  );
}

/**
 * The era of a tools/call this answers itself ("modern" or "legacy"), or null
 * for the SDK. A 2025-era call names its version in the header and carries no
 * `_meta` (the SDK classifies it legacy and, Accept naming JSON, answers it as
 * JSON); a 2026-07-28 call carries the plain envelope and the three headers
 * that agree with it.
 */
export function fastCallEra(request: Request, body: unknown): "modern" | "legacy" | null {
  if (request.method !== "POST" || !isPlain(body) || !keysWithin(body, ["jsonrpc", "id", "method", "params"])) return null;
  const { jsonrpc, id, method, params } = body;
  if (jsonrpc !== "2.0" || method !== "tools/call" || !(typeof id === "string" || Number.isSafeInteger(id))) return null;
  if (!isPlain(params) || typeof params.name !== "string" || !isToolName(params.name)) return null;
  const args = params.arguments;
  if (args !== undefined && (!isPlain(args) || Object.hasOwn(args, "__proto__"))) return null;
  if (!acceptsBoth(request.headers.get("accept"))) return null;
  const h = request.headers;
  const version = h.get("mcp-protocol-version") ?? "";
  if (LEGACY_VERSIONS.has(version)) {
    if (!keysWithin(params, ["name", "arguments"])) return null;
    for (const [name] of h) if ((name.startsWith("mcp-") && name !== "mcp-protocol-version") || name.startsWith("x-mcp-")) return null;
    return "legacy";
  }
  if (version !== MODERN_VERSION || !keysWithin(params, ["name", "arguments", "_meta"]) || !plainEnvelope(params._meta)) return null;
  if (h.get("mcp-method") !== "tools/call" || h.get("mcp-name") !== params.name) return null;
  for (const [name] of h) if ((name.startsWith("mcp-") && !MODERN_HEADERS.has(name)) || name.startsWith("x-mcp-")) return null;
  return "modern";
}

/** The result as the 2026-07-28 era sends it: `resultType` stamped, the server's identity added to `_meta` (as the SDK's encoder does). */
function modernResult(result: CallToolResult): Plain {
  const stamped: Plain = result.resultType === undefined ? { ...result, resultType: "complete" } : { ...result };
  const meta = stamped._meta;
  if (meta === undefined) stamped._meta = { [SERVER_INFO_META_KEY]: SERVER_INFO };
  else if (isPlain(meta) && meta[SERVER_INFO_META_KEY] === undefined) stamped._meta = { ...meta, [SERVER_INFO_META_KEY]: SERVER_INFO };
  return stamped;
}

/** Answers a call fastCallEra accepted. */
export async function fastCall(request: Request, body: Plain, era: "modern" | "legacy", scope: CallScope): Promise<Response> {
  const params = body.params as Plain;
  const name = params.name as string;
  const origin = new URL(request.url).origin;
  const result = withDecideLink(name, await callTool(scope, name, params.arguments), origin);
  const answer = { result: era === "modern" ? modernResult(result) : result, jsonrpc: "2.0", id: body.id };
  return new Response(JSON.stringify(answer), { status: 200, headers: { "content-type": "application/json" } });
}
