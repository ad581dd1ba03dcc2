import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { noDependencyPath } from "../src/db/dependencies.ts";
import { taskAtVersion } from "../src/db/tasks.ts";
import { activityCount, asServer, connect, createToken, ERAS, seedAccount, snapshotDb, type TestClient } from "./helpers.ts";

async function sql(query: string, ...binds: unknown[]) {
  return asServer(env.DB, env.DB.prepare(query).bind(...binds));
}

async function row<T = Record<string, any>>(query: string, ...binds: unknown[]): Promise<T> {
  return (await env.DB.prepare(query).bind(...binds).first<T>()) as T;
}

async function newProject(accountId: string, name = "Project"): Promise<string> {
  const id = `prj_${crypto.randomUUID().replace(/-/g, "").slice(0, 16)}`;
  const now = new Date().toISOString();
  await sql("INSERT INTO projects (id, account_id, name, created_at, updated_at) VALUES (?, ?, ?, ?, ?)", id, accountId, name, now, now);
  return id;
}

async function task(c: TestClient, args: Record<string, unknown>) {
  return (await c.ok("create_task", args)).task as Record<string, any>;
}


/** Calls a refused write and proves it changed nothing anywhere. */
async function refusedUnchanged(c: TestClient, tool: string, args: Record<string, unknown>): Promise<string> {
  const before = await snapshotDb();
  const text = await c.fails(tool, args);
  expect(await snapshotDb()).toBe(before);
  return text;
}

async function stranger() {
  const other = await seedAccount("Stranger");
  return connect(other.human);
}

describe("delete_task", () => {
  it("moves the task and its subtasks to the trash as one item, and converges", async () => {
    const acc = await seedAccount();
    const c = await connect(acc.human);
    const root = await task(c, { title: "Launch" });
    const { tasks: kids } = await c.ok("decompose_task", { task_id: root.id, subtasks: [{ title: "a" }, { title: "b" }] });
    await c.ok("decompose_task", { task_id: kids[0].id, subtasks: [{ title: "a1" }] });
    const keep = await task(c, { title: "unrelated" });

    const del = await c.ok("delete_task", { task_id: root.id });
    expect(del).toMatchObject({ item_count: 4, already_in_trash: false });
    const trash = await row("SELECT * FROM trash WHERE id = ?", del.trash_id);
    expect(trash).toMatchObject({ account_id: acc.accountId, kind: "task", target_id: root.id, title: "Launch", item_count: 4, deleted_by: "human" });
    expect(trash.purge_after).toBe(del.purge_after);
    expect(Date.parse(del.purge_after) - Date.now()).toBeGreaterThan(29 * 86_400_000);
    const marked = await row<{ n: number }>("SELECT count(*) AS n FROM tasks WHERE trash_id = ?", del.trash_id);
    expect(marked.n).toBe(4);
    expect(await c.fails("get_task", { task_id: kids[1].id })).toMatch(/is in the trash .*restore_from_trash with item_id trs_/);
    expect((await c.ok("list_tasks", {})).items.map((t: any) => t.id)).toEqual([keep.id]);
    const history = await c.ok("get_task_history", { task_id: keep.id });
    expect(history.items).toHaveLength(1);

    const n = await activityCount(acc.accountId);
    const before = await snapshotDb();
    const again = await c.ok("delete_task", { task_id: root.id });
    expect(again).toEqual({ ...del, already_in_trash: true });
    const child = await c.ok("delete_task", { task_id: kids[1].id });
    expect(child).toMatchObject({ trash_id: del.trash_id, already_in_trash: true });
    expect(await snapshotDb()).toBe(before);
    expect(await activityCount(acc.accountId)).toBe(n);
    await c.close();
  });

  it("deletes only a subtask's own subtree, and refuses other accounts' and malformed ids", async () => {
    const acc = await seedAccount();
    const c = await connect(acc.agent, "legacy");
    const root = await task(c, { title: "root" });
    const { tasks: kids } = await c.ok("decompose_task", { task_id: root.id, subtasks: [{ title: "a" }, { title: "b" }] });
    const del = await c.ok("delete_task", { task_id: kids[0].id });
    expect(del.item_count).toBe(1);
    expect((await row("SELECT deleted_by FROM trash WHERE id = ?", del.trash_id)).deleted_by).toBe("bot");
    expect((await c.ok("list_subtasks", { task_id: root.id })).items.map((t: any) => t.title)).toEqual(["b"]);

    const s = await stranger();
    expect(await refusedUnchanged(s, "delete_task", { task_id: root.id })).toMatch(/No task .* list_tasks/);
    expect(await refusedUnchanged(s, "delete_task", { task_id: "tsk_0000000000000000" })).toMatch(/No task/);
    expect(await refusedUnchanged(s, "delete_task", { task_id: "prj_0000000000000000" })).toMatch(/task_id/);
    const read = await connect(acc.agentRead);
    expect(await refusedUnchanged(read, "delete_task", { task_id: root.id })).toMatch(/read/i);
    await Promise.all([c.close(), s.close(), read.close()]);
  });
});

