import { describe, expect, it } from "vitest";
import { TOOL_NAMES } from "../src/catalog/effects.ts";
import { canonicalOrigin, pathAndQuery } from "../src/http/url-text.ts";
import { connect, ERAS, MCP_URL, seedAccount, workerFetch } from "./helpers.ts";

const LIST = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} });
const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

describe("discovery: from a 401 to the authorization server", () => {
  it("POST /mcp (and a path below it) without a token: 401 naming the resource metadata and every scope", async () => {
    for (const url of [MCP_URL, `${MCP_URL}/x/tasks`]) {
      const res = await workerFetch(url, { method: "POST", headers: MCP_HEADERS, body: LIST });
      expect(res.status, url).toBe(401);
      const challenge = res.headers.get("www-authenticate") ?? "";
      expect(challenge).toMatch(/^Bearer realm="OAuth"/);
      expect(challenge).toContain('scope="tasks:read tasks:write"');
      if (url === MCP_URL) expect(challenge).toContain('resource_metadata="https://taskgate.test/.well-known/oauth-protected-resource/mcp"');
    }
  });

  it("RFC 9728 protected resource metadata: the /mcp URL, this origin as the authorization server, every scope", async () => {
    const res = await workerFetch("https://taskgate.test/.well-known/oauth-protected-resource/mcp");
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      resource: "https://taskgate.test/mcp",
      authorization_servers: ["https://taskgate.test"],
      scopes_supported: ["tasks:read", "tasks:write"],
      bearer_methods_supported: ["header"],
      resource_name: "Taskgate",
    });
  });

  it("RFC 8414 authorization server metadata: S256 only, registration, CIMD, the scopes", async () => {
    const res = await workerFetch("https://taskgate.test/.well-known/oauth-authorization-server");
    expect(res.status).toBe(200);
    const meta = (await res.json()) as Record<string, unknown>;
    expect(meta).toMatchObject({
      issuer: "https://taskgate.test",
      authorization_endpoint: "https://taskgate.test/authorize",
      token_endpoint: "https://taskgate.test/oauth/token",
      registration_endpoint: "https://taskgate.test/oauth/register",
      code_challenge_methods_supported: ["S256"],
      client_id_metadata_document_supported: true,
      scopes_supported: ["tasks:read", "tasks:write"],
      response_types_supported: ["code"],
      authorization_response_iss_parameter_supported: true,
    });
    expect(meta.grant_types_supported).toEqual(expect.arrayContaining(["authorization_code", "refresh_token"]));
    expect(meta.grant_types_supported).not.toContain("implicit");
    expect(meta.revocation_endpoint).toBe("https://taskgate.test/oauth/token");
  });

  it("the resource is the /mcp URL of whichever origin serves it; plain http off loopback moves to https", async () => {
    for (const origin of ["http://localhost:8787", "http://127.0.0.1:9999", "https://taskgate.example.com"]) {
      const res = await workerFetch(`${origin}/.well-known/oauth-protected-resource/mcp`);
      expect(res.status, origin).toBe(200);
      expect(((await res.json()) as { resource: string }).resource).toBe(`${origin}/mcp`);
      const as = (await (await workerFetch(`${origin}/.well-known/oauth-authorization-server`)).json()) as { issuer: string };
      expect(as.issuer).toBe(origin);
    }
    const plain = await workerFetch("http://taskgate.test/.well-known/oauth-protected-resource/mcp", { redirect: "manual" });
    expect(plain.status).toBe(308);
    expect(plain.headers.get("location")).toBe("https://taskgate.test/.well-known/oauth-protected-resource/mcp");
    const post = await workerFetch("http://taskgate.test/mcp", { method: "POST", headers: MCP_HEADERS, body: LIST, redirect: "manual" });
    expect(post.status).toBe(400);
    expect(await post.text()).toContain("https://taskgate.test/mcp");
  });

  it("a request's origin is read from its URL text exactly as URL parsing gives it, loopback http included", () => {
    const loopback = ["http://localhost:8787/mcp", "http://127.0.0.1/x?y=1", "http://127.12.0.3:9/", "http://[::1]:8787/mcp/x/tasks"];
    for (const href of loopback) expect(canonicalOrigin(new Request(href).url), href).toBe(new URL(href).origin);
    for (const href of ["https://taskgate.example.com/mcp", "https://[2001:db8::1]:8443/a", "https://TaskGate.Example.com:443/b"]) {
      expect(canonicalOrigin(new Request(href).url), href).toBe(new URL(href).origin);
    }
    for (const href of ["http://taskgate.test/mcp", "http://localhost.evil.test/", "http://127.0.0.1.evil.test/", "http://[::2]/", "http://10.0.0.1:8787/"]) {
      expect(canonicalOrigin(new Request(href).url), href).toBeNull();
    }
  });

  it("a request URL's path and query, read from its text, are what URL parsing gives", () => {
    const hrefs = [
      "https://taskgate.test/mcp", "https://taskgate.test/mcp/", "https://taskgate.test/mcp/x/tasks,runs?toolsets=a&b=c",
      "https://taskgate.test/mcp?", "https://taskgate.test/%6Dcp/x/t%2Cr", "http://127.0.0.1:8787/mcp/readonly?x=%3F#frag",
      "https://taskgate.test", "https://[::1]:8443/a/b?c", "https://taskgate.test/a/../mcp/./x",
    ];
    for (const href of hrefs) {
      const url = new URL(href);
      expect(pathAndQuery(new Request(href).url), href).toEqual({ pathname: url.pathname, search: url.search });
    }
  });

  it("dynamic client registration answers with a client id and the exact redirect URIs", async () => {
    const res = await workerFetch("https://taskgate.test/oauth/register", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_name: "Test app", redirect_uris: ["http://127.0.0.1:33418/callback"], token_endpoint_auth_method: "none" }),
    });
    expect(res.status).toBe(201);
    const client = (await res.json()) as Record<string, unknown>;
    expect(client).toMatchObject({ client_name: "Test app", redirect_uris: ["http://127.0.0.1:33418/callback"], token_endpoint_auth_method: "none" });
    expect(client.client_id).toEqual(expect.any(String));
  });
});

describe("tg_ tokens on the same URL, through resolveExternalToken", () => {
  it("a tg_ token still reaches every tool its kind and scope allow, in both eras", async () => {
    const acc = await seedAccount();
    const want = { human: 84, humanRead: 34, agent: 75, agentRead: 34 } as const;
    for (const era of ERAS) {
      for (const [role, n] of Object.entries(want)) {
        const c = await connect(acc[role as keyof typeof want], era);
        const names = (await c.listTools()).map((t) => t.name);
        expect(names, `${era} ${role}`).toHaveLength(n);
        expect(names.every((name) => (TOOL_NAMES as readonly string[]).includes(name))).toBe(true);
        await c.close();
      }
    }
  });

  it("a token in the provider's own format that it never issued is refused without reaching D1", async () => {
    const res = await workerFetch(MCP_URL, {
      method: "POST",
      headers: { ...MCP_HEADERS, authorization: "Bearer per_0000000000000000:aaaaaaaaaaaaaaaa:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb" },
      body: LIST,
    });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/error="invalid_token"/);
    expect(res.headers.get("x-d1-calls")).toBe("0");
  });
});
