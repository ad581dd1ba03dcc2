import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../src/index.ts";
import { purgeExpiredTrash } from "../src/db/trash.ts";
import { accountKey } from "../src/domain/search-terms.ts";
import { describeAllTools } from "../src/mcp/registry.ts";
import { activityCount, asServer, connect, ERAS, seedAccount, type SeededAccount, snapshotDb, type TestClient } from "./helpers.ts";

const CONTENT_TABLES = [
  "projects", "tasks", "task_dependencies", "steps", "comments", "labels", "task_labels", "runs", "run_events", "approvals", "calendar_links",
];

/** Every content row of an account (and its search index), to compare before a delete and after a restore. */
async function accountRows(accountId: string): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const t of CONTENT_TABLES) {
    out[t] = (await env.DB.prepare(`SELECT * FROM ${t} WHERE account_id = ? ORDER BY 1, 2, 3`).bind(accountId).all()).results;
  }
  out.task_search = (
    await env.DB.prepare("SELECT t.id, f.title, f.notes FROM task_search f JOIN tasks t ON t.rid = f.rowid WHERE t.account_id = ? ORDER BY t.id").bind(accountId).all()
  ).results;
  out.comment_search = (await env.DB.prepare("SELECT rowid FROM comment_search WHERE comment_search MATCH ? ORDER BY rowid").bind(`"${accountKey(accountId)}_"*`).all()).results;
  return out;
}


async function count(table: string, where: string, ...binds: unknown[]): Promise<number> {
  return (await env.DB.prepare(`SELECT count(*) AS n FROM ${table} WHERE ${where}`).bind(...binds).first<{ n: number }>())!.n;
}

interface Rich {
  project: string;
  root: string;
  sub: string;
  subsub: string;
  other: string;
  steps: string[];
  comments: string[];
  link: string;
  run: string;
  approval: string;
}

/** A project holding a task with two levels of subtasks, steps, comments, labels, dependencies both ways, a calendar link, a run and an approval. */
async function richTask(acc: SeededAccount, c: TestClient, agent: TestClient): Promise<Rich> {
  const project = (await c.ok("create_project", { name: "Launch" })).project.id;
  const root = (await c.ok("create_task", { title: "Root", project_id: project, notes: "findable notes", due_at: "2026-11-02T09:00:00Z", priority: "high" })).task.id;
  const sub = (await c.ok("create_task", { title: "Sub", parent_id: root })).task.id;
  const subsub = (await c.ok("create_task", { title: "Subsub", parent_id: sub })).task.id;
  const other = (await c.ok("create_task", { title: "Other", project_id: project })).task.id;
  const steps = (await c.ok("add_steps", { task_id: root, steps: ["one", "two", "three"] })).steps.map((s: { id: string }) => s.id);
  await c.ok("add_steps", { task_id: sub, steps: ["sub step"] });
  const comments = [
    (await c.ok("comment_on_task", { task_id: root, body: "first comment" })).comment.id,
    (await c.ok("comment_on_task", { task_id: root, body: "second comment" })).comment.id,
  ];
  await c.ok("comment_on_task", { task_id: subsub, body: "deep comment" });
  await c.ok("label_task", { task_id: root, labels: ["urgent", "client"] });
  await c.ok("label_task", { task_id: sub, labels: ["client"] });
  await c.ok("add_dependency", { task_id: other, depends_on_id: root });
  await c.ok("add_dependency", { task_id: sub, depends_on_id: other });
  const link = (await c.ok("link_calendar_event", {
    task_id: root, provider: "google", event_id: "e1", title: "Review", starts_at: "2026-11-01T10:00:00Z", ends_at: "2026-11-01T11:00:00Z", url: "https://cal.example.com/e1",
  })).link.id;
  await c.ok("update_task", { task_id: root, title: "Root task" });
  const run = (await agent.ok("start_run", { task_id: sub })).run.id;
  await agent.ok("log_run_event", { run_id: run, kind: "note", message: "working" });
  // A deleted task's running runs end with it (and stay ended once it is restored): this one has finished first.
  await agent.ok("finish_run", { run_id: run, outcome: "succeeded", summary: "worked" });
  const approval = (await agent.ok("request_approval", { task_id: root, question: "Ship it?" })).approval.id;
  void acc;
  return { project, root, sub, subsub, other, steps, comments, link, run, approval };
}

