import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { activityCount, asServer, connect, ERAS, seedAccount, snapshotDb, type TestClient } from "./helpers.ts";

const MISSING_PROJECT = "prj_0000000000000000";


async function setup() {
  const acc = await seedAccount();
  const client = await connect(acc.human);
  return { acc, client };
}

async function newProject(client: TestClient, name = "Launch", extra: Record<string, unknown> = {}) {
  return (await client.ok("create_project", { name, ...extra })).project;
}

const MINE = ["list_projects", "get_project", "export_project", "create_project", "update_project", "archive_project", "unarchive_project", "delete_project"];

describe("create, list and get in both eras", () => {
  for (const era of ERAS) {
    it(`${era}: creates a project and reads it back with counts`, async () => {
      const acc = await seedAccount();
      const client = await connect(acc.human, era);
      const listed = (await client.listTools()).filter((t) => MINE.includes(t.name));
      expect(listed.map((t) => t.name).sort()).toEqual([...MINE].sort());
      for (const t of listed) expect([t.inputSchema.type, t.outputSchema?.type], t.name).toEqual(["object", "object"]);
      const { project } = await client.ok("create_project", { name: "  Website  ", description: "the relaunch" });
      expect(project).toMatchObject({
        name: "Website",
        description: "the relaunch",
        default_auto_ok: null,
        archived_at: null,
        version: 1,
        task_counts: { total: 0, open: 0, in_progress: 0, blocked: 0, awaiting_approval: 0, done: 0, cancelled: 0 },
      });
      expect(project.id).toMatch(/^prj_[0-9a-z]{16}$/);
      await client.ok("create_task", { title: "Copy", project_id: project.id });
      const got = await client.ok("get_project", { project_id: project.id });
      expect(got.project).toEqual({ ...project, task_counts: { ...project.task_counts, total: 1, open: 1 } });
      expect(got.new_tasks_auto_ok).toBe(false);
      const list = await client.ok("list_projects", {});
      expect(list.items).toEqual([got.project]);
      expect(list.next_cursor).toBeNull();
      expect(await activityCount(acc.accountId, project.id)).toBe(1);
      await client.close();
    });
  }
});

describe("create_project", () => {
  it("refuses bad input naming the field, and writes nothing", async () => {
    const { client } = await setup();
    const before = await snapshotDb();
    expect(await client.fails("create_project", { name: "   " })).toMatch(/name: must not be empty/);
    expect(await client.fails("create_project", { name: "x".repeat(201) })).toMatch(/name:/);
    expect(await client.fails("create_project", { name: "ok", description: "x".repeat(20_001) })).toMatch(/description:/);
    expect(await client.fails("create_project", { name: "ok", color: "red" })).toMatch(/color/);
    expect(await snapshotDb()).toBe(before);
    await client.close();
  });

  it("accepts the limits exactly", async () => {
    const { client } = await setup();
    const p = await newProject(client, "n".repeat(200), { description: "d".repeat(20_000), default_auto_ok: true });
    expect(p.name).toHaveLength(200);
    expect(p.default_auto_ok).toBe(true);
    await client.close();
  });

  it("replays an idempotency_key without a second project", async () => {
    const { acc, client } = await setup();
    const first = await client.ok("create_project", { name: "Once", idempotency_key: "k1" });
    const second = await client.ok("create_project", { name: "Once", idempotency_key: "k1" });
    expect(second).toEqual(first);
    const { n } = (await env.DB.prepare("SELECT count(*) AS n FROM projects WHERE account_id = ?").bind(acc.accountId).first<{ n: number }>())!;
    expect(n).toBe(1);
    await client.close();
  });

  it("is refused to a read token", async () => {
    const acc = await seedAccount();
    const reader = await connect(acc.humanRead);
    expect(await reader.fails("create_project", { name: "No" })).toMatch(/scope write/);
    await reader.close();
  });

  it("project default_auto_ok decides new tasks' auto-OK", async () => {
    const { client } = await setup();
    const p = await newProject(client, "Auto", { default_auto_ok: true });
    expect((await client.ok("get_project", { project_id: p.id })).new_tasks_auto_ok).toBe(true);
    const { task } = await client.ok("create_task", { title: "t", project_id: p.id });
    expect(task.auto_ok).toBe(true);
    await client.close();
  });
});