describe("block_task and unblock_task", () => {
  for (const era of ERAS) {
    it(`${era}: blocks with a reason, refuses another reason while blocked, unblocks back to the earlier status, converges`, async () => {
      const acc = await seedAccount();
      const c = await connect(acc.agent, era);
      const t = await task(c, { title: "deploy" });
      await sql("UPDATE tasks SET status = 'in_progress' WHERE id = ?", t.id);

      const b = await c.ok("block_task", { task_id: t.id, reason: "  waiting for credentials " });
      expect(b.changed).toBe(true);
      expect(b.task).toMatchObject({ status: "blocked", blocked_reason: "waiting for credentials", version: 2 });
      expect(await row("SELECT status_before_block, version, updated_at FROM tasks WHERE id = ?", t.id)).toMatchObject({
        status_before_block: "in_progress", version: 2, updated_at: b.task.updated_at,
      });
      expect((await c.ok("get_task", { task_id: t.id })).task).toEqual(b.task);

      const n = await activityCount(acc.accountId);
      const before = await snapshotDb();
      expect(await c.ok("block_task", { task_id: t.id, reason: "waiting for credentials" })).toEqual({ task: b.task, changed: false });
      expect(await snapshotDb()).toBe(before);

      // Another reason is refused: the reason someone wrote is never overwritten.
      expect(await c.fails("block_task", { task_id: t.id, reason: "waiting for the vault" })).toBe(
        `task ${t.id} is already blocked for "waiting for credentials"; unblock_task clears that block first, or comment_on_task adds what else it waits for.`,
      );
      expect(await snapshotDb()).toBe(before);
      expect(await activityCount(acc.accountId)).toBe(n);

      const u = await c.ok("unblock_task", { task_id: t.id });
      expect(u.task).toMatchObject({ status: "in_progress", blocked_reason: null, version: 3 });
      expect((await row("SELECT status_before_block FROM tasks WHERE id = ?", t.id)).status_before_block).toBeNull();
      const snap = await snapshotDb();
      expect(await c.ok("unblock_task", { task_id: t.id })).toEqual({ task: u.task, changed: false });
      expect(await snapshotDb()).toBe(snap);
      await c.close();
    });
  }

  it("unblocks to open when nothing was remembered, and refuses done, cancelled, bad reasons and strangers", async () => {
    const acc = await seedAccount();
    const c = await connect(acc.human);
    const t = await task(c, { title: "x" });
    await sql("UPDATE tasks SET status = 'blocked', blocked_reason = 'legacy' WHERE id = ?", t.id);
    expect((await c.ok("unblock_task", { task_id: t.id })).task.status).toBe("open");

    for (const status of ["done", "cancelled"]) {
      await sql("UPDATE tasks SET status = ? WHERE id = ?", status, t.id);
      expect(await refusedUnchanged(c, "block_task", { task_id: t.id, reason: "r" })).toMatch(new RegExp(`is ${status}.*reopen_task`));
    }
    await sql("UPDATE tasks SET status = 'open' WHERE id = ?", t.id);
    expect(await refusedUnchanged(c, "block_task", { task_id: t.id, reason: "   " })).toMatch(/reason/);
    expect(await refusedUnchanged(c, "block_task", { task_id: t.id, reason: "r".repeat(2001) })).toMatch(/reason/);
    expect(await refusedUnchanged(c, "block_task", { task_id: t.id })).toMatch(/reason/);
    const s = await stranger();
    expect(await refusedUnchanged(s, "block_task", { task_id: t.id, reason: "mine now" })).toMatch(/No task/);
    expect(await refusedUnchanged(s, "unblock_task", { task_id: t.id })).toMatch(/No task/);
    await c.ok("block_task", { task_id: t.id, reason: "r".repeat(2000) });
    await Promise.all([c.close(), s.close()]);
  });
});