async function taskViews(c: TestClient, ids: string[]): Promise<unknown[]> {
  return Promise.all(ids.map((id) => c.ok("get_task", { task_id: id })));
}

describe("restore is exact", () => {
  for (const era of ERAS) {
    it(`${era}: a task with subtasks, steps, comments, labels, dependencies, links, runs and approvals`, async () => {
      const acc = await seedAccount();
      const c = await connect(acc.human, era);
      const agent = await connect(acc.agent, era);
      const r = await richTask(acc, c, agent);
      const views = await taskViews(c, [r.root, r.sub, r.subsub, r.other]);
      const links = await c.ok("list_calendar_links", { task_id: r.root });
      const rows = await accountRows(acc.accountId);

      const del = await agent.ok("delete_task", { task_id: r.root });
      expect(del.item_count).toBe(3);
      expect(await c.fails("get_task", { task_id: r.sub })).toMatch(/is in the trash with its task .*restore_from_trash/);
      // What waits on it still waits: a task in the trash is unfinished, shown with its item.
      expect((await c.ok("get_task", { task_id: r.other })).waits_on).toEqual([{ id: r.root, title: "Root task", status: "open", trash_id: del.trash_id }]);

      const trash = await c.ok("list_trash");
      expect(trash.items).toHaveLength(1);
      const item = trash.items[0];
      expect(item).toMatchObject({ id: del.trash_id, kind: "task", target_id: r.root, title: "Root task", item_count: 3, deleted_by: acc.agentName, deleted_by_token_id: acc.tokenIds.agent });
      expect(Date.parse(item.purge_after) - Date.parse(item.deleted_at)).toBe(30 * 86_400_000);

      const restored = await agent.ok("restore_from_trash", { item_id: del.trash_id });
      expect(restored).toEqual({ restored: true, trash_id: del.trash_id, kind: "task", target_id: r.root, item_count: 3, detached: [] });
      expect(await taskViews(c, [r.root, r.sub, r.subsub, r.other])).toEqual(views);
      expect(await c.ok("list_calendar_links", { task_id: r.root })).toEqual(links);
      expect(await accountRows(acc.accountId)).toEqual(rows);
      expect((await c.ok("search_tasks", { query: "findable" })).items.map((i: { task: { id: string } }) => i.task.id)).toContain(r.root);
      expect((await c.ok("list_trash")).items).toEqual([]);

      const n = await activityCount(acc.accountId);
      expect(await c.ok("restore_from_trash", { item_id: del.trash_id })).toMatchObject({ restored: false, trash_id: del.trash_id });
      expect(await c.ok("restore_from_trash", { item_id: r.root })).toMatchObject({ restored: false, target_id: r.root, kind: "task" });
      expect(await activityCount(acc.accountId)).toBe(n);
      expect(await accountRows(acc.accountId)).toEqual(rows);
      const entry = (await c.ok("list_activity", { target_id: del.trash_id })).items;
      expect(entry).toHaveLength(1);
      expect(entry[0]).toMatchObject({ tool: "restore_from_trash", actor: acc.agentName });
      expect(entry[0].summary).toContain(r.root);

      const again = await c.ok("delete_task", { task_id: r.root });
      const byTarget = await c.ok("restore_from_trash", { item_id: r.root });
      expect(byTarget).toMatchObject({ restored: true, trash_id: again.trash_id });
      expect(await accountRows(acc.accountId)).toEqual(rows);
      await c.close();
      await agent.close();
    });
  }

  it("a project with all its tasks, as export_project shows it", async () => {
    const acc = await seedAccount();
    const c = await connect(acc.human);
    const agent = await connect(acc.agent);
    const r = await richTask(acc, c, agent);
    const exported = await c.ok("export_project", { project_id: r.project });
    const project = await c.ok("get_project", { project_id: r.project });
    const rows = await accountRows(acc.accountId);
    const del = await c.ok("delete_project", { project_id: r.project });
    expect(await c.fails("export_project", { project_id: r.project })).toMatch(/Project prj_\w+ is in the trash/);
    expect((await c.ok("list_trash")).items[0]).toMatchObject({ kind: "project", target_id: r.project, item_count: 5, title: "Launch" });
    expect(await c.fails("restore_from_trash", { item_id: r.sub })).toMatch(new RegExp(`part of trash item ${del.trash_id}`));

    expect(await c.ok("restore_from_trash", { item_id: del.trash_id })).toMatchObject({ restored: true, kind: "project", item_count: 5 });
    expect(await c.ok("export_project", { project_id: r.project })).toEqual(exported);
    expect(await c.ok("get_project", { project_id: r.project })).toEqual(project);
    expect(await accountRows(acc.accountId)).toEqual(rows);
    const n = await activityCount(acc.accountId);
    expect((await c.ok("restore_from_trash", { item_id: del.trash_id })).restored).toBe(false);
    expect(await activityCount(acc.accountId)).toBe(n);
  });

  it("a single step and a single comment, back in their place", async () => {
    const acc = await seedAccount();
    const c = await connect(acc.human);
    const agent = await connect(acc.agent);
    const r = await richTask(acc, c, agent);
    const view = await c.ok("get_task", { task_id: r.root });
    const comments = await c.ok("list_comments", { task_id: r.root });
    const rows = await accountRows(acc.accountId);

    const step = await c.ok("delete_step", { step_id: r.steps[1] });
    const comment = await c.ok("delete_comment", { comment_id: r.comments[0] });
    const hidden = await c.ok("get_task", { task_id: r.root });
    expect(hidden.steps.map((s: { id: string }) => s.id)).toEqual([r.steps[0], r.steps[2]]);
    expect(hidden.latest_comments.map((x: { id: string }) => x.id)).toEqual([r.comments[1]]);
    expect((await c.ok("list_trash", { kind: "step" })).items.map((i: { id: string }) => i.id)).toEqual([step.trash_id]);

    expect(await c.ok("restore_from_trash", { item_id: r.steps[1] })).toMatchObject({ restored: true, kind: "step", target_id: r.steps[1] });
    expect(await c.ok("restore_from_trash", { item_id: comment.trash_id })).toMatchObject({ restored: true, kind: "comment", target_id: r.comments[0] });
    expect(await c.ok("get_task", { task_id: r.root })).toEqual(view);
    expect(await c.ok("list_comments", { task_id: r.root })).toEqual(comments);
    expect(await accountRows(acc.accountId)).toEqual(rows);
    expect((await c.ok("restore_from_trash", { item_id: step.trash_id })).restored).toBe(false);
    expect((await c.ok("restore_from_trash", { item_id: r.comments[0] })).restored).toBe(false);
  });
});

