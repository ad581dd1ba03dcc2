/**
 * Every column and every child table of tasks is decided by a consent rule or
 * listed here as exempt, read from the real database's schema: a new column
 * of tasks, or a new table with a `task_id`, fails this test until someone
 * decides whether a held task's holder alone may change it.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { UNFINISHED } from "../src/db/dependencies.ts";
import { CONSENT_CODES, CONSENT_RULES, FAIL_CLOSED_TABLES, TASK_PART_TABLES, type HeldRoute } from "../src/domain/consent-rules.ts";
import { RELATIONS } from "./audit/consent-routes.ts";
import { consentCodeOf } from "../src/db/consent.ts";
import { asServer, seedAccount, snapshotDb } from "./helpers.ts";

/** Columns of tasks that consent_task_held does not watch, and why. */
const TASK_COLUMNS_EXEMPT: Record<string, string> = {
  rid: "the row's own key, never written",
  id: "the task's id, never written",
  account_id: "tenancy, never written",
  version: "bookkeeping: bumped with every watched change",
  created_by: "written once, at insert",
  created_at: "written once, at insert",
  updated_at: "bookkeeping: set with every watched change",
  closed_by: "set by the trigger consent_closed_by with the status, which is watched",
  last_block_reason: "set by the trigger tasks_last_block with the block, which is watched",
  last_block_by: "set by the trigger tasks_last_block with the block, which is watched",
  last_block_at: "set by the trigger tasks_last_block with the block, which is watched",
  assignee_person_id: "which person a `human` assignee is: written only with the assignee, which is watched",
};

/** Tables with a task_id that have no consent_<table>_insert/update/delete triggers, and why. */
const CHILD_TABLES_EXEMPT: Record<string, string> = {
  comments: "comments stay open to everyone (C1)",
  named_task: "stores nothing: a call's named task, refused by consent_named_task when another holds it",
  claim_lapse_notices: "the server's own notices",
  pending_actions: "a call waiting for a person names its task but is no part of it: run once approved, it meets every rule then (C3 holds its decision)",
};

async function all<T>(sql: string, ...binds: unknown[]): Promise<T[]> {
  return (await env.DB.prepare(sql).bind(...binds).all<T>()).results;
}

