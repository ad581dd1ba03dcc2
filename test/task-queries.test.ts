import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { indexComment } from "../src/db/search-index.ts";
import { accountKey } from "../src/domain/search-terms.ts";
import { localDayStart } from "../src/tools/task-queries.ts";
import { asServer, connect, ERAS, seedAccount, snapshotDb, type TestClient } from "./helpers.ts";

const HOUR = 3_600_000;

async function sql(query: string, ...binds: unknown[]) {
  return asServer(env.DB, env.DB.prepare(query).bind(...binds));
}

async function newProject(accountId: string, name = "Project"): Promise<string> {
  const id = `prj_${crypto.randomUUID().replace(/-/g, "").slice(0, 16)}`;
  const now = new Date().toISOString();
  await sql("INSERT INTO projects (id, account_id, name, created_at, updated_at) VALUES (?, ?, ?, ?, ?)", id, accountId, name, now, now);
  return id;
}

async function task(c: TestClient, args: Record<string, unknown>) {
  return (await c.ok("create_task", args)).task as { id: string; title: string; created_at: string };
}

async function addComment(accountId: string, taskId: string, body: string) {
  const id = `cmt_${crypto.randomUUID().replace(/-/g, "").slice(0, 16)}`;
  const now = new Date().toISOString();
  await asServer(env.DB, [
    env.DB.prepare(
      "INSERT INTO comments (id, account_id, task_id, author_token_id, author, body, created_at, updated_at) VALUES (?, ?, ?, 'tok_x', 'human', ?, ?, ?)",
    ).bind(id, accountId, taskId, body, now, now),
    indexComment(env.DB, accountId, id, body),
  ]);
}

async function collect(c: TestClient, tool: string, args: Record<string, unknown>): Promise<any[]> {
  const all: any[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 50; i++) {
    const r = await c.ok(tool, { ...args, ...(cursor ? { cursor } : {}) });
    all.push(...r.items);
    if (!r.next_cursor) return all;
    cursor = r.next_cursor;
  }
  throw new Error("too many pages");
}

describe("list_my_tasks", () => {
  for (const era of ERAS) {
    it(`${era}: open tasks assigned to the caller, snoozed hidden, filters and pages`, async () => {
      const acc = await seedAccount();
      const human = await connect(acc.human, era);
      const agentRead = await connect(acc.agentRead, era);
      const prj = await newProject(acc.accountId);
      const mine = [];
      for (let i = 0; i < 5; i++) mine.push(await task(human, { title: `bot ${i}`, assignee: "bot", project_id: i < 2 ? prj : undefined }));
      await task(human, { title: "for the person", assignee: "human" });
      await task(human, { title: "nobody's" });
      await sql("UPDATE tasks SET status = 'done' WHERE id = ?", mine[4].id);
      await sql("UPDATE tasks SET status = 'in_progress' WHERE id = ?", mine[3].id);
      await sql("UPDATE tasks SET snoozed_until = ? WHERE id = ?", new Date(Date.now() + 24 * HOUR).toISOString(), mine[2].id);
      const other = await seedAccount();
      const otherHuman = await connect(other.human, era);
      await task(otherHuman, { title: "other account's bot task", assignee: "bot" });

      const first = await agentRead.ok("list_my_tasks", {});
      expect(first.assignee).toBe("bot");
      expect(first.items.map((t: any) => t.id).sort()).toEqual([mine[0].id, mine[1].id, mine[3].id].sort());
      const withSnoozed = await agentRead.ok("list_my_tasks", { include_snoozed: true });
      expect(withSnoozed.items).toHaveLength(4);
      const inProject = await agentRead.ok("list_my_tasks", { project_id: prj });
      expect(inProject.items.map((t: any) => t.id).sort()).toEqual([mine[0].id, mine[1].id].sort());
      const started = await agentRead.ok("list_my_tasks", { status: ["in_progress"] });
      expect(started.items.map((t: any) => t.id)).toEqual([mine[3].id]);
      const paged = await collect(agentRead, "list_my_tasks", { limit: 1, include_snoozed: true });
      expect(paged.map((t) => t.id)).toEqual(withSnoozed.items.map((t: any) => t.id));

      const person = await human.ok("list_my_tasks", {});
      expect(person.assignee).toBe("human");
      expect(person.items.map((t: any) => t.title)).toEqual(["for the person"]);

      expect(await agentRead.fails("list_my_tasks", { status: ["done"] })).toMatch(/status/);
      expect(await agentRead.fails("list_my_tasks", { limit: 101 })).toMatch(/limit/);
      expect(await agentRead.fails("list_my_tasks", { cursor: "garbage!" })).toMatch(/cursor/);
      for (const c of [human, agentRead, otherHuman]) await c.close();
    });
  }
});

