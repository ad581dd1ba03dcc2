import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { asServer, connect, ERAS, MCP_URL, seedAccount, type TestClient, workerFetch } from "./helpers.ts";

const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

async function task(c: TestClient, title: string, extra: Record<string, unknown> = {}): Promise<string> {
  return (await c.ok("create_task", { title, ...extra })).task.id;
}

const rid = (prefix: string) => `${prefix}_${crypto.randomUUID().replace(/-/g, "").slice(0, 16)}`;
const sql = (q: string, ...binds: unknown[]) => env.DB.prepare(q).bind(...binds);

describe("get_digest", () => {
  for (const era of ERAS) {
    it(`${era}: each section with ids, bounded at 20 with the full count, trashed and other accounts' rows left out`, async () => {
      const acc = await seedAccount();
      const stranger = await seedAccount("Someone else");
      const c = await connect(acc.human, era);
      const s = await connect(stranger.human, era);
      const now = Date.now();
      const since = iso(now - 6 * HOUR);
      const [apr1, apr2, apr3, run1, run2, run3] = ["apr", "apr", "apr", "run", "run", "run"].map(rid);
      const agentId = (await sql("SELECT id FROM agents WHERE account_id = ?", acc.accountId).first<{ id: string }>())!.id;

      const completed: string[] = [];
      for (let i = 0; i < 23; i++) completed.push(await task(c, `done ${i}`));
      const doneEarlier = await task(c, "done before since");
      const trashedDone = await task(c, "done, then trashed");
      const theirsDone = await task(s, "their done task");
      const updates = completed.map((id, i) =>
        sql("UPDATE tasks SET status = 'done', completed_at = ? WHERE id = ?", iso(now - HOUR + i * 1000), id));
      updates.push(
        sql("UPDATE tasks SET status = 'done', completed_at = ? WHERE id = ?", iso(now - 7 * HOUR), doneEarlier),
        sql("UPDATE tasks SET status = 'done', completed_at = ?, trash_id = 'trs_hidden0000000000' WHERE id = ?", iso(now - HOUR), trashedDone),
        sql("UPDATE tasks SET status = 'done', completed_at = ? WHERE id = ?", iso(now - HOUR), theirsDone),
      );

      const awaitingWithApproval = await task(c, "awaiting, with a request");
      const awaitingBare = await task(c, "awaiting, no request");
      const pendingOnOpen = await task(c, "open task with a pending request");
      const decided = await task(c, "approval already decided");
      updates.push(
        sql("UPDATE tasks SET status = 'awaiting_approval', updated_at = ? WHERE id IN (?, ?)", iso(now - 2 * HOUR), awaitingWithApproval, awaitingBare),
        sql(`INSERT INTO approvals (id, account_id, task_id, status, question, requested_by, requested_by_token, created_at)
             VALUES (?, ?, ?, 'pending', 'Ship it?', 'bot', ?, ?)`, apr1, acc.accountId, awaitingWithApproval, acc.tokenIds.agent, iso(now - 3 * HOUR)),
        sql(`INSERT INTO approvals (id, account_id, task_id, status, question, requested_by, requested_by_token, created_at)
             VALUES (?, ?, ?, 'pending', 'OK to start?', 'bot', ?, ?)`, apr2, acc.accountId, pendingOnOpen, acc.tokenIds.agent, iso(now - 30 * HOUR)),
        sql(`INSERT INTO approvals (id, account_id, task_id, status, question, requested_by, requested_by_token, created_at, decided_at)
             VALUES (?, ?, ?, 'approved', 'Fine?', 'bot', ?, ?, ?)`, apr3, acc.accountId, decided, acc.tokenIds.agent, iso(now - 3 * HOUR), iso(now - 2 * HOUR)),
      );

      const blockedNew = await task(c, "blocked an hour ago");
      const blockedOld = await task(c, "blocked yesterday, edited today");
      const blockedNoActivity = await task(c, "blocked without a block_task entry");
      const activity = (target: string, at: number) =>
        sql(`INSERT INTO activity (id, account_id, token_id, actor, tool, target_id, summary, created_at)
             VALUES (?, ?, ?, 'human', 'block_task', ?, 'blocked', ?)`, rid("act"), acc.accountId, acc.tokenIds.human, target, iso(at));
      updates.push(
        sql("UPDATE tasks SET status = 'blocked', blocked_reason = 'waiting for keys' WHERE id = ?", blockedNew),
        activity(blockedNew, now - HOUR),
        sql("UPDATE tasks SET status = 'blocked', blocked_reason = 'old', updated_at = ? WHERE id = ?", iso(now - HOUR), blockedOld),
        activity(blockedOld, now - 30 * HOUR),
        sql("UPDATE tasks SET status = 'blocked', blocked_reason = 'dependency', updated_at = ? WHERE id = ?", iso(now - 2 * HOUR), blockedNoActivity),
      );

      const runTask = await task(c, "run target");
      const run = (id: string, status: string, finished: number) =>
        sql(`INSERT INTO runs (id, account_id, task_id, agent_id, status, summary, started_at, finished_at, last_event_at)
             VALUES (?, ?, ?, ?, ?, 'it broke', ?, ?, ?)`, id, acc.accountId, runTask, agentId, status, iso(finished - HOUR), iso(finished), iso(finished));
      updates.push(run(run1, "failed", now - HOUR), run(run2, "succeeded", now - HOUR), run(run3, "failed", now - 8 * HOUR));

      const dueSoon = await task(c, "due in 10 hours", { due_at: iso(now + 10 * HOUR), priority: "high" });
      const dueSooner = await task(c, "due in 1 hour", { due_at: iso(now + HOUR) });
      const dueLater = await task(c, "due in 60 hours", { due_at: iso(now + 60 * HOUR) });
      const overdue = await task(c, "overdue", { due_at: iso(now - HOUR) });
      const doneDue = await task(c, "done but due", { due_at: iso(now + 5 * HOUR) });
      updates.push(sql("UPDATE tasks SET status = 'cancelled' WHERE id = ?", doneDue));
      await asServer(env.DB, updates);

      const d = await c.ok("get_digest", { since });
      expect(d.since).toBe(since);
      expect(d.completed.count).toBe(23);
      expect(d.completed.items).toHaveLength(20);
      expect(d.completed.items[0]).toMatchObject({ id: completed[22], title: "done 22", completed_at: iso(now - HOUR + 22_000) });
      expect(d.completed.items.map((t: { id: string }) => t.id)).toEqual(completed.slice(3).reverse());

      expect(d.awaiting_approval.count).toBe(3);
      expect(d.awaiting_approval.items).toEqual([
        { task_id: pendingOnOpen, task_title: "open task with a pending request", status: "open", approval_id: apr2, question: "OK to start?", requested_by: "bot", waiting_since: iso(now - 30 * HOUR) },
        { task_id: awaitingWithApproval, task_title: "awaiting, with a request", status: "awaiting_approval", approval_id: apr1, question: "Ship it?", requested_by: "bot", waiting_since: iso(now - 3 * HOUR) },
        { task_id: awaitingBare, task_title: "awaiting, no request", status: "awaiting_approval", approval_id: null, question: null, requested_by: null, waiting_since: iso(now - 2 * HOUR) },
      ]);

      expect(d.newly_blocked.count).toBe(2);
      expect(d.newly_blocked.items.map((t: { id: string }) => t.id)).toEqual([blockedNew, blockedNoActivity]);
      expect(d.newly_blocked.items[0]).toMatchObject({ blocked_reason: "waiting for keys", blocked_at: iso(now - HOUR) });

      expect(d.failed_runs).toEqual({
        count: 1,
        items: [{ run_id: run1, task_id: runTask, task_title: "run target", agent: acc.agentName, summary: "it broke", finished_at: iso(now - HOUR) }],
      });

      expect(d.due_soon.count).toBe(2);
      expect(d.due_soon.items.map((t: { id: string }) => t.id)).toEqual([dueSooner, dueSoon]);
      expect(d.due_soon.items[1]).toMatchObject({ priority: "high", status: "open", due_at: iso(now + 10 * HOUR) });

      const text = JSON.stringify(d);
      for (const hidden of [doneEarlier, trashedDone, theirsDone, decided, blockedOld, dueLater, overdue, doneDue]) expect(text).not.toContain(hidden);

      const wider = await c.ok("get_digest", { since: iso(now - 10 * HOUR) });
      expect(wider.completed.count).toBe(24);
      expect(wider.failed_runs.count).toBe(2);
      const theirs = await s.ok("get_digest", {});
      expect(theirs.completed).toEqual({ count: 1, items: [expect.objectContaining({ id: theirsDone })] });
      expect(theirs.awaiting_approval.count + theirs.newly_blocked.count + theirs.failed_runs.count + theirs.due_soon.count).toBe(0);
      await c.close();
      await s.close();
    });
  }

  it("defaults to the last 24 hours, refuses a future since, and reads with one batch", async () => {
    const acc = await seedAccount();
    const c = await connect(acc.humanRead);
    const d = await c.ok("get_digest");
    expect(Date.parse(d.until) - Date.parse(d.since)).toBe(24 * HOUR);
    expect(await c.fails("get_digest", { since: iso(Date.now() + HOUR) })).toMatch(/since: .* in the future/);
    expect(await c.fails("get_digest", { since: "yesterday" })).toMatch(/since/);
    await c.close();

    const res = await workerFetch(MCP_URL, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${acc.humanRead}`,
        "mcp-protocol-version": "2025-06-18",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "get_digest", arguments: {} } }),
    });
    expect(res.status).toBe(200);
    const body = await res.text();
    expect(body).toContain("due_soon");
    expect(Number(res.headers.get("x-d1-calls"))).toBeLessThanOrEqual(2);
  });
});
