/** The checks of the end-to-end script: HTTP edges, tools/list per token, and a whole task life. */
import { annotationsFor, HUMAN_TOOLS, isToolName, TOOL_NAMES, WRITE_TOOLS, type ToolName } from "../../src/catalog/effects.ts";
import { PRESETS, TOOLSET_NAMES } from "../../src/catalog/toolsets.ts";
import { assert, equal, type Checks, type McpSession } from "./e2e-harness.ts";

const JSON_RPC_LIST = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

export async function httpEdges(c: Checks, base: string, token: string, allowedOrigin: string): Promise<void> {
  const mcp = `${base}/mcp`;
  await c.run("GET /health answers 200 {ok: true}", async () => {
    const res = await fetch(`${base}/health`);
    equal(res.status, 200, "status");
    equal(((await res.json()) as { ok: boolean }).ok, true, "ok");
  });
  await c.run("POST /mcp without a token: 401 with WWW-Authenticate: Bearer", async () => {
    const res = await fetch(mcp, { method: "POST", headers: MCP_HEADERS, body: JSON_RPC_LIST });
    equal(res.status, 401, "status");
    assert(/^Bearer realm=/.test(res.headers.get("www-authenticate") ?? ""), `WWW-Authenticate is ${res.headers.get("www-authenticate")}`);
  });
  await c.run("POST /mcp with an unknown token: 401 invalid_token", async () => {
    const res = await fetch(mcp, { method: "POST", headers: { ...MCP_HEADERS, authorization: `Bearer tg_${"x".repeat(43)}` }, body: JSON_RPC_LIST });
    equal(res.status, 401, "status");
    assert((res.headers.get("www-authenticate") ?? "").includes(`error="invalid_token"`), "WWW-Authenticate names invalid_token");
  });
  await c.run("a token in the query string: 401", async () => {
    const res = await fetch(`${mcp}?token=${token}`, { method: "POST", headers: MCP_HEADERS, body: JSON_RPC_LIST });
    equal(res.status, 401, "status");
  });
  await c.run("POST /mcp from a foreign Origin: 403", async () => {
    const res = await fetch(mcp, {
      method: "POST",
      headers: { ...MCP_HEADERS, authorization: `Bearer ${token}`, origin: "https://evil.example" },
      body: JSON_RPC_LIST,
    });
    equal(res.status, 403, "status");
  });
  await c.run("CORS preflight from an ALLOWED_ORIGINS origin: 204 with Access-Control-Allow-Origin", async () => {
    const res = await fetch(mcp, { method: "OPTIONS", headers: { origin: allowedOrigin, "access-control-request-method": "POST" } });
    equal(res.status, 204, "status");
    equal(res.headers.get("access-control-allow-origin"), allowedOrigin, "Access-Control-Allow-Origin");
  });
  await c.run("GET /mcp: 405 with Allow: POST", async () => {
    const res = await fetch(mcp, { headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" } });
    equal(res.status, 405, "status");
    equal(res.headers.get("allow"), "POST", "Allow");
  });
  const listAt = async (url: string, headers: Record<string, string> = {}) => {
    const res = await fetch(url, {
      method: "POST",
      headers: { ...MCP_HEADERS, authorization: `Bearer ${token}`, "mcp-protocol-version": "2025-06-18", ...headers },
      body: JSON_RPC_LIST,
    });
    equal(res.status, 200, "status");
    const text = await res.text();
    const json = text.startsWith("event:") ? (text.split("\n").find((l) => l.startsWith("data: ")) ?? "").slice(6) : text;
    return ((JSON.parse(json) as { result: { tools: { name: string }[] } }).result.tools).map((t) => t.name);
  };
  await c.run("POST /mcp/x/agent: tools/list is the agent preset, in catalog order", async () => {
    const agent = PRESETS.find((p) => p.name === "agent")!;
    equal(JSON.stringify(await listAt(`${mcp}/x/agent`)), JSON.stringify(TOOL_NAMES.filter((n) => agent.tools.includes(n))), "tools");
  });
  await c.run("POST /mcp/readonly and X-MCP-Readonly: only the read tools, for a write token", async () => {
    const reads = JSON.stringify(TOOL_NAMES.filter((n) => !WRITE_TOOLS.has(n)));
    equal(JSON.stringify(await listAt(`${mcp}/readonly`)), reads, "tools at /mcp/readonly");
    equal(JSON.stringify(await listAt(mcp, { "x-mcp-readonly": "true" })), reads, "tools with X-MCP-Readonly");
  });
  await c.run("an unknown toolset: 400 naming the valid ones", async () => {
    const res = await fetch(`${mcp}?toolsets=tasks,nonsense`, { method: "POST", headers: { ...MCP_HEADERS, authorization: `Bearer ${token}` }, body: JSON_RPC_LIST });
    equal(res.status, 400, "status");
    equal(JSON.stringify(((await res.json()) as { valid_toolsets: string[] }).valid_toolsets), JSON.stringify(TOOLSET_NAMES), "valid_toolsets");
  });
  await c.run("a 2 MiB body: 413", async () => {
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { pad: "x".repeat(2 * 1024 * 1024) } });
    const res = await fetch(mcp, { method: "POST", headers: { ...MCP_HEADERS, authorization: `Bearer ${token}` }, body });
    equal(res.status, 413, "status");
  });
}