describe("assign_task", () => {
  it("sets human or an existing agent, clears with null, converges, refuses unknown names", async () => {
    const acc = await seedAccount();
    await createToken({ accountId: acc.accountId, kind: "agent", scope: "write", agent: "helper" });
    const c = await connect(acc.human);
    const t = await task(c, { title: "review" });
    expect((await c.ok("assign_task", { task_id: t.id, assignee: "helper" })).task).toMatchObject({ assignee: "helper", version: 2 });
    const h = await c.ok("assign_task", { task_id: t.id, assignee: "human" });
    expect(h.task).toMatchObject({ assignee: "human", version: 3 });
    const before = await snapshotDb();
    expect(await c.ok("assign_task", { task_id: t.id, assignee: "human" })).toEqual({ task: h.task, changed: false, released: null, runs_ended: [] });
    expect(await snapshotDb()).toBe(before);
    expect((await c.ok("assign_task", { task_id: t.id, assignee: null })).task.assignee).toBeNull();
    expect((await c.ok("assign_task", { task_id: t.id, assignee: null })).changed).toBe(false);

    expect(await refusedUnchanged(c, "assign_task", { task_id: t.id, assignee: "ghost" })).toMatch(/No agent ghost.*list_agents/);
    expect(await refusedUnchanged(c, "assign_task", { task_id: t.id, assignee: "Bad Name" })).toMatch(/assignee/);
    expect(await refusedUnchanged(c, "assign_task", { task_id: t.id })).toMatch(/assignee/);
    const other = await seedAccount("Other", "ghost");
    const o = await connect(other.human);
    expect(await refusedUnchanged(c, "assign_task", { task_id: t.id, assignee: "ghost" })).toMatch(/No agent ghost/);
    expect(await refusedUnchanged(o, "assign_task", { task_id: t.id, assignee: "human" })).toMatch(/No task/);
    await Promise.all([c.close(), o.close()]);
  });
});

describe("move_task", () => {
  it("moves a top-level task with its whole subtree, converges, and refuses subtasks", async () => {
    const acc = await seedAccount();
    const c = await connect(acc.human);
    const p1 = await newProject(acc.accountId, "one");
    const p2 = await newProject(acc.accountId, "two");
    const root = await task(c, { title: "root", project_id: p1 });
    const { tasks: kids } = await c.ok("decompose_task", { task_id: root.id, subtasks: [{ title: "a" }, { title: "b" }] });
    const { tasks: grand } = await c.ok("decompose_task", { task_id: kids[0].id, subtasks: [{ title: "a1" }] });
    await c.ok("delete_task", { task_id: kids[1].id });

    const m = await c.ok("move_task", { task_id: root.id, project_id: p2 });
    expect(m).toMatchObject({ changed: true, moved: 3, task: { project_id: p2, version: 2 } });
    for (const id of [root.id, kids[0].id, grand[0].id]) {
      expect(await row("SELECT project_id, version FROM tasks WHERE id = ?", id)).toEqual({ project_id: p2, version: 2 });
    }
    expect((await row("SELECT project_id FROM tasks WHERE id = ?", kids[1].id)).project_id).toBe(p1);
    const history = await c.ok("get_task_history", { task_id: root.id });
    expect(history.items[0].summary).toContain("with 2 subtasks");

    const before = await snapshotDb();
    expect(await c.ok("move_task", { task_id: root.id, project_id: p2 })).toEqual({ task: m.task, changed: false, moved: 0 });
    expect(await snapshotDb()).toBe(before);

    const text = await refusedUnchanged(c, "move_task", { task_id: grand[0].id, project_id: p1 });
    expect(text).toContain(`move its top-level parent ${root.id}`);

    const out = await c.ok("move_task", { task_id: root.id, project_id: null });
    expect(out).toMatchObject({ moved: 3, task: { project_id: null, version: 3 } });
    expect((await row("SELECT project_id FROM tasks WHERE id = ?", grand[0].id)).project_id).toBeNull();
    await c.close();
  });

  it("refuses projects of other accounts, trashed projects and strangers, changing nothing", async () => {
    const acc = await seedAccount();
    const other = await seedAccount();
    const c = await connect(acc.human, "legacy");
    const o = await connect(other.human);
    const t = await task(c, { title: "t" });
    const foreign = await newProject(other.accountId);
    const trashed = await newProject(acc.accountId);
    await sql("UPDATE projects SET trash_id = 'trs_x' WHERE id = ?", trashed);
    expect(await refusedUnchanged(c, "move_task", { task_id: t.id, project_id: foreign })).toMatch(/No project .* list_projects/);
    expect(await refusedUnchanged(c, "move_task", { task_id: t.id, project_id: trashed })).toMatch(/No project/);
    expect(await refusedUnchanged(c, "move_task", { task_id: t.id, project_id: "nope" })).toMatch(/project_id/);
    expect(await refusedUnchanged(o, "move_task", { task_id: t.id, project_id: foreign })).toMatch(/No task/);
    await Promise.all([c.close(), o.close()]);
  });
});

