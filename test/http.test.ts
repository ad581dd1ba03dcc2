import { env } from "cloudflare:workers";
import { createExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../src/index.ts";
import type { Env } from "../src/env.ts";
import { createToken, MCP_URL, seedAccount, workerFetch } from "./helpers.ts";

const LIST = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} });
const INIT = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "curl", version: "1" } },
});

/** A JSON-RPC answer, sent as JSON or as one SSE `message` event (the SDK's stateless legacy framing). */
async function readJsonRpc(res: Response): Promise<unknown> {
  const text = await res.text();
  const data = text.startsWith("event:") ? text.split("\n").find((l) => l.startsWith("data: "))?.slice(6) : text;
  return JSON.parse(data ?? "null");
}

function post(body: string, headers: Record<string, string> = {}, url = MCP_URL): Promise<Response> {
  return workerFetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body,
  });
}

describe("GET /health and /ready", () => {
  it("health answers without D1", async () => {
    const res = await workerFetch("http://x/health");
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ ok: true, version: expect.any(String) });
    expect(res.headers.get("x-d1-calls")).toBe("0");
  });

  it("ready runs one D1 query", async () => {
    const res = await workerFetch("http://x/ready");
    expect(res.status).toBe(200);
    expect(res.headers.get("x-d1-calls")).toBe("1");
    expect(res.headers.get("server-timing")).toMatch(/^d1;dur=[\d.]+;desc="1 D1 calls"$/);
  });
});

describe("bearer auth", () => {
  it("no token → 401 with a Bearer challenge naming the resource metadata and every scope", async () => {
    const res = await post(LIST);
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe(
      'Bearer realm="OAuth", resource_metadata="https://taskgate.test/.well-known/oauth-protected-resource/mcp", scope="tasks:read tasks:write"',
    );
  });

  it("unknown, malformed, revoked and expired tokens → 401 invalid_token", async () => {
    const acc = await seedAccount();
    const revoked = await createToken({ accountId: acc.accountId, kind: "human", scope: "write" });
    await env.DB.prepare("UPDATE tokens SET revoked_at = ? WHERE id = ?").bind(new Date().toISOString(), revoked.id).run();
    const expired = await createToken({ accountId: acc.accountId, kind: "human", scope: "write", expiresAt: new Date(Date.now() - 1000).toISOString() });
    for (const secret of ["tg_" + "A".repeat(43), revoked.secret, expired.secret]) {
      const res = await post(INIT, { authorization: `Bearer ${secret}` });
      expect(res.status, secret.slice(0, 6)).toBe(401);
      expect(res.headers.get("www-authenticate")).toMatch(/error="invalid_token"/);
      const text = await res.text();
      expect(text).not.toContain(secret);
    }
    const res = await post(INIT, { authorization: "Basic abc" });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer realm="OAuth", resource_metadata="[^"]+"/);
  });

  it("refuses a token in the query string, even a valid one", async () => {
    const acc = await seedAccount();
    const res = await post(INIT, { authorization: `Bearer ${acc.human}` }, `${MCP_URL}?token=${acc.human}`);
    expect(res.status).toBe(401);
    expect(await res.text()).toMatch(/query string/);
  });

  it("stores only a hash and a display prefix", async () => {
    const acc = await seedAccount();
    const row = await env.DB.prepare("SELECT hash, prefix FROM tokens WHERE id = ?").bind(acc.tokenIds.human).first<{ hash: string; prefix: string }>();
    expect(row?.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row?.prefix).toBe(acc.human.slice(0, 9) + "…");
    expect(acc.human).toMatch(/^tg_[A-Za-z0-9_-]{43}$/);
  });

  it("answers an authenticated legacy initialize statelessly, with D1 calls in Server-Timing", async () => {
    const acc = await seedAccount();
    const res = await post(INIT, { authorization: `Bearer ${acc.human}` });
    expect(res.status).toBe(200);
    const body = (await readJsonRpc(res)) as { result: { serverInfo: { name: string } } };
    expect(body.result.serverInfo.name).toBe("taskgate");
    expect(res.headers.get("mcp-session-id")).toBeNull();
    expect(res.headers.get("server-timing")).toMatch(/D1 calls/);
  });
});