describe("restore refusals", () => {
  it("names the trash item of a project, parent task or task that is itself in the trash", async () => {
    const acc = await seedAccount();
    const stranger = await seedAccount("Someone else");
    const c = await connect(acc.human);
    const s = await connect(stranger.human);
    const project = (await c.ok("create_project", { name: "P" })).project.id;
    const task = (await c.ok("create_task", { title: "T", project_id: project })).task.id;
    const parent = (await c.ok("create_task", { title: "Parent" })).task.id;
    const child = (await c.ok("create_task", { title: "Child", parent_id: parent })).task.id;
    const stepId = (await c.ok("add_steps", { task_id: parent, steps: ["s"] })).steps[0].id;
    const commentId = (await c.ok("comment_on_task", { task_id: parent, body: "c" })).comment.id;

    const taskItem = (await c.ok("delete_task", { task_id: task })).trash_id;
    const projectItem = (await c.ok("delete_project", { project_id: project })).trash_id;
    const childItem = (await c.ok("delete_task", { task_id: child })).trash_id;
    const stepItem = (await c.ok("delete_step", { step_id: stepId })).trash_id;
    const commentItem = (await c.ok("delete_comment", { comment_id: commentId })).trash_id;
    const parentItem = (await c.ok("delete_task", { task_id: parent })).trash_id;
    expect((await c.ok("list_trash")).items).toHaveLength(6);

    const before = await snapshotDb();
    expect(await c.fails("restore_from_trash", { item_id: taskItem })).toMatch(new RegExp(`project ${project} is itself in the trash as item ${projectItem}`));
    expect(await c.fails("restore_from_trash", { item_id: childItem })).toMatch(new RegExp(`parent task ${parent} .* ${parentItem}`));
    expect(await c.fails("restore_from_trash", { item_id: stepItem })).toMatch(new RegExp(`task ${parent} .* ${parentItem}`));
    expect(await c.fails("restore_from_trash", { item_id: commentId })).toMatch(new RegExp(`task ${parent} .* ${parentItem}`));
    expect(await s.fails("restore_from_trash", { item_id: parentItem })).toMatch(/No trash item .* list_trash/);
    expect(await s.fails("restore_from_trash", { item_id: parent })).toMatch(/No task/);
    expect(await c.fails("restore_from_trash", { item_id: "trs_0000000000000000" })).toMatch(/No trash item/);
    expect(await c.fails("restore_from_trash", { item_id: "lbl_0000000000000000" })).toMatch(/item_id/);
    expect(await s.ok("empty_trash", { item_ids: [parentItem] })).toEqual({ purged: [], not_in_trash: [parentItem], remaining: 0 });
    expect(await snapshotDb()).toBe(before);

    for (const item of [projectItem, taskItem, parentItem, childItem, stepItem, commentItem]) {
      expect((await c.ok("restore_from_trash", { item_id: item })).restored, item).toBe(true);
    }
    expect((await c.ok("get_task", { task_id: parent })).steps.map((x: { id: string }) => x.id)).toEqual([stepId]);
    expect((await c.ok("list_trash")).items).toEqual([]);
  });
});