describe("list_projects", () => {
  it("counts live tasks by status, hides archived unless asked, and pages", async () => {
    const { acc, client } = await setup();
    const a = await newProject(client, "A");
    const b = await newProject(client, "B");
    const c = await newProject(client, "C");
    const ids: string[] = [];
    for (const title of ["1", "2", "3", "4"]) ids.push((await client.ok("create_task", { title, project_id: a.id })).task.id);
    await asServer(env.DB, [
      env.DB.prepare("UPDATE tasks SET status = 'done' WHERE id = ?").bind(ids[0]),
      env.DB.prepare("UPDATE tasks SET status = 'blocked' WHERE id = ?").bind(ids[1]),
      env.DB.prepare("UPDATE tasks SET trash_id = 'trs_elsewhere00000' WHERE id = ?").bind(ids[2]),
    ]);
    await client.ok("archive_project", { project_id: b.id });

    const all = await client.ok("list_projects", {});
    expect(all.items.map((p: { id: string }) => p.id)).toEqual([a.id, c.id]);
    expect(all.items[0].task_counts).toEqual({ total: 3, open: 1, in_progress: 0, blocked: 1, awaiting_approval: 0, done: 1, cancelled: 0 });

    const first = await client.ok("list_projects", { include_archived: true, limit: 2 });
    expect(first.items.map((p: { id: string }) => p.id)).toEqual([a.id, b.id]);
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = await client.ok("list_projects", { include_archived: true, limit: 2, cursor: first.next_cursor });
    expect(second.items.map((p: { id: string }) => p.id)).toEqual([c.id]);
    expect(second.next_cursor).toBeNull();

    expect(await client.fails("list_projects", { cursor: "garbage!" })).toMatch(/cursor/);
    expect(await client.fails("list_projects", { limit: 101 })).toMatch(/limit/);

    const other = await seedAccount();
    const otherClient = await connect(other.humanRead);
    expect((await otherClient.ok("list_projects", { include_archived: true })).items).toEqual([]);
    await otherClient.close();
    expect(acc.accountId).not.toBe(other.accountId);
    await client.close();
  });
});

describe("get_project", () => {
  it("refuses bad ids and other accounts' projects", async () => {
    const { client } = await setup();
    const other = await seedAccount();
    const otherClient = await connect(other.human);
    const foreign = await newProject(otherClient, "Theirs");
    expect(await client.fails("get_project", { project_id: foreign.id })).toMatch(/No project prj_\w+ in this account; list_projects/);
    expect(await client.fails("get_project", { project_id: MISSING_PROJECT })).toMatch(/No project/);
    expect(await client.fails("get_project", { project_id: "tsk_0000000000000000" })).toMatch(/project_id: expected a project id/);
    await otherClient.close();
    await client.close();
  });
});