describe("search_tasks", () => {
  it("ranks title above notes above comments, prefix-matches the last word and says where it matched", async () => {
    const acc = await seedAccount();
    const c = await connect(acc.human);
    const inComment = await task(c, { title: "Quarterly numbers", notes: "nothing here" });
    await addComment(acc.accountId, inComment.id, "the invoice is late again");
    const inNotes = await task(c, { title: "Call the bank", notes: "ask about the invoice and the fee" });
    const inTitle = await task(c, { title: "Pay the invoice", notes: "by Friday" });
    await task(c, { title: "Unrelated", notes: "garden" });

    const r = await c.ok("search_tasks", { query: "invoice" });
    expect(r.items.map((i: any) => i.task.id)).toEqual([inTitle.id, inNotes.id, inComment.id]);
    expect(r.items[0].matched_in).toEqual(["title"]);
    expect(r.items[0].snippet).toContain("**invoice**");
    expect(r.items[1].matched_in).toEqual(["notes"]);
    expect(r.items[2].matched_in).toEqual(["comments"]);
    expect(r.items[2].snippet).toContain("**invoice**");

    const prefix = await c.ok("search_tasks", { query: "pay inv" });
    expect(prefix.items.map((i: any) => i.task.id)).toEqual([inTitle.id]);
    const accents = await c.ok("search_tasks", { query: "ÍNVOICE" });
    expect(accents.items).toHaveLength(3);

    const pages = await collect(c, "search_tasks", { query: "invoice", limit: 1 });
    expect(pages.map((i) => i.task.id)).toEqual([inTitle.id, inNotes.id, inComment.id]);
    const filtered = await c.ok("search_tasks", { query: "invoice", status: ["done"] });
    expect(filtered.items).toHaveLength(0);
    await c.close();
  });

  it("treats FTS syntax as plain text and never fails with an SQL error", async () => {
    const acc = await seedAccount();
    const c = await connect(acc.human);
    const t = await task(c, { title: "Fix the NEAR-term AND/OR plan", notes: 'he said "hello" (twice): title*' });
    const odd = [
      '"', '""', "*", "invoice*", "NEAR(a b)", "title:plan", "AND", "OR NOT", "-plan", "^plan", "(((", ")",
      "plan)", "'; DROP TABLE tasks; --", 'hello" OR "x', "near/3", "{title notes}: plan", "plan +", "ümlaut ß", "😀 plan",
    ];
    for (const query of odd) {
      const r = await c.call("search_tasks", { query });
      if (r.isError) expect(r.text, query).toMatch(/^query: give at least one word/);
      else expect(Array.isArray(r.structured.items), query).toBe(true);
    }
    expect((await c.ok("search_tasks", { query: "NEAR(term" })).items.map((i: any) => i.task.id)).toEqual([t.id]);
    expect((await c.ok("search_tasks", { query: "AND/OR" })).items.map((i: any) => i.task.id)).toEqual([t.id]);
    expect((await c.ok("search_tasks", { query: '"hello"' })).items.map((i: any) => i.task.id)).toEqual([t.id]);
    expect(await c.fails("search_tasks", { query: "*** ---" })).toMatch(/query: give at least one word/);
    expect(await c.fails("search_tasks", { query: "   " })).toMatch(/query/);
    expect(await c.fails("search_tasks", { query: "x".repeat(501) })).toMatch(/query/);
    await c.close();
  });

  it("indexes each comment as a row of its own under the account's own terms; words match within title and notes, or within one comment", async () => {
    const acc = await seedAccount();
    const other = await seedAccount();
    const c = await connect(acc.human);
    const o = await connect(other.human);
    const t = await task(c, { title: "Call the bank", notes: "about the overdraft" });
    for (const body of ["first note on walrus", "second note on narwhal", "third"]) await c.ok("comment_on_task", { task_id: t.id, body });
    await task(o, { title: "walrus bank overdraft" });

    const own = async (table: string, accountId: string, word: string) =>
      (await env.DB.prepare(`SELECT count(*) AS n FROM ${table} WHERE ${table} MATCH ?`).bind(`"${accountKey(accountId)}_${word}"*`).first<{ n: number }>())!.n;
    expect(await own("comment_search", acc.accountId, ""), "one index row per comment").toBe(3);
    expect(await own("task_search", acc.accountId, "bank")).toBe(1);
    expect(await own("task_search", other.accountId, "bank"), "the other account's rows are under its own terms").toBe(1);

    const ids = async (query: string) => (await c.ok("search_tasks", { query })).items.map((i: any) => [i.task.id, i.matched_in, i.snippet]);
    expect(await ids("bank overdraft")).toEqual([[t.id, ["title", "notes"], "Call the **bank**"]]);
    expect(await ids("narwhal")).toEqual([[t.id, ["comments"], "second note on **narwhal**"]]);
    expect(await ids("walrus narwhal"), "two comments' words do not make one match").toEqual([]);
    expect(await ids("walrus")).toEqual([[t.id, ["comments"], "first note on **walrus**"]]);
    await c.close();
    await o.close();
  });

  it("leaves out other accounts' tasks and tasks in the trash", async () => {
    const acc = await seedAccount();
    const other = await seedAccount();
    const c = await connect(acc.human, "legacy");
    const o = await connect(other.human);
    const kept = await task(c, { title: "pelican report" });
    const gone = await task(c, { title: "pelican draft" });
    await task(o, { title: "pelican elsewhere" });
    await c.ok("delete_task", { task_id: gone.id });
    const r = await c.ok("search_tasks", { query: "pelican" });
    expect(r.items.map((i: any) => i.task.id)).toEqual([kept.id]);
    await c.close();
    await o.close();
  });
});