describe("snooze_task", () => {
  it("hides a task until a future time, refuses past times, clears with null, converges", async () => {
    const acc = await seedAccount();
    const c = await connect(acc.agent);
    const t = await task(c, { title: "later", assignee: "bot" });
    const until = new Date(Date.now() + 3_600_000).toISOString();
    const s = await c.ok("snooze_task", { task_id: t.id, until: until.replace("Z", "+00:00") });
    expect(s.task).toMatchObject({ snoozed_until: until, version: 2 });
    expect((await c.ok("list_my_tasks", {})).items).toHaveLength(0);
    expect((await c.ok("list_my_tasks", { include_snoozed: true })).items).toHaveLength(1);

    const before = await snapshotDb();
    expect(await c.ok("snooze_task", { task_id: t.id, until })).toEqual({ task: s.task, changed: false });
    expect(await snapshotDb()).toBe(before);
    expect(await refusedUnchanged(c, "snooze_task", { task_id: t.id, until: "2020-01-01T00:00:00Z" })).toMatch(/until: .*not in the future/);
    expect(await refusedUnchanged(c, "snooze_task", { task_id: t.id, until: "tomorrow" })).toMatch(/until/);

    const woken = await c.ok("snooze_task", { task_id: t.id, until: null });
    expect(woken.task).toMatchObject({ snoozed_until: null, version: 3 });
    expect((await c.ok("snooze_task", { task_id: t.id, until: null })).changed).toBe(false);
    expect((await c.ok("list_my_tasks", {})).items).toHaveLength(1);
    const o = await stranger();
    expect(await refusedUnchanged(o, "snooze_task", { task_id: t.id, until })).toMatch(/No task/);
    await Promise.all([c.close(), o.close()]);
  });
});