describe("update_project", () => {
  it("overwrites fields, bumps the version, and writes nothing when nothing changes", async () => {
    const { acc, client } = await setup();
    const p = await newProject(client, "Old", { default_auto_ok: true });
    const up = await client.ok("update_project", { project_id: p.id, name: "New", description: "why", default_auto_ok: null });
    expect(up.changed).toBe(true);
    expect(up.project).toMatchObject({ name: "New", description: "why", default_auto_ok: null, version: 2 });
    expect(up.project.updated_at >= p.updated_at).toBe(true);
    expect(await activityCount(acc.accountId, p.id)).toBe(2);

    const before = await snapshotDb();
    const same = await client.ok("update_project", { project_id: p.id, name: "New", description: "why", default_auto_ok: null });
    expect(same).toEqual({ project: up.project, changed: false });
    expect(await client.ok("update_project", { project_id: p.id })).toEqual({ project: up.project, changed: false });
    expect(await snapshotDb()).toBe(before);
    await client.close();
  });

  it("sets every field given when one differs, and its activity names only the fields that changed", async () => {
    const { acc, client } = await setup();
    const p = await newProject(client, "Launch", { description: "old" });
    const up = await client.ok("update_project", { project_id: p.id, name: "Launch", description: "new", expected_version: 1 });
    expect(up).toMatchObject({ changed: true, project: { name: "Launch", description: "new", version: 2 } });
    const renamed = await client.ok("update_project", { project_id: p.id, name: "Relaunch", description: "new", default_auto_ok: null });
    expect(renamed).toMatchObject({ changed: true, project: { name: "Relaunch", description: "new", version: 3 } });
    const { results } = await env.DB.prepare("SELECT summary FROM activity WHERE account_id = ? AND target_id = ? AND tool = 'update_project' ORDER BY created_at")
      .bind(acc.accountId, p.id)
      .all();
    expect(results).toEqual([{ summary: 'updated description of project "Launch"' }, { summary: 'updated name of project "Relaunch"' }]);
    await client.close();
  });

  it("honours expected_version", async () => {
    const { client } = await setup();
    const p = await newProject(client);
    await client.ok("update_project", { project_id: p.id, name: "v2", expected_version: 1 });
    const before = await snapshotDb();
    expect(await client.fails("update_project", { project_id: p.id, name: "v3", expected_version: 1 })).toMatch(
      /has changed since version 1: get_project/,
    );
    expect(await snapshotDb()).toBe(before);
    const ok = await client.ok("update_project", { project_id: p.id, name: "v3", expected_version: 2 });
    expect(ok.project.version).toBe(3);
    await client.close();
  });

  it("refuses other accounts' projects and bad values without writing", async () => {
    const { client } = await setup();
    const other = await seedAccount();
    const otherClient = await connect(other.human);
    const foreign = await newProject(otherClient, "Theirs");
    const before = await snapshotDb();
    expect(await client.fails("update_project", { project_id: foreign.id, name: "Mine" })).toMatch(/No project/);
    expect(await client.fails("update_project", { project_id: foreign.id, name: "" })).toMatch(/name/);
    expect(await client.fails("update_project", { project_id: foreign.id, archived: true })).toMatch(/archived/);
    expect(await snapshotDb()).toBe(before);
    await otherClient.close();
    await client.close();
  });
});

describe("archive_project and unarchive_project", () => {
  it("move the project along its lifecycle, convergently", async () => {
    const { acc, client } = await setup();
    const p = await newProject(client);
    const archived = await client.ok("archive_project", { project_id: p.id });
    expect(archived.changed).toBe(true);
    expect(archived.project.archived_at).toEqual(expect.any(String));
    expect(archived.project.version).toBe(2);
    const again = await client.ok("archive_project", { project_id: p.id });
    expect(again).toEqual({ project: archived.project, changed: false });
    expect(await activityCount(acc.accountId, p.id)).toBe(2);
    expect((await client.ok("list_projects", {})).items).toEqual([]);
    expect((await client.ok("get_project", { project_id: p.id })).project.archived_at).toBe(archived.project.archived_at);

    const back = await client.ok("unarchive_project", { project_id: p.id });
    expect(back.changed).toBe(true);
    expect(back.project.archived_at).toBeNull();
    expect((await client.ok("unarchive_project", { project_id: p.id })).changed).toBe(false);
    expect(await activityCount(acc.accountId, p.id)).toBe(3);
    expect((await client.ok("list_projects", {})).items.map((x: { id: string }) => x.id)).toEqual([p.id]);

    const before = await snapshotDb();
    expect(await client.fails("archive_project", { project_id: MISSING_PROJECT })).toMatch(/No project/);
    expect(await snapshotDb()).toBe(before);
    await client.close();
  });
});

