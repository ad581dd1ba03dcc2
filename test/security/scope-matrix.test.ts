import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { TOOL_NAMES } from "../../src/catalog/effects.ts";
import { refusal } from "../../src/catalog/permissions.ts";
import type { Principal } from "../../src/domain/principal.ts";
import { connect, createToken, MCP_URL, seedAccount, snapshotDb, workerFetch } from "../helpers.ts";

/**
 * Every tool × every kind of caller: allowed exactly where the effect sets
 * allow it, refused with the rule's own words elsewhere, and a refused call
 * changes no row. Revoked and expired tokens never reach a tool at all.
 */
type Caller = { label: string; secret: string; principal: Principal };

function principal(p: Partial<Principal>): Principal {
  return { tokenId: "", accountId: "", kind: "human", scope: "write", agentId: null, agentName: null, paused: false, label: "", expiresAt: null, person: null, ...p };
}

describe("scope matrix", () => {
  it("allows exactly what the sets allow, for every tool and every kind of caller", async () => {
    const acc = await seedAccount("Matrix");
    const sleepy = await createToken({ accountId: acc.accountId, kind: "agent", scope: "write", agent: "sleepy" });
    await env.DB.prepare("UPDATE agents SET paused_at = ?, paused_by = 'human' WHERE account_id = ? AND name = 'sleepy'")
      .bind(new Date().toISOString(), acc.accountId)
      .run();
    const callers: Caller[] = [
      { label: "human write", secret: acc.human, principal: principal({ kind: "human", scope: "write" }) },
      { label: "human read", secret: acc.humanRead, principal: principal({ kind: "human", scope: "read" }) },
      { label: "agent write", secret: acc.agent, principal: principal({ kind: "agent", scope: "write", agentName: acc.agentName }) },
      { label: "agent read", secret: acc.agentRead, principal: principal({ kind: "agent", scope: "read", agentName: acc.agentName }) },
      { label: "paused agent", secret: sleepy.secret, principal: principal({ kind: "agent", scope: "write", agentName: "sleepy", paused: true }) },
    ];
    for (const caller of callers) {
      const client = await connect(caller.secret);
      for (const name of TOOL_NAMES) {
        const expected = refusal(caller.principal, name);
        if (expected) {
          const before = await snapshotDb();
          const text = await client.fails(name, {});
          expect(text, `${caller.label} → ${name}`).toBe(expected);
          expect(await snapshotDb(), `${caller.label} → ${name} changed rows`).toBe(before);
        } else {
          const r = await client.call(name, {});
          expect(r.text, `${caller.label} → ${name}`).not.toMatch(/needs a token with scope write|a person must do it|is paused by a person/);
        }
      }
      await client.close();
    }
  }, 180_000); // 5 callers × 84 tools, each refusal checked against a whole-database snapshot: slow on a loaded machine

  it("revoked and expired tokens get 401 for every tool and change nothing", async () => {
    const acc = await seedAccount("Matrix 401");
    const revoked = await createToken({ accountId: acc.accountId, kind: "human", scope: "write" });
    await env.DB.prepare("UPDATE tokens SET revoked_at = ? WHERE id = ?").bind(new Date().toISOString(), revoked.id).run();
    const expired = await createToken({ accountId: acc.accountId, kind: "human", scope: "write", expiresAt: new Date(Date.now() - 60_000).toISOString() });
    const before = await snapshotDb();
    for (const secret of [revoked.secret, expired.secret]) {
      for (const name of TOOL_NAMES) {
        const res = await workerFetch(MCP_URL, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${secret}` },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: {} } }),
        });
        expect(res.status, name).toBe(401);
        expect(res.headers.get("www-authenticate")).toMatch(/invalid_token/);
      }
    }
    expect(await snapshotDb()).toBe(before);
  });
});
