import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { searchTaskRows } from "../src/db/task-search.ts";
import { asServer, connect, seedAccount } from "./helpers.ts";
import { applySchema, splitSql } from "./schema.ts";
import { normalizeSql } from "../scripts/lib/sql-text.ts";

interface Migration {
  name: string;
  sql: string;
}

const MIGRATIONS = JSON.parse(env.MIGRATIONS) as Migration[];

/** Tables, columns, indexes and triggers of a database, in a form two databases can be compared by. */
async function structure(db: D1Database): Promise<Record<string, unknown>> {
  const objects = await db
    .prepare(
      "SELECT type, name, tbl_name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' ORDER BY type, name",
    )
    .all<{ type: string; name: string; tbl_name: string }>();
  const out: Record<string, unknown> = {};
  for (const o of objects.results) {
    if (o.type === "table") {
      const cols = await db.prepare(`SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?) ORDER BY name`).bind(o.name).all();
      out[`table ${o.name}`] = cols.results;
    } else if (o.type === "index") {
      const cols = await db.prepare("SELECT name FROM pragma_index_info(?) ORDER BY seqno").bind(o.name).all<{ name: string }>();
      const sql = await db.prepare("SELECT sql FROM sqlite_master WHERE name = ?").bind(o.name).first<{ sql: string | null }>();
      const partial = sql?.sql ? /\bWHERE\b(.*)$/is.exec(sql.sql)?.[1]?.trim() ?? null : null;
      const unique = sql?.sql ? /^CREATE\s+UNIQUE/i.test(sql.sql) : true;
      out[`index ${o.name}`] = { on: o.tbl_name, columns: cols.results.map((c) => c.name), unique, partial };
    } else {
      // Triggers and views by their whole text: a condition dropped from one file's trigger is a difference.
      const sql = await db.prepare("SELECT sql FROM sqlite_master WHERE type = ? AND name = ?").bind(o.type, o.name).first<{ sql: string }>();
      out[`${o.type} ${o.name}`] = { on: o.tbl_name, body: normalizeSql(sql?.sql ?? "") };
    }
  }
  return out;
}

async function count(db: D1Database, table: string): Promise<number> {
  return (await db.prepare(`SELECT count(*) AS n FROM ${table}`).first<{ n: number }>())!.n;
}

/** When the rows an older version wrote were written: an hour apart, in order. */
const at = (hour: number) => `2026-01-04T${String(hour).padStart(2, "0")}:00:00.000Z`;

/**
 * Rows as a version before 0015_consent_rules.sql wrote them: finished tasks,
 * an archived project and blocked tasks with no record of who closed,
 * archived or blocked them, and the activity rows its tools wrote (a person's
 * with the actor `human`, an agent's with its name and token). acc_mv is
 * moving between databases when the upgrade runs (its mark is set once
 * 0009_account_moves.sql has added the column).
 */