describe("list_trash", () => {
  it("pages newest first, filters by kind, shows only this account's items", async () => {
    const acc = await seedAccount();
    const stranger = await seedAccount("Someone else");
    const c = await connect(acc.human);
    const s = await connect(stranger.human);
    await s.ok("delete_task", { task_id: (await s.ok("create_task", { title: "theirs" })).task.id });
    const items: string[] = [];
    for (let i = 0; i < 5; i++) {
      const t = (await c.ok("create_task", { title: `t${i}` })).task.id;
      items.push((await c.ok("delete_task", { task_id: t })).trash_id);
    }
    const p1 = await c.ok("list_trash", { limit: 2 });
    const p2 = await c.ok("list_trash", { limit: 2, cursor: p1.next_cursor });
    const p3 = await c.ok("list_trash", { limit: 2, cursor: p2.next_cursor });
    expect(p3.next_cursor).toBeNull();
    expect([...p1.items, ...p2.items, ...p3.items].map((i: { id: string }) => i.id)).toEqual([...items].reverse());
    expect((await c.ok("list_trash", { kind: "project" })).items).toEqual([]);
    expect(await c.fails("list_trash", { cursor: "garbage" })).toMatch(/cursor/);
    expect(await c.fails("list_trash", { limit: 101 })).toMatch(/limit/);
  });
});