describe("delete_project", () => {
  it("moves the project and its tasks to the trash as one item, hidden from every read", async () => {
    const { acc, client } = await setup();
    const p = await newProject(client, "Doomed");
    const keep = await newProject(client, "Kept");
    const t1 = (await client.ok("create_task", { title: "one", project_id: p.id })).task;
    const t2 = (await client.ok("create_task", { title: "two", parent_id: t1.id })).task;
    const other = (await client.ok("create_task", { title: "elsewhere", project_id: keep.id })).task;

    const del = await client.ok("delete_project", { project_id: p.id });
    expect(del).toMatchObject({ trash_id: expect.stringMatching(/^trs_/), item_count: 3, already_in_trash: false });
    const trash = await env.DB.prepare("SELECT * FROM trash WHERE id = ?").bind(del.trash_id).first<Record<string, unknown>>();
    expect(trash).toMatchObject({ account_id: acc.accountId, kind: "project", target_id: p.id, title: "Doomed", item_count: 3, deleted_by: "human" });
    expect(trash!.purge_after).toBe(del.purge_after);
    expect(Date.parse(del.purge_after) - Date.parse(trash!.deleted_at as string)).toBe(30 * 86_400_000);

    expect((await client.ok("list_projects", { include_archived: true })).items.map((x: { id: string }) => x.id)).toEqual([keep.id]);
    expect(await client.fails("get_project", { project_id: p.id })).toMatch(new RegExp(`Project ${p.id} is in the trash \\("Doomed"\\) \\(item ${del.trash_id}`));
    for (const t of [t1, t2]) {
      expect(await client.fails("get_task", { task_id: t.id })).toContain(`is in the trash with its project ${p.id} (item ${del.trash_id}`);
    }
    expect((await client.ok("list_tasks", {})).items.map((x: { id: string }) => x.id)).toEqual([other.id]);
    expect(await client.fails("list_tasks", { project_id: p.id })).toMatch(/No project .* in this account/);
    expect(await client.fails("create_task", { title: "late", project_id: p.id })).toMatch(/No project|is in the trash/);

    const before = await snapshotDb();
    const again = await client.ok("delete_project", { project_id: p.id });
    expect(again).toEqual({ ...del, already_in_trash: true });
    expect(await snapshotDb()).toBe(before);
    expect(await activityCount(acc.accountId, p.id)).toBe(2);
    await client.close();
  });

  it("purges after the account's retention", async () => {
    const { acc, client } = await setup();
    await env.DB.prepare("UPDATE accounts SET trash_retention_days = 7 WHERE id = ?").bind(acc.accountId).run();
    const p = await newProject(client);
    const del = await client.ok("delete_project", { project_id: p.id });
    const trash = await env.DB.prepare("SELECT deleted_at, purge_after FROM trash WHERE id = ?").bind(del.trash_id).first<{ deleted_at: string; purge_after: string }>();
    expect(del.purge_after).toBe(trash!.purge_after);
    expect(Date.parse(trash!.purge_after) - Date.parse(trash!.deleted_at)).toBe(7 * 86_400_000);
    await client.close();
  });

  it("leaves tasks already in the trash in their own item", async () => {
    const { client } = await setup();
    const p = await newProject(client);
    const t = (await client.ok("create_task", { title: "gone before", project_id: p.id })).task;
    await asServer(env.DB, env.DB.prepare("UPDATE tasks SET trash_id = 'trs_earlier000000000' WHERE id = ?").bind(t.id));
    const del = await client.ok("delete_project", { project_id: p.id });
    expect(del.item_count).toBe(1);
    const row = await env.DB.prepare("SELECT trash_id FROM tasks WHERE id = ?").bind(t.id).first<{ trash_id: string }>();
    expect(row!.trash_id).toBe("trs_earlier000000000");
    await client.close();
  });

  it("refuses other accounts' projects, unknown ids and agents' read tokens without writing", async () => {
    const { acc, client } = await setup();
    const other = await seedAccount();
    const otherClient = await connect(other.human);
    const foreign = await newProject(otherClient, "Theirs");
    const mine = await newProject(client, "Mine");
    const reader = await connect(acc.agentRead, "legacy");
    const before = await snapshotDb();
    expect(await client.fails("delete_project", { project_id: foreign.id })).toMatch(/No project/);
    expect(await client.fails("delete_project", { project_id: MISSING_PROJECT })).toMatch(/No project/);
    expect(await reader.fails("delete_project", { project_id: mine.id })).toMatch(/scope write/);
    expect(await snapshotDb()).toBe(before);
    await Promise.all([reader.close(), otherClient.close(), client.close()]);
  });

  it("lets an agent with a write token delete, recorded under its name", async () => {
    const acc = await seedAccount("Agents", "builder");
    const agent = await connect(acc.agent, "legacy");
    const p = (await agent.ok("create_project", { name: "Agent's" })).project;
    const del = await agent.ok("delete_project", { project_id: p.id });
    const trash = await env.DB.prepare("SELECT deleted_by FROM trash WHERE id = ?").bind(del.trash_id).first<{ deleted_by: string }>();
    expect(trash!.deleted_by).toBe("builder");
    await agent.close();
  });
});