function olderVersionRows(db: D1Database): D1PreparedStatement[] {
  const act = (id: string, tokenId: string, actor: string, tool: string, target: string, hour: number, account = "acc_m") =>
    db
      .prepare("INSERT INTO activity (id, account_id, token_id, actor, tool, target_id, summary, created_at) VALUES (?, ?, ?, ?, ?, ?, 's', ?)")
      .bind(id, account, tokenId, actor, tool, target, at(hour));
  const task = (id: string, status: string, o: { completed?: number; updated: number; reason?: string; account?: string }) =>
    db
      .prepare(
        `INSERT INTO tasks (id, account_id, project_id, title, status, blocked_reason, status_before_block, created_by, created_at, updated_at, completed_at)
         VALUES (?, ?, NULL, ?, ?, ?, ?, 'human', ?, ?, ?)`,
      )
      .bind(id, o.account ?? "acc_m", `Old ${id}`, status, o.reason ?? null, o.reason ? "open" : null, at(0), at(o.updated), o.completed === undefined ? null : at(o.completed));
  return [
    db.prepare("INSERT INTO accounts (id, name, created_at, updated_at) VALUES ('acc_mv', 'Moving', ?, ?)").bind(at(0), at(0)),
    db
      .prepare("INSERT INTO tokens (id, account_id, kind, scope, hash, prefix, label, created_at) VALUES ('tok_h', 'acc_m', 'human', 'write', 'h2', 'tg_h', 'me', ?)")
      .bind(at(0)),
    // The person completed it directly.
    task("tsk_person_done", "done", { completed: 2, updated: 2 }),
    act("act_1", "tok_h", "human", "complete_task", "tsk_person_done", 2),
    // The person completed it from the web console (its calls have no tg_ token).
    task("tsk_console_done", "done", { completed: 2, updated: 2 }),
    act("act_2", "web_per_m", "human", "complete_task", "tsk_console_done", 2),
    // The agent completed it under auto-OK.
    task("tsk_agent_done", "done", { completed: 3, updated: 3 }),
    act("act_3", "tok_m", "bot", "complete_task", "tsk_agent_done", 3),
    // The agent completed it, the person approved the completion.
    task("tsk_approved", "done", { completed: 4, updated: 4 }),
    act("act_4", "tok_m", "bot", "complete_task", "tsk_approved", 3),
    act("act_5", "tok_h", "human", "approve_task", "tsk_approved", 4),
    // The agent completed it and reopened it; what closed it again left no row.
    task("tsk_closed_again", "done", { completed: 5, updated: 5 }),
    act("act_6", "tok_m", "bot", "complete_task", "tsk_closed_again", 3),
    act("act_7", "tok_m", "bot", "reopen_task", "tsk_closed_again", 4),
    // Its history was purged.
    task("tsk_no_history", "done", { completed: 2, updated: 2 }),
    task("tsk_moving_done", "done", { completed: 2, updated: 2, account: "acc_mv" }),
    // Archived by the person, and by the agent.
    db.prepare("INSERT INTO projects (id, account_id, name, archived_at, created_at, updated_at) VALUES ('prj_person', 'acc_m', 'Old P', ?, ?, ?)").bind(at(2), at(0), at(2)),
    act("act_8", "tok_h", "human", "archive_project", "prj_person", 2),
    db.prepare("INSERT INTO projects (id, account_id, name, archived_at, created_at, updated_at) VALUES ('prj_agent', 'acc_m', 'Old A', ?, ?, ?)").bind(at(3), at(0), at(3)),
    act("act_9", "tok_m", "bot", "archive_project", "prj_agent", 3),
    // Blocked by the agent, and with no history of the block.
    task("tsk_agent_blocked", "blocked", { updated: 6, reason: "waits for the supplier" }),
    act("act_10", "tok_m", "bot", "block_task", "tsk_agent_blocked", 5),
    task("tsk_blocked", "blocked", { updated: 6, reason: "waits for the invoice" }),
    // Decisions and a claim by people (0025 names them where it can): an approval decided from the console (act_2's
    // call), one decided with a tg_ token of no person (act_5's), a task a person claimed through an app (its token
    // names the person once 0002 has the column), and a refused sign-in, which names no one.
    db
      .prepare("INSERT INTO tokens (id, account_id, kind, scope, hash, prefix, label, created_at) VALUES ('tok_o', 'acc_m', 'human', 'write', 'h3', 'tg_o', 'app', ?)")
      .bind(at(0)),
    db
      .prepare("INSERT INTO approvals (id, account_id, task_id, status, requested_by, requested_by_token, decided_by, created_at, decided_at) VALUES (?, 'acc_m', ?, 'approved', 'bot', 'tok_m', 'human', ?, ?)")
      .bind("apr_web", "tsk_console_done", at(1), at(2)),
    db
      .prepare("INSERT INTO approvals (id, account_id, task_id, status, requested_by, requested_by_token, decided_by, created_at, decided_at) VALUES (?, 'acc_m', ?, 'approved', 'bot', 'tok_m', 'human', ?, ?)")
      .bind("apr_plain", "tsk_approved", at(3), at(4)),
    db
      .prepare("INSERT INTO tasks (id, account_id, title, status, assignee, created_by, created_at, updated_at) VALUES ('tsk_held', 'acc_m', 'Held', 'in_progress', 'human', 'human', ?, ?)")
      .bind(at(0), at(5)),
    act("act_11", "tok_o", "human", "claim_task", "tsk_held", 5),
    act("act_12", "web_per_m", "human", "sign_in_failed", "per_m", 6),
    // A person's tg_ token the person made in the console (its create_token row says who), and a call made with it.
    db
      .prepare("INSERT INTO tokens (id, account_id, kind, scope, hash, prefix, label, created_at) VALUES ('tok_c', 'acc_m', 'human', 'write', 'h4', 'tg_c', 'mine', ?)")
      .bind(at(1)),
    act("act_13", "web_per_m", "human", "create_token", "tok_c", 1),
    act("act_14", "tok_c", "human", "comment_on_task", "tsk_held", 6),
  ];
}