describe("decompose_task", () => {
  it("creates subtasks that inherit project and auto-OK, in one batch, replayable by key", async () => {
    const acc = await seedAccount();
    const c = await connect(acc.human);
    const prj = await newProject(acc.accountId);
    const parent = await task(c, { title: "big", project_id: prj, auto_ok: true });
    const n = await activityCount(acc.accountId);
    const r = await c.ok("decompose_task", {
      task_id: parent.id,
      subtasks: [{ title: "one", notes: "first" }, { title: "two" }, { title: "three" }],
      idempotency_key: "k1",
    });
    expect(r.parent_id).toBe(parent.id);
    expect(r.tasks.map((t: any) => [t.title, t.notes, t.parent_id, t.project_id, t.auto_ok, t.status])).toEqual([
      ["one", "first", parent.id, prj, true, "open"],
      ["two", "", parent.id, prj, true, "open"],
      ["three", "", parent.id, prj, true, "open"],
    ]);
    expect((await c.ok("get_task", { task_id: r.tasks[0].id })).task).toEqual(r.tasks[0]);
    expect(await activityCount(acc.accountId)).toBe(n + 1);

    const before = await snapshotDb();
    expect(await c.ok("decompose_task", { task_id: parent.id, subtasks: [{ title: "one", notes: "first" }, { title: "two" }, { title: "three" }], idempotency_key: "k1" })).toEqual(r);
    expect(await snapshotDb()).toBe(before);
    expect((await c.ok("list_subtasks", { task_id: parent.id })).items.map((t: any) => t.title)).toEqual(["one", "two", "three"]);
    await c.close();
  });

  it("enforces the batch and text limits and refuses strangers, writing nothing", async () => {
    const acc = await seedAccount();
    const c = await connect(acc.agent);
    const parent = await task(c, { title: "p" });
    const many = Array.from({ length: 51 }, (_, i) => ({ title: `s${i}` }));
    expect(await refusedUnchanged(c, "decompose_task", { task_id: parent.id, subtasks: many })).toMatch(/subtasks.*50/);
    expect(await refusedUnchanged(c, "decompose_task", { task_id: parent.id, subtasks: [] })).toMatch(/subtasks/);
    expect(await refusedUnchanged(c, "decompose_task", { task_id: parent.id, subtasks: [{ title: "ok" }, { title: " " }] })).toMatch(/subtasks\.1\.title/);
    expect(await refusedUnchanged(c, "decompose_task", { task_id: parent.id, subtasks: [{ title: "x".repeat(501) }] })).toMatch(/title/);
    expect(await refusedUnchanged(c, "decompose_task", { task_id: parent.id, subtasks: [{ title: "x", extra: 1 }] })).toMatch(/extra|subtasks/);
    const fifty = await c.ok("decompose_task", { task_id: parent.id, subtasks: many.slice(0, 50) });
    expect(fifty.tasks).toHaveLength(50);
    expect(fifty.tasks.every((t: any) => t.auto_ok === false && t.created_by === "bot")).toBe(true);
    const o = await stranger();
    expect(await refusedUnchanged(o, "decompose_task", { task_id: parent.id, subtasks: [{ title: "mine" }] })).toMatch(/No task/);
    await Promise.all([c.close(), o.close()]);
  });
});

