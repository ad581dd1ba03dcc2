/**
 * tools/list answered from memory. Its answer depends only on the principal's
 * class (kind, scope, pause), the connection's toolsets and what the request
 * itself says (its headers the SDK reads, its params), never on data. So the
 * SDK answers each distinct request once, with a stand-in id; the response is
 * kept split around that id and replayed with the caller's id. Anything
 * unusual (a batch, a cursor, other params) goes to the SDK every time.
 * The cache is per isolate and safe to lose.
 */
import type { ToolSelection } from "../catalog/toolsets.ts";
import { principalClass } from "../catalog/permissions.ts";
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
  const res = new Response(body, { status: k.status, headers: k.headers });
  // A body of known length is complete: the edge need not wait for it to end (as it must for a streamed answer).
  res.headers.set("content-length", String(body.length));
  return res;
}

/**
 * The kept answer to this tools/list, or the SDK's answer (through `ask`,
 * given the body with a stand-in id) kept for next time when it succeeded.
 */
export async function cachedList(
  key: string,
  id: JsonRpcId,
  body: Record<string, unknown>,
  acceptsJson: boolean,
  ask: (body: Record<string, unknown>) => Promise<Response>,
): Promise<Response> {
  const hit = kept.get(key);
  if (hit) return replay(hit, id);
  const standIn = `tg-list-${crypto.randomUUID()}`;
  const res = await ask({ ...body, id: standIn });
  let text = await res.text();
  let headers = [...res.headers].filter(([name]) => name.toLowerCase() !== "content-length");
  const single = res.headers.get("content-type")?.startsWith("text/event-stream") && acceptsJson ? singleSseMessage(text) : null;
  if (single !== null) {
    // One SSE message that answers one request is the same answer as JSON, which a client that accepts both takes
    // (the transport allows either), and JSON needs no event framing on the way out.
    text = single;
    headers = headers.filter(([name]) => name.toLowerCase() !== "content-type").concat([["content-type", "application/json"]]);
  }
  const quoted = JSON.stringify(standIn);
  const at = text.indexOf(quoted);
  if (res.status !== 200 || at < 0 || text.indexOf(quoted, at + 1) >= 0) {
    // Not a plain answer (an error, say): give it as it is, with the caller's id, and keep nothing.
    return new Response(at < 0 ? text : text.split(quoted).join(JSON.stringify(id)), { status: res.status, headers });
  }
  const k: Kept = { status: res.status, headers, head: utf8.encode(text.slice(0, at)), tail: utf8.encode(text.slice(at + quoted.length)) };
  if (kept.size >= MAX_KEPT) kept.clear();
  kept.set(key, k);
  return replay(k, id);
}

/** The data of an SSE body that is exactly one `message` event carrying one JSON value, else null. */
function singleSseMessage(text: string): string | null {
  const m = /^event: message\r?\ndata: (.*)\r?\n\r?\n$/s.exec(text);
  if (!m || m[1].includes("\n")) return null;
  try {
    JSON.parse(m[1]);
    return m[1];
  } catch {
    return null;
  }
}

/** Whether an Accept header admits application/json. */
export function acceptsJson(accept: string | null): boolean {
  return (accept ?? "").split(",").some((part) => /^\s*(application\/json|application\/\*|\*\/\*)\s*(;|$)/i.test(part));
}

/** For tests: forget every kept answer. */
export function forgetKeptLists(): void {
  kept.clear();
}
