import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { forgetResolvedTokens } from "../src/db/principals.ts";
import { forgetShardPlacements } from "../src/db/shards.ts";
import { planToken, type Sql } from "../src/db/provisioning.ts";
import { base64url, displayPrefix, hashToken, TOKEN_PREFIX } from "../src/domain/tokens.ts";
import { MCP_URL, run, seedAccount, workerFetch } from "./helpers.ts";
import { addPerson, Browser, field, signIn, uniqueEmail } from "./web-helpers.ts";
import { open, PASSWORD } from "./console.helpers.ts";

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

  it("a token made on the console's Tokens page names its account's database: its first call asks no directory", async () => {
    const acc = await seedAccount("Console token, second database", "bot", "DB_1");
    const email = uniqueEmail("tokens");
    await addPerson(acc.accountId, email, PASSWORD, env.DB_1);
    const b = new Browser();
    expect((await signIn(b, email, PASSWORD)).status).toBe(303);
    const { html } = await open(b, "/apps");
    const made = await b.post("/apps/tokens", { csrf: field(html, "csrf"), form_id: field(html, "form_id"), kind: "human", scope: "read" });
    expect(made.status).toBe(303);
    const secret = /<pre class="secret" aria-label="Token">(tg_[A-Za-z0-9_-]{43})<\/pre>/.exec((await open(b, "/apps")).html)?.[1] as string;
    expect(secret).toBeDefined();
    forgetResolvedTokens();
    forgetShardPlacements();
    expect((await whoami(secret)).calls).toBe(2);
    expect((await whoami(secret)).calls).toBe(1);
  });

  it("a token from before secrets carried their account costs one lookup in the first database, and one more after its account moved", async () => {
    const stay = await seedAccount("Old token, first database", "bot", "DB");
    const moved = await seedAccount("Old token, moved", "bot", "DB_1");
    const here = await oldToken(stay.accountId, env.DB);
    const there = await oldToken(moved.accountId, env.DB_1);
    // What a move leaves for such a token: its hash in the directory.
    await env.DB.prepare("INSERT INTO directory_keys (kind, key, account_id) VALUES ('token', ?, ?)").bind(await hashToken(there), moved.accountId).run();
    const figures: Record<string, number> = {};
    for (const [name, secret] of [["first database", here], ["moved", there]] as const) {
      forgetResolvedTokens();
      forgetShardPlacements();
      figures[`${name} cold`] = (await whoami(secret)).calls;
      figures[`${name} warm`] = (await whoami(secret)).calls;
    }
    expect(figures).toEqual({ "first database cold": 2, "first database warm": 1, "moved cold": 3, "moved warm": 1 });
  });

  it("a token from before secrets carried their account is accepted whatever character stands where a database would be named", async () => {
    const acc = await seedAccount("Old token, any character", "bot", "DB");
    for (const c of ["0", "1", "z", "A", "-"]) {
      forgetResolvedTokens();
      forgetShardPlacements();
      const secret = await oldToken(acc.accountId, env.DB, c);
      expect((await whoami(secret)).calls).toBe(2);
    }
  });
});

/**
 * A write token as made before secrets carried their account: 32 random bytes
 * (ending in a character no account id has, so it names no account), with
 * `at17` where a newer secret names its database.
 */
async function oldToken(accountId: string, db: D1Database, at17?: string): Promise<string> {
  const plan = await planToken({ accountId, kind: "human", scope: "write" }, new Date().toISOString());
  let secret = TOKEN_PREFIX + base64url(crypto.getRandomValues(new Uint8Array(32))).slice(0, -1) + "Z";
  if (at17) secret = secret.slice(0, -17) + at17 + secret.slice(-16);
  const [from, to] = [await hashToken(plan.secret), await hashToken(secret)];
  const swap = (v: Sql["params"][number]) => (v === from ? to : v === displayPrefix(plan.secret) ? displayPrefix(secret) : v);
  await run(plan.statements.map((s) => ({ sql: s.sql, params: s.params.map(swap) })), db);
  return secret;
}