describe("list_subtasks", () => {
  it("lists direct children in creation order, or the whole subtree with depth", async () => {
    const acc = await seedAccount();
    const c = await connect(acc.agent);
    const root = await task(c, { title: "root" });
    const { tasks: kids } = await c.ok("decompose_task", { task_id: root.id, subtasks: [{ title: "a" }, { title: "b" }, { title: "c" }] });
    const { tasks: grand } = await c.ok("decompose_task", { task_id: kids[0].id, subtasks: [{ title: "a1" }, { title: "a2" }] });
    await c.ok("decompose_task", { task_id: grand[1].id, subtasks: [{ title: "a2x" }] });

    const direct = await c.ok("list_subtasks", { task_id: root.id });
    expect(direct.items.map((t: any) => [t.title, t.depth])).toEqual([["a", 1], ["b", 1], ["c", 1]]);
    const tree = await collect(c, "list_subtasks", { task_id: root.id, recursive: true, limit: 2 });
    expect(tree.map((t) => `${t.title}:${t.depth}`)).toEqual(["a:1", "a1:2", "a2:2", "a2x:3", "b:1", "c:1"]);

    await c.ok("delete_task", { task_id: kids[0].id });
    const after = await c.ok("list_subtasks", { task_id: root.id, recursive: true });
    expect(after.items.map((t: any) => t.title)).toEqual(["b", "c"]);
    expect(await c.fails("list_subtasks", { task_id: kids[0].id })).toMatch(/is in the trash .*restore_from_trash with item_id trs_/);

    const other = await seedAccount();
    const o = await connect(other.human);
    expect(await o.fails("list_subtasks", { task_id: root.id })).toMatch(/No task/);
    await c.close();
    await o.close();
  });
});

