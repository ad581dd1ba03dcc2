import { describe, expect, it } from "vitest";
import worker from "../src/index.ts";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import type { Env } from "../src/env.ts";
import { CATALOG_KEY, catalogFingerprint, ENFORCEMENT_KEY, FINGERPRINT_KEY } from "../src/catalog/contract.ts";
import { describeAllTools } from "../src/mcp/registry.ts";
import { TOOL_NAMES } from "../src/catalog/effects.ts";
import { snapshot } from "./tool-snapshots.ts";
import { MCP_URL, seedAccount, workerFetch } from "./helpers.ts";
import { connectApp, mcp, RESOURCE } from "./oauth-helpers.ts";

const MODERN_META = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {},
};

function message(id: number, method: string, era: "modern" | "legacy", params: Record<string, unknown> = {}) {
  return { jsonrpc: "2.0", id, method, params: era === "modern" ? { ...params, _meta: MODERN_META } : params };
}

/** A raw POST; a 2026-07-28 message also names its method (and tool) in headers, as the transport requires. */
function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  const m = body as { method?: string; params?: { name?: string; _meta?: unknown } };
  const modern = !Array.isArray(body) && m.params?._meta !== undefined;
  const named = modern ? { "mcp-method": m.method as string, ...(m.params?.name ? { "mcp-name": m.params.name } : {}) } : {};
  return workerFetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...named, ...headers },
    body: JSON.stringify(body),
  });
}

async function json(res: Response): Promise<any> {
  const text = await res.text();
  return JSON.parse(text.startsWith("event:") ? text.split("\n").find((l) => l.startsWith("data: "))!.slice(6) : text);
}

