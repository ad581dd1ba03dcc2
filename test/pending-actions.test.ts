/**
 * Pending actions: a call an agent's policy asks about waits for the person,
 * nothing run. The agent is told so (isError, the approval, its decide link
 * and expiry in `_meta`); the person sees the call, its arguments and what it
 * touches, and approves it (the server runs it once, as the agent, and keeps
 * its result) or rejects it (nothing runs); past its expiry nothing runs and
 * deciding is refused. Through real SDK clients in both protocol eras.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { asServer, connect, ERAS, MCP_URL, seedAccount, workerFetch, type Era, type TestClient } from "./helpers.ts";
import { POLICY_PRESETS, rulesText } from "../src/catalog/policy.ts";
import { forgetResolvedTokens } from "../src/db/principals.ts";
import { scheduled } from "../src/jobs.ts";

/** An account whose agent (bot) has the Careful preset: it asks before destructive and open-world tools. */
async function careful(era: Era, name: string) {
  const acc = await seedAccount(name, "bot");
  await env.DB.prepare("UPDATE agents SET policy = ? WHERE account_id = ? AND name = 'bot'").bind(rulesText(POLICY_PRESETS.careful.rules), acc.accountId).run();
  forgetResolvedTokens();
  const person = await connect(acc.human, era);
  const agent = await connect(acc.agent, era);
  return { acc, person, agent, close: () => Promise.all([person.close(), agent.close()]) };
}

/** The raw answer of a tools/call, with its `_meta` (the test client keeps only text and structured content). */
async function rawCall(secret: string, era: Era, name: string, args: Record<string, unknown>) {
  if (era === "modern") {
    const client = new Client({ name: "raw", version: "1" }, { versionNegotiation: { mode: "auto" } });
    await client.connect(new StreamableHTTPClientTransport(new URL(MCP_URL), { fetch: workerFetch, requestInit: { headers: { authorization: `Bearer ${secret}` } } }));
    try {
      return (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: { type: string; text: string }[]; _meta?: Record<string, any> };
    } finally {
      await client.close();
    }
  }
  const c = await connect(secret, era);
  await c.close();
  const res = await workerFetch(MCP_URL, {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }),
  });
  const text = await res.text();
  const json = text.startsWith("{") ? JSON.parse(text) : JSON.parse(text.split("\n").find((l) => l.startsWith("data: "))!.slice(6));
  return json.result as { isError?: boolean; content: { type: string; text: string }[]; _meta?: Record<string, any> };
}

const idIn = (text: string) => /pending action (apr_[a-z0-9]+)/.exec(text)?.[1] as string;

async function trashCount(person: TestClient, taskId: string): Promise<number> {
  const trash = await person.ok("list_trash", {});
  return (trash.items as { target_id?: string; kind: string; title: string }[]).filter((i) => i.target_id === taskId).length;
}