describe("a legacy answer to a client that accepts JSON", () => {
  const CALL = (id: number) => JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "whoami", arguments: {} } });
  const legacy = (secret: string, accept: string) => ({ authorization: `Bearer ${secret}`, accept, "mcp-protocol-version": "2025-06-18" });

  it("tools/call and initialize are answered as one JSON body, not an event stream", async () => {
    const acc = await seedAccount("Legacy JSON");
    for (const [body, id] of [[CALL(41), 41], [INIT.replace('"id":1', '"id":42'), 42]] as const) {
      const res = await post(body, legacy(acc.human, "application/json, text/event-stream"));
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/json");
      const text = await res.text();
      const message = JSON.parse(text) as { jsonrpc: string; id: number; result?: Record<string, unknown> };
      expect([message.jsonrpc, message.id]).toEqual(["2.0", id]);
      expect(message.result).toBeDefined();
      expect(res.headers.get("mcp-session-id")).toBeNull();
    }
    const call = (await readJsonRpc(await post(CALL(43), legacy(acc.human, "application/json, text/event-stream")))) as { result: { structuredContent: { account: unknown } } };
    expect(call.result.structuredContent).toMatchObject({ account: expect.anything() });
  });

  it("a client that does not accept JSON gets the SDK's own legacy answer, never a JSON result", async () => {
    const acc = await seedAccount("Legacy SSE only");
    // The SDK's stateless legacy transport asks for both media types (2025-06-18): its refusal, not a result.
    const res = await post(CALL(44), legacy(acc.human, "text/event-stream"));
    expect(res.status).toBe(406);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/must accept both application\/json and text\/event-stream/);
  });
});