/** The people of olderVersionRows' calls, once 0002_people_sessions.sql has made the table (and tokens.person_id). */
function olderPeople(db: D1Database): D1PreparedStatement[] {
  const person = (id: string) =>
    db.prepare("INSERT INTO people (id, account_id, email, created_at, updated_at) VALUES (?, 'acc_m', ?, ?, ?)").bind(id, `${id}@example.test`, at(0), at(0));
  return [person("per_m"), person("per_o"), db.prepare("UPDATE tokens SET person_id = 'per_o' WHERE id = 'tok_o'")];
}

/** What 0025 filled: the person of each call, decision and claim it can tell, and nothing where it can't. */
async function expectPeopleNamed(db: D1Database): Promise<void> {
  const activity = await db.prepare("SELECT id, person_id FROM activity WHERE id IN ('act_1', 'act_2', 'act_3', 'act_11', 'act_12', 'act_14') ORDER BY id").all();
  expect(activity.results).toEqual([
    { id: "act_1", person_id: null },
    { id: "act_11", person_id: "per_o" },
    { id: "act_12", person_id: null },
    { id: "act_14", person_id: "per_m" },
    { id: "act_2", person_id: "per_m" },
    { id: "act_3", person_id: null },
  ]);
  // A person's tg_ token made in the console acts for who made it; one made otherwise (the admin CLI) for no one.
  const tokens = await db.prepare("SELECT id, person_id FROM tokens WHERE id IN ('tok_c', 'tok_h', 'tok_o') ORDER BY id").all();
  expect(tokens.results).toEqual([{ id: "tok_c", person_id: "per_m" }, { id: "tok_h", person_id: null }, { id: "tok_o", person_id: "per_o" }]);
  const approvals = await db.prepare("SELECT id, decided_by_person_id AS person FROM approvals ORDER BY id").all();
  expect(approvals.results).toEqual([{ id: "apr_plain", person: null }, { id: "apr_web", person: "per_m" }]);
  expect(await db.prepare("SELECT assignee_person_id FROM tasks WHERE id = 'tsk_held'").first("assignee_person_id")).toBe("per_o");
  expect(await db.prepare("SELECT count(*) AS n FROM tasks WHERE assignee_person_id IS NOT NULL").first("n")).toBe(1);
  expect(await db.prepare("SELECT display_name FROM people WHERE id = 'per_m'").first("display_name")).toBe("");
  expect(await count(db, "call_actor"), "the migration's caller lived only inside it").toBe(0);
}

/**
 * Webhook endpoints as the versions before 0022_webhooks_all_events.sql
 * stored them (once 0003_recurrence_webhooks.sql has made the table): "all
 * events" as the whole list of its day, and a list that left an event out.
 * acc_mv's endpoint is on the account that is moving.
 */
function olderWebhooks(db: D1Database): D1PreparedStatement[] {
  const hook = (id: string, account: string, events: string) =>
    db
      .prepare("INSERT INTO webhooks (id, account_id, url, events, secret, secret_prefix, created_at) VALUES (?, ?, ?, ?, 'sealed', 'whsec_x…', ?)")
      .bind(id, account, `https://hooks.example.test/${id}`, events, at(1));
  return [
    hook("whk_first", "acc_m", "approval.requested,task.completed,task.rejected,run.stale,claim.lapsed"),
    hook("whk_answered", "acc_m", "approval.requested,approval.answered,task.completed,task.rejected,run.stale,claim.lapsed"),
    hook("whk_moving", "acc_mv", "approval.requested,approval.answered,task.completed,task.rejected,run.stale,claim.lapsed"),
    hook("whk_chosen", "acc_m", "approval.requested,approval.answered,task.completed,task.rejected,claim.lapsed"),
    hook("whk_one", "acc_m", "task.completed"),
  ];
}