describe("export_project", () => {
  async function richProject(client: TestClient, accountId: string) {
    const p = await newProject(client, "Export me", { description: "all of it", default_auto_ok: false });
    const a = (await client.ok("create_task", { title: "first", project_id: p.id, notes: "n", priority: "high" })).task;
    const b = (await client.ok("create_task", { title: "second", project_id: p.id, due_at: "2026-12-24T18:00:00+01:00" })).task;
    const sub = (await client.ok("create_task", { title: "child", parent_id: a.id })).task;
    const outside = (await client.ok("create_task", { title: "outside" })).task;
    const gone = (await client.ok("create_task", { title: "trashed", project_id: p.id })).task;
    const id = (prefix: string) => prefix + crypto.randomUUID().replace(/-/g, "").slice(0, 15);
    const lblA = id("lbl_a");
    const lblZ = id("lbl_z");
    const t0 = "2026-01-01T00:00:00.000Z";
    const t1 = "2026-01-01T00:00:01.000Z";
    const s = (sql: string, ...binds: unknown[]) => env.DB.prepare(sql).bind(...binds);
    await asServer(env.DB, [
      s("INSERT INTO steps (id, account_id, task_id, position, text, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        id("stp_b"), accountId, a.id, 2, "second step", "pending", t0, t0),
      s("INSERT INTO steps (id, account_id, task_id, position, text, status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        id("stp_a"), accountId, a.id, 1, "first step", "done", t1, t1),
      s("INSERT INTO steps (id, account_id, task_id, position, text, status, created_at, updated_at, trash_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        id("stp_c"), accountId, a.id, 3, "deleted step", "pending", t1, t1, "trs_x000000000000000"),
      s("INSERT INTO comments (id, account_id, task_id, author_token_id, author, body, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        id("cmt_z"), accountId, a.id, "tok_x", "human", "older", t0, t0),
      s("INSERT INTO comments (id, account_id, task_id, author_token_id, author, body, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        id("cmt_a"), accountId, a.id, "tok_x", "bot", "newer", t1, t1),
      s("INSERT INTO labels (id, account_id, name, color, created_at) VALUES (?, ?, ?, NULL, ?)", lblZ, accountId, "alpha", t0),
      s("INSERT INTO labels (id, account_id, name, color, created_at) VALUES (?, ?, ?, NULL, ?)", lblA, accountId, "Zulu", t0),
      s("INSERT INTO task_labels (account_id, task_id, label_id, created_at) VALUES (?, ?, ?, ?)", accountId, a.id, lblA, t0),
      s("INSERT INTO task_labels (account_id, task_id, label_id, created_at) VALUES (?, ?, ?, ?)", accountId, a.id, lblZ, t1),
      s("INSERT INTO task_dependencies (account_id, task_id, depends_on_id, created_at) VALUES (?, ?, ?, ?)", accountId, a.id, outside.id, t0),
      s("INSERT INTO task_dependencies (account_id, task_id, depends_on_id, created_at) VALUES (?, ?, ?, ?)", accountId, a.id, b.id, t1),
      s("INSERT INTO task_dependencies (account_id, task_id, depends_on_id, created_at) VALUES (?, ?, ?, ?)", accountId, a.id, gone.id, t1),
      s("INSERT INTO calendar_links (id, account_id, task_id, provider, event_id, title, starts_at, ends_at, url, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        id("cal_a"), accountId, b.id, "google", "ev1", "Review", "2026-02-01T10:00:00.000Z", "2026-02-01T11:00:00.000Z", null, t0),
      s("UPDATE tasks SET trash_id = 'trs_y000000000000000' WHERE id = ?", gone.id),
    ]);
    return { p, a, b, sub, outside, gone };
  }

  it("returns the whole project in a stable order, without trashed rows", async () => {
    const { acc, client } = await setup();
    const { p, a, b, sub, outside } = await richProject(client, acc.accountId);
    const doc = await client.ok("export_project", { project_id: p.id });
    expect(doc.format).toBe("taskgate.project.v1");
    expect(doc.project).toMatchObject({ id: p.id, name: "Export me", description: "all of it", default_auto_ok: false });
    expect(doc.project.task_counts.total).toBe(3);
    expect(doc.tasks.map((t: { id: string }) => t.id)).toEqual([a, b, sub].sort((x, y) => (x.created_at + x.id < y.created_at + y.id ? -1 : 1)).map((t) => t.id));

    const first = doc.tasks.find((t: { id: string }) => t.id === a.id);
    const got = await client.ok("get_task", { task_id: a.id });
    const { steps: _s, comments: _c, labels: _l, waits_on: _w, calendar_links: _k, ...shape } = first;
    expect(shape).toEqual(got.task);
    expect(first.steps).toEqual([
      { id: expect.stringMatching(/^stp_a/), position: 1, text: "first step", status: "done", created_at: "2026-01-01T00:00:01.000Z", updated_at: "2026-01-01T00:00:01.000Z" },
      { id: expect.stringMatching(/^stp_b/), position: 2, text: "second step", status: "pending", created_at: "2026-01-01T00:00:00.000Z", updated_at: "2026-01-01T00:00:00.000Z" },
    ]);
    expect(first.comments.map((c: { body: string }) => c.body)).toEqual(["older", "newer"]);
    expect(first.labels).toEqual(["alpha", "Zulu"]);
    const expectedWaits = [outside, b].sort((x, y) => (x.created_at + x.id < y.created_at + y.id ? -1 : 1)).map((t) => t.id);
    expect(first.waits_on).toEqual(expectedWaits);
    expect(first.calendar_links).toEqual([]);
    const second = doc.tasks.find((t: { id: string }) => t.id === b.id);
    expect(second.due_at).toBe("2026-12-24T17:00:00.000Z");
    expect(second.calendar_links).toEqual([
      { provider: "google", event_id: "ev1", title: "Review", starts_at: "2026-02-01T10:00:00.000Z", ends_at: "2026-02-01T11:00:00.000Z", url: null },
    ]);
    expect(doc.tasks.find((t: { id: string }) => t.id === sub.id)).toMatchObject({ parent_id: a.id, steps: [], comments: [], labels: [], waits_on: [] });
    await client.close();
  });

  it("is deterministic, and identical after a delete and a restore", async () => {
    const { acc, client } = await setup();
    const { p } = await richProject(client, acc.accountId);
    const legacy = await connect(acc.humanRead, "legacy");
    const one = await client.ok("export_project", { project_id: p.id });
    const two = await legacy.ok("export_project", { project_id: p.id });
    expect(JSON.stringify(two)).toBe(JSON.stringify(one));

    const del = await client.ok("delete_project", { project_id: p.id });
    expect(await client.fails("export_project", { project_id: p.id })).toMatch(/Project prj_\w+ is in the trash/);
    await asServer(env.DB, [
      env.DB.prepare("UPDATE projects SET trash_id = NULL WHERE trash_id = ?").bind(del.trash_id),
      env.DB.prepare("UPDATE tasks SET trash_id = NULL WHERE trash_id = ?").bind(del.trash_id),
      env.DB.prepare("DELETE FROM trash WHERE id = ?").bind(del.trash_id),
    ]);
    const three = await client.ok("export_project", { project_id: p.id });
    expect(JSON.stringify(three)).toBe(JSON.stringify(one));
    await Promise.all([legacy.close(), client.close()]);
  });

  it("refuses other accounts' projects and projects over 5,000 tasks", async () => {
    const { acc, client } = await setup();
    const other = await seedAccount();
    const otherClient = await connect(other.human);
    const foreign = await newProject(otherClient, "Theirs");
    expect(await client.fails("export_project", { project_id: foreign.id })).toMatch(/No project/);

    const big = await newProject(client, "Big");
    const now = new Date().toISOString();
    await asServer(env.DB, env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5001)
       INSERT INTO tasks (id, account_id, project_id, title, created_by, created_at, updated_at)
       SELECT printf('tsk_big%09d', i), ?, ?, 'task ' || i, 'human', ?, ? FROM n`,
    ).bind(acc.accountId, big.id, now, now));
    expect(await client.fails("export_project", { project_id: big.id })).toMatch(/has 5,001 tasks; export_project exports at most 5,000/);
    await asServer(env.DB, env.DB.prepare("UPDATE tasks SET trash_id = 'trs_z000000000000000' WHERE id = 'tsk_big000000001'"));
    const doc = await client.ok("export_project", { project_id: big.id });
    expect(doc.tasks).toHaveLength(5000);
    await Promise.all([otherClient.close(), client.close()]);
  });
});
