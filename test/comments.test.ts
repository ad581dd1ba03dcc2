import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { commentIsLive, taskIsLive } from "../src/db/comments.ts";
import { bodyIsTitle, commentTitle, isOwnTitle } from "../src/db/comment-writes.ts";
import { activityCount, asServer, connect, createToken, ERAS, seedAccount, snapshotDb } from "./helpers.ts";

type C = { id: string; task_id: string; author: string; body: string; created_at: string; updated_at: string };


async function setup(era: "modern" | "legacy" = "modern") {
  const acc = await seedAccount();
  const human = await connect(acc.human, era);
  const agent = await connect(acc.agent, era);
  const { task } = await human.ok("create_task", { title: "Plan the offsite" });
  return { acc, human, agent, task: task as { id: string } };
}

describe("comments in both protocol eras", () => {
  for (const era of ERAS) {
    it(`${era}: comment_on_task signs with the caller's name; list_comments reads them`, async () => {
      const { acc, human, agent, task } = await setup(era);
      const { comment: c1 } = await human.ok("comment_on_task", { task_id: task.id, body: "Book the venue." });
      const { comment: c2 } = await agent.ok("comment_on_task", { task_id: task.id, body: "Venue shortlist attached." });
      expect(c1).toMatchObject({ task_id: task.id, author: "human", body: "Book the venue." });
      expect(c2).toMatchObject({ author: "bot" });
      expect(c1.id).toMatch(/^cmt_/);

      const row = await env.DB.prepare("SELECT author_token_id, author FROM comments WHERE id = ?").bind(c2.id).first();
      expect(row).toEqual({ author_token_id: acc.tokenIds.agent, author: "bot" });

      const reader = await connect(acc.humanRead, era);
      const listed = await reader.ok("list_comments", { task_id: task.id });
      const expected = [c1, c2].sort((a: C, b: C) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
      expect(listed).toEqual({ task_id: task.id, items: expected, next_cursor: null });
      const newest = await reader.ok("list_comments", { task_id: task.id, newest_first: true });
      expect(newest.items).toEqual([...expected].reverse());
      await reader.close();
    });
  }
});

describe("list_comments", () => {
  it("pages with a cursor in both orders, and hides comments in the trash", async () => {
    const { human, task } = await setup();
    const made: C[] = [];
    for (let i = 0; i < 7; i++) made.push((await human.ok("comment_on_task", { task_id: task.id, body: `note ${i}` })).comment);
    await human.ok("delete_comment", { comment_id: made[3].id });
    const live = made.filter((_, i) => i !== 3).sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));

    for (const newest_first of [false, true]) {
      const seen: C[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await human.ok("list_comments", { task_id: task.id, newest_first, limit: 2, ...(cursor ? { cursor } : {}) });
        seen.push(...page.items);
        cursor = page.next_cursor ?? undefined;
        pages++;
      } while (cursor);
      expect(pages).toBe(3);
      expect(seen).toEqual(newest_first ? [...live].reverse() : live);
    }
  });

  it("refuses bad cursors, limits and other accounts' tasks", async () => {
    const { task } = await setup();
    const other = await seedAccount("Other");
    const stranger = await connect(other.human);
    expect(await stranger.fails("list_comments", { task_id: task.id })).toMatch(/No task .* in this account/);
    expect(await stranger.fails("list_comments", { task_id: task.id, limit: 101 })).toMatch(/limit/);
    expect(await stranger.fails("list_comments", { task_id: task.id, cursor: "%%%" })).toMatch(/cursor/);
  });
});