describe("list_blocked_tasks", () => {
  it("lists blocked tasks with reasons and open tasks waiting on unfinished ones", async () => {
    const acc = await seedAccount();
    const c = await connect(acc.human);
    const blocked = await task(c, { title: "blocked one" });
    await c.ok("block_task", { task_id: blocked.id, reason: "waiting for the keys" });
    const waiting = await task(c, { title: "waiting one" });
    const dep = await task(c, { title: "prerequisite" });
    const finishedDep = await task(c, { title: "finished prerequisite" });
    await sql("UPDATE tasks SET status = 'done' WHERE id = ?", finishedDep.id);
    const notWaiting = await task(c, { title: "not waiting" });
    await c.ok("add_dependency", { task_id: waiting.id, depends_on_id: dep.id });
    await c.ok("add_dependency", { task_id: notWaiting.id, depends_on_id: finishedDep.id });

    const r = await c.ok("list_blocked_tasks", {});
    expect(r.items).toHaveLength(2);
    const byId = Object.fromEntries(r.items.map((i: any) => [i.task.id, i]));
    expect(byId[blocked.id].reason).toBe("waiting for the keys");
    expect(byId[blocked.id].waits_on).toEqual([]);
    expect(byId[waiting.id].reason).toBeNull();
    expect(byId[waiting.id].waits_on).toEqual([{ id: dep.id, title: "prerequisite", status: "open" }]);

    await sql("UPDATE tasks SET status = 'done' WHERE id = ?", dep.id);
    const later = await collect(c, "list_blocked_tasks", { limit: 1 });
    expect(later.map((i) => i.task.id)).toEqual([blocked.id]);
    await c.close();
  });
});

describe("list_due_tasks", () => {
  it("finds local midnight across time zones and DST changes", () => {
    const at = (tz: string, now: string, days: number) => new Date(localDayStart(tz, Date.parse(now), days)).toISOString();
    expect(at("UTC", "2026-01-01T10:00:00Z", 7)).toBe("2026-01-08T00:00:00.000Z");
    expect(at("Europe/Berlin", "2026-03-28T12:00:00Z", 1)).toBe("2026-03-28T23:00:00.000Z");
    expect(at("Europe/Berlin", "2026-03-28T12:00:00Z", 2)).toBe("2026-03-29T22:00:00.000Z");
    expect(at("Europe/Berlin", "2026-10-24T12:00:00Z", 2)).toBe("2026-10-25T23:00:00.000Z");
    expect(at("America/Santiago", "2026-09-05T12:00:00Z", 1)).toBe("2026-09-06T04:00:00.000Z");
    expect(at("Asia/Kolkata", "2026-01-01T10:00:00Z", 1)).toBe("2026-01-01T18:30:00.000Z");
    expect(at("Pacific/Kiritimati", "2026-01-01T09:59:00Z", 1)).toBe("2026-01-01T10:00:00.000Z");
    expect(at("Pacific/Kiritimati", "2026-01-01T10:00:00Z", 1)).toBe("2026-01-02T10:00:00.000Z");
  });

  for (const era of ERAS) {
    it(`${era}: uses the account's time zone for the window end, flags overdue, pages by due time`, async () => {
      const acc = await seedAccount();
      const c = await connect(acc.humanRead, era);
      const w = await connect(acc.human, era);
      const now = Date.now();
      for (const [tz, offsetH] of [["Pacific/Kiritimati", 14], ["Pacific/Pago_Pago", -11]] as const) {
        await sql("UPDATE accounts SET time_zone = ? WHERE id = ?", tz, acc.accountId);
        const local = new Date(now + offsetH * HOUR);
        const end = Date.UTC(local.getUTCFullYear(), local.getUTCMonth(), local.getUTCDate() + 1) - offsetH * HOUR;
        const inside = await task(w, { title: `${tz} inside`, due_at: new Date(end - 60_000).toISOString() });
        const outside = await task(w, { title: `${tz} outside`, due_at: new Date(end + 60_000).toISOString() });
        const r = await c.ok("list_due_tasks", { days: 1 });
        expect(r.time_zone).toBe(tz);
        expect(r.window_end).toBe(new Date(end).toISOString());
        const ids = r.items.map((t: any) => t.id);
        expect(ids).toContain(inside.id);
        expect(ids).not.toContain(outside.id);
        await sql("UPDATE tasks SET due_at = NULL WHERE id IN (?, ?)", inside.id, outside.id);
      }

      await sql("UPDATE accounts SET time_zone = 'UTC' WHERE id = ?", acc.accountId);
      const overdue = await task(w, { title: "overdue", due_at: new Date(now - 48 * HOUR).toISOString() });
      const soon = await task(w, { title: "soon", due_at: new Date(now + 2 * 24 * HOUR).toISOString() });
      const later = await task(w, { title: "later", due_at: new Date(now + 20 * 24 * HOUR).toISOString() });
      const done = await task(w, { title: "done", due_at: new Date(now - HOUR).toISOString() });
      await sql("UPDATE tasks SET status = 'done' WHERE id = ?", done.id);
      const snoozed = await task(w, { title: "snoozed", due_at: new Date(now + HOUR).toISOString() });
      await w.ok("snooze_task", { task_id: snoozed.id, until: new Date(now + 10 * HOUR).toISOString() });

      const week = await c.ok("list_due_tasks", {});
      expect(week.items.map((t: any) => [t.title, t.overdue])).toEqual([["overdue", true], ["soon", false]]);
      const withSnoozed = await collect(c, "list_due_tasks", { days: 30, include_snoozed: true, limit: 1 });
      expect(withSnoozed.map((t) => t.id)).toEqual([overdue.id, snoozed.id, soon.id, later.id]);
      expect(await c.fails("list_due_tasks", { days: 91 })).toMatch(/days/);
      expect(await c.fails("list_due_tasks", { days: 0 })).toMatch(/days/);

      await sql("UPDATE accounts SET time_zone = 'Not/AZone' WHERE id = ?", acc.accountId);
      expect((await c.ok("list_due_tasks", {})).time_zone).toBe("UTC");
      await c.close();
      await w.close();
    });
  }
});

