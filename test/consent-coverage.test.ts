/**
 * Every column and every child table of tasks is decided by a consent rule or
 * listed here as exempt, read from the real database's schema: a new column
 * of tasks, or a new table with a `task_id`, fails this test until someone
 * decides whether a held task's holder alone may change it.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { UNFINISHED } from "../src/db/dependencies.ts";
import { CONSENT_CODES, CONSENT_RULES, TASK_PART_TABLES } from "../src/domain/consent-rules.ts";

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
};

/** Tables with a task_id that have no consent_<table>_insert/update/delete triggers, and why. */
const CHILD_TABLES_EXEMPT: Record<string, string> = {
  comments: "comments stay open to everyone (C1)",
  claim_lapse_notices: "the server's own notices",
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

  it("each consent trigger belongs to one declared rule and refuses with that rule's code; every code has a rule", async () => {
    const triggers = await all<{ name: string; sql: string }>(
      "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND (name LIKE 'consent\\_%' ESCAPE '\\' OR name = 'tasks_last_block') ORDER BY name",
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
