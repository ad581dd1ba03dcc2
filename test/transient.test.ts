import { env } from "cloudflare:workers";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../src/index.ts";
import type { Env } from "../src/env.ts";
import { hashToken } from "../src/domain/tokens.ts";
import { findByHash } from "../src/db/tokens.ts";
import { isTransient } from "../src/db/transient.ts";
import { MCP_URL, seedAccount } from "./helpers.ts";

const BUSY = "D1_ERROR: database is locked: SQLITE_BUSY";

/** env.DB whose batches fail with `message` while `failing(size)` says so (size: statements in the batch). */
function faultyDb(message: string, failing: (size: number) => boolean): D1Database & { refused: number } {
  const counter = { refused: 0 };
  return new Proxy(env.DB, {
    get(target, prop) {
      if (prop === "refused") return counter.refused;
      if (prop === "batch") {
        return async (statements: D1PreparedStatement[]) => {
          if (failing(statements.length)) {
            counter.refused++;
            throw new Error(message);
          }
          return target.batch(statements);
        };
      }
      const value = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  }) as D1Database & { refused: number };
}

async function lastUsed(tokenHash: string): Promise<string | null> {
  return (await env.DB.prepare("SELECT last_used_at FROM tokens WHERE hash = ?").bind(tokenHash).first<{ last_used_at: string | null }>())?.last_used_at ?? null;
}

function call(secret: string, name: string, args: Record<string, unknown>): Request {
  return new Request(MCP_URL, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${secret}` },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }),
  });
}

async function onWorker(request: Request, db: D1Database): Promise<Response> {
  const ctx = createExecutionContext();
  const res = await worker.fetch!(request as never, { ...(env as unknown as Env), DB: db } as Env, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

describe("a passing database fault", () => {
  it("is told apart from other failures by D1's own words", () => {
    for (const m of [BUSY, "D1_ERROR: Network connection lost.", "D1 DB is overloaded. Requests queued for too long.", "Durable Object reset because its code was updated."]) {
      expect(isTransient(new Error(m)), m).toBe(true);
    }
    for (const m of ["D1_ERROR: no such table: tasks", "D1_ERROR: UNIQUE constraint failed: tasks.id", "account moving: try again shortly"]) {
      expect(isTransient(new Error(m)), m).toBe(false);
    }
  });

  it("on a token's last-use bookkeeping: the token still resolves from the read alone, and a later use is written", async () => {
    const acc = await seedAccount("Busy bookkeeping");
    const hash = await hashToken(acc.human);
    expect(await lastUsed(hash)).toBeNull();
    // The lookup with its two bookkeeping writes is refused; the lookup alone is not.
    const busy = faultyDb(BUSY, (size) => size >= 3);
    const resolved = await findByHash(busy, hash);
    expect(busy.refused).toBe(1);
    expect(resolved?.principal.accountId).toBe(acc.accountId);
    expect(resolved?.lastUsedAt).toBeNull();
    expect(await lastUsed(hash)).toBeNull();
    const later = await findByHash(env.DB, hash);
    expect(later?.lastUsedAt).not.toBeNull();
    expect(await lastUsed(hash)).toBe(later?.lastUsedAt);
  });

  it("that is not passing (a missing table) is not swallowed by the token's lookup", async () => {
    const acc = await seedAccount("Broken bookkeeping");
    await expect(findByHash(faultyDb("D1_ERROR: no such table: tokens", () => true), await hashToken(acc.human))).rejects.toThrow(/no such table/);
  });

  it("at the edge: a database that stays busy answers 503 with Retry-After and says to try again, never a 500", async () => {
    const acc = await seedAccount("Busy edge");
    const res = await onWorker(call(acc.human, "list_tasks", {}), faultyDb(BUSY, () => true));
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("1");
    const body = (await res.json()) as { error: string; error_description: string };
    expect(body.error).toBe("temporarily_unavailable");
    expect(body.error_description).toMatch(/try again/);
    expect(JSON.stringify(body)).not.toMatch(/SQLITE|D1_ERROR/);
  });
});
