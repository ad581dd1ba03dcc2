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
import { act, flashOn, open, signedInPerson, type Person } from "./console.helpers.ts";
import { ORIGIN } from "./web-helpers.ts";
import { checkOutput } from "./output-check.ts";

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

  it("a policy that denies the call by the time it is approved refuses the run, and that refusal is its result", async () => {
    const t = await careful(era, `pa-denied-${era}`);
    const task = await t.person.ok("create_task", { title: "Policy changed" });
    const id = idIn(await t.agent.fails("delete_task", { task_id: task.task.id }));
    await env.DB.prepare("UPDATE agents SET policy = ? WHERE account_id = ? AND name = 'bot'").bind(rulesText(POLICY_PRESETS.read_only.rules), t.acc.accountId).run();
    const approved = await t.person.ok("approve_task", { approval_id: id });
    expect(approved.approval.action.result).toMatchObject({ is_error: true, text: expect.stringMatching(/denied/) });
    expect(await trashCount(t.person, task.task.id)).toBe(0);
    await t.close();
  });

  it("approval_id of a question decides it as task_id does; the queue pages questions and actions together, oldest first", async () => {
    const t = await careful(era, `pa-mixed-${era}`);
    const a = await t.agent.ok("create_task", { title: "Asked about" });
    const asked = await t.agent.ok("request_approval", { task_id: a.task.id, question: "Go on?" });
    const b = await t.person.ok("create_task", { title: "To delete" });
    const id = idIn(await t.agent.fails("delete_task", { task_id: b.task.id }));
    const first = await t.person.ok("list_pending_approvals", { limit: 1 });
    expect(first.items.map((i: { id: string }) => i.id)).toEqual([asked.approval.id]);
    const second = await t.person.ok("list_pending_approvals", { limit: 1, cursor: first.next_cursor });
    expect(second.items.map((i: { id: string; kind: string }) => [i.id, i.kind])).toEqual([[id, "action"]]);
    expect(second.items[0].run).toBeNull();
    const answered = await t.person.ok("approve_task", { approval_id: asked.approval.id });
    expect(answered.approval).toMatchObject({ id: asked.approval.id, kind: "question", status: "approved", action: null });
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

/** A signed-in person whose agent (bot) has the Careful preset. */
async function carefulPerson(name: string): Promise<Person> {
  const p = await signedInPerson(name);
  await env.DB.prepare("UPDATE agents SET policy = ? WHERE account_id = ?").bind(rulesText(POLICY_PRESETS.careful.rules), p.acc.accountId).run();
  forgetResolvedTokens();
  return p;
}

async function personTask(p: Person, title: string): Promise<string> {
  const person = await connect(p.acc.human);
  const { task } = await person.ok("create_task", { title });
  await person.close();
  return task.id as string;
}

describe("the console: the inbox and the action's own page show what would happen; the person decides there", () => {
  it("approve from the decide page: it runs once, as the agent; the page then shows the outcome", async () => {
    const p = await carefulPerson("Console action");
    const taskId = await personTask(p, "Quarterly draft");
    const agent = await connect(p.acc.agent);
    const id = idIn(await agent.fails("delete_task", { task_id: taskId }));
    const inbox = await open(p.b, "/");
    expect(inbox.res.status).toBe(200);
    expect(inbox.html).toContain("1 action waiting for your approval");
    expect(inbox.html).toContain("Delete task");
    expect(inbox.html).toContain("Quarterly draft");
    expect(inbox.html).toContain(`href="/approvals/${id}"`);
    const page = await open(p.b, `/approvals/${id}`);
    expect(page.res.status).toBe(200);
    expect(page.html).toContain("What would happen");
    expect(page.html).toContain("Quarterly draft");
    expect(page.html).toContain("Approve and run");
    const res = await act(p.b, `/approvals/${id}`, "approve_action", { approval_id: id });
    expect(res.status).toBe(303);
    expect(await flashOn(p.b, `/approvals/${id}`)).toMatch(/^ok: Approved “Delete task”: it ran once, as bot\./);
    const after = await open(p.b, `/approvals/${id}`);
    expect(after.html).toContain("Outcome");
    expect(after.html).not.toContain("Approve and run");
    expect((await agent.ok("get_approval", { approval_id: id })).approval.status).toBe("approved");
    expect((await env.DB.prepare("SELECT count(*) AS n FROM trash WHERE account_id = ? AND target_id = ?").bind(p.acc.accountId, taskId).first<{ n: number }>())?.n).toBe(1);
    await agent.close();
  });

  it("reject from the inbox: nothing runs; an unknown id is a 404", async () => {
    const p = await carefulPerson("Console reject");
    const taskId = await personTask(p, "Keep this");
    const agent = await connect(p.acc.agent);
    const id = idIn(await agent.fails("delete_task", { task_id: taskId }));
    expect((await act(p.b, "/", "reject_action", { approval_id: id, reason: "Not yet." })).status).toBe(303);
    expect(await flashOn(p.b, "/")).toMatch(/^ok: Rejected “Delete task”: nothing ran/);
    expect((await agent.ok("get_approval", { approval_id: id })).approval).toMatchObject({ status: "rejected", reason: "Not yet." });
    expect((await open(p.b, "/approvals/apr_0000000000000000")).res.status).toBe(404);
    await agent.close();
  });
});

const TASKS = { extensions: { "io.modelcontextprotocol/tasks": {} } };

/** A raw 2026-07-28 JSON-RPC request, as a host without the SDK sends it; returns the parsed body. */
async function rpc(secret: string, method: string, params: Record<string, unknown>, capabilities: Record<string, unknown> = {}): Promise<any> {
  const name = method === "tools/call" ? (params.name as string) : (params.taskId as string | undefined);
  const res = await workerFetch(MCP_URL, {
    method: "POST",
    headers: {
      authorization: `Bearer ${secret}`, "content-type": "application/json", accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28", "mcp-method": method, ...(name ? { "mcp-name": name } : {}),
    },
    body: JSON.stringify({
      jsonrpc: "2.0", id: 1, method,
      params: {
        ...params,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientInfo": { name: "raw-host", version: "1" },
          "io.modelcontextprotocol/clientCapabilities": capabilities,
        },
      },
    }),
  });
  return res.json();
}

describe("2026-07-28: the same wait as a sign-off, resolving to the call's own result", () => {
  it("Tasks extension: tasks/get is working until the person approves, then completed with delete_task's own result", async () => {
    const p = await carefulPerson("Tasks action");
    const taskId = await personTask(p, "Archive me");
    const first = await rpc(p.acc.agent, "tools/call", { name: "delete_task", arguments: { task_id: taskId } }, TASKS);
    expect(first.result).toMatchObject({ resultType: "task", status: "working", taskId: expect.any(String) });
    expect(first.result.statusMessage).toMatch(new RegExp(`${ORIGIN}/approvals/apr_[0-9a-z]{16}`));
    const handle: string = first.result.taskId;
    const id = /apr_[0-9a-z]{16}/.exec(first.result.statusMessage)![0];
    expect((await rpc(p.acc.agent, "tasks/get", { taskId: handle }, TASKS)).result).toMatchObject({ status: "working" });
    expect((await act(p.b, `/approvals/${id}`, "approve_action", { approval_id: id })).status).toBe(303);
    const done = await rpc(p.acc.agent, "tasks/get", { taskId: handle }, TASKS);
    expect(done.result).toMatchObject({ status: "completed", result: { structuredContent: { trash_id: expect.stringMatching(/^trs_/), already_in_trash: false } } });
    expect(done.result.result.isError).toBeUndefined();
    checkOutput("delete_task", done.result.result.structuredContent);
    // Asked again, the same answer: it ran once.
    const again = await rpc(p.acc.agent, "tasks/get", { taskId: handle }, TASKS);
    expect(again.result.result.structuredContent.trash_id).toBe(done.result.result.structuredContent.trash_id);
  });

  it("Tasks extension: rejected, the task completes with an error result and nothing ran", async () => {
    const p = await carefulPerson("Tasks reject");
    const taskId = await personTask(p, "Not this one");
    const first = await rpc(p.acc.agent, "tools/call", { name: "delete_task", arguments: { task_id: taskId } }, TASKS);
    const id = /apr_[0-9a-z]{16}/.exec(first.result.statusMessage)![0];
    await act(p.b, `/approvals/${id}`, "reject_action", { approval_id: id, reason: "Keep it." });
    const done = await rpc(p.acc.agent, "tasks/get", { taskId: first.result.taskId }, TASKS);
    expect(done.result).toMatchObject({ status: "completed", result: { isError: true } });
    expect(done.result.result.content[0].text).toMatch(/rejected by human: Keep it\./);
  });

  it("URL elicitation: the host opens the action's page, the person approves, the retry returns delete_task's result", async () => {
    const p = await carefulPerson("URL action");
    const taskId = await personTask(p, "Old notes");
    const client = new Client({ name: "host-with-url-elicitation", version: "1.0.0" }, { capabilities: { elicitation: { url: {} } }, versionNegotiation: { mode: "auto" } });
    const seen: { url?: string; message: string }[] = [];
    client.setRequestHandler("elicitation/create", async (request) => {
      const e = request.params as { url?: string; message: string };
      seen.push(e);
      const path = new URL(e.url!).pathname;
      const page = await open(p.b, path);
      expect(page.html).toContain("Old notes");
      if (seen.length === 2) await act(p.b, path, "approve_action", { approval_id: path.split("/").pop()! });
      return { action: "accept" };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(MCP_URL), { fetch: workerFetch, requestInit: { headers: { authorization: `Bearer ${p.acc.agent}` } } }));
    expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
    await client.listTools();
    const r = (await client.callTool({ name: "delete_task", arguments: { task_id: taskId } })) as { isError?: boolean; structuredContent?: Record<string, any> };
    expect(seen).toHaveLength(2);
    expect(seen[0].url).toMatch(new RegExp(`^${ORIGIN}/approvals/apr_`));
    expect(seen[0].message).toMatch(/must approve delete_task/);
    expect(r.isError).not.toBe(true);
    expect(r.structuredContent).toMatchObject({ trash_id: expect.stringMatching(/^trs_/), already_in_trash: false });
    checkOutput("delete_task", r.structuredContent);
    await client.close();
  });
});
