import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { forgetResolvedTokens } from "../src/db/principals.ts";
import { forgetShardPlacements } from "../src/db/shards.ts";
import { planToken } from "../src/db/provisioning.ts";
import { MCP_URL, run, seedAccount, workerFetch } from "./helpers.ts";

/** The D1 round trips (x-d1-calls, auth included) and D1 milliseconds (Server-Timing) of one 2025-era whoami call. */
async function whoami(secret: string): Promise<{ calls: number; ms: number }> {
  const res = await workerFetch(MCP_URL, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${secret}`, "mcp-protocol-version": "2025-06-18" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "whoami", arguments: {} } }),
  });
  expect(res.status).toBe(200);
  await res.text();
  return { calls: Number(res.headers.get("x-d1-calls")), ms: Number(/d1;dur=([\d.]+)/.exec(res.headers.get("server-timing") ?? "")?.[1]) };
}

describe("the directory's cost on a call", () => {
  it("a token naming its database never asks the directory; one without the hint asks it once cold, never warm", async () => {
    const acc = await seedAccount("Directory cost", "bot", "DB_1");
    const plain = await planToken({ accountId: acc.accountId, kind: "human", scope: "write" }, new Date().toISOString());
    await run(plain.statements, env.DB_1);
    const figures: Record<string, { calls: number; ms: number }> = {};
    for (const [name, secret] of [["hinted", acc.human], ["through the directory", plain.secret]] as const) {
      forgetResolvedTokens();
      forgetShardPlacements();
      figures[`${name} cold`] = await whoami(secret);
      figures[`${name} warm`] = await whoami(secret);
    }
    expect(Object.fromEntries(Object.entries(figures).map(([k, v]) => [k, v.calls]))).toEqual({
      "hinted cold": 2,
      "hinted warm": 1,
      "through the directory cold": 3,
      "through the directory warm": 1,
    });
  });
});