describe("comment_on_task", () => {
  it("refuses empty, blank and oversized bodies and unknown or foreign tasks, writing nothing", async () => {
    const { human, task } = await setup();
    const other = await seedAccount("Other");
    const stranger = await connect(other.agent);
    const snap = await snapshotDb();
    expect(await human.fails("comment_on_task", { task_id: task.id, body: "" })).toMatch(/body/);
    expect(await human.fails("comment_on_task", { task_id: task.id, body: " \n\t" })).toMatch(/body.*blank/);
    expect(await human.fails("comment_on_task", { task_id: task.id, body: "x".repeat(20_001) })).toMatch(/body/);
    expect(await human.fails("comment_on_task", { task_id: "tsk_0123456789abcdef", body: "hi" })).toMatch(/No task tsk_0123456789abcdef/);
    expect(await stranger.fails("comment_on_task", { task_id: task.id, body: "hi" })).toMatch(/No task/);
    expect(await snapshotDb()).toBe(snap);
    const big = await human.ok("comment_on_task", { task_id: task.id, body: "y".repeat(20_000) });
    expect(big.comment.body).toHaveLength(20_000);
  });

  it("logs one activity row on the task naming the comment", async () => {
    const { acc, agent, task } = await setup();
    const { comment } = await agent.ok("comment_on_task", { task_id: task.id, body: "done" });
    const { results } = await env.DB.prepare("SELECT actor, token_id, summary FROM activity WHERE account_id = ? AND target_id = ? AND tool = 'comment_on_task'")
      .bind(acc.accountId, task.id)
      .all();
    expect(results).toEqual([{ actor: "bot", token_id: acc.tokenIds.agent, summary: `commented ${comment.id}` }]);
  });

  it("replays an idempotency_key: same comment, nothing new written", async () => {
    const { acc, agent, task } = await setup();
    const first = await agent.ok("comment_on_task", { task_id: task.id, body: "once", idempotency_key: "retry-1" });
    const n = await activityCount(acc.accountId, task.id);
    const snap = await snapshotDb();
    const again = await agent.ok("comment_on_task", { task_id: task.id, body: "once", idempotency_key: "retry-1" });
    expect(again).toEqual(first);
    expect(await snapshotDb()).toBe(snap);
    expect(await activityCount(acc.accountId, task.id)).toBe(n);
    const other = await agent.ok("comment_on_task", { task_id: task.id, body: "once", idempotency_key: "retry-2" });
    expect(other.comment.id).not.toBe(first.comment.id);
  });
});

describe("edit_comment", () => {
  it("overwrites one's own comment and converges on the same body", async () => {
    const { acc, human, agent, task } = await setup();
    const { comment } = await agent.ok("comment_on_task", { task_id: task.id, body: "draft" });
    const edited = await agent.ok("edit_comment", { comment_id: comment.id, body: "final" });
    expect(edited).toMatchObject({ changed: true, comment: { id: comment.id, body: "final", author: "bot", created_at: comment.created_at } });
    expect((await human.ok("list_comments", { task_id: task.id })).items).toEqual([edited.comment]);
    const n = await activityCount(acc.accountId, task.id);
    const snap = await snapshotDb();
    expect(await agent.ok("edit_comment", { comment_id: comment.id, body: "final" })).toEqual({ ...edited, changed: false });
    expect(await snapshotDb()).toBe(snap);
    expect(await activityCount(acc.accountId, task.id)).toBe(n);
  });

  it("lets any of the person's tokens edit the person's comments", async () => {
    const { acc, human, task } = await setup();
    const { comment } = await human.ok("comment_on_task", { task_id: task.id, body: "from the laptop" });
    const phone = await createToken({ accountId: acc.accountId, kind: "human", scope: "write", label: "phone" });
    const other = await connect(phone.secret);
    expect((await other.ok("edit_comment", { comment_id: comment.id, body: "from the phone" })).changed).toBe(true);
  });

  it("refuses someone else's comment, saying only its author may change it, and changes nothing", async () => {
    const { acc, human, agent, task } = await setup();
    const { comment: mine } = await human.ok("comment_on_task", { task_id: task.id, body: "human words" });
    const { comment: bots } = await agent.ok("comment_on_task", { task_id: task.id, body: "bot words" });
    const other = await createToken({ accountId: acc.accountId, kind: "agent", scope: "write", agent: "helper" });
    const helper = await connect(other.secret);
    const snap = await snapshotDb();
    expect(await agent.fails("edit_comment", { comment_id: mine.id, body: "hijack" })).toMatch(/written by human; only its author may edit or delete it/);
    expect(await human.fails("edit_comment", { comment_id: bots.id, body: "hijack" })).toMatch(/written by bot; only its author/);
    expect(await helper.fails("edit_comment", { comment_id: bots.id, body: "hijack" })).toMatch(/only its author/);
    expect(await helper.fails("delete_comment", { comment_id: bots.id })).toMatch(/only its author/);
    expect(await agent.fails("delete_comment", { comment_id: mine.id })).toMatch(/only its author/);
    expect(await snapshotDb()).toBe(snap);
  });

  it("refuses bad bodies and unknown, foreign or trashed comments, changing nothing", async () => {
    const { human, task } = await setup();
    const { comment } = await human.ok("comment_on_task", { task_id: task.id, body: "keep" });
    const { comment: gone } = await human.ok("comment_on_task", { task_id: task.id, body: "bin" });
    const { trash_id } = await human.ok("delete_comment", { comment_id: gone.id });
    const other = await seedAccount("Other");
    const stranger = await connect(other.human);
    const snap = await snapshotDb();
    expect(await human.fails("edit_comment", { comment_id: comment.id, body: "" })).toMatch(/body/);
    expect(await human.fails("edit_comment", { comment_id: comment.id, body: "z".repeat(20_001) })).toMatch(/body/);
    expect(await human.fails("edit_comment", { comment_id: "cmt_0123456789abcdef", body: "x" })).toMatch(/No comment cmt_0123456789abcdef.*list_comments/);
    expect(await human.fails("edit_comment", { comment_id: "tsk_0123456789abcdef", body: "x" })).toMatch(/comment_id/);
    expect(await stranger.fails("edit_comment", { comment_id: comment.id, body: "x" })).toMatch(/No comment/);
    expect(await stranger.fails("delete_comment", { comment_id: comment.id })).toMatch(/No comment/);
    expect(await human.fails("edit_comment", { comment_id: gone.id, body: "x" })).toContain(`in the trash (${trash_id})`);
    expect(await snapshotDb()).toBe(snap);
  });
});

