import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { activityCount, asServer, connect, ERAS, seedAccount, snapshotDb, type TestClient } from "./helpers.ts";


async function setup() {
  const acc = await seedAccount();
  const client = await connect(acc.human);
  return { acc, client };
}

const newTask = async (client: TestClient, title = "Task") => (await client.ok("create_task", { title })).task;
const names = (labels: { name: string }[]) => labels.map((l) => l.name);

const MINE = ["list_labels", "create_label", "rename_label", "delete_label", "label_task", "unlabel_task"];

describe("labels in both eras", () => {
  for (const era of ERAS) {
    it(`${era}: label a task, then list labels with usage counts`, async () => {
      const acc = await seedAccount();
      const client = await connect(acc.agent, era);
      const listed = (await client.listTools()).filter((t) => MINE.includes(t.name));
      expect(listed.map((t) => t.name).sort()).toEqual([...MINE].sort());
      for (const t of listed) expect([t.inputSchema.type, t.outputSchema?.type], t.name).toEqual(["object", "object"]);
      const task = await newTask(client);
      const res = await client.ok("label_task", { task_id: task.id, labels: ["urgent", "backend"] });
      expect(res.added).toEqual(["urgent", "backend"]);
      expect(names(res.labels)).toEqual(["backend", "urgent"]);
      const list = await client.ok("list_labels", {});
      expect(list.items.map((l: { name: string; task_count: number }) => [l.name, l.task_count])).toEqual([["backend", 1], ["urgent", 1]]);
      expect(list.next_cursor).toBeNull();
      expect(names((await client.ok("get_task", { task_id: task.id })).labels)).toEqual(["backend", "urgent"]);
      await client.close();
    });
  }
});