describe.each(ERAS)("pending actions (%s)", (era) => {
  it("a careful agent's delete_task waits for the person: nothing ran, the answer names the approval, its page and expiry", async () => {
    const t = await careful(era, `pa-ask-${era}`);
    const task = await t.person.ok("create_task", { title: "Old draft" });
    const raw = await rawCall(t.acc.agent, era, "delete_task", { task_id: task.task.id });
    expect(raw.isError).toBe(true);
    const text = raw.content.map((c) => c.text).join("\n");
    expect(text).toMatch(/waits for the person's approval/);
    const id = idIn(text);
    expect(id).toMatch(/^apr_/);
    expect(text).toContain(`get_approval with approval_id ${id}`);
    expect(text).toContain(`https://taskgate.test/approvals/${id}`);
    expect(raw._meta?.["dev.taskgate/policy"]).toMatchObject({ decision: "ask", rule: expect.stringContaining("destructive") });
    expect(raw._meta?.["dev.taskgate/pending_action"]).toEqual({
      outcome: "awaiting_approval", approval_id: id, decide_url: `https://taskgate.test/approvals/${id}`, expires_at: expect.any(String),
    });
    const expires = Date.parse(raw._meta?.["dev.taskgate/pending_action"].expires_at);
    expect(expires - Date.now()).toBeGreaterThan(23 * 3600_000);
    // Nothing ran: the task is live.
    expect((await t.person.ok("get_task", { task_id: task.task.id })).task.status).toBe("open");
    // The person sees the call, its arguments in words, what it touches.
    const got = await t.person.ok("get_approval", { approval_id: id });
    expect(got.approval).toMatchObject({ kind: "action", status: "pending", task_id: task.task.id, task_title: "Old draft", requested_by: "bot" });
    expect(got.approval.action).toMatchObject({ tool: "delete_task", title: expect.any(String), arguments: JSON.stringify({ task_id: task.task.id }), result: null, ran_at: null });
    expect(got.approval.action.touches).toEqual([expect.objectContaining({ kind: "task", id: task.task.id, name: "Old draft" })]);
    expect(got.approval.action.arguments_in_words).toContain("Old draft");
    expect(got.decide_url).toBe(`https://taskgate.test/approvals/${id}`);
    const list = await t.person.ok("list_pending_approvals", {});
    expect(list.items.map((i: { id: string }) => i.id)).toContain(id);
    await t.close();
  });

  it("the identical call again answers with the same pending action; other arguments are a new one", async () => {
    const t = await careful(era, `pa-same-${era}`);
    const a = await t.person.ok("create_task", { title: "A" });
    const b = await t.person.ok("create_task", { title: "B" });
    const first = idIn(await t.agent.fails("delete_task", { task_id: a.task.id }));
    const again = await t.agent.fails("delete_task", { task_id: a.task.id });
    expect(idIn(again)).toBe(first);
    expect(again).toContain("already waits");
    const other = idIn(await t.agent.fails("delete_task", { task_id: b.task.id }));
    expect(other).not.toBe(first);
    const list = await t.person.ok("list_pending_approvals", {});
    expect(list.items.filter((i: { kind: string }) => i.kind === "action")).toHaveLength(2);
    await t.close();
  });

  it("approved, the call runs once as the agent: the task is in the trash exactly once, the agent reads the result; approving again applies nothing", async () => {
    const t = await careful(era, `pa-approve-${era}`);
    const task = await t.person.ok("create_task", { title: "Ready to go" });
    const id = idIn(await t.agent.fails("delete_task", { task_id: task.task.id }));
    const approved = await t.person.ok("approve_task", { approval_id: id, note: "fine" });
    expect(approved.changed).toBe(true);
    expect(approved.approval).toMatchObject({ id, kind: "action", status: "approved", decided_by: "human", reason: "fine" });
    expect(approved.approval.action.result.is_error).toBe(false);
    const trashed = JSON.parse(approved.approval.action.result.text);
    expect(trashed).toMatchObject({ trash_id: expect.stringMatching(/^trs_/), already_in_trash: false });
    expect(await trashCount(t.person, task.task.id)).toBe(1);
    // The trash item is the agent's deletion: it ran as the agent.
    const trash = await t.person.ok("list_trash", {});
    expect(trash.items.find((i: { target_id: string }) => i.target_id === task.task.id)).toMatchObject({ deleted_by: "bot" });
    const seen = await t.agent.ok("get_approval", { approval_id: id });
    expect(seen.approval.status).toBe("approved");
    expect(JSON.parse(seen.approval.action.result.text).trash_id).toBe(trashed.trash_id);
    const again = await t.person.ok("approve_task", { approval_id: id });
    expect(again.changed).toBe(false);
    expect(again.approval.action.result).toEqual(approved.approval.action.result);
    expect(await trashCount(t.person, task.task.id)).toBe(1);
    // Decided, it left the queue.
    expect((await t.person.ok("list_pending_approvals", {})).items).toEqual([]);
    await t.close();
  });

  it("a run cut short before its result was kept is finished under the same key: the deletion is not applied twice", async () => {
    const t = await careful(era, `pa-crash-${era}`);
    const task = await t.person.ok("create_task", { title: "Half done" });
    const id = idIn(await t.agent.fails("delete_task", { task_id: task.task.id }));
    const first = await t.person.ok("approve_task", { approval_id: id });
    // As if the run committed and the server stopped before keeping its result.
    await asServer(env.DB, env.DB.prepare("UPDATE pending_actions SET result = NULL, ran_at = NULL WHERE id = ?").bind(id));
    const again = await t.person.ok("approve_task", { approval_id: id });
    expect(again.changed).toBe(false);
    expect(JSON.parse(again.approval.action.result.text).trash_id).toBe(JSON.parse(first.approval.action.result.text).trash_id);
    expect(await trashCount(t.person, task.task.id)).toBe(1);
    await t.close();
  });

  it("rejected, nothing runs; the agent reads the status and the reason, and approving it then is refused", async () => {
    const t = await careful(era, `pa-reject-${era}`);
    const task = await t.person.ok("create_task", { title: "Keep me" });
    const id = idIn(await t.agent.fails("delete_task", { task_id: task.task.id }));
    const rejected = await t.person.ok("reject_task", { approval_id: id, reason: "still needed" });
    expect(rejected).toMatchObject({ changed: true, comment_id: null, approval: { status: "rejected", reason: "still needed" } });
    expect((await t.person.ok("reject_task", { approval_id: id, reason: "still needed" })).changed).toBe(false);
    expect(await t.person.fails("approve_task", { approval_id: id })).toMatch(/already rejected/);
    expect((await t.agent.ok("get_approval", { approval_id: id })).approval).toMatchObject({ status: "rejected", reason: "still needed", action: { result: null } });
    expect((await t.person.ok("get_task", { task_id: task.task.id })).task.status).toBe("open");
    expect(await trashCount(t.person, task.task.id)).toBe(0);
    await t.close();
  });

  it("expired, nothing runs and deciding is refused; the daily job marks it expired", async () => {
    const t = await careful(era, `pa-expire-${era}`);
    const task = await t.person.ok("create_task", { title: "Too late" });
    const id = idIn(await t.agent.fails("delete_task", { task_id: task.task.id }));
    const other = idIn(await t.agent.fails("delete_task", { task_id: (await t.person.ok("create_task", { title: "Later" })).task.id }));
    const past = new Date(Date.now() - 1000).toISOString();
    await asServer(env.DB, env.DB.prepare("UPDATE pending_actions SET expires_at = ? WHERE id IN (?, ?)").bind(past, id, other));
    expect((await t.agent.ok("get_approval", { approval_id: id })).approval.status).toBe("expired");
    expect((await t.person.ok("list_pending_approvals", {})).items).toEqual([]);
    expect(await t.person.fails("approve_task", { approval_id: id })).toMatch(/expired/);
    expect(await t.person.fails("reject_task", { approval_id: id, reason: "no" })).toMatch(/expired/);
    expect((await env.DB.prepare("SELECT status FROM pending_actions WHERE id = ?").bind(id).first<{ status: string }>())?.status).toBe("expired");
    expect(await trashCount(t.person, task.task.id)).toBe(0);
    await scheduled({ cron: "0 3 * * *" } as ScheduledController, env as never, { waitUntil: () => {} } as unknown as ExecutionContext);
    await new Promise((r) => setTimeout(r, 50));
    await expect.poll(async () => (await env.DB.prepare("SELECT status FROM pending_actions WHERE id = ?").bind(other).first<{ status: string }>())?.status).toBe("expired");
    // Asking again after it expired is a new request.
    const fresh = idIn(await t.agent.fails("delete_task", { task_id: task.task.id }));
    expect(fresh).not.toBe(id);
    await t.close();
  });

  it("an agent cannot approve or reject: not through the tools, not through its own batch", async () => {
    const t = await careful(era, `pa-agent-${era}`);
    const task = await t.person.ok("create_task", { title: "Mine to decide" });
    const id = idIn(await t.agent.fails("delete_task", { task_id: task.task.id }));
    expect(await t.agent.fails("approve_task", { approval_id: id })).toMatch(/person/);
    expect(await t.agent.fails("reject_task", { approval_id: id, reason: "x" })).toMatch(/person/);
    const batch = `cal_${crypto.randomUUID()}`;
    const now = new Date().toISOString();
    await expect(
      env.DB.batch([
        env.DB.prepare("INSERT INTO call_actor (batch, kind, name, now) VALUES (?, 'agent', 'bot', ?)").bind(batch, now),
        env.DB.prepare("UPDATE pending_actions SET status = 'approved', decided_by = 'bot' WHERE id = ?").bind(id),
        env.DB.prepare("DELETE FROM call_actor WHERE batch = ?").bind(batch),
      ]),
    ).rejects.toThrow(/taskgate:decision/);
    expect((await t.person.ok("get_approval", { approval_id: id })).approval.status).toBe("pending");
    await t.close();
  });

  it("approve_task and reject_task take exactly one of task_id and approval_id", async () => {
    const t = await careful(era, `pa-args-${era}`);
    const task = await t.person.ok("create_task", { title: "Either" });
    expect(await t.person.fails("approve_task", {})).toMatch(/task_id .*or approval_id/);
    expect(await t.person.fails("approve_task", { task_id: task.task.id, approval_id: "apr_0123456789abcdef" })).toMatch(/not both/);
    expect(await t.person.fails("reject_task", { reason: "x" })).toMatch(/task_id .*or approval_id/);
    await t.close();
  });

  it("a paused agent's approved action is refused, and that refusal is its result", async () => {
    const t = await careful(era, `pa-paused-${era}`);
    const task = await t.person.ok("create_task", { title: "Paused" });
    const id = idIn(await t.agent.fails("delete_task", { task_id: task.task.id }));
    await t.person.ok("pause_agent", { agent: "bot" });
    const approved = await t.person.ok("approve_task", { approval_id: id });
    expect(approved.approval.action.result).toMatchObject({ is_error: true, text: expect.stringMatching(/paused/) });
    expect(await trashCount(t.person, task.task.id)).toBe(0);
    await t.close();
  });
});