describe("empty_trash", () => {
  it("purges the given items and everything hanging off them, for good; human only; convergent", async () => {
    const acc = await seedAccount();
    const stranger = await seedAccount("Someone else");
    const c = await connect(acc.human);
    const agent = await connect(acc.agent);
    const s = await connect(stranger.human);
    const r = await richTask(acc, c, agent);
    const theirTask = (await s.ok("create_task", { title: "theirs" })).task.id;
    const theirItem = (await s.ok("delete_task", { task_id: theirTask })).trash_id;
    const keep = (await c.ok("create_task", { title: "keep me" })).task.id;
    const keepItem = (await c.ok("delete_task", { task_id: keep })).trash_id;
    const stepItem = (await c.ok("delete_step", { step_id: r.steps[0] })).trash_id;
    const commentItem = (await c.ok("delete_comment", { comment_id: r.comments[0] })).trash_id;
    const item = (await c.ok("delete_task", { task_id: r.root })).trash_id;

    const before = await snapshotDb();
    expect(await agent.fails("empty_trash", { item_ids: [item] })).toMatch(/human/i);
    expect(await (await connect(acc.humanRead)).fails("empty_trash", { all: true })).toMatch(/read/i);
    expect(await c.fails("empty_trash", {})).toMatch(/item_ids .* all: true/);
    expect(await c.fails("empty_trash", { all: true, item_ids: [item] })).toMatch(/not both/);
    expect(await c.fails("empty_trash", { item_ids: ["tsk_0000000000000000"] })).toMatch(/item_ids/);
    expect(await snapshotDb()).toBe(before);

    const indexed = (await env.DB.prepare("SELECT rid FROM tasks WHERE id IN (?, ?, ?)").bind(r.root, r.sub, r.subsub).all<{ rid: number }>()).results.map((x) => x.rid);
    expect(indexed).toHaveLength(3);
    const result = await c.ok("empty_trash", { item_ids: [item, theirItem] });
    expect(result.purged).toEqual([
      { id: item, kind: "task", target_id: r.root, title: "Root task", item_count: 3 },
      { id: stepItem, kind: "step", target_id: r.steps[0], title: "one", item_count: 1 },
      { id: commentItem, kind: "comment", target_id: r.comments[0], title: "first comment", item_count: 1 },
    ]);
    expect(result.not_in_trash).toEqual([theirItem]);
    expect(result.remaining).toBe(1);
    const gone = [r.root, r.sub, r.subsub];
    const inList = `(${gone.map(() => "?").join(", ")})`;
    expect(await count("tasks", `id IN ${inList}`, ...gone)).toBe(0);
    expect(await count("task_search", "rowid IN (?, ?, ?)", ...indexed)).toBe(0);
    for (const t of ["steps", "comments", "task_labels", "calendar_links", "runs", "approvals"]) {
      expect(await count(t, `task_id IN ${inList}`, ...gone), t).toBe(0);
    }
    expect(await count("task_dependencies", `task_id IN ${inList} OR depends_on_id IN ${inList}`, ...gone, ...gone)).toBe(0);
    expect(await count("run_events", "run_id = ?", r.run)).toBe(0);
    expect(await count("trash", "id IN (?, ?, ?)", item, stepItem, commentItem)).toBe(0);
    expect(await count("tasks", "id = ?", r.other)).toBe(1);
    expect((await c.ok("get_task", { task_id: r.other })).waits_on).toEqual([]);
    expect((await c.ok("list_trash")).items.map((i: { id: string }) => i.id)).toEqual([keepItem]);
    expect(await count("trash", "id = ?", theirItem)).toBe(1);
    expect(await c.fails("restore_from_trash", { item_id: item })).toMatch(/No trash item/);
    expect((await c.ok("list_activity", { target_id: item })).items[0]).toMatchObject({ tool: "empty_trash", actor: "human" });

    const n = await activityCount(acc.accountId);
    expect(await c.ok("empty_trash", { item_ids: [item] })).toEqual({ purged: [], not_in_trash: [item], remaining: 1 });
    expect(await activityCount(acc.accountId)).toBe(n);

    const all = await c.ok("empty_trash", { all: true });
    expect(all.purged.map((i: { id: string }) => i.id)).toEqual([keepItem]);
    expect(all.remaining).toBe(0);
    expect(await count("tasks", "id = ?", keep)).toBe(0);
    expect(await c.ok("empty_trash", { all: true })).toEqual({ purged: [], not_in_trash: [], remaining: 0 });
    expect(await activityCount(acc.accountId)).toBe(n + 1);
    expect(await count("trash", "id = ?", theirItem)).toBe(1);
  });

  it("all: true purges in batches of 50, each with its activity entry", async () => {
    const acc = await seedAccount();
    const c = await connect(acc.human);
    const now = Date.now();
    const statements: D1PreparedStatement[] = [];
    const ids: string[] = [];
    for (let i = 0; i < 120; i++) {
      const n = String(i).padStart(3, "0");
      const task = `tsk_bulk${n}${crypto.randomUUID().slice(0, 5)}`;
      const item = `trs_bulk${n}${crypto.randomUUID().slice(0, 5)}`;
      const at = new Date(now - (200 - i) * 1000).toISOString();
      ids.push(item);
      statements.push(
        env.DB.prepare("INSERT INTO tasks (id, account_id, title, created_by, created_at, updated_at, trash_id) VALUES (?, ?, ?, 'human', ?, ?, ?)")
          .bind(task, acc.accountId, `bulk ${n}`, at, at, item),
        env.DB.prepare(`INSERT INTO trash (id, account_id, kind, target_id, title, item_count, deleted_by, deleted_by_token, deleted_at, purge_after)
                        VALUES (?, ?, 'task', ?, ?, 1, 'human', ?, ?, ?)`)
          .bind(item, acc.accountId, task, `bulk ${n}`, acc.tokenIds.human, at, new Date(now + 86_400_000).toISOString()),
      );
    }
    await asServer(env.DB, statements);
    const n = await activityCount(acc.accountId);
    const all = await c.ok("empty_trash", { all: true });
    expect(all.purged.map((i: { id: string }) => i.id)).toEqual(ids);
    expect(all.remaining).toBe(0);
    expect(await count("tasks", "account_id = ?", acc.accountId)).toBe(0);
    expect(await activityCount(acc.accountId)).toBe(n + 3);
  });

  it("a task whose project was purged meanwhile comes back without it", async () => {
    const acc = await seedAccount();
    const c = await connect(acc.human);
    const project = (await c.ok("create_project", { name: "P" })).project.id;
    const task = (await c.ok("create_task", { title: "T", project_id: project })).task;
    const taskItem = (await c.ok("delete_task", { task_id: task.id })).trash_id;
    const projectItem = (await c.ok("delete_project", { project_id: project })).trash_id;
    await c.ok("empty_trash", { item_ids: [projectItem] });
    expect(await c.ok("restore_from_trash", { item_id: taskItem })).toMatchObject({ restored: true, detached: [task.id] });
    const back = (await c.ok("get_task", { task_id: task.id })).task;
    expect(back).toMatchObject({ project_id: null, version: task.version + 1, title: "T" });
  });

  it("a restore that detaches tasks names them in its activity, and a repeat answers with them", async () => {
    const acc = await seedAccount();
    const c = await connect(acc.human);
    const project = (await c.ok("create_project", { name: "P" })).project.id;
    const task = (await c.ok("create_task", { title: "T", project_id: project })).task;
    const taskItem = (await c.ok("delete_task", { task_id: task.id })).trash_id;
    await c.ok("empty_trash", { item_ids: [(await c.ok("delete_project", { project_id: project })).trash_id] });
    const first = await c.ok("restore_from_trash", { item_id: task.id });
    expect(first).toEqual({ restored: true, trash_id: taskItem, kind: "task", target_id: task.id, item_count: 1, detached: [task.id] });
    const entry = await env.DB.prepare("SELECT summary FROM activity WHERE account_id = ? AND tool = 'restore_from_trash' AND target_id = ?")
      .bind(acc.accountId, taskItem)
      .first<{ summary: string }>();
    expect(entry?.summary).toBe(`restored task ${task.id} "T" (1 row(s)); detached from purged project/parent: ${task.id}`);
    expect(await c.ok("restore_from_trash", { item_id: taskItem })).toEqual({ ...first, restored: false });
  });
});