/** What 0022 made of olderWebhooks: the whole lists are all, the chosen ones stay. */
async function expectWebhooksUpgraded(db: D1Database): Promise<void> {
  const rows = await db.prepare("SELECT id, events FROM webhooks ORDER BY id").all<{ id: string; events: string }>();
  expect(Object.fromEntries(rows.results.map((r) => [r.id, r.events]))).toEqual({
    whk_answered: "all",
    whk_chosen: "approval.requested,approval.answered,task.completed,task.rejected,claim.lapsed",
    whk_first: "all",
    whk_moving: "all",
    whk_one: "task.completed",
  });
}

/** What 0017_fill_consent_data.sql filled in the rows of olderVersionRows, and the consent triggers holding to it. */
async function expectConsentFilled(db: D1Database): Promise<void> {
  const closedBy = await db.prepare("SELECT id, closed_by FROM tasks WHERE status = 'done' ORDER BY id").all<{ id: string; closed_by: string | null }>();
  expect(Object.fromEntries(closedBy.results.map((r) => [r.id, r.closed_by]))).toEqual({
    tsk_person_done: "human",
    tsk_console_done: "human",
    tsk_agent_done: "bot",
    tsk_approved: "human",
    tsk_closed_again: "human",
    tsk_no_history: "human",
    tsk_moving_done: "human",
  });
  const archivedBy = await db.prepare("SELECT id, archived_by FROM projects WHERE archived_at IS NOT NULL ORDER BY id").all();
  expect(archivedBy.results).toEqual([
    { id: "prj_agent", archived_by: "bot" },
    { id: "prj_person", archived_by: "human" },
  ]);
  const blocks = await db
    .prepare("SELECT id, last_block_reason AS reason, last_block_by AS by, last_block_at AS at FROM tasks WHERE status = 'blocked' ORDER BY id")
    .all();
  expect(blocks.results).toEqual([
    { id: "tsk_agent_blocked", reason: "waits for the supplier", by: "bot", at: at(5) },
    { id: "tsk_blocked", reason: "waits for the invoice", by: "human", at: at(6) },
  ]);
  expect(await count(db, "move_permit"), "the permit lived only inside the migration").toBe(0);

  // An agent's batch (its caller recorded first, as the engine does) may not undo a person's decision, and may undo its own.
  const asAgent = (write: string) =>
    db.batch([
      db.prepare("INSERT INTO call_actor (batch, kind, name, now) VALUES ('b_m', 'agent', 'bot', ?)").bind(at(7)),
      db.prepare(write),
      db.prepare("DELETE FROM call_actor WHERE batch = 'b_m'"),
    ]);
  await expect(asAgent("UPDATE tasks SET status = 'open', completed_at = NULL WHERE id = 'tsk_person_done'")).rejects.toThrow(/taskgate:undo/);
  await expect(asAgent("UPDATE tasks SET status = 'open', completed_at = NULL WHERE id = 'tsk_no_history'")).rejects.toThrow(/taskgate:undo/);
  await expect(asAgent("UPDATE projects SET archived_at = NULL WHERE id = 'prj_person'")).rejects.toThrow(/taskgate:undo/);
  await asAgent("UPDATE tasks SET status = 'open', completed_at = NULL WHERE id = 'tsk_agent_done'");
  await asAgent("UPDATE projects SET archived_at = NULL WHERE id = 'prj_agent'");
  expect(await db.prepare("SELECT status, closed_by FROM tasks WHERE id = 'tsk_agent_done'").first()).toEqual({ status: "open", closed_by: null });
}

