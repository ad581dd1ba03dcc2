import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { callCatalog, catalogFixture } from "./catalog-fixture.ts";
import { forgetResolvedTokens } from "../src/db/principals.ts";
import { forgetShardPlacements } from "../src/db/shards.ts";
import { planToken } from "../src/db/provisioning.ts";
import { connect, run, seedAccount, snapshotDb } from "./helpers.ts";
import { connectApp, fakeConnectedApps } from "./connectors-fakes.ts";
import { connectApp as connectByUrl, mcp, mcpStatus, PASSWORD } from "./oauth-helpers.ts";
import { addPerson, Browser, field, invite, signIn, uniqueEmail } from "./web-helpers.ts";

/**
 * A deployment with two databases (DB and DB_1, vitest.config.ts): an account
 * placed in DB_1 works through every tool and every way in (tokens, sessions,
 * setup links, sign-in by email, OAuth grants), and nothing it does reaches DB.
 */
async function rowsOf(db: D1Database, accountId: string, table: string): Promise<number> {
  return (await db.prepare(`SELECT count(*) AS n FROM ${table} WHERE account_id = ?`).bind(accountId).first<{ n: number }>())!.n;
}

describe("an account in the second database", () => {
  it("every tool of the catalog works on it, and the first database does not change", async () => {
    fakeConnectedApps();
    const acc = await seedAccount("Second", "bot", "DB_1");
    for (const provider of ["drive", "slack", "notion"] as const) await connectApp(acc.accountId, provider, undefined, undefined, env.DB_1);
    const first = await snapshotDb(env.DB);
    const human = await connect(acc.human);
    const agent = await connect(acc.agent);
    const f = catalogFixture(acc, human, agent, env.DB_1);
    await f.human("create_task", { title: "The quarterly report" });
    const failed = await callCatalog(human, agent, f);
    expect(failed).toEqual([]);
    expect(await snapshotDb(env.DB), "nothing reached the first database").toBe(first);
    for (const table of ["tasks", "activity", "comments", "runs"]) expect(await rowsOf(env.DB_1, acc.accountId, table), table).toBeGreaterThan(0);
    expect(await rowsOf(env.DB, acc.accountId, "activity")).toBe(0);
    await human.close();
    await agent.close();
  });

  it("two accounts, one in each database, never see each other's rows", async () => {
    const a = await seedAccount("In DB", "bot", "DB");
    const b = await seedAccount("In DB_1", "bot", "DB_1");
    const ca = await connect(a.human);
    const cb = await connect(b.human);
    const ta = (await ca.ok("create_task", { title: "Alpha only" })).task;
    const tb = (await cb.ok("create_task", { title: "Beta only" })).task;
    expect((await ca.ok("search_tasks", { query: "only" })).items.map((i: { task: { id: string } }) => i.task.id)).toEqual([ta.id]);
    expect((await cb.ok("search_tasks", { query: "only" })).items.map((i: { task: { id: string } }) => i.task.id)).toEqual([tb.id]);
    expect(await cb.fails("get_task", { task_id: ta.id })).toMatch(/not found|No task/i);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM tasks WHERE id = ?").bind(tb.id).first("n")).toBe(0);
    expect(await env.DB_1.prepare("SELECT count(*) AS n FROM tasks WHERE id = ?").bind(ta.id).first("n")).toBe(0);
    await ca.close();
    await cb.close();
  });
});

describe("the directory resolves what arrives without an account", () => {
  it("tokens: one naming its database, one without the hint (through the directory), and a forged hint matches nothing", async () => {
    const acc = await seedAccount("Tokens", "bot", "DB_1");
    expect(acc.human.at(-17)).toBe("1");
    const plain = await planToken({ accountId: acc.accountId, kind: "human", scope: "write" }, new Date().toISOString());
    await run(plain.statements, env.DB_1);
    expect(plain.secret.at(-17)).toBe("_");
    forgetResolvedTokens();
    forgetShardPlacements();
    for (const secret of [acc.human, plain.secret]) {
      const c = await connect(secret);
      expect((await c.ok("whoami")).account.id).toBe(acc.accountId);
      await c.close();
    }
    // The same secret with another database named: its hash is another, so nothing matches.
    const forged = acc.human.slice(0, -17) + "0" + acc.human.slice(-16);
    expect(await mcpStatus(forged)).toBe(401);
    // A token made before secrets carried their account lives in the first database, and keeps working.
    const old = await seedAccount("Before the directory", "bot", "DB");
    const legacy = await planToken({ accountId: old.accountId, kind: "human", scope: "write" }, new Date().toISOString());
    const oldSecret = "tg_" + "Q".repeat(43);
    legacy.statements[legacy.statements.length - 1].params[7] = await crypto.subtle
      .digest("SHA-256", new TextEncoder().encode(oldSecret))
      .then((d) => [...new Uint8Array(d)].map((x) => x.toString(16).padStart(2, "0")).join(""));
    await run(legacy.statements, env.DB);
    expect(await mcpStatus(oldSecret)).toBe(200);
  });

  it("sign-in by email, the session's pages and a setup link reach the account's database", async () => {
    const acc = await seedAccount("Signs in", "bot", "DB_1");
    const c = await connect(acc.human);
    await c.ok("create_task", { title: "Seen on the console" });
    await c.close();
    const email = uniqueEmail();
    await addPerson(acc.accountId, email, PASSWORD, env.DB_1);
    const b = new Browser();
    expect((await signIn(b, email, PASSWORD)).status).toBe(303);
    const tasks = await (await b.get("/tasks")).text();
    expect(tasks).toContain("Seen on the console");
    // A form post through the registry lands in DB_1.
    const csrf = field(tasks, "csrf") as string;
    const before = await snapshotDb(env.DB);
    await b.post("/act/create_task", { csrf, back: "/tasks", title: "Made on the page" });
    expect(await env.DB_1.prepare("SELECT count(*) AS n FROM tasks WHERE account_id = ? AND title = ?").bind(acc.accountId, "Made on the page").first("n")).toBe(1);
    expect(await snapshotDb(env.DB)).toBe(before);

    const invited = uniqueEmail("grace");
    const link = await invite(acc.accountId, invited, env.DB_1);
    const setup = new Browser();
    const form = await (await setup.get(link.path)).text();
    expect(form).toContain(invited);
    const done = await setup.post("/setup", { token: link.token, csrf: field(form, "csrf") as string, password: "a long enough pass", confirm: "a long enough pass" });
    expect(done.status).toBe(303);
    expect(await (await setup.get("/tasks")).text()).toContain("Seen on the console");
  });

  it("an app connected by URL to an account in DB_1 acts there", async () => {
    const acc = await seedAccount("Grants", "bot", "DB_1");
    const app = await connectByUrl({ actAs: "self", access: "write" }, { acc, db: env.DB_1 });
    forgetResolvedTokens();
    forgetShardPlacements();
    const client = await mcp(app.tokens.access_token);
    const { task } = await client.ok("create_task", { title: "From the app" });
    expect(await env.DB_1.prepare("SELECT account_id FROM tasks WHERE id = ?").bind(task.id).first("account_id")).toBe(acc.accountId);
    await client.close();
  });
});
