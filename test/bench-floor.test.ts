import { env } from "cloudflare:workers";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../src/index.ts";
import type { Env } from "../src/env.ts";
import { FLOOR_PATH } from "../src/mcp/floor.ts";
import { connect, MCP_URL, seedAccount, workerFetch } from "./helpers.ts";

const FLOOR_URL = new URL(FLOOR_PATH, MCP_URL).toString();
const CALL = JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "whoami", arguments: {} } });

function floorRequest(secret: string): Request {
  return new Request(FLOOR_URL, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${secret}` },
    body: CALL,
  });
}

async function onWorker(request: Request, vars: Partial<Env>): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await worker.fetch!(request as never, { ...(env as unknown as Env), ...vars } as Env, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

describe("the benchmark's floor", () => {
  it("is not served without BENCH_FLOOR=1: its path is no MCP endpoint", async () => {
    const acc = await seedAccount("Floor off");
    expect((env as unknown as Env).BENCH_FLOOR).toBeUndefined();
    expect((await workerFetch(floorRequest(acc.human))).status).toBe(404);
    for (const value of [undefined, "0", "true", ""]) expect((await onWorker(floorRequest(acc.human), { BENCH_FLOOR: value })).status).toBe(404);
  });

  it("with BENCH_FLOOR=1 answers a call through the token lane and the registry, as JSON, with the SDK's result", async () => {
    const acc = await seedAccount("Floor on");
    const res = await onWorker(floorRequest(acc.human), { BENCH_FLOOR: "1" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(res.headers.get("x-d1-calls")).not.toBeNull();
    const body = (await res.json()) as { id: number; result: { structuredContent: unknown } };
    expect(body.id).toBe(9);
    const client = await connect(acc.human);
    expect(body.result.structuredContent).toEqual(await client.ok("whoami", {}));
    await client.close();
    // A refused token is refused there as on /mcp.
    expect((await onWorker(floorRequest("tg_" + "C".repeat(43)), { BENCH_FLOOR: "1" })).status).toBe(401);
  });
});