describe("get_task_history", () => {
  it("returns the task's activity newest first, in pages, and only for the account's live tasks", async () => {
    const acc = await seedAccount();
    const c = await connect(acc.agent);
    const t = await task(c, { title: "history" });
    const other = await task(c, { title: "other" });
    await c.ok("assign_task", { task_id: t.id, assignee: "bot" });
    await c.ok("block_task", { task_id: t.id, reason: "waiting" });
    await c.ok("add_dependency", { task_id: t.id, depends_on_id: other.id });
    await c.ok("unblock_task", { task_id: t.id });
    const all = await collect(c, "get_task_history", { task_id: t.id, limit: 2 });
    expect(all.map((e) => e.tool)).toEqual(["unblock_task", "add_dependency", "block_task", "assign_task", "create_task"]);
    expect(all.every((e) => e.actor === "bot")).toBe(true);
    expect(all[1].summary).toContain(other.id);

    const stranger = await seedAccount();
    const s = await connect(stranger.human);
    expect(await s.fails("get_task_history", { task_id: t.id })).toMatch(/No task/);
    expect(await s.fails("get_task_history", { task_id: "tsk_bad" })).toMatch(/task_id/);
    await c.close();
    await s.close();
  });
});

describe("list_dependencies", () => {
  it("shows what a task waits on and what waits on it", async () => {
    const acc = await seedAccount();
    const c = await connect(acc.human, "legacy");
    const a = await task(c, { title: "A" });
    const b = await task(c, { title: "B" });
    const d = await task(c, { title: "D" });
    await c.ok("add_dependency", { task_id: a.id, depends_on_id: b.id });
    await c.ok("add_dependency", { task_id: d.id, depends_on_id: a.id });
    const r = await c.ok("list_dependencies", { task_id: a.id });
    expect(r.task).toEqual({ id: a.id, title: "A", status: "open" });
    expect(r.waits_on).toEqual([{ id: b.id, title: "B", status: "open", trash_id: null }]);
    expect(r.blocks).toEqual([{ id: d.id, title: "D", status: "open" }]);
    expect(r.ready).toBe(false);
    await sql("UPDATE tasks SET status = 'done' WHERE id = ?", b.id);
    expect((await c.ok("list_dependencies", { task_id: a.id })).ready).toBe(true);
    await c.ok("delete_task", { task_id: d.id });
    expect((await c.ok("list_dependencies", { task_id: a.id })).blocks).toEqual([]);

    const other = await seedAccount();
    const o = await connect(other.human);
    const snap = await snapshotDb();
    expect(await o.fails("list_dependencies", { task_id: a.id })).toMatch(/No task/);
    expect(await snapshotDb()).toBe(snap);
    await c.close();
    await o.close();
  });
});