describe("a tg_ token's calls without the provider's routing", () => {
  const CALL = JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "whoami", arguments: {} } });

  it("answer exactly as through the provider (a browser's call, with Origin, still goes there)", async () => {
    const acc = await seedAccount();
    const bearer = { authorization: `Bearer ${acc.human}` };
    for (const body of [INIT, LIST, CALL]) {
      const lane = await post(body, bearer);
      const provider = await post(body, { ...bearer, origin: "https://app.example.com" });
      expect(lane.status, body).toBe(200);
      expect(provider.status, body).toBe(200);
      expect(provider.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
      expect(lane.headers.get("access-control-allow-origin")).toBeNull();
      expect(lane.headers.get("content-type")).toBe(provider.headers.get("content-type"));
      expect(await readJsonRpc(lane)).toEqual(await readJsonRpc(provider));
    }
  });

  it("a refused token is looked up once, even with no resolution cache, and gets the provider's challenge", async () => {
    const acc = await seedAccount();
    const revoked = await createToken({ accountId: acc.accountId, kind: "human", scope: "write" });
    await env.DB.prepare("UPDATE tokens SET revoked_at = ? WHERE id = ?").bind(new Date().toISOString(), revoked.id).run();
    // One database, as a single-team deployment has: with several, a token that names no account and is not in
    // the first database also asks the directory whether its account moved (test/move-account.test.ts).
    const uncached = { ...(env as unknown as Env), AUTH_CACHE_SECONDS: "0", DB_1: undefined } as unknown as Env;
    for (const secret of [revoked.secret, "tg_" + "B".repeat(43)]) {
      const req = new Request(MCP_URL, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${secret}` },
        body: LIST,
      });
      const res = await worker.fetch!(req as never, uncached, createExecutionContext());
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe(
        'Bearer realm="OAuth", resource_metadata="https://taskgate.test/.well-known/oauth-protected-resource/mcp", error="invalid_token", scope="tasks:read tasks:write"',
      );
      expect(res.headers.get("x-d1-calls"), "one lookup, not one by the edge and another by the provider").toBe("1");
    }
  });

  it("only /mcp and below: another path with a valid token is not an MCP endpoint", async () => {
    const acc = await seedAccount();
    const res = await post(LIST, { authorization: `Bearer ${acc.human}` }, "https://taskgate.test/mcpx");
    expect(res.status).toBe(404);
    expect(await res.text()).not.toContain("jsonrpc");
  });
});

describe("D1 round trips", () => {
  it("a tool costs two D1 calls on a token's first request (lookup with bookkeeping, then the tool) and one after, a write too", async () => {
    const acc = await seedAccount();
    const call = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "whoami", arguments: {} } });
    const first = await post(call, { authorization: `Bearer ${acc.agent}` });
    expect(first.status).toBe(200);
    expect(first.headers.get("x-d1-calls")).toBe("2");
    const row = await env.DB.prepare("SELECT t.last_used_at, a.last_seen_at FROM tokens t JOIN agents a ON a.id = t.agent_id WHERE t.id = ?")
      .bind(acc.tokenIds.agent)
      .first<{ last_used_at: string | null; last_seen_at: string | null }>();
    expect(row?.last_used_at).toMatch(/^\d{4}-/);
    expect(row?.last_seen_at).toBe(row?.last_used_at);
    const second = await post(call, { authorization: `Bearer ${acc.agent}` });
    expect(second.headers.get("x-d1-calls")).toBe("1");
    const write = await post(
      JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "create_task", arguments: { title: "One batch" } } }),
      { authorization: `Bearer ${acc.agent}` },
    );
    expect(write.headers.get("x-d1-calls")).toBe("1");
  });
});

describe("HTTP edges", () => {
  it("GET, DELETE /mcp → 405 with Allow: POST", async () => {
    for (const method of ["GET", "DELETE"]) {
      const res = await workerFetch(MCP_URL, { method });
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe("POST");
    }
  });

  it("a foreign Origin → 403; a listed one passes with CORS headers", async () => {
    const acc = await seedAccount();
    const bad = await post(INIT, { authorization: `Bearer ${acc.human}`, origin: "https://evil.example" });
    expect(bad.status).toBe(403);
    const good = await post(INIT, { authorization: `Bearer ${acc.human}`, origin: "https://app.example.com" });
    expect(good.status).toBe(200);
    expect(good.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    const preflight = await workerFetch(MCP_URL, { method: "OPTIONS", headers: { origin: "https://app.example.com" } });
    expect(preflight.status).toBe(204);
  });

  it("a body over 1 MiB → 413, before auth", async () => {
    const big = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { pad: "x".repeat(2 * 1024 * 1024) } });
    const res = await post(big);
    expect(res.status).toBe(413);
  });

  it("a chunked body (no Content-Length) over 1 MiB → 413 as it streams; one under the limit is served", async () => {
    const acc = await seedAccount();
    const streamed = (text: string) => {
      const bytes = new TextEncoder().encode(text);
      return new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < bytes.length; i += 64 * 1024) controller.enqueue(bytes.slice(i, i + 64 * 1024));
          controller.close();
        },
      });
    };
    const send = (text: string) =>
      workerFetch(MCP_URL, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${acc.human}`, "mcp-protocol-version": "2025-06-18" },
        body: streamed(text),
      });
    const big = await send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: { pad: "x".repeat(2 * 1024 * 1024) } } }));
    expect(big.status).toBe(413);
    const small = await send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }));
    expect(small.status).toBe(200);
  });

  it("an unsupported protocol version → 400 with a JSON-RPC error", async () => {
    const acc = await seedAccount();
    const res = await post(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 7,
        method: "tools/list",
        params: { _meta: { "io.modelcontextprotocol/protocolVersion": "1999-01-01", "io.modelcontextprotocol/clientInfo": { name: "x", version: "1" }, "io.modelcontextprotocol/clientCapabilities": {} } },
      }),
      { authorization: `Bearer ${acc.human}`, "mcp-protocol-version": "1999-01-01", "mcp-method": "tools/list" },
    );
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error?: { code: number } };
    expect(body.error?.code).toBeLessThan(0);
  });

  it("unknown paths → 404 JSON", async () => {
    const res = await workerFetch("http://x/nope");
    expect(res.status).toBe(404);
  });
});