describe("scheduled purge", () => {
  it("the cron handler purges items past the account's retention, in every account, and keeps the rest", async () => {
    const acc = await seedAccount();
    const other = await seedAccount("Other");
    const c = await connect(acc.human);
    const o = await connect(other.human);
    await c.ok("update_account_settings", { trash_retention_days: 7 });
    const oldTask = (await c.ok("create_task", { title: "old" })).task.id;
    await c.ok("comment_on_task", { task_id: oldTask, body: "bye" });
    const oldItem = (await c.ok("delete_task", { task_id: oldTask })).trash_id;
    const fresh = await c.ok("delete_task", { task_id: (await c.ok("create_task", { title: "fresh" })).task.id });
    expect(Date.parse(fresh.purge_after) - Date.now()).toBeGreaterThan(6.9 * 86_400_000);
    expect(Date.parse(fresh.purge_after) - Date.now()).toBeLessThan(7.1 * 86_400_000);
    const theirOld = (await o.ok("delete_task", { task_id: (await o.ok("create_task", { title: "their old" })).task.id })).trash_id;
    const past = new Date(Date.now() - 60_000).toISOString();
    await asServer(env.DB, env.DB.prepare("UPDATE trash SET purge_after = ? WHERE id IN (?, ?)").bind(past, oldItem, theirOld));

    const pending: Promise<unknown>[] = [];
    const ctx = { waitUntil: (p: Promise<unknown>) => pending.push(p), passThroughOnException() {}, props: {} } as unknown as ExecutionContext;
    await worker.scheduled({ cron: "17 3 * * *", scheduledTime: Date.now(), noRetry() {} } as ScheduledController, env, ctx);
    await Promise.all(pending);

    expect(await count("trash", "id IN (?, ?)", oldItem, theirOld)).toBe(0);
    expect(await count("tasks", "id = ?", oldTask)).toBe(0);
    expect(await count("comments", "task_id = ?", oldTask)).toBe(0);
    expect((await c.ok("list_trash")).items.map((i: { id: string }) => i.id)).toEqual([fresh.trash_id]);
    const feed = (await c.ok("list_activity", { target_id: oldItem })).items;
    expect(feed[0]).toMatchObject({ tool: "scheduled_purge", actor: "server:purge" });

    expect(await purgeExpiredTrash(env.DB, new Date().toISOString())).toBe(0);
    expect(await purgeExpiredTrash(env.DB, new Date(Date.now() + 8 * 86_400_000).toISOString())).toBeGreaterThanOrEqual(1);
    expect(await count("trash", "id = ?", fresh.trash_id)).toBe(0);
  });
});

