/// <reference types="vite/client" />
/**
 * Sentences of the docs that can be checked, checked against the Worker and
 * the project's files: the scopes a 401 names and the metadata lists, the
 * headers a raw 2026-07-28 request needs, and which packages npm warns about
 * on Node 20.
 */
import { describe, expect, it } from "vitest";
import { MCP_URL, seedAccount, workerFetch } from "./helpers.ts";

const PAGES = Object.fromEntries(
  Object.entries(import.meta.glob(["../README.md", "../docs/*.md", "../package-lock.json"], { query: "?raw", import: "default", eager: true }) as Record<string, string>).map(
    ([key, text]) => [key.replace(/^\.\.\//, ""), text],
  ),
);
/** A page as one line of prose: Markdown wraps sentences anywhere. */
const flat = (page: string) => PAGES[page].replace(/\s+/g, " ");

const META = { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" }, "io.modelcontextprotocol/clientCapabilities": {} };

function rawCall(secret: string, headers: Record<string, string>) {
  return workerFetch(MCP_URL, {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28", ...headers },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "list_projects", arguments: {}, _meta: META } }),
  });
}

describe("what the docs say is so", () => {
  it("tokens-and-oauth.md: clients ask for what the 401 names, both scopes, and the metadata lists both", async () => {
    const res = await workerFetch(MCP_URL, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(res.status).toBe(401);
    const scope = /scope="([^"]*)"/.exec(res.headers.get("www-authenticate") ?? "")?.[1];
    expect(scope).toBe("tasks:read tasks:write");
    const page = flat("docs/tokens-and-oauth.md");
    expect(page).toContain(`scope="${scope}"`);
    expect(page).not.toMatch(/ask for it first/);
    expect(page).toMatch(/\*Read only\* grants `tasks:read` alone/);
    const meta = (await (await workerFetch("https://taskgate.test/.well-known/oauth-protected-resource/mcp")).json()) as { scopes_supported: string[] };
    expect(meta.scopes_supported).toEqual(["tasks:read", "tasks:write"]);
    expect(page).toContain("`scopes_supported` `tasks:read` and `tasks:write`");
  });

  it("approvals-and-claims.md: a raw 2026-07-28 request needs Mcp-Method and Mcp-Name", async () => {
    const acc = await seedAccount();
    const named = await rawCall(acc.human, { "mcp-method": "tools/call", "mcp-name": "list_projects" });
    expect(named.status).toBe(200);
    expect(((await named.json()) as { result?: { isError?: boolean } }).result?.isError).not.toBe(true);
    for (const without of [{ "mcp-name": "list_projects" }, { "mcp-method": "tools/call" }] as Record<string, string>[]) {
      const res = await rawCall(acc.human, without);
      const body = (await res.json()) as { error?: unknown; result?: unknown };
      expect(res.status >= 400 || body.error !== undefined, JSON.stringify(without)).toBe(true);
      expect(body.result).toBeUndefined();
    }
    const page = flat("docs/approvals-and-claims.md");
    expect(page).toMatch(/`Mcp-Method` \(`tools\/call`, `tasks\/get`, `tasks\/cancel`\) and `Mcp-Name`/);
  });

  it("README: the EBADENGINE note names every package whose engines leave out Node 20", () => {
    const lock = JSON.parse(PAGES["package-lock.json"]) as { name: string; packages: Record<string, { engines?: { node?: string } }> };
    /** Whether a range like ">=22", "^22.12.0 || >=24" or "^20.19.0 || >=22.12.0" lets Node 20.19 run. */
    const allows20 = (range: string) =>
      range.split("||").some((alt) => {
        const m = /^\s*(>=|\^|~)?\s*v?(\d+)(?:\.(\d+))?/.exec(alt);
        if (!m) return true;
        const [major, minor] = [Number(m[2]), Number(m[3] ?? 0)];
        return m[1] === ">=" ? major < 20 || (major === 20 && minor <= 19) : major === 20;
      });
    const warned = new Set<string>();
    for (const [path, p] of Object.entries(lock.packages)) {
      const range = p.engines?.node;
      if (range && !allows20(range)) warned.add(path === "" ? lock.name : path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length).replace(/^@cloudflare\//, ""));
    }
    expect(warned.size).toBeGreaterThan(3);
    const note = /`EBADENGINE` warnings \(([^)]*)\)/.exec(flat("README.md"))?.[1] ?? "";
    for (const name of warned) expect(note, name).toContain(name);
  });
});