describe("create_label", () => {
  it("creates once, then returns the existing label of that name in any case, and refuses another color", async () => {
    const { acc, client } = await setup();
    const made = await client.ok("create_label", { name: " Bug ", color: "#FF0000" });
    expect(made.created).toBe(true);
    expect(made.label).toMatchObject({ name: "Bug", color: "#ff0000", task_count: 0 });
    expect(made.label.id).toMatch(/^lbl_[0-9a-z]{16}$/);
    const before = await snapshotDb();
    expect(await client.ok("create_label", { name: "bug", color: "#FF0000" })).toEqual({ label: made.label, created: false });
    expect(await client.ok("create_label", { name: "BUG" })).toEqual({ label: made.label, created: false });
    // A color is never overwritten: another one is refused, saying what the label has.
    expect(await client.fails("create_label", { name: "bug", color: "#00ff00" })).toBe(
      'a label named "Bug" already exists with color #ff0000, not #00ff00; call create_label without color (or with #ff0000) to use it, or choose another name.',
    );
    expect(await snapshotDb()).toBe(before);
    await client.ok("create_label", { name: "plain" });
    expect(await client.fails("create_label", { name: "plain", color: "#00ff00" })).toMatch(/"plain" already exists without a color, not #00ff00; call create_label without color to use it/);
    expect(await activityCount(acc.accountId, made.label.id)).toBe(1);
    await client.close();
  });

  it("refuses bad names and colors, writing nothing", async () => {
    const { client } = await setup();
    const before = await snapshotDb();
    expect(await client.fails("create_label", { name: "" })).toMatch(/name: must not be empty/);
    expect(await client.fails("create_label", { name: "x".repeat(101) })).toMatch(/name:/);
    expect(await client.fails("create_label", { name: "ok", color: "red" })).toMatch(/color: expected a color like #1f6feb/);
    expect(await snapshotDb()).toBe(before);
    expect((await client.ok("create_label", { name: "x".repeat(100) })).created).toBe(true);
    await client.close();
  });

  it("is refused to read tokens", async () => {
    const acc = await seedAccount();
    const reader = await connect(acc.agentRead);
    expect(await reader.fails("create_label", { name: "no" })).toMatch(/scope write/);
    await reader.close();
  });
});

describe("list_labels", () => {
  it("orders by name ignoring case, counts only live tasks, pages, and stays in its account", async () => {
    const { client } = await setup();
    const t1 = await newTask(client, "one");
    const t2 = await newTask(client, "two");
    await client.ok("label_task", { task_id: t1.id, labels: ["beta", "Alpha"] });
    await client.ok("label_task", { task_id: t2.id, labels: ["beta", "gamma"] });
    await asServer(env.DB, env.DB.prepare("UPDATE tasks SET trash_id = 'trs_gone000000000000' WHERE id = ?").bind(t2.id));
    const first = await client.ok("list_labels", { limit: 2 });
    expect(first.items.map((l: { name: string; task_count: number }) => [l.name, l.task_count])).toEqual([["Alpha", 1], ["beta", 1]]);
    const second = await client.ok("list_labels", { limit: 2, cursor: first.next_cursor });
    expect(second.items.map((l: { name: string; task_count: number }) => [l.name, l.task_count])).toEqual([["gamma", 0]]);
    expect(second.next_cursor).toBeNull();

    const other = await seedAccount();
    const otherClient = await connect(other.humanRead, "legacy");
    expect((await otherClient.ok("list_labels", {})).items).toEqual([]);
    await Promise.all([otherClient.close(), client.close()]);
  });
});

describe("rename_label", () => {
  it("renames, is a no-op for the same name, and refuses a name another label has", async () => {
    const { acc, client } = await setup();
    const task = await newTask(client);
    const { label } = await client.ok("create_label", { name: "bug" });
    const { label: other } = await client.ok("create_label", { name: "Feature" });
    await client.ok("label_task", { task_id: task.id, labels: ["bug"] });

    const renamed = await client.ok("rename_label", { label_id: label.id, name: "defect" });
    expect(renamed).toEqual({ label: { ...label, name: "defect", task_count: 1 }, changed: true });
    expect(names((await client.ok("get_task", { task_id: task.id })).labels)).toEqual(["defect"]);

    const before = await snapshotDb();
    expect(await client.ok("rename_label", { label_id: label.id, name: "defect" })).toEqual({ ...renamed, changed: false });
    expect(await client.fails("rename_label", { label_id: label.id, name: "feature" })).toMatch(/another label is already named "Feature"/);
    expect(await client.fails("rename_label", { label_id: "lbl_0000000000000000", name: "x" })).toMatch(/No label lbl_0000000000000000 in this account; list_labels/);
    expect(await client.fails("rename_label", { label_id: label.id, name: " " })).toMatch(/name: must not be empty/);
    expect(await snapshotDb()).toBe(before);

    const caseOnly = await client.ok("rename_label", { label_id: label.id, name: "Defect" });
    expect(caseOnly.label.name).toBe("Defect");
    expect(await activityCount(acc.accountId, label.id)).toBe(3);
    expect(await activityCount(acc.accountId, other.id)).toBe(1);
    await client.close();
  });

  it("refuses another account's label without writing", async () => {
    const { client } = await setup();
    const other = await seedAccount();
    const otherClient = await connect(other.human);
    const { label } = await otherClient.ok("create_label", { name: "theirs" });
    const before = await snapshotDb();
    expect(await client.fails("rename_label", { label_id: label.id, name: "mine" })).toMatch(/No label/);
    expect(await client.fails("delete_label", { label_id: label.id })).toMatch(/No label/);
    expect(await snapshotDb()).toBe(before);
    await Promise.all([otherClient.close(), client.close()]);
  });
});

describe("delete_label", () => {
  it("removes the label and all its uses in one go, convergently", async () => {
    const { acc, client } = await setup();
    const t1 = await newTask(client, "one");
    const t2 = await newTask(client, "two");
    const trashed = await newTask(client, "trashed");
    await client.ok("label_task", { task_id: t1.id, labels: ["old", "keep"] });
    await client.ok("label_task", { task_id: t2.id, labels: ["old"] });
    await client.ok("label_task", { task_id: trashed.id, labels: ["old"] });
    await asServer(env.DB, env.DB.prepare("UPDATE tasks SET trash_id = 'trs_gone000000000000' WHERE id = ?").bind(trashed.id));
    const old = (await client.ok("list_labels", {})).items.find((l: { name: string }) => l.name === "old");

    const del = await client.ok("delete_label", { label_id: old.id });
    expect(del).toEqual({ label_id: old.id, name: "old", removed_from_tasks: 2, changed: true });
    const uses = await env.DB.prepare("SELECT count(*) AS n FROM task_labels WHERE label_id = ?").bind(old.id).first<{ n: number }>();
    expect(uses!.n).toBe(0);
    expect(names((await client.ok("get_task", { task_id: t1.id })).labels)).toEqual(["keep"]);
    expect(names((await client.ok("list_labels", {})).items)).toEqual(["keep"]);
    expect((await client.ok("list_tasks", { label: "old" })).items).toEqual([]);

    const before = await snapshotDb();
    expect(await client.ok("delete_label", { label_id: old.id })).toEqual({ ...del, changed: false });
    expect(await snapshotDb()).toBe(before);
    expect(await activityCount(acc.accountId, old.id)).toBe(1);
    expect(await client.fails("delete_label", { label_id: "lbl_0000000000000000" })).toMatch(/No label/);
    expect(await client.fails("delete_label", { label_id: "bug" })).toMatch(/label_id: expected a label id/);
    expect(await snapshotDb()).toBe(before);
    await client.close();
  });
});

describe("label_task", () => {
  it("adds by name, creates missing labels in the same batch, skips present ones, and writes nothing when all are there", async () => {
    const { acc, client } = await setup();
    const task = await newTask(client);
    await client.ok("create_label", { name: "Existing", color: "#123456" });
    const res = await client.ok("label_task", { task_id: task.id, labels: ["existing", "new one", "NEW ONE", "new one"] });
    expect(res.added).toEqual(["Existing", "new one"]);
    expect(names(res.labels)).toEqual(["Existing", "new one"]);
    const labels = await env.DB.prepare("SELECT name, color FROM labels WHERE account_id = ? ORDER BY name").bind(acc.accountId).all();
    expect(labels.results).toEqual([{ name: "Existing", color: "#123456" }, { name: "new one", color: null }]);
    const history = await env.DB.prepare("SELECT tool, summary FROM activity WHERE target_id = ? ORDER BY created_at, id").bind(task.id).all();
    expect(history.results).toEqual([
      { tool: "create_task", summary: expect.any(String) },
      { tool: "label_task", summary: 'labelled "Existing", "new one" (new: new one)' },
    ]);

    const before = await snapshotDb();
    const again = await client.ok("label_task", { task_id: task.id, labels: ["EXISTING", "New One"] });
    expect(again).toEqual({ task_id: task.id, labels: res.labels, added: [] });
    expect(await snapshotDb()).toBe(before);

    const more = await client.ok("label_task", { task_id: task.id, labels: ["existing", "third"] });
    expect(more.added).toEqual(["third"]);
    expect(names(more.labels)).toEqual(["Existing", "new one", "third"]);
    await client.close();
  });

  it("refuses bad input, unknown or foreign tasks, and more than 50 labels, writing nothing", async () => {
    const { client } = await setup();
    const task = await newTask(client);
    const other = await seedAccount();
    const otherClient = await connect(other.human);
    const foreign = await newTask(otherClient, "theirs");
    const before = await snapshotDb();
    expect(await client.fails("label_task", { task_id: foreign.id, labels: ["x"] })).toMatch(/No task tsk_\w+ in this account/);
    expect(await client.fails("label_task", { task_id: "tsk_0000000000000000", labels: ["x"] })).toMatch(/No task/);
    expect(await client.fails("label_task", { task_id: task.id, labels: [] })).toMatch(/labels: name at least one label/);
    expect(await client.fails("label_task", { task_id: task.id, labels: ["ok", ""] })).toMatch(/labels\.1: must not be empty/);
    expect(await client.fails("label_task", { task_id: task.id, labels: ["y".repeat(101)] })).toMatch(/labels\.0/);
    const tooMany = Array.from({ length: 51 }, (_, i) => `l${i}`);
    expect(await client.fails("label_task", { task_id: task.id, labels: tooMany })).toMatch(/at most 50 labels/);
    expect(await snapshotDb()).toBe(before);

    const fifty = await client.ok("label_task", { task_id: task.id, labels: tooMany.slice(0, 50) });
    expect(fifty.labels).toHaveLength(50);
    expect((await otherClient.ok("list_labels", {})).items).toEqual([]);
    await Promise.all([otherClient.close(), client.close()]);
  });
});

describe("unlabel_task", () => {
  it("removes by name, skips names the task does not carry, and refuses unknown names", async () => {
    const { acc, client } = await setup();
    const task = await newTask(client);
    await client.ok("label_task", { task_id: task.id, labels: ["a", "b", "c"] });
    await client.ok("create_label", { name: "unused" });
    const res = await client.ok("unlabel_task", { task_id: task.id, labels: ["A", "unused", "c"] });
    expect(res.removed).toEqual(["a", "c"]);
    expect(names(res.labels)).toEqual(["b"]);
    expect(await activityCount(acc.accountId, task.id)).toBe(3);
    expect(names((await client.ok("list_labels", {})).items)).toEqual(["a", "b", "c", "unused"]);

    const before = await snapshotDb();
    expect(await client.ok("unlabel_task", { task_id: task.id, labels: ["a", "unused"] })).toEqual({ task_id: task.id, labels: res.labels, removed: [] });
    expect(await client.fails("unlabel_task", { task_id: task.id, labels: ["b", "nope", "Nada"] })).toMatch(
      /labels: no label named "nope", "Nada" in this account; list_labels/,
    );
    expect(await client.fails("unlabel_task", { task_id: "tsk_0000000000000000", labels: ["b"] })).toMatch(/No task/);
    expect(await snapshotDb()).toBe(before);
    expect(await activityCount(acc.accountId, task.id)).toBe(3);
    await client.close();
  });

  it("refuses another account's task without writing", async () => {
    const { client } = await setup();
    const other = await seedAccount();
    const otherClient = await connect(other.human);
    const foreign = await newTask(otherClient, "theirs");
    await otherClient.ok("label_task", { task_id: foreign.id, labels: ["x"] });
    await client.ok("create_label", { name: "x" });
    const before = await snapshotDb();
    expect(await client.fails("unlabel_task", { task_id: foreign.id, labels: ["x"] })).toMatch(/No task/);
    expect(await client.fails("label_task", { task_id: foreign.id, labels: ["x"] })).toMatch(/No task/);
    expect(await snapshotDb()).toBe(before);
    await Promise.all([otherClient.close(), client.close()]);
  });
});

describe("label_task and unlabel_task on a task carrying some of the names", () => {
  it("add the rest, or take off those it carries, in one round trip, summarised by what changed", async () => {
    const acc = await seedAccount();
    let calls: number | null = null;
    const client = await connect(acc.human, undefined, {
      onResponse: (res, body) => {
        if (body.includes('"tools/call"')) calls = Number(res.headers.get("x-d1-calls"));
      },
    });
    const task = await newTask(client);
    await client.ok("label_task", { task_id: task.id, labels: ["a"] });
    await client.ok("create_label", { name: "Known" });
    await client.ok("create_label", { name: "spare" });

    const added = await client.ok("label_task", { task_id: task.id, labels: ["A", "known", "fresh"] });
    expect(calls).toBe(1);
    expect(added.added).toEqual(["Known", "fresh"]);
    expect(names(added.labels)).toEqual(["a", "fresh", "Known"]);

    const removed = await client.ok("unlabel_task", { task_id: task.id, labels: ["KNOWN", "spare", "a"] });
    expect(calls).toBe(1);
    expect(removed.removed).toEqual(["a", "Known"]);
    expect(names(removed.labels)).toEqual(["fresh"]);

    const history = await env.DB.prepare("SELECT summary FROM activity WHERE target_id = ? AND tool IN ('label_task', 'unlabel_task') ORDER BY created_at, id")
      .bind(task.id)
      .all<{ summary: string }>();
    expect(history.results.map((r) => r.summary)).toEqual(['labelled "a" (new: a)', 'labelled "Known", "fresh" (new: fresh)', 'unlabelled "a", "Known"']);
    await client.close();
  });
});