export type TokenRole = "human write" | "human read" | "agent write" | "agent read";

/** What the catalog says this token may call. */
export function expectedTools(role: TokenRole): ToolName[] {
  if (role.endsWith("read")) return TOOL_NAMES.filter((n) => !WRITE_TOOLS.has(n));
  if (role === "agent write") return TOOL_NAMES.filter((n) => !HUMAN_TOOLS.has(n));
  return [...TOOL_NAMES];
}

/** tools/list shows exactly what `role` may call, with the catalog's titles and hints. `credential` names what the client holds. */
export async function toolList(c: Checks, s: McpSession, role: TokenRole, credential = "token"): Promise<void> {
  const want = expectedTools(role);
  await c.run(`tools/list, ${role} ${credential}, ${s.era} client (${s.protocolVersion}): ${want.length} tools with their hints`, async () => {
    const tools = await s.listTools();
    const names = tools.map((t) => t.name);
    const unknown = names.filter((n) => !isToolName(n));
    assert(unknown.length === 0, `not in the catalog: ${unknown.join(", ")}`);
    const extra = names.filter((n) => !want.includes(n as ToolName));
    assert(extra.length === 0, `${extra.length} tools this token may not call are listed: ${extra.join(", ")}`);
    const missing = want.filter((n) => !names.includes(n));
    assert(missing.length === 0, `saw ${names.length} of ${want.length}; missing ${missing.length}: ${missing.join(", ")}`);
    for (const t of tools) {
      const a = annotationsFor(t.name as ToolName);
      const got = t.annotations ?? {};
      for (const hint of ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] as const) {
        equal(got[hint], a[hint], `${t.name}.${hint}`);
      }
      equal(t.title, a.title, `${t.name}.title`);
    }
  });
}

interface LifeActors {
  human: McpSession;
  agent: McpSession;
  agentRead: McpSession;
  agentName: string;
}

/**
 * A task's whole life, as it happens between a person and an agent: the person
 * creates it, the agent splits, claims, runs, logs and completes it, the person
 * approves it, deletes it and restores it. Each step is one check; a step whose
 * input is missing (an earlier step failed) is reported as failed, not skipped.
 */