describe("delete_comment", () => {
  it("moves one's own comment to the trash and converges, naming the same trash item", async () => {
    const { acc, human, agent, task } = await setup();
    const { comment } = await agent.ok("comment_on_task", { task_id: task.id, body: "Temporary   note\nwith lines" });
    const del = await agent.ok("delete_comment", { comment_id: comment.id });
    expect(del).toMatchObject({ comment_id: comment.id, task_id: task.id, item_count: 1, already_in_trash: false });
    const trash = await env.DB.prepare("SELECT kind, target_id, title, deleted_by, deleted_by_token, purge_after FROM trash WHERE id = ? AND account_id = ?")
      .bind(del.trash_id, acc.accountId)
      .first();
    expect(trash).toEqual({
      kind: "comment", target_id: comment.id, title: "Temporary note with lines", deleted_by: "bot",
      deleted_by_token: acc.tokenIds.agent, purge_after: del.purge_after,
    });
    expect((await human.ok("list_comments", { task_id: task.id })).items).toEqual([]);
    expect((await human.ok("get_task", { task_id: task.id })).latest_comments).toEqual([]);

    const n = await activityCount(acc.accountId, task.id);
    const snap = await snapshotDb();
    expect(await agent.ok("delete_comment", { comment_id: comment.id })).toEqual({ ...del, already_in_trash: true });
    expect(await snapshotDb()).toBe(snap);
    expect(await activityCount(acc.accountId, task.id)).toBe(n);
  });

  it("titles the trash item with the body's words, cut to 100 characters; whether a body is its own title is decided alike in SQL and here", async () => {
    const { acc, human, task } = await setup();
    const bodies = [
      "Short and plain",
      "x".repeat(100),
      "y".repeat(101),
      "é".repeat(60),
      " leading space",
      "two  spaces",
      "tab\there",
      "nbsp\u00a0here",
      "ideographic\u3000space",
      `${"word ".repeat(30)}end`,
    ];
    for (const body of bodies) {
      const { comment } = await human.ok("comment_on_task", { task_id: task.id, body });
      const { ok } = (await env.DB.prepare(`SELECT ${bodyIsTitle({ commentId: comment.id, accountId: acc.accountId }).sql} AS ok`)
        .bind(comment.id, acc.accountId)
        .first<{ ok: number }>())!;
      expect([body, ok === 1]).toEqual([body, isOwnTitle(body)]);
      const del = await human.ok("delete_comment", { comment_id: comment.id });
      const trash = await env.DB.prepare("SELECT title, purge_after FROM trash WHERE id = ?").bind(del.trash_id).first();
      expect(trash).toEqual({ title: commentTitle(body), purge_after: del.purge_after });
    }
    expect(commentTitle("y".repeat(101))).toBe(`${"y".repeat(99)}…`);
    expect(commentTitle(" two  spaces\n")).toBe("two spaces");
  });

  it("restore_from_trash brings a deleted comment back as it was", async () => {
    const { human, task } = await setup();
    const { comment } = await human.ok("comment_on_task", { task_id: task.id, body: "keep me" });
    const { trash_id } = await human.ok("delete_comment", { comment_id: comment.id });
    await human.ok("restore_from_trash", { item_id: trash_id });
    expect((await human.ok("list_comments", { task_id: task.id })).items).toEqual([comment]);
  });

  it("treats comments of a task in the trash as gone", async () => {
    const { acc, human, task } = await setup();
    const { comment } = await human.ok("comment_on_task", { task_id: task.id, body: "x" });
    await asServer(env.DB, env.DB.prepare("UPDATE tasks SET trash_id = 'trs_test' WHERE id = ? AND account_id = ?").bind(task.id, acc.accountId));
    const snap = await snapshotDb();
    expect(await human.fails("delete_comment", { comment_id: comment.id })).toMatch(/No comment/);
    expect(await human.fails("edit_comment", { comment_id: comment.id, body: "y" })).toMatch(/No comment/);
    expect(await human.fails("comment_on_task", { task_id: task.id, body: "y" })).toMatch(/No task/);
    expect(await human.fails("list_comments", { task_id: task.id })).toMatch(/No task/);
    expect(await snapshotDb()).toBe(snap);
  });
});

