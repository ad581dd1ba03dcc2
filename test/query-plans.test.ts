import { env } from "cloudflare:workers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOOL_NAMES, WRITE_TOOLS } from "../src/catalog/effects.ts";
import { indexComment, indexNewTask } from "../src/db/search-index.ts";
import { accountKey } from "../src/domain/search-terms.ts";
import { asServer, connect, seedAccount, type SeededAccount, type TestClient } from "./helpers.ts";

/**
 * Every SQL statement the read tools run, captured from D1 while calling them
 * through a real client, then planned with EXPLAIN QUERY PLAN on the real
 * local D1: none may scan the tasks, comments or activity tables (an index
 * scan or an index search is fine). No ANALYZE: production has none either.
 * The database also holds OTHER_ACCOUNTS accounts with as much data, sharing
 * the searched word: each statement is run again and may read no more rows
 * than the account's own data could explain (D1's rows_read), so a query
 * that walks other accounts' rows or postings fails.
 */

const WATCHED = ["tasks", "comments", "activity"] as const;
const TASKS = 300;
const OTHER_ACCOUNTS = 20;
/** Rows a statement may read: well under one other account's share of any watched table times the number of others. */
const MAX_ROWS_READ = (OTHER_ACCOUNTS * TASKS) / 4;

interface Captured {
  sql: string;
  binds: unknown[];
}

/** Records every executed statement, whoever prepared it (the Worker's metered view and its request's session included). */
function spyOnD1(db: D1Database): { captured: Captured[]; restore(): void } {
  const captured: Captured[] = [];
  const sqlOf = new WeakMap<object, Captured>();
  // The database's and a session's (src/db/read-sessions.ts) prepare and batch: every request reads through a session.
  const owners = [Object.getPrototypeOf(db), Object.getPrototypeOf(db.withSession("first-unconstrained"))] as Record<string, any>[];
  const probe = db.prepare("SELECT 1");
  const stmtProto = Object.getPrototypeOf(probe) as Record<string, any>;
  const savedOwners = owners.map((o) => ({ prepare: o.prepare, batch: o.batch }));
  const saved = { bind: stmtProto.bind, first: stmtProto.first, all: stmtProto.all, run: stmtProto.run, raw: stmtProto.raw };
  const record = (stmt: object) => {
    const c = sqlOf.get(stmt);
    if (c) captured.push(c);
  };
  owners.forEach((o, i) => {
    o.prepare = function (this: D1Database, sql: string) {
      const stmt = savedOwners[i].prepare.call(this, sql);
      sqlOf.set(stmt, { sql, binds: [] });
      return stmt;
    };
    o.batch = function (this: D1Database, statements: object[]) {
      statements.forEach(record);
      return savedOwners[i].batch.call(this, statements);
    };
  });
  stmtProto.bind = function (this: object, ...values: unknown[]) {
    const stmt = saved.bind.apply(this, values);
    const base = sqlOf.get(this);
    if (base) sqlOf.set(stmt, { sql: base.sql, binds: values });
    return stmt;
  };
  for (const m of ["first", "all", "run", "raw"] as const) {
    stmtProto[m] = function (this: object, ...a: unknown[]) {
      record(this);
      return saved[m].apply(this, a);
    };
  }
  return {
    captured,
    restore() {
      owners.forEach((o, i) => Object.assign(o, savedOwners[i]));
      Object.assign(stmtProto, saved);
    },
  };
}

interface PlanRow {
  id: number;
  parent: number;
  detail: string;
}