describe("schema upgrades", () => {
  it("migrations/ starts from the first deployed schema and schema.sql records every migration", () => {
    expect(MIGRATIONS[0]?.name).toBe("0000_initial.sql");
    const names = MIGRATIONS.map((m) => m.name);
    expect(names).toEqual([...names].sort());
    const ledger = /INSERT OR IGNORE INTO d1_migrations \(name\) VALUES([^;]*);/.exec(env.SCHEMA_SQL);
    expect(ledger, "schema.sql inserts the migrations it contains into d1_migrations").not.toBeNull();
    const recorded = [...ledger![1].matchAll(/'([^']+)'/g)].map((m) => m[1]);
    expect(recorded).toEqual(names);
  });

  // Every migration applies to every database of a deployment (npm run admin -- migrate): two here, each with its rows.
  for (const which of ["MIGRATED_DB", "MIGRATED_DB_1"] as const)
  it(`${which}: a database of the first schema, with data, upgraded by every migration equals schema.sql and keeps its rows`, async () => {
    const db = env[which];
    await applySchema(db, MIGRATIONS[0].sql);
    const now = "2026-01-05T10:00:00.000Z";
    await db.batch([
      db.prepare("INSERT INTO accounts (id, name, created_at, updated_at) VALUES ('acc_m', 'Migrated', ?, ?)").bind(now, now),
      db.prepare("INSERT INTO agents (id, account_id, name, created_at) VALUES ('agt_m', 'acc_m', 'bot', ?)").bind(now),
      db
        .prepare(
          "INSERT INTO tokens (id, account_id, kind, scope, agent_id, hash, prefix, label, created_at) VALUES ('tok_m', 'acc_m', 'agent', 'write', 'agt_m', 'h', 'tg_x', 'ci', ?)",
        )
        .bind(now),
      db.prepare("INSERT INTO projects (id, account_id, name, created_at, updated_at) VALUES ('prj_m', 'acc_m', 'P', ?, ?)").bind(now, now),
      db
        .prepare(
          "INSERT INTO tasks (id, account_id, project_id, title, notes, created_by, created_at, updated_at) VALUES ('tsk_m', 'acc_m', 'prj_m', 'Keep me', 'Über-notes', 'human', ?, ?)",
        )
        .bind(now, now),
      db
        .prepare("INSERT INTO comments (id, account_id, task_id, author_token_id, author, body, created_at, updated_at) VALUES ('cmt_m', 'acc_m', 'tsk_m', 'tok_m', 'bot', 'Ask about the zeppelin', ?, ?)")
        .bind(now, now),
      db
        .prepare("INSERT INTO idempotency_keys (account_id, token_id, tool, key, result, created_at) VALUES ('acc_m', 'tok_m', 'create_task', 'k', '{}', ?)")
        .bind(now),
      db
        .prepare("INSERT INTO activity (id, account_id, token_id, actor, tool, target_id, summary, created_at) VALUES ('act_m', 'acc_m', 'tok_m', 'bot', 'create_task', 'tsk_m', 's', ?)")
        .bind(now),
      ...olderVersionRows(db),
    ]);
    const tables = ["accounts", "agents", "tokens", "projects", "tasks", "comments", "idempotency_keys", "activity"];
    const before = Object.fromEntries(await Promise.all(tables.map(async (t) => [t, await count(db, t)] as const)));

    for (const m of MIGRATIONS.slice(1)) {
      const statements = splitSql(m.sql);
      if (statements.length) await db.batch(statements.map((s) => db.prepare(s)));
      if (m.name === "0002_people_sessions.sql") await db.batch(olderPeople(db));
      if (m.name === "0003_recurrence_webhooks.sql") await db.batch(olderWebhooks(db));
      if (m.name === "0009_account_moves.sql") await db.prepare("UPDATE accounts SET moving_to = 'DB_1' WHERE id = 'acc_mv'").run();
    }
    // What `wrangler d1 migrations apply` records; schema.sql records the same.
    await applySchema(
      db,
      "CREATE TABLE IF NOT EXISTS d1_migrations (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL);",
    );

    expect(await structure(db)).toEqual(await structure(env.DB));
    for (const t of tables) expect(await count(db, t), t).toBe(before[t]);
    // Upgraded, the rules fail closed: a write that names no caller is refused.
    await expect(db.prepare("UPDATE tasks SET title = 'Lost' WHERE id = 'tsk_m'").run()).rejects.toThrow(/taskgate:nocaller/);
    const task = await db.prepare("SELECT title FROM tasks WHERE id = 'tsk_m'").first<{ title: string }>();
    expect(task?.title).toBe("Keep me");
    const found = async (words: string[]) =>
      (await searchTaskRows(db, { accountId: "acc_m", words, offset: 0, limit: 5 })).map((r) => [r.id, r.comment_body]);
    expect(await found(["keep"]), "the rebuilt index holds the title").toEqual([["tsk_m", null]]);
    expect(await found(["uber", "not"]), "and the notes, folded, the last word a prefix").toEqual([["tsk_m", null]]);
    expect(await found(["zeppelin"]), "and each comment").toEqual([["tsk_m", "Ask about the zeppelin"]]);
    expect((await searchTaskRows(db, { accountId: "acc_other", words: ["keep"], offset: 0, limit: 5 })).length).toBe(0);
    expect(await db.prepare("SELECT shard FROM directory_accounts WHERE account_id = 'acc_m'").first("shard"), "accounts from before the directory live in the first database").toBe("DB");
    const key = await db.prepare("SELECT result, request_hash FROM idempotency_keys WHERE key = 'k'").first();
    expect(key, "an idempotency row from before request_hash keeps its result, with no hash").toEqual({ result: "{}", request_hash: null });
    await expectConsentFilled(db);
    await expectWebhooksUpgraded(db);
    await expectPeopleNamed(db);
  });

  it("0017 fills from the activity the tools write: after the upgrade an agent's reopen_task and unarchive_project refuse what the person closed, and a block unblocked keeps its reason", async () => {
    const acc = await seedAccount("Upgraded", "bot");
    const person = await connect(acc.human);
    const agent = await connect(acc.agent);
    const { task: personal } = await person.ok("create_task", { title: "Sign the lease" });
    await person.ok("complete_task", { task_id: personal.id });
    const { task: own } = await person.ok("create_task", { title: "Tidy the inbox", auto_ok: true });
    await agent.ok("claim_task", { task_id: own.id });
    await agent.ok("complete_task", { task_id: own.id });
    const { project } = await person.ok("create_project", { name: "Last year" });
    await person.ok("archive_project", { project_id: project.id });
    const { task: waiting } = await person.ok("create_task", { title: "Pay the plumber" });
    await agent.ok("block_task", { task_id: waiting.id, reason: "the invoice has not come" });
    // The rows as a version before 0015 left them: no record of who closed, archived or blocked.
    await asServer(env.DB, [
      env.DB.prepare("UPDATE tasks SET closed_by = NULL, last_block_reason = NULL, last_block_by = NULL, last_block_at = NULL WHERE account_id = ?").bind(acc.accountId),
      env.DB.prepare("UPDATE projects SET archived_by = NULL WHERE account_id = ?").bind(acc.accountId),
    ]);
    // 0017 run again on today's schema, where the rules fail closed: as a data migration after 0019 would, with a server caller.
    const fill = MIGRATIONS.find((m) => m.name === "0017_fill_consent_data.sql")!;
    await asServer(env.DB, splitSql(fill.sql).map((s) => env.DB.prepare(s)));

    expect(await agent.fails("reopen_task", { task_id: personal.id })).toMatch(/a person decided this .* an agent may not undo it/);
    expect(await agent.fails("unarchive_project", { project_id: project.id })).toMatch(/a person decided this/);
    expect((await agent.ok("reopen_task", { task_id: own.id })).task.status).toBe("open");
    await person.ok("unblock_task", { task_id: waiting.id });
    expect((await person.ok("get_task", { task_id: waiting.id })).last_block).toMatchObject({ reason: "the invoice has not come", blocked_by: "bot" });
    expect((await person.ok("reopen_task", { task_id: personal.id })).task.status).toBe("open");
    await Promise.all([person.close(), agent.close()]);
  });
});