describe("add_dependency and remove_dependency", () => {
  for (const era of ERAS) {
    it(`${era}: links, converges, refuses self-links and cycles naming the chain`, async () => {
      const acc = await seedAccount();
      const c = await connect(acc.human, era);
      const [a, b, d] = [await task(c, { title: "A" }), await task(c, { title: "B" }), await task(c, { title: "C" })];
      const ab = await c.ok("add_dependency", { task_id: a.id, depends_on_id: b.id });
      expect(ab).toEqual({ task: { id: a.id, title: "A", status: "open" }, depends_on: { id: b.id, title: "B", status: "open" }, changed: true });
      await c.ok("add_dependency", { task_id: b.id, depends_on_id: d.id });
      expect(await row("SELECT version FROM tasks WHERE id = ?", a.id)).toEqual({ version: 1 });

      const n = await activityCount(acc.accountId);
      const before = await snapshotDb();
      expect(await c.ok("add_dependency", { task_id: a.id, depends_on_id: b.id })).toEqual({ ...ab, changed: false });
      expect(await snapshotDb()).toBe(before);
      expect(await activityCount(acc.accountId)).toBe(n);

      const cycle = await refusedUnchanged(c, "add_dependency", { task_id: d.id, depends_on_id: a.id });
      expect(cycle).toContain(`${a.id} "A" waits on ${b.id} "B" waits on ${d.id} "C"`);
      expect(cycle).toMatch(/cycle/);
      expect(await refusedUnchanged(c, "add_dependency", { task_id: b.id, depends_on_id: a.id })).toMatch(/cycle/);
      expect(await refusedUnchanged(c, "add_dependency", { task_id: a.id, depends_on_id: a.id })).toMatch(/depends_on_id: a task cannot wait on itself/);
      await c.ok("add_dependency", { task_id: a.id, depends_on_id: d.id });

      const rm = await c.ok("remove_dependency", { task_id: b.id, depends_on_id: d.id });
      expect(rm.changed).toBe(true);
      const snap = await snapshotDb();
      expect((await c.ok("remove_dependency", { task_id: b.id, depends_on_id: d.id })).changed).toBe(false);
      expect((await c.ok("remove_dependency", { task_id: d.id, depends_on_id: a.id })).changed).toBe(false);
      expect(await snapshotDb()).toBe(snap);
      expect((await c.ok("add_dependency", { task_id: d.id, depends_on_id: b.id })).changed).toBe(true);
      const history = await c.ok("get_task_history", { task_id: b.id });
      expect(history.items.map((e: any) => e.tool)).toEqual(["remove_dependency", "add_dependency", "create_task"]);
      await c.close();
    });
  }

  it("refuses a cycle through a task in the trash, and other accounts' tasks", async () => {
    const acc = await seedAccount();
    const c = await connect(acc.agent);
    const [a, b, d] = [await task(c, { title: "A" }), await task(c, { title: "B" }), await task(c, { title: "C" })];
    await c.ok("add_dependency", { task_id: a.id, depends_on_id: b.id });
    await c.ok("add_dependency", { task_id: b.id, depends_on_id: d.id });
    await c.ok("delete_task", { task_id: b.id });
    expect(await refusedUnchanged(c, "add_dependency", { task_id: d.id, depends_on_id: a.id })).toMatch(/cycle/);
    expect(await refusedUnchanged(c, "add_dependency", { task_id: a.id, depends_on_id: b.id })).toMatch(/is in the trash .*restore_from_trash with item_id trs_/);
    expect(await refusedUnchanged(c, "remove_dependency", { task_id: a.id, depends_on_id: b.id })).toMatch(/is in the trash .*restore_from_trash with item_id trs_/);

    const other = await seedAccount();
    const o = await connect(other.human);
    const foreign = await task(o, { title: "foreign" });
    expect(await refusedUnchanged(c, "add_dependency", { task_id: a.id, depends_on_id: foreign.id })).toMatch(new RegExp(`No task ${foreign.id}`));
    expect(await refusedUnchanged(o, "add_dependency", { task_id: foreign.id, depends_on_id: a.id })).toMatch(new RegExp(`No task ${a.id}`));
    expect(await refusedUnchanged(o, "remove_dependency", { task_id: a.id, depends_on_id: d.id })).toMatch(/No task/);
    await Promise.all([c.close(), o.close()]);
  });

  it("refuses a cycle closed by a concurrent call (only one of two opposite links lands)", async () => {
    const acc = await seedAccount();
    const c1 = await connect(acc.human);
    const c2 = await connect(acc.agent);
    const [a, b] = [await task(c1, { title: "A" }), await task(c1, { title: "B" })];
    const results = await Promise.all([
      c1.call("add_dependency", { task_id: a.id, depends_on_id: b.id }),
      c2.call("add_dependency", { task_id: b.id, depends_on_id: a.id }),
    ]);
    expect(results.filter((r) => !r.isError)).toHaveLength(1);
    for (const r of results.filter((x) => x.isError)) expect(r.text).toMatch(/cycle/);
    const links = await env.DB.prepare("SELECT count(*) AS n FROM task_dependencies WHERE account_id = ?").bind(acc.accountId).first<{ n: number }>();
    expect(links?.n).toBe(1);
    await Promise.all([c1.close(), c2.close()]);
  });

  it("has batch guards that see a cycle or a changed version at commit time", async () => {
    const acc = await seedAccount();
    const c = await connect(acc.human);
    const [a, b, d] = [await task(c, { title: "A" }), await task(c, { title: "B" }), await task(c, { title: "C" })];
    await c.ok("add_dependency", { task_id: a.id, depends_on_id: b.id });
    await c.ok("add_dependency", { task_id: b.id, depends_on_id: d.id });
    const holds = async (cond: { sql: string; binds: unknown[] }) =>
      (await env.DB.prepare(`SELECT coalesce((${cond.sql}), 0) AS ok`).bind(...cond.binds).first<{ ok: number }>())?.ok;
    expect(await holds(noDependencyPath({ from: a.id, accountId: acc.accountId, to: d.id }))).toBe(0);
    expect(await holds(noDependencyPath({ from: d.id, accountId: acc.accountId, to: a.id }))).toBe(1);
    expect(await holds(noDependencyPath({ from: a.id, accountId: "acc_other", to: d.id }))).toBe(1);
    expect(await holds(taskAtVersion({ taskId: a.id, accountId: acc.accountId, version: 1 }))).toBe(1);
    expect(await holds(taskAtVersion({ taskId: a.id, accountId: acc.accountId, version: 2 }))).toBe(0);
    await c.close();
  });
});