describe("filters naming a record the account does not have", () => {
  const PROJECT_FILTERED = ["list_tasks", "list_my_tasks", "list_due_tasks", "list_blocked_tasks", "search_tasks"] as const;
  const argsFor = (tool: string, project_id: string) => (tool === "search_tasks" ? { query: "report", project_id } : { project_id });

  for (const era of ERAS) {
    it(`${era}: another account's or an unknown project, or record, is refused as not in this account, as every other tool does`, async () => {
      const mine = await seedAccount(`Filters ${era}`);
      const theirs = await seedAccount(`Their filters ${era}`);
      const human = await connect(mine.human, era);
      const agent = await connect(mine.agent, era);
      const other = await connect(theirs.human, era);
      const foreignProject = (await other.ok("create_project", { name: "Theirs" })).project.id;
      const foreignTask = (await task(other, { title: "Their report", project_id: foreignProject })).id;
      const ownProject = (await human.ok("create_project", { name: "Mine" })).project.id;
      const ownTask = await task(human, { title: "The report", project_id: ownProject, due_at: new Date(Date.now() + HOUR).toISOString(), assignee: "human" });

      const before = await snapshotDb();
      for (const c of [human, agent]) {
        for (const tool of PROJECT_FILTERED) {
          for (const id of [foreignProject, "prj_0000000000000000"]) {
            expect(await c.fails(tool, argsFor(tool, id)), `${tool} ${id}`).toBe(
              `No project ${id} in this account; list_projects finds project ids (include_archived: true shows archived ones).`,
            );
          }
        }
        for (const id of [foreignTask, foreignProject, theirs.tokenIds.human, "tsk_0000000000000000", "anything"]) {
          expect(await c.fails("list_activity", { target_id: id }), `list_activity ${id}`).toBe(
            `No record ${id} in this account; list_activity without target_id shows the ids its entries are about.`,
          );
        }
      }
      expect(await snapshotDb(), "a refused read writes nothing").toBe(before);

      // The account's own records still answer, an empty list included.
      for (const tool of PROJECT_FILTERED) {
        const items = (await human.ok(tool, argsFor(tool, ownProject))).items as ({ id: string } | { task: { id: string } })[];
        expect(items.map((i) => ("task" in i ? i.task.id : i.id)), tool).toEqual(tool === "list_blocked_tasks" ? [] : [ownTask.id]);
      }
      expect((await human.ok("list_activity", { target_id: ownTask.id })).items.map((e: { tool: string }) => e.tool)).toEqual(["create_task"]);
      expect((await human.ok("list_activity", { target_id: mine.tokenIds.humanRead })).items).toEqual([]);
      expect((await human.ok("list_activity", { target_id: mine.accountId })).items).toEqual([]);
      // A record purged for good keeps its entries in the feed, so its id still answers.
      const { trash_id } = await human.ok("delete_task", { task_id: ownTask.id });
      await human.ok("empty_trash", { item_ids: [trash_id] });
      expect((await human.ok("list_activity", { target_id: ownTask.id })).items.map((e: { tool: string }) => e.tool)).toEqual(["delete_task", "create_task"]);
      await Promise.all([human.close(), agent.close(), other.close()]);
    });
  }
});