describe("what the consent rules cover", () => {
  it("every column of tasks is watched by consent_task_held or exempt with a reason", async () => {
    const columns = (await all<{ name: string }>("SELECT name FROM pragma_table_info('tasks') ORDER BY cid")).map((c) => c.name);
    const body = (await all<{ sql: string }>("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'consent_task_held'"))[0]?.sql ?? "";
    const watched = new Set([...body.matchAll(/OLD\.(\w+) IS NOT NEW\.\1/g)].map((m) => m[1]));
    expect(watched.size, "the trigger's comparisons are read").toBeGreaterThan(10);
    const undecided = columns.filter((c) => !watched.has(c) && !(c in TASK_COLUMNS_EXEMPT));
    expect(undecided, "columns of tasks no rule decides: watch them in consent_task_held or exempt them here").toEqual([]);
    const stale = [...Object.keys(TASK_COLUMNS_EXEMPT), ...watched].filter((c) => !columns.includes(c));
    expect(stale, "named here or in the trigger but not a column of tasks").toEqual([]);
    expect([...watched].filter((c) => c in TASK_COLUMNS_EXEMPT), "both watched and exempt").toEqual([]);
  });

  it("every table with a task_id holds its rows to C1 on insert, update and delete, or is exempt with a reason", async () => {
    const tables = (await all<{ name: string }>(
      `SELECT m.name FROM sqlite_master m WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' AND m.name NOT LIKE '_cf_%'
          AND EXISTS (SELECT 1 FROM pragma_table_info(m.name) c WHERE c.name = 'task_id') ORDER BY m.name`,
    )).map((t) => t.name);
    expect(tables).toContain("steps");
    const triggers = new Map((await all<{ name: string; sql: string }>("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")).map((t) => [t.name, t.sql]));
    const undecided: string[] = [];
    for (const table of tables) {
      if (table in CHILD_TABLES_EXEMPT) continue;
      for (const op of ["insert", "update", "delete"]) {
        const sql = triggers.get(`consent_${table}_${op}`) ?? "";
        if (!/held_by_other/.test(sql) || !/RAISE\(ABORT, 'taskgate:claim'\)/.test(sql)) undecided.push(`${table} ${op}`);
      }
    }
    expect(undecided, "child tables of tasks no rule decides: add consent_<table>_<op> triggers or exempt them here").toEqual([]);
    expect(Object.keys(CHILD_TABLES_EXEMPT).filter((t) => !tables.includes(t)), "exempt but not a child table of tasks").toEqual([]);
  });

  it("the dependency gate is one rule: the trigger and the reads agree on what is unfinished", async () => {
    const body = (await all<{ sql: string }>("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = 'consent_waits'"))[0]?.sql ?? "";
    // What the reads call unfinished (get_task, list_blocked_tasks, the refusal) is what the trigger refuses on.
    expect(body).toContain(UNFINISHED("w"));
    expect(body).not.toMatch(/trash_id/);
  });

  it("the consent audit's table of relations names a record for every route the rules declare", () => {
    // The record of the audit's situations (test/audit/consent-situations.ts) that stands for each route.
    const record: Record<HeldRoute, string> = {
      "the task": "X", "its parent": "T0", "an ancestor": "T00", "its subtask": "XC", "what it waits on": "D", "its project": "P",
      "its step": "step1", "its run": "run", "its request": "approval", "its label": "L", "its calendar link": "link",
      "a trash item holding it or its parts": "item",
    };
    const ids = new Proxy({} as Record<string, string>, { get: (_, key) => String(key) });
    const named = new Set(Object.values(RELATIONS).flatMap((r) => r(ids)).flat(2).filter((v) => typeof v === "string"));
    const routes = new Set(CONSENT_RULES.flatMap((r) => r.reaches ?? []));
    expect(routes.size, "C1 declares its routes").toBeGreaterThan(10);
    expect([...routes].filter((route) => !named.has(record[route])), "routes the audit never calls").toEqual([]);
  });

  it("each consent trigger belongs to one declared rule and refuses with that rule's code; every code has a rule", async () => {
    const triggers = await all<{ name: string; sql: string }>(
      "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND (name LIKE 'consent\\_%' ESCAPE '\\' OR name LIKE 'nocaller\\_%' ESCAPE '\\' OR name = 'tasks_last_block') ORDER BY name",
    );
    const declared = CONSENT_RULES.flatMap((r) => r.triggers.map((t) => ({ trigger: t, rule: r })));
    const owners = (name: string) => declared.filter((d) => d.trigger === name);
    expect(triggers.filter((t) => owners(t.name).length !== 1).map((t) => t.name), "consent triggers no rule (or more than one) declares").toEqual([]);
    expect(declared.map((d) => d.trigger).filter((name) => !triggers.some((t) => t.name === name)), "declared but not in the database").toEqual([]);
    for (const t of triggers) {
      const { rule } = owners(t.name)[0];
      const codes = [...t.sql.matchAll(/RAISE\(ABORT, 'taskgate:(\w+)'\)/g)].map((m) => m[1]);
      expect(codes, `${t.name} (${rule.rule}: ${rule.says})`).toEqual(rule.code ? [rule.code] : []);
    }
    expect([...CONSENT_CODES].sort()).toEqual([...new Set(CONSENT_RULES.map((r) => r.code).filter((c) => c !== null))].sort());
    // The parts of a task the declaration holds are the child tables the schema has (less the exempt ones).
    const children = (await all<{ name: string }>(
      `SELECT m.name FROM sqlite_master m WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' AND m.name NOT LIKE '_cf_%'
          AND EXISTS (SELECT 1 FROM pragma_table_info(m.name) c WHERE c.name = 'task_id') ORDER BY m.name`,
    )).map((t) => t.name).filter((t) => !(t in CHILD_TABLES_EXEMPT));
    expect([...TASK_PART_TABLES].sort()).toEqual(children);
  });
});

/** The tables the consent rules cover: a batch that records no caller writes none of them. */
const GUARDED = FAIL_CLOSED_TABLES;

interface TableWrites {
  insert: string;
  update: string;
  delete: string;
}