async function planOf(c: Captured): Promise<PlanRow[]> {
  const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${c.sql}`).bind(...c.binds).all<PlanRow>();
  return results;
}

const KEYWORDS = new Set(["where", "join", "left", "inner", "cross", "on", "order", "group", "limit", "using", "natural", "set", "values", "union"]);

/** The names a plan may use for the watched tables in this statement: the table names and their aliases. */
function watchedNames(sql: string): Map<string, string> {
  const names = new Map<string, string>(WATCHED.map((t) => [t, t]));
  const re = /\b(?:FROM|JOIN)\s+(tasks|comments|activity)\b(?:\s+(?:AS\s+)?([A-Za-z_][A-Za-z0-9_]*))?/gi;
  for (const m of sql.matchAll(re)) {
    const alias = m[2]?.toLowerCase();
    if (alias && !KEYWORDS.has(alias)) names.set(alias, m[1].toLowerCase());
  }
  return names;
}

/** Plan lines that read a watched table row by row (not through an index). */
function fullScans(sql: string, plan: PlanRow[]): string[] {
  const names = watchedNames(sql);
  return plan
    .map((p) => p.detail)
    .filter((d) => {
      const m = /^SCAN (?:TABLE )?([A-Za-z_][A-Za-z0-9_]*)(?: AS ([A-Za-z_][A-Za-z0-9_]*))?(.*)$/.exec(d);
      if (!m) return false;
      const name = (m[2] ?? m[1]).toLowerCase();
      if (!names.has(name) && !names.has(m[1].toLowerCase())) return false;
      return !/USING (COVERING )?INDEX|USING INTEGER PRIMARY KEY/.test(m[3]);
    });
}

interface Fixture {
  acc: SeededAccount;
  projectId: string;
  taskIds: string[];
  parentId: string;
  ids: Record<string, string>;
}

const A_DAY = 86_400_000;

/**
 * Accounts beside the one under test, each with TASKS tasks (half of them
 * with the searched word, all indexed), a comment and an activity entry per
 * task: a few statements per account, rows made by the database itself.
 */
async function seedOthers(): Promise<void> {
  const now = new Date().toISOString();
  const statements: D1PreparedStatement[] = [];
  for (let k = 0; k < OTHER_ACCOUNTS; k++) {
    const a = `acc_other${String(k).padStart(3, "0")}planner0`;
    const key = accountKey(a);
    const seq = `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ${TASKS - 1})`;
    statements.push(
      env.DB.prepare("INSERT INTO accounts (id, name, created_at, updated_at) VALUES (?, 'other', ?, ?)").bind(a, now, now),
      env.DB.prepare(
        `${seq} INSERT INTO tasks (id, account_id, title, notes, status, assignee, due_at, created_by, created_at, updated_at)
         SELECT 'tsk_' || ?2 || printf('%08d', i), ?1, 'Plan task ' || i || CASE WHEN i % 2 = 0 THEN ' quarterly' ELSE '' END, 'notes for the planner',
                CASE i % 3 WHEN 0 THEN 'open' WHEN 1 THEN 'blocked' ELSE 'done' END, CASE WHEN i % 2 = 0 THEN 'human' END,
                strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '+' || (i % 20) || ' days'), 'human', ?3, ?3 FROM n`,
      ).bind(a, key, now),
      env.DB.prepare(
        `INSERT INTO task_search (rowid, title, notes)
         SELECT rid, ?2 || '_plan ' || ?2 || '_task ' || ?2 || '_' || substr(id, 13) || CASE WHEN title LIKE '%quarterly' THEN ' ' || ?2 || '_quarterly' ELSE '' END,
                ?2 || '_notes ' || ?2 || '_for ' || ?2 || '_the ' || ?2 || '_planner'
           FROM tasks WHERE account_id = ?1`,
      ).bind(a, key),
      env.DB.prepare(
        `INSERT INTO comments (id, account_id, task_id, author_token_id, author, body, created_at, updated_at)
         SELECT 'cmt_' || substr(id, 5), account_id, id, 'tok_other', 'human', 'a quarterly comment', ?2, ?2 FROM tasks WHERE account_id = ?1`,
      ).bind(a, now),
      env.DB.prepare(
        "INSERT INTO comment_search (rowid, body) SELECT rowid, ?2 || '_a ' || ?2 || '_quarterly ' || ?2 || '_comment' FROM comments WHERE account_id = ?1",
      ).bind(a, key),
      env.DB.prepare(
        `INSERT INTO activity (id, account_id, token_id, actor, tool, target_id, summary, created_at)
         SELECT 'act_' || substr(id, 5), account_id, 'tok_other', 'human', 'create_task', id, 'seeded', created_at FROM tasks WHERE account_id = ?1`,
      ).bind(a),
    );
  }
  await asServer(env.DB, statements);
}

/** Tasks in bulk (and their index rows), then a few records of every kind through the tools. */
async function seed(client: TestClient, agent: TestClient, acc: SeededAccount, tools: Set<string>): Promise<Fixture> {
  const { project } = await client.ok("create_project", { name: "Plans" });
  const base = Date.now() - TASKS * 60_000;
  const statuses = ["open", "in_progress", "blocked", "done", "cancelled", "awaiting_approval"];
  const taskIds: string[] = [];
  const inserts: D1PreparedStatement[] = [];
  for (let i = 0; i < TASKS; i++) {
    const id = `tsk_plan${acc.accountId.slice(4, 8)}${String(i).padStart(8, "0")}`;
    taskIds.push(id);
    const at = new Date(base + i * 60_000).toISOString();
    const due = i % 3 === 0 ? new Date(Date.now() + ((i % 20) - 10) * A_DAY).toISOString() : null;
    const assignee = i % 4 === 0 ? acc.agentName : i % 4 === 1 ? "human" : null;
    const snoozed = i % 17 === 0 ? new Date(Date.now() + A_DAY).toISOString() : null;
    inserts.push(
      env.DB.prepare(
        `INSERT INTO tasks (id, account_id, project_id, title, notes, status, priority, due_at, assignee, snoozed_until, auto_ok, version, created_by, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 1, 'human', ?, ?)`,
      ).bind(id, acc.accountId, i % 2 ? project.id : null, `Plan task ${i}${i % 10 === 3 ? " quarterly" : ""}`, "notes for the planner", statuses[i % statuses.length], i % 4, due, assignee, snoozed, at, at),
    );
  }
  await asServer(env.DB, [...inserts, ...inserts.map((_, i) => indexNewTask(env.DB, acc.accountId, { id: taskIds[i], title: `Plan task ${i}${i % 10 === 3 ? " quarterly" : ""}`, notes: "notes for the planner" }))]);
  const comments: D1PreparedStatement[] = [];
  const activity: D1PreparedStatement[] = [];
  for (let i = 0; i < TASKS; i++) {
    const at = new Date(base + i * 60_000 + 1000).toISOString();
    comments.push(
      env.DB.prepare("INSERT INTO comments (id, account_id, task_id, author_token_id, author, body, created_at, updated_at) VALUES (?, ?, ?, ?, 'human', ?, ?, ?)")
        .bind(`cmt_plan${acc.accountId.slice(4, 8)}${String(i).padStart(8, "0")}`, acc.accountId, taskIds[i % 40], acc.tokenIds.human, `comment ${i}`, at, at),
      indexComment(env.DB, acc.accountId, `cmt_plan${acc.accountId.slice(4, 8)}${String(i).padStart(8, "0")}`, `comment ${i}`),
    );
    activity.push(
      env.DB.prepare("INSERT INTO activity (id, account_id, token_id, actor, tool, target_id, summary, created_at) VALUES (?, ?, ?, 'human', 'create_task', ?, 'seeded', ?)")
        .bind(`act_plan${acc.accountId.slice(4, 8)}${String(i).padStart(8, "0")}`, acc.accountId, acc.tokenIds.human, taskIds[i], at),
    );
  }
  await env.DB.batch([...comments, ...activity]);

  const ids: Record<string, string> = { task_id: taskIds[8], project_id: project.id };
  const { task: parent } = await client.ok("create_task", { title: "Parent quarterly", project_id: project.id, assignee: acc.agentName });
  const { task: child } = await client.ok("create_task", { title: "Child", parent_id: parent.id });
  await client.ok("create_task", { title: "Grandchild", parent_id: child.id });
  ids.task_id = parent.id;
  ids.parent_id = parent.id;
  const maybe = async (who: TestClient, name: string, args: Record<string, unknown>) => (tools.has(name) ? who.call(name, args) : null);
  const steps = await maybe(client, "add_steps", { task_id: parent.id, steps: ["one", "two"] });
  if (steps && !steps.isError) ids.step_id = steps.structured.steps[0].id;
  const comment = await maybe(client, "comment_on_task", { task_id: parent.id, body: "a quarterly comment" });
  if (comment && !comment.isError) ids.comment_id = comment.structured.comment.id;
  const label = await maybe(client, "label_task", { task_id: parent.id, labels: ["finance"] });
  if (label && !label.isError) ids.label_id = label.structured.labels?.[0]?.id;
  await maybe(client, "add_dependency", { task_id: parent.id, depends_on_id: taskIds[0] });
  await maybe(client, "add_dependency", { task_id: taskIds[2], depends_on_id: parent.id });
  const run = await maybe(agent, "start_run", { task_id: parent.id });
  if (run && !run.isError) {
    ids.run_id = run.structured.run?.id ?? run.structured.run_id;
    await maybe(agent, "log_run_event", { run_id: ids.run_id, kind: "progress", message: "working" });
  }
  const approval = await maybe(agent, "request_approval", { task_id: taskIds[1], question: "ok?" });
  if (approval && !approval.isError) ids.approval_id = approval.structured.approval?.id ?? approval.structured.approval_id;
  await maybe(client, "link_calendar_event", {
    task_id: parent.id, provider: "google", event_id: "evt1", title: "Review", starts_at: new Date(Date.now() + A_DAY).toISOString(), ends_at: new Date(Date.now() + A_DAY + 3_600_000).toISOString(),
  });
  await maybe(client, "delete_task", { task_id: taskIds[5] });
  return { acc, projectId: project.id, taskIds, parentId: parent.id, ids };
}

/** An argument for a property, chosen by its name and JSON Schema; undefined when there is no sensible one. */
function valueFor(name: string, schema: any, f: Fixture): unknown {
  const now = Date.now();
  if (f.ids[name]) return f.ids[name];
  switch (name) {
    case "depends_on_id": return f.taskIds[0];
    case "query": return "quarterly";
    case "label": return "finance";
    case "labels": return ["finance"];
    case "assignee": return f.acc.agentName;
    case "agent": case "agent_name": return f.acc.agentName;
    case "target_id": return f.parentId;
    case "limit": return 5;
    case "cursor": return undefined;
    case "depth": case "max_depth": return 3;
    case "days": return 7;
  }
  const type = Array.isArray(schema?.type) ? schema.type.find((t: string) => t !== "null") : schema?.type;
  if (schema?.format === "date-time" || /(_at|_after|_before|since|until|from|to|start|end)$/.test(name)) {
    return new Date(/before|until|to$|end/.test(name) ? now + 14 * A_DAY : now - 14 * A_DAY).toISOString();
  }
  if (type === "boolean") return true;
  if (type === "array" && schema.items?.enum) return schema.items.enum.slice(0, 2);
  if (schema?.enum) return schema.enum[0];
  if (type === "integer" || type === "number") return schema.minimum ?? 1;
  return undefined;
}

/** Required arguments alone, each optional one alone, all of them together, and the next page of each. */
function variants(tool: { inputSchema: any }, f: Fixture): Record<string, unknown>[] | null {
  const props: Record<string, any> = tool.inputSchema?.properties ?? {};
  const required: string[] = tool.inputSchema?.required ?? [];
  const base: Record<string, unknown> = {};
  for (const r of required) {
    const v = valueFor(r, props[r], f);
    if (v === undefined) return null;
    base[r] = v;
  }
  const out = [base];
  const all: Record<string, unknown> = { ...base };
  for (const [name, schema] of Object.entries(props)) {
    if (required.includes(name) || name === "idempotency_key") continue;
    const v = valueFor(name, schema, f);
    if (v === undefined) continue;
    out.push({ ...base, [name]: v });
    all[name] = v;
  }
  out.push(all);
  return out;
}

describe("query plans", () => {
  let fixture: Fixture;
  let human: TestClient;
  let agent: TestClient;
  let tools: { name: string; inputSchema: any }[];
  const spy = { captured: [] as Captured[], restore: () => {} };

  beforeAll(async () => {
    await seedOthers();
    const acc = await seedAccount("Query plans", "planner");
    human = await connect(acc.human);
    agent = await connect(acc.agent);
    tools = await human.listTools();
    fixture = await seed(human, agent, acc, new Set(tools.map((t) => t.name)));
  }, 120_000);

  afterAll(async () => {
    spy.restore();
    await human?.close();
    await agent?.close();
  });

  it("no read tool's query scans tasks, comments or activity", async () => {
    const reads = new Set<string>(TOOL_NAMES.filter((n) => !WRITE_TOOLS.has(n)));
    const readTools = tools.filter((t) => reads.has(t.name));
    expect(readTools.length).toBeGreaterThan(0);

    const bySql = new Map<string, { c: Captured; tools: Set<string> }>();
    const calls: string[] = [];
    const s = spyOnD1(env.DB);
    spy.restore = s.restore;
    try {
      for (const tool of readTools) {
        const list = variants(tool, fixture);
        if (!list) {
          calls.push(`${tool.name}: skipped (no value for a required argument)`);
          continue;
        }
        for (const args of list) {
          for (const who of tool.name === "list_my_tasks" || tool.name === "get_agent" ? [human, agent] : [human]) {
            const before = s.captured.length;
            let result = await who.call(tool.name, args);
            calls.push(`${tool.name} ${JSON.stringify(args)} → ${result.isError ? `error: ${result.text.slice(0, 80)}` : "ok"}`);
            const next = result.structured?.next_cursor;
            if (!result.isError && typeof next === "string") {
              result = await who.call(tool.name, { ...args, cursor: next });
              calls.push(`${tool.name} next page → ${result.isError ? `error: ${result.text.slice(0, 80)}` : "ok"}`);
            }
            for (const c of s.captured.slice(before)) {
              const entry = bySql.get(c.sql) ?? { c, tools: new Set<string>() };
              entry.tools.add(tool.name);
              bySql.set(c.sql, entry);
            }
          }
        }
      }
    } finally {
      s.restore();
      spy.restore = () => {};
    }

    const offenders: string[] = [];
    const notes: string[] = [];
    const rowsReadLines: string[] = [];
    let planned = 0;
    for (const { c, tools: usedBy } of bySql.values()) {
      if (!/^\s*(SELECT|WITH)\b/i.test(c.sql)) continue;
      const plan = await planOf(c);
      planned++;
      const scans = fullScans(c.sql, plan);
      const who = [...usedBy].join(", ");
      const oneLine = c.sql.replace(/\s+/g, " ").trim();
      if (scans.length) offenders.push(`${who}: ${scans.join("; ")}\n    ${oneLine}\n    plan: ${plan.map((p) => p.detail).join(" | ")}`);
      // A task's own series or subtasks have an index of their own: reading them through the account's whole range grows with the account.
      if (/\b(series_id|parent_id)\s*=/.test(c.sql) && plan.some((p) => /^SEARCH tasks USING INDEX tasks_account\w* \(account_id=\?( AND trash_id=\?)?\)$/.test(p.detail))) {
        offenders.push(`${who}: reads a task's series or subtasks through the account's whole range\n    ${oneLine}\n    plan: ${plan.map((p) => p.detail).join(" | ")}`);
      }
      const touchesWatched = /\b(?:FROM|JOIN)\s+(?:tasks|comments|activity)\b/i.test(c.sql);
      const sortsOrScans = plan.some((p) => /TEMP B-TREE FOR (LAST \d+ TERMS OF )?ORDER BY|^SCAN .*USING (COVERING )?INDEX/.test(p.detail));
      const rowsRead = (await env.DB.prepare(c.sql).bind(...c.binds).all()).meta.rows_read;
      rowsReadLines.push(`${String(rowsRead).padStart(6)}  ${who}: ${oneLine.slice(0, 100)}`);
      if (rowsRead > MAX_ROWS_READ) offenders.push(`${who}: reads ${rowsRead} rows (at most ${MAX_ROWS_READ}: the account's own data)\n    ${oneLine}\n    plan: ${plan.map((p) => p.detail).join(" | ")}`);
      if (touchesWatched && sortsOrScans) notes.push(`${who}: ${plan.map((p) => p.detail).join(" | ")}\n    ${oneLine.slice(0, 240)}`);
    }
    console.log(`query plans: ${readTools.length} read tools, ${calls.length} calls, ${planned} distinct SELECTs planned`);
    const failedCalls = calls.filter((c) => / → error|skipped/.test(c));
    if (failedCalls.length) console.log(`calls that returned an error (their statements are still planned):\n  ${failedCalls.join("\n  ")}`);
    console.log(`rows read per statement, most first (beside ${OTHER_ACCOUNTS} accounts × ${TASKS} tasks):\n  ${rowsReadLines.sort().reverse().slice(0, 8).join("\n  ")}`);
    if (notes.length) console.log(`plans of watched tables with an index scan or a sort (allowed; read for scale):\n  ${notes.join("\n  ")}`);
    expect(planned).toBeGreaterThan(readTools.length / 2);
    expect(offenders, `full scans:\n  ${offenders.join("\n  ")}`).toEqual([]);
  }, 120_000);

  it("the plan check itself catches a full scan and accepts index use", async () => {
    const scan = "SELECT id FROM tasks t WHERE t.title = ?";
    expect(fullScans(scan, await planOf({ sql: scan, binds: ["x"] }))).not.toEqual([]);
    const scanComments = "SELECT c.id FROM comments AS c WHERE c.body = ?";
    expect(fullScans(scanComments, await planOf({ sql: scanComments, binds: ["x"] }))).not.toEqual([]);
    const search = "SELECT id FROM tasks t WHERE t.account_id = ? AND t.trash_id IS NULL ORDER BY t.created_at DESC LIMIT 5";
    expect(fullScans(search, await planOf({ sql: search, binds: ["acc_x"] }))).toEqual([]);
  });
});