describe("every delete that moves a record to the trash answers in one shape", () => {
  const TRASHED_KEYS = ["already_in_trash", "item_count", "purge_after", "trash_id"];
  /** The trashing deletes, from the registry: the tools whose output names a trash item they made. */
  const trashingDeletes = () => describeAllTools().filter((t) => t.name.startsWith("delete_") && "trash_id" in ((t.outputSchema?.properties ?? {}) as object));

  it("the same four fields, the same schema for each, in every trashing delete's output schema", () => {
    const tools = trashingDeletes();
    expect(tools.map((t) => t.name).sort()).toEqual(["delete_comment", "delete_project", "delete_step", "delete_task"]);
    const shapes = tools.map((t) => {
      const props = t.outputSchema!.properties as Record<string, unknown>;
      return Object.fromEntries(TRASHED_KEYS.map((k) => [k, props[k]]));
    });
    for (const s of shapes) expect(s).toEqual(shapes[0]);
    expect(Object.values(shapes[0]).every(Boolean)).toBe(true);
  });

  for (const era of ERAS) {
    it(`${era}: a first delete and its repeat answer the same fields, already_in_trash telling them apart`, async () => {
      const acc = await seedAccount(`Delete shapes ${era}`);
      const c = await connect(acc.human, era);
      const project = (await c.ok("create_project", { name: "Shapes" })).project.id;
      const task = (await c.ok("create_task", { title: "Holder" })).task.id;
      const doomed = (await c.ok("create_task", { title: "Doomed", parent_id: (await c.ok("create_task", { title: "Top" })).task.id })).task.id;
      await c.ok("create_task", { title: "in project", project_id: project });
      const step = (await c.ok("add_steps", { task_id: task, steps: ["one"] })).steps[0].id;
      const comment = (await c.ok("comment_on_task", { task_id: task, body: "note" })).comment.id;
      const calls: [string, Record<string, string>, number][] = [
        ["delete_task", { task_id: doomed }, 1],
        ["delete_project", { project_id: project }, 2],
        ["delete_step", { step_id: step }, 1],
        ["delete_comment", { comment_id: comment }, 1],
      ];
      expect(calls.map(([n]) => n).sort()).toEqual(trashingDeletes().map((t) => t.name).sort());
      for (const [name, args, count] of calls) {
        const first = await c.ok(name, args);
        expect(first, name).toMatchObject({ trash_id: expect.stringMatching(/^trs_/), purge_after: expect.any(String), item_count: count, already_in_trash: false });
        expect(Object.keys(first).filter((k) => !TRASHED_KEYS.includes(k) && !(k in args) && k !== "task_id"), name).toEqual([]);
        expect(await c.ok(name, args), name).toEqual({ ...first, already_in_trash: true });
        expect((await c.ok("list_trash")).items.map((i: { id: string }) => i.id), name).toContain(first.trash_id);
      }
      await c.close();
    });
  }
});