/** One row of each guarded table, written, changed and removed again: ?1 the account, ?2 a task, ?3 another task, ?4 a label, ?5 an agent's id, ?6 a token, ?7 the time. */
const WRITES: Record<(typeof GUARDED)[number], TableWrites> = {
  tasks: {
    insert: "INSERT INTO tasks (id, account_id, title, created_by, created_at, updated_at) VALUES ('tsk_nocaller0000001', ?1, 'x', 'human', ?7, ?7)",
    update: "UPDATE tasks SET title = 'y' WHERE id = 'tsk_nocaller0000001' AND ?1 IS NOT NULL",
    delete: "DELETE FROM tasks WHERE id = 'tsk_nocaller0000001' AND account_id = ?1",
  },
  projects: {
    insert: "INSERT INTO projects (id, account_id, name, created_at, updated_at) VALUES ('prj_nocaller0000001', ?1, 'x', ?7, ?7)",
    update: "UPDATE projects SET name = 'y' WHERE id = 'prj_nocaller0000001' AND account_id = ?1",
    delete: "DELETE FROM projects WHERE id = 'prj_nocaller0000001' AND account_id = ?1",
  },
  steps: {
    insert: "INSERT INTO steps (id, account_id, task_id, position, text, created_at, updated_at) VALUES ('stp_nocaller0000001', ?1, ?2, 1, 'x', ?7, ?7)",
    update: "UPDATE steps SET text = 'y' WHERE id = 'stp_nocaller0000001' AND account_id = ?1",
    delete: "DELETE FROM steps WHERE id = 'stp_nocaller0000001' AND account_id = ?1",
  },
  runs: {
    insert: "INSERT INTO runs (id, account_id, task_id, agent_id, started_at, last_event_at) VALUES ('run_nocaller0000001', ?1, ?2, ?5, ?7, ?7)",
    update: "UPDATE runs SET last_event_at = ?7 || 'x' WHERE id = 'run_nocaller0000001' AND account_id = ?1",
    delete: "DELETE FROM runs WHERE id = 'run_nocaller0000001' AND account_id = ?1",
  },
  approvals: {
    insert: "INSERT INTO approvals (id, account_id, task_id, requested_by, requested_by_token, created_at) VALUES ('apr_nocaller0000001', ?1, ?2, 'bot', ?6, ?7)",
    update: "UPDATE approvals SET question = 'y' WHERE id = 'apr_nocaller0000001' AND account_id = ?1",
    delete: "DELETE FROM approvals WHERE id = 'apr_nocaller0000001' AND account_id = ?1",
  },
  task_labels: {
    insert: "INSERT INTO task_labels (account_id, task_id, label_id, created_at) VALUES (?1, ?2, ?4, ?7)",
    update: "UPDATE task_labels SET created_at = ?7 || 'x' WHERE task_id = ?2 AND label_id = ?4 AND account_id = ?1",
    delete: "DELETE FROM task_labels WHERE task_id = ?2 AND label_id = ?4 AND account_id = ?1",
  },
  calendar_links: {
    insert: `INSERT INTO calendar_links (id, account_id, task_id, provider, event_id, title, starts_at, ends_at, created_at)
             VALUES ('cal_nocaller0000001', ?1, ?2, 'google', 'ev', 'x', ?7, ?7, ?7)`,
    update: "UPDATE calendar_links SET title = 'y' WHERE id = 'cal_nocaller0000001' AND account_id = ?1",
    delete: "DELETE FROM calendar_links WHERE id = 'cal_nocaller0000001' AND account_id = ?1",
  },
  task_dependencies: {
    insert: "INSERT INTO task_dependencies (account_id, task_id, depends_on_id, created_at) VALUES (?1, ?2, ?3, ?7)",
    update: "UPDATE task_dependencies SET created_at = ?7 || 'x' WHERE task_id = ?2 AND depends_on_id = ?3 AND account_id = ?1",
    delete: "DELETE FROM task_dependencies WHERE task_id = ?2 AND depends_on_id = ?3 AND account_id = ?1",
  },
  labels: {
    insert: "INSERT INTO labels (id, account_id, name, created_at) VALUES ('lbl_nocaller0000001', ?1, 'nocaller', ?7)",
    update: "UPDATE labels SET name = 'nocaller too' WHERE id = 'lbl_nocaller0000001' AND account_id = ?1",
    delete: "DELETE FROM labels WHERE id = 'lbl_nocaller0000001' AND account_id = ?1",
  },
  pending_actions: {
    insert: `INSERT INTO pending_actions (id, account_id, agent_id, token_id, requested_by, tool, arguments, arguments_hash, rule, reason, created_at, expires_at)
             VALUES ('apr_nocaller0000002', ?1, ?5, ?6, 'bot', 'delete_task', '{}', 'x', 'r', 'r', ?7, ?7)`,
    update: "UPDATE pending_actions SET note = 'y' WHERE id = 'apr_nocaller0000002' AND account_id = ?1",
    delete: "DELETE FROM pending_actions WHERE id = 'apr_nocaller0000002' AND account_id = ?1",
  },
  trash: {
    insert: `INSERT INTO trash (id, account_id, kind, target_id, title, deleted_by, deleted_by_token, deleted_at, purge_after)
             VALUES ('trs_nocaller0000001', ?1, 'step', 'stp_none', 'x', 'human', ?6, ?7, ?7)`,
    update: "UPDATE trash SET title = 'y' WHERE id = 'trs_nocaller0000001' AND account_id = ?1",
    delete: "DELETE FROM trash WHERE id = 'trs_nocaller0000001' AND account_id = ?1",
  },
};

