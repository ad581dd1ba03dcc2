import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { callCatalog, catalogFixture } from "./catalog-fixture.ts";
import { forgetResolvedTokens } from "../src/db/principals.ts";
import { forgetShardPlacements } from "../src/db/shards.ts";
import { planToken } from "../src/db/provisioning.ts";
import { ACCOUNT_TABLES, COPIED_TABLES, MOVE_STEPS, type MoveStep } from "../src/db/move-account.ts";
import { d1Handle, moveAccountIn } from "../src/db/move-account-d1.ts";
import { emailOwnerElsewhere } from "../src/db/email-owners.ts";
import { asServer, connect, createToken, run, seedAccount, type SeededAccount, workerFetch } from "./helpers.ts";
import { connectApp, fakeConnectedApps } from "./connectors-fakes.ts";
import { mcpStatus, PASSWORD } from "./oauth-helpers.ts";
import { addPerson, Browser, field, signIn, uniqueEmail } from "./web-helpers.ts";
import { act, open } from "./console.helpers.ts";

/**
 * Moving an account from DB to DB_1 (src/db/move-account.ts): everything it
 * has arrives, nothing stays behind, every way in keeps working, a move that
 * fails between any two steps completes when run again, and writes wait while it moves.
 */
const keyOf = (table: string) => (table === "accounts" ? "id" : "account_id");

/** An account's rows of each table a move copies (read_bookmarks names states of its own database, and is deleted, not copied). */
async function countsOf(db: D1Database, accountId: string, tables: readonly string[] = COPIED_TABLES): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of tables) out[t] = (await db.prepare(`SELECT count(*) AS n FROM ${t} WHERE ${keyOf(t)} = ?`).bind(accountId).first<number>("n"))!;
  return out;
}

async function othersOf(db: D1Database, accountId: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of COPIED_TABLES) out[t] = (await db.prepare(`SELECT count(*) AS n FROM ${t} WHERE ${keyOf(t)} != ?`).bind(accountId).first<number>("n"))!;
  return out;
}

/** These tests forget the isolate's cached routes themselves after each step, so the move need not wait for them to lapse. */
const NO_WAIT = { lifetimeMs: 0 };

const none = Object.fromEntries(COPIED_TABLES.map((t) => [t, 0]));

function forgetCaches(): void {
  forgetResolvedTokens();
  forgetShardPlacements();
}

