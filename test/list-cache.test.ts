import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { forgetKeptLists } from "../src/mcp/list-cache.ts";
import { mcpHandler } from "../src/mcp/server.ts";
import type { Principal } from "../src/domain/principal.ts";
import { connect, ERAS, MCP_URL, seedAccount, workerFetch } from "./helpers.ts";

/** A raw tools/list POST as a 2025-era client sends it (after initialize) or a 2026-07-28 client does. */
/** A person's write principal, as the SDK's handler sees it when called directly (tools/list depends only on its class). */
const PERSON: Principal = { tokenId: "tok_direct", accountId: "acc_direct", kind: "human", scope: "write", agentId: null, agentName: null, paused: false, label: "direct", expiresAt: null, person: null };

async function rawList(secret: string, id: unknown, o: { era?: "modern" | "legacy"; url?: string; params?: Record<string, unknown>; direct?: boolean; method?: string } = {}) {
  const method = o.method ?? "tools/list";
  const modern = (o.era ?? "legacy") === "modern";
  const meta = { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientInfo": { name: "raw", version: "1" }, "io.modelcontextprotocol/clientCapabilities": {} };
  const params = modern ? { ...o.params, _meta: meta } : (o.params ?? {});
  const send = o.direct
    ? (url: string, init: RequestInit) => {
        // The SDK's own handler, past the Worker's edge and the kept answers.
        const scope = { env, principal: PERSON, requestId: "direct", waitUntil: () => {} };
        return mcpHandler.fetch(new Request(url, init), { authInfo: { token: "t", clientId: "t", scopes: ["write"], extra: { scope } } });
      }
    : workerFetch;
  const res = await send(o.url ?? MCP_URL, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${secret}`,
      "mcp-protocol-version": modern ? "2026-07-28" : "2025-06-18",
      ...(modern ? { "mcp-method": method } : {}),
    },
    body: JSON.stringify({ jsonrpc: "2.0", id, method, params }),
  });
  const text = await res.text();
  const json = text.startsWith("event:") ? text.split("\n").find((l) => l.startsWith("data: "))!.slice(6) : text;
  return { status: res.status, contentType: res.headers.get("content-type"), text, message: JSON.parse(json) as { id: unknown; result?: { tools: { name: string }[] }; error?: { code: number; message: string } } };
}

describe("tools/list is answered from memory, exactly as the SDK answers it", () => {
  for (const era of ["legacy", "modern"] as const) {
    it(`${era}: the kept answer equals the SDK's, byte for byte but the id, for string and number ids`, async () => {
      const acc = await seedAccount(`List cache ${era}`);
      forgetKeptLists();
      const fromSdk = await rawList(acc.human, 7, { era, direct: true });
      await rawList(acc.human, 7, { era });
      const kept = await rawList(acc.human, 7, { era });
      expect(fromSdk.status).toBe(200);
      if (fromSdk.contentType?.startsWith("text/event-stream")) {
        // The SDK frames its one answer as an SSE message; the kept answer is that message as JSON (the client accepts both).
        expect(kept.contentType).toBe("application/json");
        expect(kept.text).toBe(/^event: message\ndata: (.*)\n\n$/s.exec(fromSdk.text)?.[1]);
      } else {
        expect(kept.text).toBe(fromSdk.text);
        expect(kept.contentType).toBe(fromSdk.contentType);
      }
      const named = await rawList(acc.human, "req-\"quoted\"-1", { era });
      expect(named.message.id).toBe('req-"quoted"-1');
      expect(named.message.result).toEqual(fromSdk.message.result);
      expect(fromSdk.message.result!.tools).toHaveLength(84);
    });
  }

  it("a client that accepts only an event stream gets the SDK's event stream", async () => {
    const acc = await seedAccount("List cache SSE only");
    forgetKeptLists();
    const init = (id: number) => ({
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream", authorization: `Bearer ${acc.human}`, "mcp-protocol-version": "2025-06-18" },
      body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/list", params: {} }),
    });
    const first = await workerFetch(MCP_URL, init(1));
    const again = await workerFetch(MCP_URL, init(2));
    for (const res of [first, again]) expect([res.status, res.headers.get("content-type")?.split(";")[0]]).toEqual([first.status, first.headers.get("content-type")?.split(";")[0]]);
    const [a, b] = [await first.text(), await again.text()];
    expect(b).toBe(a.replace('"id":1', '"id":2'));
  });

  it("principal classes and toolsets never share an answer", async () => {
    const acc = await seedAccount("List cache classes", "bot");
    const count = async (secret: string, url?: string) => (await rawList(secret, 1, { url })).message.result!.tools.length;
    expect(await count(acc.human)).toBe(84);
    expect(await count(acc.humanRead)).toBe(34);
    expect(await count(acc.agent)).toBe(75);
    expect(await count(acc.agentRead)).toBe(34);
    expect(await count(acc.human, `${MCP_URL}/x/runs`)).toBe(6);
    expect(await count(acc.human)).toBe(84);
    const human = await connect(acc.human);
    await human.ok("pause_agent", { agent: "bot" });
    expect(await count(acc.agent)).toBe(34);
    await human.ok("resume_agent", { agent: "bot" });
    expect(await count(acc.agent)).toBe(75);
    await human.close();
  });

  it("a request the SDK must judge itself (a cursor, unknown params, a bad id) still gets the SDK's answer", async () => {
    const acc = await seedAccount("List cache odd requests");
    const withCursor = await rawList(acc.human, 2, { params: { cursor: "abc" } });
    const plain = await rawList(acc.human, 2);
    expect(withCursor.status).toBe(plain.status);
    expect(withCursor.message.error?.code).toBe(-32602);
    const badId = await rawList(acc.human, { not: "an id" });
    expect(badId.message.result).toBeUndefined();
    for (const era of ERAS) {
      const client = await connect(acc.human, era);
      expect(await client.listTools()).toHaveLength(84);
      expect(await client.listTools()).toHaveLength(84);
      await client.close();
    }
  });
});

describe("a cursor the server never gave out", () => {
  // Each list is one page: no answer carries nextCursor, so every cursor is unknown (invalid params, as the specification says).
  const LISTS = ["tools/list", "resources/list", "resources/templates/list"];
  for (const era of ERAS) {
    it(`${era}: tools/list and resources/list answer an unknown cursor with -32602, and the list without one`, async () => {
      const acc = await seedAccount(`Unknown cursor ${era}`);
      for (const method of LISTS) {
        const plain = await rawList(acc.human, 1, { era, method });
        expect(plain.message.error, method).toBeUndefined();
        expect(JSON.stringify(plain.message.result), method).not.toContain("nextCursor");
        for (const cursor of ["abc", "", "eyJvZmZzZXQiOjI1fQ=="]) {
          for (const secret of [acc.human, acc.agentRead]) {
            const answer = await rawList(secret, 2, { era, method, params: { cursor } });
            expect(answer.message.result, `${method} ${JSON.stringify(cursor)}`).toBeUndefined();
            expect(answer.message.error?.code, `${method} ${JSON.stringify(cursor)}`).toBe(-32602);
            expect(answer.message.error?.message).toMatch(/cursor/);
          }
        }
      }
      // prompts/list: Taskgate has no prompts, so the method itself is unknown, cursor or none.
      for (const params of [{}, { cursor: "abc" }]) {
        const prompts = await rawList(acc.human, 3, { era, method: "prompts/list", params });
        expect(prompts.message.error?.code, JSON.stringify(params)).toBe(-32601);
      }
    });
  }
});
