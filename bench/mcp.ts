/**
 * Raw MCP requests in both protocol eras, as the load generator sends them:
 * 2026-07-28 (the `_meta` envelope plus the mcp-* routing headers) and legacy
 * (a plain JSON-RPC POST, as a 1.x client sends after its initialize).
 */
export type Era = "modern" | "legacy";
export const ERAS: Era[] = ["modern", "legacy"];

const MODERN_VERSION = "2026-07-28";
const LEGACY_VERSION = "2025-06-18";

const MODERN_META = {
  "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
  "io.modelcontextprotocol/clientInfo": { name: "taskgate-bench", version: "1.0.0" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

export interface HttpRequest {
  method: "GET" | "POST";
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export function get(path: string): HttpRequest {
  return { method: "GET", path, headers: {} };
}

/** A tools/list (name undefined) or tools/call request for one era. */
export function mcpRequest(era: Era, secret: string, method: "tools/list" | "tools/call", name?: string, args?: Record<string, unknown>): HttpRequest {
  const params: Record<string, unknown> = method === "tools/call" ? { name, arguments: args ?? {} } : {};
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    authorization: `Bearer ${secret}`,
  };
  if (era === "modern") {
    params._meta = MODERN_META;
    headers["mcp-protocol-version"] = MODERN_VERSION;
    headers["mcp-method"] = method;
    if (name) headers["mcp-name"] = name;
  } else {
    headers["mcp-protocol-version"] = LEGACY_VERSION;
  }
  return { method: "POST", path: "/mcp", headers, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) };
}

/** The same tools/call on the benchmark's floor (src/mcp/floor.ts): edge, token lane and registry, no SDK. Served only with BENCH_FLOOR=1. */
export function floorRequest(secret: string, name: string, args: Record<string, unknown>): HttpRequest {
  const headers = { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${secret}` };
  return { method: "POST", path: "/mcp/bench-floor", headers, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }) };
}

export interface Probe {
  status: number;
  d1Calls: number | null;
  /** The D1 time of the request from its Server-Timing header. */
  d1Ms: number | null;
  body: any;
}

/** One request, answered as JSON or as one SSE `message` event. */
export async function probe(base: string, req: HttpRequest): Promise<Probe> {
  const res = await fetch(base + req.path, { method: req.method, headers: req.headers, body: req.body });
  const text = await res.text();
  const data = text.startsWith("event:") ? text.split("\n").find((l) => l.startsWith("data: "))?.slice(6) : text;
  let body: unknown = null;
  try {
    body = JSON.parse(data ?? "null");
  } catch {
    body = text;
  }
  const calls = res.headers.get("x-d1-calls");
  const dur = /d1;dur=([\d.]+)/.exec(res.headers.get("server-timing") ?? "");
  return { status: res.status, d1Calls: calls === null ? null : Number(calls), d1Ms: dur ? Number(dur[1]) : null, body };
}

/** The structured result of a successful tools/call, or an error that says what went wrong. */
export async function callOk(base: string, secret: string, name: string, args: Record<string, unknown> = {}): Promise<any> {
  const p = await probe(base, mcpRequest("modern", secret, "tools/call", name, args));
  const problem = failure(p);
  if (problem) throw new Error(`${name} failed during seeding: ${problem}`);
  return p.body.result.structuredContent;
}

/** Why a probe is not a successful answer, or null. */
export function failure(p: Probe): string | null {
  if (p.status !== 200) return `HTTP ${p.status}: ${JSON.stringify(p.body).slice(0, 300)}`;
  if (p.body?.error) return `JSON-RPC error ${JSON.stringify(p.body.error).slice(0, 300)}`;
  if (p.body?.result?.isError) return `tool error: ${String(p.body.result.content?.[0]?.text).slice(0, 300)}`;
  return null;
}