describe("the rules fail closed", () => {
  it("names a nocaller trigger for insert, update and delete on every guarded table", async () => {
    const names = new Set((await all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'nocaller_%'")).map((t) => t.name));
    const expected = GUARDED.flatMap((t) => ["insert", "update", "delete"].map((op) => `nocaller_${t}_${op}`));
    expect([...names].sort()).toEqual([...expected].sort());
    expect(consentCodeOf("D1_ERROR: taskgate:nocaller: SQLITE_CONSTRAINT")).toBe("nocaller");
  });

  it("refuses a batch with no caller on each guarded table, writing nothing, and lets the same batch through as the server's", async () => {
    const acc = await seedAccount("Fail closed");
    const now = new Date().toISOString();
    const agentId = (await env.DB.prepare("SELECT id FROM agents WHERE account_id = ?").bind(acc.accountId).first<{ id: string }>())!.id;
    const task = (id: string) =>
      env.DB.prepare("INSERT INTO tasks (id, account_id, title, created_by, created_at, updated_at) VALUES (?, ?, 't', 'human', ?, ?)").bind(id, acc.accountId, now, now);
    const [one, two, label] = ["tsk_nocallerparent01", "tsk_nocallerparent02", "lbl_nocallerparent01"];
    await asServer(env.DB, task(one), task(two), env.DB.prepare("INSERT INTO labels (id, account_id, name, created_at) VALUES (?, ?, 'parent', ?)").bind(label, acc.accountId, now));
    // D1 takes as many values as the statement's highest ?N.
    const bound = (sql: string) =>
      env.DB.prepare(sql).bind(...[acc.accountId, one, two, label, agentId, acc.tokenIds.agent, now].slice(0, Math.max(...[...sql.matchAll(/\?(\d)/g)].map((m) => Number(m[1])))));
    const refused = async (sql: string) => {
      const before = await snapshotDb();
      // A batch as a writer that forgot its caller would send it: other rows first, so the refusal rolls them back too.
      const write = env.DB.batch([env.DB.prepare("UPDATE accounts SET updated_at = updated_at WHERE id = ?").bind(acc.accountId), bound(sql)]);
      await expect(write, sql).rejects.toThrow(/taskgate:nocaller/);
      expect(await snapshotDb(), `${sql}: nothing written`).toBe(before);
    };
    const count = async (table: string) => (await env.DB.prepare(`SELECT count(*) AS n FROM ${table} WHERE account_id = ?`).bind(acc.accountId).first<{ n: number }>())!.n;

    for (const table of GUARDED) {
      const w = WRITES[table];
      const rows = await count(table);
      await refused(w.insert);
      const [inserted] = await asServer(env.DB, bound(w.insert));
      expect(inserted.meta.changes, `${table}: the server's insert`).toBe(1);
      await refused(w.update);
      await refused(w.delete);
      const [updated, deleted] = await asServer(env.DB, bound(w.update), bound(w.delete));
      expect([updated.meta.changes, deleted.meta.changes], `${table}: the server's update and delete`).toEqual([1, 1]);
      expect(await count(table), table).toBe(rows);
    }
    expect(await env.DB.prepare("SELECT count(*) AS n FROM call_actor").first("n"), "no caller left behind").toBe(0);
  });

  it("a server caller is nobody's person or agent: who closed, archived or blocked stays NULL, and a paused agent keeps what the server writes", async () => {
    const acc = await seedAccount("Server writes", "sleepy");
    const now = new Date().toISOString();
    const id = "tsk_serverwrites0001";
    await asServer(
      env.DB,
      env.DB.prepare("UPDATE agents SET paused_at = ? WHERE account_id = ? AND name = 'sleepy'").bind(now, acc.accountId),
      env.DB.prepare("INSERT INTO tasks (id, account_id, title, assignee, created_by, created_at, updated_at) VALUES (?, ?, 't', 'sleepy', 'human', ?, ?)").bind(id, acc.accountId, now, now),
      env.DB.prepare("INSERT INTO projects (id, account_id, name, created_at, updated_at) VALUES ('prj_serverwrites0001', ?, 'p', ?, ?)").bind(acc.accountId, now, now),
    );
    await asServer(
      env.DB,
      env.DB.prepare("UPDATE tasks SET blocked_reason = 'keys', status = 'blocked' WHERE id = ?").bind(id),
      env.DB.prepare("UPDATE projects SET archived_at = ? WHERE id = 'prj_serverwrites0001'").bind(now),
    );
    await asServer(env.DB, env.DB.prepare("UPDATE tasks SET status = 'done', blocked_reason = NULL WHERE id = ?").bind(id));
    const task = await env.DB.prepare("SELECT assignee, closed_by, last_block_reason, last_block_by, last_block_at FROM tasks WHERE id = ?").bind(id).first();
    expect(task).toMatchObject({ assignee: "sleepy", closed_by: null, last_block_reason: "keys", last_block_by: null });
    expect(task?.last_block_at).not.toBeNull();
    expect(await env.DB.prepare("SELECT archived_by FROM projects WHERE id = 'prj_serverwrites0001'").first("archived_by")).toBeNull();
  });
});