/** A request to the Worker on a local server's origin (the runtime gives the Worker the URL as the client sent it). */
async function local(url: string, init: RequestInit): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await worker.fetch(new Request(url, init), env as unknown as Env, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

describe("a browser on the server's own origin", () => {
  it("is allowed on its own origin (deployed https, local loopback); a rebound or foreign name stays refused unless listed", async () => {
    const acc = await seedAccount();
    const init = (origin: string) => ({
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${acc.human}`, origin, "mcp-protocol-version": "2025-06-18" },
      body: JSON.stringify(message(1, "tools/list", "legacy")),
    });
    expect((await post(MCP_URL, message(1, "tools/list", "legacy"), init("https://taskgate.test").headers)).status).toBe(200);
    for (const base of ["http://127.0.0.1:8787", "http://localhost:8787", "http://[::1]:8787"]) {
      const res = await local(`${base}/mcp`, init(base));
      expect(res.status, base).toBe(200);
      expect((await json(res)).result.tools.length, base).toBe(TOOL_NAMES.length);
    }
    // DNS rebinding: a name the attacker controls, pointed at the local server, is the request's origin too.
    const rebound = await local("http://evil.example.com:8787/mcp", init("http://evil.example.com:8787"));
    expect(rebound.status).toBe(403);
    expect((await local("http://127.0.0.1:8787/mcp", init("http://evil.example.com"))).status).toBe(403);
    expect((await post(MCP_URL, {}, init("https://evil.example").headers)).status).toBe(403);
    expect((await post(MCP_URL, {}, init("http://taskgate.test").headers)).status).toBe(403);
  });
});

describe("JSON-RPC batches", () => {
  for (const era of ["legacy", "modern"] as const) {
    it(`${era}: an array body gets one JSON-RPC error saying to send one message a request, never an answer`, async () => {
      const acc = await seedAccount();
      const headers = { authorization: `Bearer ${acc.human}`, "mcp-protocol-version": era === "modern" ? "2026-07-28" : "2025-06-18" };
      for (const batch of [
        [message(1, "tools/list", era)],
        [message(1, "tools/list", era), message(2, "tools/call", era, { name: "create_task", arguments: { title: "batched" } })],
      ]) {
        const res = await post(MCP_URL, batch, headers);
        expect(res.status).toBe(400);
        const body = await json(res);
        expect(Array.isArray(body)).toBe(false);
        expect(body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } });
        expect(body.error.message).toMatch(/batch/i);
        expect(body).not.toHaveProperty("result");
      }
      const c = await mcp(acc.human, era);
      expect((await c.ok("list_tasks")).items.map((t: { title: string }) => t.title)).not.toContain("batched");
      await c.close();
    });
  }
});

describe("every scope in the discovery documents, and a step-up challenge for a read grant's write", () => {
  it("the protected-resource metadata and the 401 challenge name tasks:read tasks:write, like the authorization server's metadata", async () => {
    const prm = (await (await workerFetch("https://taskgate.test/.well-known/oauth-protected-resource/mcp")).json()) as { scopes_supported: string[] };
    const as = (await (await workerFetch("https://taskgate.test/.well-known/oauth-authorization-server")).json()) as { scopes_supported: string[] };
    expect(prm.scopes_supported).toEqual(["tasks:read", "tasks:write"]);
    expect(prm.scopes_supported).toEqual(as.scopes_supported);
    const none = await post(MCP_URL, message(1, "tools/list", "legacy"));
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toContain('scope="tasks:read tasks:write"');
    const unknown = await post(MCP_URL, message(1, "tools/list", "legacy"), { authorization: "Bearer tg_nope" });
    expect(unknown.status).toBe(401);
    expect(unknown.headers.get("www-authenticate")).toContain('scope="tasks:read tasks:write"');
  });

  it("an OAuth read grant calling a write tool: 403 insufficient_scope naming both scopes; its reads work, and a tg_ read token keeps the isError refusal", async () => {
    const app = await connectApp({ actAs: "self", access: "read" });
    const token = app.tokens.access_token;
    for (const era of ["legacy", "modern"] as const) {
      const headers = { authorization: `Bearer ${token}`, "mcp-protocol-version": era === "modern" ? "2026-07-28" : "2025-06-18" };
      const res = await post(RESOURCE, message(3, "tools/call", era, { name: "create_task", arguments: { title: "no" } }), headers);
      expect(res.status, era).toBe(403);
      const challenge = res.headers.get("www-authenticate") ?? "";
      expect(challenge).toMatch(/^Bearer realm="OAuth", error="insufficient_scope", scope="tasks:read tasks:write", resource_metadata="https:\/\/taskgate\.test\/\.well-known\/oauth-protected-resource\/mcp"/);
      expect(await res.json()).toMatchObject({ error: "insufficient_scope" });
      // A read is answered as always.
      const read = await post(RESOURCE, message(4, "tools/call", era, { name: "list_tasks", arguments: {} }), headers);
      expect(read.status).toBe(200);
      expect((await json(read)).result.isError).toBeFalsy();
    }
    // Over the whole list: the challenge exactly where the published scope is tasks:write.
    const wrong: string[] = [];
    for (const d of describeAllTools()) {
      const res = await post(RESOURCE, message(7, "tools/call", "legacy", { name: d.name, arguments: {} }), { authorization: `Bearer ${token}`, "mcp-protocol-version": "2025-06-18" });
      await res.arrayBuffer();
      const challenged = res.status === 403 && /insufficient_scope/.test(res.headers.get("www-authenticate") ?? "");
      if (challenged !== ((d._meta[ENFORCEMENT_KEY] as { scope: string }).scope === "tasks:write")) wrong.push(`${d.name}: ${res.status}`);
    }
    expect(wrong).toEqual([]);
    const acc = await seedAccount();
    const tg = await post(MCP_URL, message(5, "tools/call", "legacy", { name: "create_task", arguments: { title: "no" } }), {
      authorization: `Bearer ${acc.humanRead}`,
      "mcp-protocol-version": "2025-06-18",
    });
    expect(tg.status).toBe(200);
    const r = (await json(tg)).result;
    expect(r.isError).toBe(true);
    expect(r.content[0].text).toMatch(/needs a token with scope write/);
  });

  it("an agent's read grant calling a person's tool gets the kind refusal, not a challenge more scope cannot answer", async () => {
    const app = await connectApp({ actAs: "agent", agentName: "helper", access: "read" });
    const res = await post(RESOURCE, message(6, "tools/call", "legacy", { name: "approve_task", arguments: { task_id: "tsk_x" } }), {
      authorization: `Bearer ${app.tokens.access_token}`,
      "mcp-protocol-version": "2025-06-18",
    });
    expect(res.status).toBe(200);
    expect((await json(res)).result.content[0].text).toMatch(/an agent's token can never call it/);
  });
});

describe("the well-known catalog", () => {
  it("GET /.well-known/mcp/tools.json, no token: every tool as tools/list gives a person's write token, with enforcement and fingerprints", async () => {
    const res = await workerFetch("https://taskgate.test/.well-known/mcp/tools.json");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    const doc = (await res.json()) as { name: string; endpoint: string; tools: any[]; _meta: Record<string, string> };
    expect(doc).toMatchObject({ name: "taskgate", endpoint: "/mcp" });
    expect(doc.tools).toEqual(snapshot);
    expect(doc._meta[CATALOG_KEY]).toBe(catalogFingerprint(snapshot as never));
    expect(res.headers.get("etag")).toBe(`"${doc._meta[CATALOG_KEY]}"`);
    for (const t of doc.tools) {
      expect(t._meta[ENFORCEMENT_KEY], t.name).toBeDefined();
      expect(t._meta[FINGERPRINT_KEY], t.name).toMatch(/^[0-9a-f]{64}$/);
    }
    // What a person's write token lists is this catalog, fingerprint for fingerprint.
    const acc = await seedAccount();
    const listed = await json(await post(MCP_URL, message(1, "tools/list", "legacy"), { authorization: `Bearer ${acc.human}`, "mcp-protocol-version": "2025-06-18" }));
    expect(listed.result._meta[CATALOG_KEY]).toBe(doc._meta[CATALOG_KEY]);
  });
});