/** A token as they were made before secrets carried their account: found by its hash only. */
async function legacyToken(accountId: string): Promise<string> {
  const planned = await planToken({ accountId, kind: "human", scope: "write" }, new Date().toISOString());
  const secret = "tg_" + [...crypto.getRandomValues(new Uint8Array(43))].map((b) => "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[b % 26]).join("");
  planned.statements[planned.statements.length - 1].params[7] = await crypto.subtle
    .digest("SHA-256", new TextEncoder().encode(secret))
    .then((d) => [...new Uint8Array(d)].map((x) => x.toString(16).padStart(2, "0")).join(""));
  await run(planned.statements, env.DB);
  return secret;
}

/** An account in DB with a bit of everything: tasks, steps, comments, labels, runs with events, an approval, activity, tokens and a person. */
async function busyAccount(name: string): Promise<{ acc: SeededAccount; legacy: string; email: string }> {
  const acc = await seedAccount(name, "bot", "DB");
  const human = await connect(acc.human);
  const agent = await connect(acc.agent);
  for (let i = 0; i < 3; i++) {
    const { task } = await human.ok("create_task", { title: `Quarterly report ${i}`, notes: "Figures for the board." });
    await agent.ok("add_steps", { task_id: task.id, steps: ["Collect", "Draft", "Review"] });
    await agent.ok("comment_on_task", { task_id: task.id, body: `Progress on part ${i}: halfway.` });
    await agent.ok("label_task", { task_id: task.id, labels: ["finance", `part-${i}`] });
    const { run: r } = await agent.ok("start_run", { task_id: task.id });
    await agent.ok("log_run_event", { run_id: r.id, kind: "progress", message: "Halfway." });
    if (i === 0) await agent.ok("request_approval", { task_id: task.id, question: "May I send it?" });
  }
  await human.close();
  await agent.close();
  const email = uniqueEmail("mover");
  await addPerson(acc.accountId, email, PASSWORD, env.DB);
  return { acc, legacy: await legacyToken(acc.accountId), email };
}

describe("moving an account to another database", () => {
  it("covers every table that holds an account's rows", async () => {
    const tables = (await env.DB.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_cf%' ESCAPE '\\' AND name NOT LIKE 'sqlite%'").all<{ name: string }>()).results.map((r) => r.name);
    const withAccount: string[] = [];
    for (const t of tables) {
      const cols = (await env.DB.prepare(`SELECT name FROM pragma_table_info('${t}')`).all<{ name: string }>()).results.map((r) => r.name);
      if (cols.includes("account_id") && !t.startsWith("directory_")) withAccount.push(t);
    }
    expect([...withAccount, "accounts"].sort()).toEqual([...ACCOUNT_TABLES].sort());
  });

  it("the databases' fence covers every table that holds an account's rows, every column but a read's bookkeeping", async () => {
    const triggers = (await env.DB.prepare("SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'move_fence_%'").all<{ name: string; tbl_name: string; sql: string }>()).results;
    const bookkeeping: Record<string, string[]> = { tokens: ["last_used_at"], agents: ["last_seen_at"] };
    for (const t of ACCOUNT_TABLES) {
      const ops = triggers.filter((x) => x.tbl_name === t).map((x) => x.name.replace(`move_fence_${t}_`, "")).sort();
      // A session's end is let through (a sign-out ends it in every database); a new account's row is not an account's write.
      const expected = t === "accounts" ? ["delete", "update"] : t === "sessions" ? ["insert", "update"] : ["delete", "insert", "update"];
      expect(ops, t).toEqual(expected);
      const update = triggers.find((x) => x.name === `move_fence_${t}_update`)!;
      const of = /BEFORE UPDATE OF ([\w, ]+) ON/.exec(update.sql)?.[1]?.split(",").map((c) => c.trim());
      const columns = (await env.DB.prepare(`SELECT name FROM pragma_table_info('${t}')`).all<{ name: string }>()).results.map((r) => r.name);
      expect(of ?? columns, `${t}: the columns an update may not change while it moves`).toEqual(columns.filter((c) => !(bookkeeping[t] ?? []).includes(c)));
    }
  });

  it("a busy account moves whole: every tool works after through its old and new tokens, the first database keeps none of it, others are untouched", async () => {
    fakeConnectedApps();
    const acc = await seedAccount("Busy mover", "bot", "DB");
    for (const provider of ["drive", "slack", "notion"] as const) await connectApp(acc.accountId, provider);
    const human = await connect(acc.human);
    const agent = await connect(acc.agent);
    await human.ok("create_task", { title: "The quarterly report" });
    expect(await callCatalog(human, agent, catalogFixture(acc, human, agent, env.DB))).toEqual([]);
    await human.close();
    await agent.close();
    const legacy = await legacyToken(acc.accountId);
    const email = uniqueEmail("busy");
    await addPerson(acc.accountId, email, PASSWORD, env.DB);
    const browser = new Browser();
    expect((await signIn(browser, email, PASSWORD)).status).toBe(303);

    const before = await countsOf(env.DB, acc.accountId);
    for (const t of ["tasks", "steps", "comments", "labels", "task_labels", "runs", "run_events", "approvals", "activity", "tokens", "sessions", "connectors"]) {
      expect(before[t], t).toBeGreaterThan(0);
    }
    const others = [await othersOf(env.DB, acc.accountId), await othersOf(env.DB_1, acc.accountId)];
    const report = await moveAccountIn(env, acc.accountId, "DB_1", NO_WAIT);
    expect(report.steps).toEqual([...MOVE_STEPS]);
    forgetCaches();

    expect(await countsOf(env.DB_1, acc.accountId)).toEqual(before);
    expect(await countsOf(env.DB, acc.accountId), "the first database keeps none of its rows").toEqual(none);
    expect(await countsOf(env.DB, acc.accountId, ACCOUNT_TABLES), "nor of its callers' bookmarks").toEqual(Object.fromEntries(ACCOUNT_TABLES.map((t) => [t, 0])));
    expect([await othersOf(env.DB, acc.accountId), await othersOf(env.DB_1, acc.accountId)], "other accounts untouched").toEqual(others);
    expect(await env.DB.prepare("SELECT shard FROM directory_accounts WHERE account_id = ?").bind(acc.accountId).first("shard")).toBe("DB_1");
    expect(await env.DB_1.prepare("SELECT moving_to FROM accounts WHERE id = ?").bind(acc.accountId).first("moving_to")).toBeNull();

    // Its old tokens (naming DB), a token from before tokens carried their account, and its session keep working.
    const h2 = await connect(acc.human);
    const a2 = await connect(acc.agent);
    expect((await h2.ok("search_tasks", { query: "quarterly" })).items.length).toBeGreaterThan(0);
    expect(await callCatalog(h2, a2, catalogFixture(acc, h2, a2, env.DB_1))).toEqual([]);
    await h2.close();
    await a2.close();
    const old = await connect(legacy);
    expect((await old.ok("whoami")).account.id).toBe(acc.accountId);
    await old.ok("create_task", { title: "Made through a token from before" });
    await old.close();
    expect(await (await browser.get("/tasks")).text()).toContain("Made through a token from before");
    // A person of an account from before the directory (no email there) signs in anew after the move.
    expect((await signIn(new Browser("203.0.113.9"), email, PASSWORD)).status).toBe(303);
    // A new token made in DB_1 (naming it) works too.
    const fresh = await createToken({ accountId: acc.accountId, kind: "human", scope: "write", shard: "DB_1" }, env.DB_1);
    expect(await mcpStatus(fresh.secret)).toBe(200);
    expect(await countsOf(env.DB, acc.accountId), "nothing reached the first database after the move").toEqual(none);
  }, 90_000);

  for (const failAfter of MOVE_STEPS.slice(0, -1)) {
    it(`a move that fails after ${failAfter} completes when run again, nothing lost or doubled`, async () => {
      const { acc, legacy } = await busyAccount(`Fails after ${failAfter}`);
      const before = await countsOf(env.DB, acc.accountId);
      const others = [await othersOf(env.DB, acc.accountId), await othersOf(env.DB_1, acc.accountId)];
      const inject = (step: MoveStep) => {
        if (step === failAfter) throw new Error(`injected after ${step}`);
      };
      await expect(moveAccountIn(env, acc.accountId, "DB_1", { ...NO_WAIT, after: inject })).rejects.toThrow(`injected after ${failAfter}`);
      forgetCaches();
      // Half-moved: reads answer, writes are refused with a clear "try again shortly".
      const c = await connect(acc.human);
      expect((await c.ok("list_tasks")).items.length).toBe(3);
      expect(await c.fails("create_task", { title: "Not now" })).toMatch(/moving to another database; try again shortly/);
      await c.close();

      const again = await moveAccountIn(env, acc.accountId, "DB_1", NO_WAIT);
      expect(again.steps.at(-1)).toBe("finish");
      forgetCaches();
      expect(await countsOf(env.DB_1, acc.accountId)).toEqual(before);
      expect(await countsOf(env.DB, acc.accountId)).toEqual(none);
      expect([await othersOf(env.DB, acc.accountId), await othersOf(env.DB_1, acc.accountId)]).toEqual(others);
      for (const secret of [acc.human, legacy]) {
        const after = await connect(secret);
        expect((await after.ok("search_tasks", { query: "quarterly" })).items.length).toBe(3);
        await after.ok("create_task", { title: "After the move" });
        await after.close();
      }
    });
  }

  it("while it moves, writes are refused with 'try again shortly' and reads go on; nothing written is lost", async () => {
    const { acc } = await busyAccount("Moving now");
    const seen: { step: MoveStep; read: number; write: string }[] = [];
    await moveAccountIn(env, acc.accountId, "DB_1", {
      ...NO_WAIT,
      after: async (step) => {
        if (step === "finish") return;
        forgetCaches();
        const c = await connect(acc.agent);
        seen.push({ step, read: (await c.ok("list_my_tasks")).items.length, write: await c.fails("comment_on_task", { task_id: "x", body: "Now?" }) });
        await c.close();
      },
    });
    expect(seen.map((s) => s.step)).toEqual(["mark", "copy", "verify", "switch", "delete"]);
    for (const s of seen) expect(s.write, s.step).toMatch(/comment_on_task changes data, but this account is moving to another database; try again shortly/);
    forgetCaches();
    const c = await connect(acc.human);
    expect((await c.ok("list_tasks")).items.length).toBe(3);
    await c.ok("create_task", { title: "Once it has moved" });
    await c.close();
  });
  it("while it moves, the console and sign-in refuse every form with 'try again' and pages still show; afterwards the same session acts", async () => {
    const { acc, email } = await busyAccount("Moving console");
    const b = new Browser();
    expect((await signIn(b, email, PASSWORD)).status).toBe(303);
    const { task } = await (await connect(acc.human)).ok("create_task", { title: "Paint the fence" });
    const seen: MoveStep[] = [];
    await moveAccountIn(env, acc.accountId, "DB_1", {
      ...NO_WAIT,
      after: async (step) => {
        if (step === "finish") return;
        forgetCaches();
        seen.push(step);
        const page = await open(b, `/tasks/${task.id}`);
        expect(page.res.status, step).toBe(200);
        expect(page.html).toContain("Paint the fence");
        const comment = await act(b, `/tasks/${task.id}`, "comment", { task_id: task.id, body: "Started sanding." });
        expect(comment.status, step).toBe(503);
        expect(comment.headers.get("retry-after")).toBe("60");
        const text = await comment.text();
        expect(text).toContain("Your account is moving to another database right now, so nothing was changed.");
        expect(text).toContain("Try again in a minute or two");
        const hook = await b.post("/webhooks", { csrf: field(page.html, "csrf"), url: "https://hooks.example.com/taskgate" });
        expect(hook.status, step).toBe(503);
        // A new sign-in would write a session the move has already copied or is about to delete: refused after the password check.
        const other = new Browser("203.0.113.8");
        const signin = await signIn(other, email, PASSWORD);
        expect(signin.status, step).toBe(503);
        expect(await signin.text()).toContain("moving to another database");
        expect(signin.headers.getSetCookie().some((c) => /session=/.test(c) && !/Max-Age=0/i.test(c))).toBe(false);
      },
    });
    expect(seen).toEqual(["mark", "copy", "verify", "switch", "delete"]);
    forgetCaches();
    const res = await act(b, `/tasks/${task.id}`, "comment", { task_id: task.id, body: "Started sanding." });
    expect(res.status).toBe(303);
    const c = await connect(acc.human);
    const { items } = await c.ok("list_comments", { task_id: task.id });
    expect(items.map((i: { body: string }) => i.body)).toEqual(["Started sanding."]);
    await c.close();
  });
});

/** A write that passes the databases' fence, as only the move's own batches may (a copy tampered with, say). */
async function pastTheFence(db: D1Database, sql: string, ...params: unknown[]): Promise<void> {
  await asServer(db, [db.prepare("INSERT INTO move_permit (held) VALUES (1)"), db.prepare(sql).bind(...params), db.prepare("DELETE FROM move_permit")]);
}

describe("the verification", () => {
  it("a copy changed after it was made converges: the next copy replaces the target's wholesale (changed, extra and missing rows)", async () => {
    const { acc } = await busyAccount("Tampered copy");
    const before = await countsOf(env.DB, acc.accountId);
    const report = await moveAccountIn(env, acc.accountId, "DB_1", {
      ...NO_WAIT,
      after: async (step) => {
        if (step !== "copy") return;
        await pastTheFence(env.DB_1, "UPDATE comments SET body = 'changed' WHERE account_id = ?", acc.accountId);
        await pastTheFence(env.DB_1, "DELETE FROM task_labels WHERE rowid = (SELECT max(rowid) FROM task_labels WHERE account_id = ?)", acc.accountId);
        await pastTheFence(env.DB_1, "INSERT INTO activity (id, account_id, token_id, actor, tool, target_id, summary, created_at) SELECT 'act_extra_' || account_id, account_id, token_id, actor, tool, target_id, summary, created_at FROM activity WHERE account_id = ? LIMIT 1", acc.accountId);
      },
    });
    expect(report.steps.at(-1)).toBe("finish");
    forgetCaches();
    expect(await countsOf(env.DB_1, acc.accountId)).toEqual(before);
    const bodies = (await env.DB_1.prepare("SELECT body FROM comments WHERE account_id = ?").bind(acc.accountId).all<{ body: string }>()).results;
    expect(bodies.every((b) => b.body !== "changed")).toBe(true);
  });

  it("a copy that can never be made equal is undone: the mark cleared, the target's copy removed, the account writable where it was; a rerun fails the same clear way, never half-done", async () => {
    const { acc } = await busyAccount("Never equal");
    const before = await countsOf(env.DB, acc.accountId);
    // Whatever is copied into DB_1, one comment's body differs there.
    await env.DB_1.prepare(
      `CREATE TRIGGER test_tamper AFTER INSERT ON comments WHEN NEW.account_id = '${acc.accountId}' BEGIN UPDATE comments SET body = 'changed' WHERE rowid = NEW.rowid; END`,
    ).run();
    try {
      for (let run = 0; run < 2; run++) {
        await expect(moveAccountIn(env, acc.accountId, "DB_1", NO_WAIT)).rejects.toThrow(/differs from DB: comments \(3 rows.*The move was undone: account \S+ stays in DB and takes writes again/);
        expect(await env.DB.prepare("SELECT shard FROM directory_accounts WHERE account_id = ?").bind(acc.accountId).first("shard")).toBe("DB");
        expect(await env.DB.prepare("SELECT moving_to FROM accounts WHERE id = ?").bind(acc.accountId).first("moving_to")).toBeNull();
        expect(await countsOf(env.DB, acc.accountId)).toEqual(before);
        expect(await countsOf(env.DB_1, acc.accountId)).toEqual(none);
        forgetCaches();
        const c = await connect(acc.human);
        await c.ok("create_task", { title: `Written after undone move ${run}` });
        await c.close();
        before.tasks++;
        before.activity++;
      }
    } finally {
      await env.DB_1.prepare("DROP TRIGGER test_tamper").run();
    }
    // Without the fault, the same move completes.
    await moveAccountIn(env, acc.accountId, "DB_1", NO_WAIT);
    expect(await countsOf(env.DB_1, acc.accountId)).toEqual(before);
  });
});

describe("what a move checks before it marks anything", () => {
  it("an email of the account that another account holds in the target refuses the move up front: nothing marked or copied, the account writable", async () => {
    const { acc, email } = await busyAccount("Email clash");
    const other = await seedAccount("Holds the email", "bot", "DB_1");
    // Before invites asked every database, the same email could be given to an account in another database.
    await env.DB_1.prepare("INSERT INTO people (id, account_id, email, created_at, updated_at) VALUES (?, ?, ?, ?, ?)")
      .bind(`per_clash${Date.now()}`, other.accountId, email, new Date().toISOString(), new Date().toISOString())
      .run();
    await expect(moveAccountIn(env, acc.accountId, "DB_1", NO_WAIT)).rejects.toThrow(
      new RegExp(`cannot move to DB_1: the email ${email.replace(/[.+]/g, "\\$&")} belongs to account ${other.accountId} in DB_1\\. Nothing was marked or copied`),
    );
    expect(await env.DB.prepare("SELECT moving_to FROM accounts WHERE id = ?").bind(acc.accountId).first("moving_to")).toBeNull();
    expect(await countsOf(env.DB_1, acc.accountId)).toEqual(none);
    forgetCaches();
    const c = await connect(acc.human);
    await c.ok("create_task", { title: "Still writable" });
    await c.close();
  });

  it("a reference to a row outside the account refuses the move up front, naming the table", async () => {
    const { acc } = await busyAccount("Dangling reference");
    const stranger = await seedAccount("Stranger", "bot", "DB");
    // A token of the account that names another account's agent: the target's foreign keys would refuse its copy.
    await env.DB.prepare("UPDATE tokens SET agent_id = (SELECT id FROM agents WHERE account_id = ? LIMIT 1) WHERE account_id = ? AND kind = 'agent'")
      .bind(stranger.accountId, acc.accountId)
      .run();
    await expect(moveAccountIn(env, acc.accountId, "DB_1", NO_WAIT)).rejects.toThrow(/tokens row\(s\) name a agents row \(agent_id\) that is not the account's/);
    expect(await env.DB.prepare("SELECT moving_to FROM accounts WHERE id = ?").bind(acc.accountId).first("moving_to")).toBeNull();
    expect(await countsOf(env.DB_1, acc.accountId)).toEqual(none);
  });

  it("an invite refuses an email that another account holds in any database or in the directory", async () => {
    const here = await seedAccount("Invites", "bot", "DB");
    const there = await seedAccount("Holds it", "bot", "DB_1");
    const email = uniqueEmail("taken");
    // A person of an account in DB_1 from before the directory: no key for the email, only the row.
    await env.DB_1.prepare("INSERT INTO people (id, account_id, email, created_at, updated_at) VALUES (?, ?, ?, ?, ?)")
      .bind(`per_taken${Date.now()}`, there.accountId, email, new Date().toISOString(), new Date().toISOString())
      .run();
    const all = [{ name: "DB", db: d1Handle(env.DB) }, { name: "DB_1", db: d1Handle(env.DB_1) }];
    expect(await emailOwnerElsewhere(email, here.accountId, d1Handle(env.DB), all)).toEqual({ account: there.accountId, where: "DB_1" });
    expect(await emailOwnerElsewhere(email, there.accountId, d1Handle(env.DB), all)).toBeNull();
    const keyed = uniqueEmail("keyed");
    await env.DB.prepare("INSERT INTO directory_keys (kind, key, account_id) VALUES ('email', ?, ?)").bind(keyed, there.accountId).run();
    expect(await emailOwnerElsewhere(keyed, here.accountId, d1Handle(env.DB), all)).toEqual({ account: there.accountId, where: "the directory" });
  });
});


describe("routes the edge cached before or during a move", () => {
  it("a write through a token resolved just before the mark is refused by the databases' fence, and nothing of it is written", async () => {
    const { acc } = await busyAccount("Cached before the mark");
    forgetCaches();
    const c = await connect(acc.human);
    await c.ok("list_tasks"); // the resolution (not moving) is cached now
    let refusal = "";
    await moveAccountIn(env, acc.accountId, "DB_1", {
      ...NO_WAIT,
      after: async (step) => {
        if (step === "mark") refusal = await c.fails("create_task", { title: "Slipped in after the mark" });
      },
    });
    expect(refusal).toMatch(/create_task changes data, but this account is moving to another database; try again shortly/);
    forgetCaches();
    const after = await connect(acc.human);
    expect((await after.ok("search_tasks", { query: "Slipped" })).items).toEqual([]);
    await after.ok("create_task", { title: "Slipped in after the move" });
    await after.close();
    await c.close();
  });

  it("a sign-out while the edge still routes the session to the old database ends it in both: the cookie signs in nowhere after the move", async () => {
    const { acc, email } = await busyAccount("Signs out mid-move");
    forgetCaches();
    const b = new Browser("203.0.113.31");
    expect((await signIn(b, email, PASSWORD)).status).toBe(303);
    const cookie = [...b.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    expect((await open(b, "/tasks")).res.status).toBe(200); // the account's database (DB) is cached for 60 s now
    await moveAccountIn(env, acc.accountId, "DB_1", {
      ...NO_WAIT,
      after: async (step) => {
        if (step !== "switch") return;
        const page = await open(b, "/");
        expect((await b.post("/signout", { csrf: field(page.html, "csrf") })).status).toBe(303);
      },
    });
    const again = await workerFetch("https://taskgate.test/tasks", { headers: { cookie, accept: "text/html" }, redirect: "manual" });
    expect(again.status).toBe(302);
    expect(await env.DB_1.prepare("SELECT count(*) AS n FROM sessions WHERE account_id = ?").bind(acc.accountId).first("n")).toBe(0);
  });

  it("a token that names the target is not answered from a half-made copy there: the directory names the whole one", async () => {
    const { acc } = await busyAccount("Half copied");
    const naming = await createToken({ accountId: acc.accountId, kind: "human", scope: "read", shard: "DB_1" }, env.DB);
    forgetCaches();
    const reader = await connect(naming.secret);
    const whole = (await reader.ok("list_tasks")).items.length;
    expect(whole).toBe(3);
    const seen: number[] = [];
    await moveAccountIn(env, acc.accountId, "DB_1", {
      ...NO_WAIT,
      after: async (step) => {
        if (step !== "mark") return;
        // The copy under way: the account's row (with its mark) and its tokens are in DB_1, its tasks not yet.
        for (const table of ["accounts", "agents", "tokens"]) {
          const key = table === "accounts" ? "id" : "account_id";
          const rows = (await env.DB.prepare(`SELECT * FROM ${table} WHERE ${key} = ?`).bind(acc.accountId).all<Record<string, unknown>>()).results;
          for (const r of rows) {
            const cols = Object.keys(r).filter((c) => c !== "rid");
            await env.DB_1.batch([
              env.DB_1.prepare("INSERT INTO move_permit (held) VALUES (1)"),
              env.DB_1.prepare(`INSERT INTO ${table} (${cols.join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`).bind(...cols.map((c) => r[c])),
              env.DB_1.prepare("DELETE FROM move_permit"),
            ]);
          }
        }
        forgetCaches();
        seen.push((await reader.ok("list_tasks")).items.length);
        seen.push((await reader.ok("list_tasks")).items.length);
      },
    });
    expect(seen).toEqual([whole, whole]);
    forgetCaches();
    expect((await reader.ok("list_tasks")).items.length).toBe(whole);
    await reader.close();
  });
});