export async function taskLife(c: Checks, { human, agent, agentRead, agentName }: LifeActors): Promise<void> {
  const tag = `[agent ${agent.era}, human ${human.era}]`;
  const step = <T>(name: string, fn: () => Promise<T>) => c.run(`${tag} ${name}`, fn);

  const project = await step("human create_project", async () => {
    const r = await human.ok("create_project", { name: `Launch ${human.era}` });
    assert(/^prj_/.test(r.project?.id), "a project id");
    return r.project.id as string;
  });
  const task = await step("human create_task in the project", async () => {
    assert(project, "no project");
    const r = await human.ok("create_task", { title: "Write the launch post", project_id: project, priority: "high" });
    equal(r.task.status, "open", "status");
    equal(r.task.auto_ok, false, "auto_ok");
    return r.task.id as string;
  });
  await step("agent read token: create_task is refused", async () => {
    const text = await agentRead.fails("create_task", { title: "not allowed" });
    assert(/read/i.test(text), `the refusal says why: ${text}`);
  });
  await step("agent decompose_task into 2 subtasks", async () => {
    assert(task, "no task");
    const r = await agent.ok("decompose_task", { task_id: task, subtasks: [{ title: "Outline" }, { title: "Draft", notes: "500 words" }] });
    equal(r.tasks.length, 2, "subtasks");
    equal(r.tasks[0].parent_id, task, "parent_id");
  });
  await step("agent claim_task: in progress, assigned to the agent", async () => {
    assert(task, "no task");
    const r = await agent.ok("claim_task", { task_id: task });
    equal(r.task.status, "in_progress", "status");
    equal(r.task.assignee, agentName, "assignee");
  });
  const run = await step("agent start_run", async () => {
    assert(task, "no task");
    const r = await agent.ok("start_run", { task_id: task });
    equal(r.run.status, "running", "run status");
    return r.run.id as string;
  });
  await step("agent log_run_event (progress, then an artifact link)", async () => {
    assert(run, "no run");
    await agent.ok("log_run_event", { run_id: run, kind: "progress", message: "outline done" });
    const r = await agent.ok("log_run_event", { run_id: run, kind: "artifact", message: "draft", url: "https://example.com/draft" });
    equal(r.event.run_id, run, "run_id");
  });
  const approval = await step("agent complete_task without auto-OK: awaiting approval", async () => {
    assert(task, "no task");
    const r = await agent.ok("complete_task", { task_id: task, note: "Post drafted; please check the tone." });
    equal(r.outcome, "awaiting_approval", "outcome");
    equal(r.task.status, "awaiting_approval", "status");
    assert(r.approval?.id, "an approval");
    return r.approval.id as string;
  });
  await step("agent approve_task is refused (people only)", async () => {
    assert(task, "no task");
    await agent.fails("approve_task", { task_id: task });
  });
  await step("human list_pending_approvals shows it", async () => {
    assert(approval, "no approval");
    const r = await human.ok("list_pending_approvals", {});
    assert(r.items.some((a: { id: string }) => a.id === approval), `approval ${approval} not listed`);
  });
  await step("human approve_task: done", async () => {
    assert(task, "no task");
    const r = await human.ok("approve_task", { task_id: task });
    equal(r.task.status, "done", "status");
    equal(r.approval?.status, "approved", "approval status");
  });
  await step("approve_task again changes nothing", async () => {
    assert(task, "no task");
    const r = await human.ok("approve_task", { task_id: task });
    equal(r.changed, false, "changed");
  });
  const trashId = await step("human delete_task: the task and its 2 subtasks go to the trash", async () => {
    assert(task, "no task");
    const r = await human.ok("delete_task", { task_id: task });
    equal(r.item_count, 3, "item_count");
    return r.trash_id as string;
  });
  await step("the deleted task is gone from get_task and list_tasks", async () => {
    assert(task && trashId, "no deleted task");
    await human.fails("get_task", { task_id: task });
    const r = await human.ok("list_tasks", { project_id: project });
    equal(r.items.length, 0, "tasks in the project");
  });
  await step("human restore_from_trash brings back all 3", async () => {
    assert(trashId, "no trash item");
    const r = await human.ok("restore_from_trash", { item_id: trashId });
    equal(r.restored, true, "restored");
    equal(r.item_count, 3, "item_count");
  });
  await step("the restored task is done, with its subtasks and its history", async () => {
    assert(task, "no task");
    const r = await agentRead.ok("get_task", { task_id: task });
    equal(r.task.status, "done", "status");
    const subtasks = await agentRead.ok("list_subtasks", { task_id: task });
    equal(subtasks.items.length, 2, "subtasks");
    const history = await human.ok("get_task_history", { task_id: task });
    const tools = new Set(history.items.map((e: { tool: string }) => e.tool));
    for (const t of ["create_task", "claim_task", "start_run", "complete_task", "approve_task", "delete_task"]) {
      assert(tools.has(t), `history has no ${t} entry (has ${[...tools].join(", ")})`);
    }
  });
}
