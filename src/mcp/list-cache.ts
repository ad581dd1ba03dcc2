/**
 * tools/list answered from memory. Its answer depends only on the principal's
 * class (kind, scope, pause), the connection's toolsets and what the request
 * itself says (its headers the SDK reads, its params), never on data. So the
 * SDK answers each distinct request once, with a stand-in id; the response is
 * kept split around that id and replayed with the caller's id. Anything
 * unusual (a batch, a cursor, other params) goes to the SDK every time.
 * The cache is per isolate and safe to lose.
 */
import type { ToolSelection } from "./toolsets.ts";
import { principalClass } from "./registry.ts";
import type { Principal } from "../domain/principal.ts";

/** The request headers the SDK's HTTP handling reads (see createMcpHandler); everything else cannot change its answer. */
const SDK_HEADERS = ["accept", "content-type", "host", "mcp-method", "mcp-name", "mcp-protocol-version", "mcp-session-id", "origin", "last-event-id"];

interface Kept {
  status: number;
  headers: [string, string][];
  /** The body before and after the JSON-RPC id, encoded once: a replay copies bytes. */
  head: Uint8Array;
  tail: Uint8Array;
}

const utf8 = new TextEncoder();

const kept = new Map<string, Kept>();
const MAX_KEPT = 256;

type JsonRpcId = string | number;

/** The cache key and id of a plain tools/list request, or null for anything else. */
export function listRequestKey(request: Request, body: unknown, principal: Principal, selection: ToolSelection | undefined): { key: string; id: JsonRpcId } | null {
  if (request.method !== "POST" || !body || typeof body !== "object" || Array.isArray(body)) return null;
  const m = body as Record<string, unknown>;
  if (m.method !== "tools/list" || m.jsonrpc !== "2.0") return null;
  if (typeof m.id !== "string" && (typeof m.id !== "number" || !Number.isSafeInteger(m.id))) return null;
  for (const k of Object.keys(m)) if (k !== "jsonrpc" && k !== "id" && k !== "method" && k !== "params") return null;
  const params = m.params ?? {};
  if (typeof params !== "object" || params === null || Array.isArray(params)) return null;
  for (const k of Object.keys(params)) if (k !== "_meta") return null;
  const headers = SDK_HEADERS.map((h) => request.headers.get(h));
  return { key: JSON.stringify([principalClass(principal), selection?.key ?? "all", headers, params]), id: m.id };
}

function replay(k: Kept, id: JsonRpcId): Response {
  const idBytes = utf8.encode(JSON.stringify(id));
  const body = new Uint8Array(k.head.length + idBytes.length + k.tail.length);
  body.set(k.head, 0);
  body.set(idBytes, k.head.length);
  body.set(k.tail, k.head.length + idBytes.length);
  return new Response(body, { status: k.status, headers: k.headers });
}

/**
 * The kept answer to this tools/list, or the SDK's answer (through `ask`,
 * given the body with a stand-in id) kept for next time when it succeeded.
 */
export async function cachedList(key: string, id: JsonRpcId, body: Record<string, unknown>, ask: (body: Record<string, unknown>) => Promise<Response>): Promise<Response> {
  const hit = kept.get(key);
  if (hit) return replay(hit, id);
  const standIn = `tg-list-${crypto.randomUUID()}`;
  const res = await ask({ ...body, id: standIn });
  const text = await res.text();
  const quoted = JSON.stringify(standIn);
  const at = text.indexOf(quoted);
  const headers = [...res.headers].filter(([name]) => name.toLowerCase() !== "content-length");
  if (res.status !== 200 || at < 0 || text.indexOf(quoted, at + 1) >= 0) {
    // Not a plain answer (an error, say): give it as it is, with the caller's id, and keep nothing.
    return new Response(at < 0 ? text : text.split(quoted).join(JSON.stringify(id)), { status: res.status, headers });
  }
  const k: Kept = { status: res.status, headers, head: utf8.encode(text.slice(0, at)), tail: utf8.encode(text.slice(at + quoted.length)) };
  if (kept.size >= MAX_KEPT) kept.clear();
  kept.set(key, k);
  return replay(k, id);
}

/** For tests: forget every kept answer. */
export function forgetKeptLists(): void {
  kept.clear();
}
