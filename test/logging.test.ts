import { afterEach, describe, expect, it, vi } from "vitest";
import { MCP_URL, seedAccount, workerFetch } from "./helpers.ts";

afterEach(() => vi.restoreAllMocks());

/** What the Worker logs while `fn` runs, by level. */
async function logsDuring(fn: () => Promise<void>): Promise<{ warn: string[]; error: string[] }> {
  const logs = { warn: [] as string[], error: [] as string[] };
  for (const level of ["warn", "error"] as const) {
    vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void logs[level].push(args.map(String).join(" ")));
  }
  await fn();
  return logs;
}

const LIST = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });

describe("client mistakes are logged as warnings, not errors", () => {
  it("a wrong Content-Type (415), a wrong Accept and an unsupported protocol version", async () => {
    const acc = await seedAccount();
    const auth = { authorization: `Bearer ${acc.human}` };
    // The warning each one logs (null: the SDK answers it without reporting it at all).
    const cases: [string, RequestInit, number, RegExp | null][] = [
      ["415", { method: "POST", headers: { ...auth, "content-type": "text/plain", accept: "application/json, text/event-stream" }, body: LIST }, 415, /Unsupported Media Type/],
      ["unsupported protocol version", {
        method: "POST",
        headers: { ...auth, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "1999-01-01" },
        body: LIST,
      }, 400, null],
      ["not acceptable", {
        method: "POST",
        headers: { ...auth, "content-type": "application/json", accept: "text/html", "mcp-protocol-version": "2025-06-18" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } }),
      }, 406, null],
    ];
    for (const [what, init, status, message] of cases) {
      let res: Response | undefined;
      const logs = await logsDuring(async () => {
        res = await workerFetch(MCP_URL, init);
        await res.text();
      });
      expect(res?.status, what).toBe(status);
      const warnings = logs.warn.filter((l) => l.includes('"where":"mcp"'));
      if (message) expect(warnings.some((l) => l.includes('"level":"warn"') && message.test(l)), `${what}: ${JSON.stringify(logs)}`).toBe(true);
      expect(logs.error, what).toEqual([]);
    }
  });
});