describe("the race guards of the comment writes", () => {
  const holds = async (condition: { sql: string; binds: unknown[] }) =>
    (await env.DB.prepare(`SELECT coalesce((${condition.sql}), 0) AS ok`).bind(...condition.binds).first<{ ok: number }>())?.ok === 1;

  it("hold exactly while the comment and its task are live", async () => {
    const { acc, human, task } = await setup();
    const a = acc.accountId;
    const { comment } = await human.ok("comment_on_task", { task_id: task.id, body: "x" });
    expect(await holds(taskIsLive({ taskId: task.id, accountId: a }))).toBe(true);
    expect(await holds(taskIsLive({ taskId: task.id, accountId: "acc_other" }))).toBe(false);
    expect(await holds(commentIsLive({ commentId: comment.id, accountId: a }))).toBe(true);
    expect(await holds(commentIsLive({ commentId: comment.id, accountId: "acc_other" }))).toBe(false);
    await asServer(env.DB, env.DB.prepare("UPDATE tasks SET trash_id = 'trs_test' WHERE id = ?").bind(task.id));
    expect(await holds(taskIsLive({ taskId: task.id, accountId: a }))).toBe(false);
    expect(await holds(commentIsLive({ commentId: comment.id, accountId: a }))).toBe(false);
  });
});

describe("comments in full-text search", () => {
  it("search_tasks finds a comment's words, follows edits, and forgets deleted comments", async () => {
    const { human, task } = await setup();
    const search = async (query: string) => (await human.ok("search_tasks", { query })).items as { task: { id: string }; matched_in: string[] }[];
    const { comment } = await human.ok("comment_on_task", { task_id: task.id, body: "Ask about the zeppelin hangar" });
    const hits = await search("zeppelin");
    expect(hits.map((h) => h.task.id)).toEqual([task.id]);
    expect(hits[0].matched_in).toContain("comments");

    await human.ok("edit_comment", { comment_id: comment.id, body: "Ask about the balloon hangar" });
    expect(await search("zeppelin")).toEqual([]);
    expect((await search("balloon")).map((h) => h.task.id)).toEqual([task.id]);

    await human.ok("delete_comment", { comment_id: comment.id });
    expect(await search("balloon")).toEqual([]);
  });
});
