import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { TOOL_NAMES, HUMAN_TOOLS, WRITE_TOOLS } from "../src/catalog/effects.ts";
import { asServer, connect, createToken, ERAS, MCP_URL, seedAccount, snapshotDb, workerFetch } from "./helpers.ts";
import { activityOf, agentClients, closeAll } from "./lifecycle.helpers.ts";

const READ_COUNT = TOOL_NAMES.filter((n) => !WRITE_TOOLS.has(n)).length;
const AGENT_WRITE_COUNT = TOOL_NAMES.length - HUMAN_TOOLS.size;

/** A modern SDK client that remembers how many D1 calls the Worker made for each tool call (x-d1-calls). */
async function meteredClient(secret: string) {
  const calls: number[] = [];
  const fetcher = async (input: RequestInfo | URL, init?: RequestInit) => {
    const res = await workerFetch(input, init);
    if (typeof init?.body === "string" && init.body.includes('"tools/call"')) calls.push(Number(res.headers.get("x-d1-calls")));
    return res;
  };
  const client = new Client({ name: "metered", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
  await client.connect(new StreamableHTTPClientTransport(new URL(MCP_URL), { fetch: fetcher, requestInit: { headers: { authorization: `Bearer ${secret}` } } }));
  return { client, calls };
}

describe("fleet_status", () => {
  it("shows every agent: active or paused, last seen, current and stale runs, claimed tasks", async () => {
    const acc = await seedAccount();
    const human = await connect(acc.human);
    const [a1, a2] = await agentClients(acc, ["a1", "a2"]);
    await createToken({ accountId: acc.accountId, kind: "agent", scope: "read", agent: "idle" });
    const { task: t1 } = await human.ok("create_task", { title: "Crawl the site" });
    const { task: t2 } = await human.ok("create_task", { title: "Summarise findings" });
    const { task: t3 } = await human.ok("create_task", { title: "Held but not running" });
    await a1.ok("claim_task", { task_id: t1.id });
    await a1.ok("claim_task", { task_id: t3.id });
    const fresh = (await a1.ok("start_run", { task_id: t1.id })).run;
    const stale = (await a2.ok("start_run", { task_id: t2.id })).run;
    const ended = (await a2.ok("start_run", { task_id: t2.id })).run;
    await a2.ok("finish_run", { run_id: ended.id, outcome: "succeeded", summary: "ok" });
    const old = new Date(Date.now() - 20 * 60_000).toISOString();
    await asServer(env.DB, env.DB.prepare("UPDATE runs SET last_event_at = ? WHERE id = ?").bind(old, stale.id));
    await human.ok("pause_agent", { agent: "a2" });
    const seenA1 = await env.DB.prepare("SELECT last_seen_at FROM agents WHERE account_id = ? AND name = 'a1'").bind(acc.accountId).first<{ last_seen_at: string | null }>();

    const before = await snapshotDb();
    const r = await a1.ok("fleet_status", {});
    expect(await snapshotDb()).toBe(before);
    expect(r.stale_after_minutes).toBe(15);
    expect(r.agents.map((g: { name: string }) => g.name)).toEqual(["a1", "a2", "bot", "idle"]);
    const [g1, g2, bot, idle] = r.agents;
    expect(g1).toMatchObject({
      state: "active",
      current_runs: [{ id: fresh.id, task_id: t1.id, task_title: "Crawl the site", minutes_since_event: 0 }],
      current_run_count: 1,
      stale_runs: [],
      stale_run_count: 0,
      claimed_task_count: 2,
    });
    expect(g1.last_seen_at).toBe(seenA1?.last_seen_at);
    expect(g1.claimed_tasks.map((t: { id: string }) => t.id).sort()).toEqual([t1.id, t3.id].sort());
    expect(g2).toMatchObject({
      state: "paused",
      paused_by: "human",
      current_runs: [],
      stale_runs: [{ id: stale.id, last_event_at: old, minutes_since_event: 20 }],
      stale_run_count: 1,
      claimed_tasks: [],
    });
    expect(bot).toMatchObject({ state: "active", current_runs: [], stale_runs: [], claimed_tasks: [] });
    expect(idle).toMatchObject({ last_seen_at: null, claimed_task_count: 0 });
    expect(r.totals).toEqual({ agents: 4, paused: 1, current_runs: 1, stale_runs: 1, claimed_tasks: 2 });

    const other = await seedAccount("Other");
    const stranger = await connect(other.human);
    expect((await stranger.ok("fleet_status", {})).agents.map((g: { name: string }) => g.name)).toEqual(["bot"]);
    await closeAll(human, a1, a2, stranger);
  });

  it("answers in one D1 round trip however many agents there are", async () => {
    const acc = await seedAccount();
    const human = await connect(acc.human);
    const names = ["b1", "b2", "b3", "b4", "b5", "b6"];
    const agents = await agentClients(acc, names);
    for (const [i, c] of agents.entries()) {
      const { task } = await c.ok("create_task", { title: `Work ${i}` });
      await c.ok("claim_task", { task_id: task.id });
      await c.ok("start_run", { task_id: task.id });
    }
    const { client, calls } = await meteredClient(acc.humanRead);
    await client.callTool({ name: "whoami", arguments: {} });
    const r = (await client.callTool({ name: "fleet_status", arguments: {} })) as { structuredContent: { agents: unknown[] } };
    expect(r.structuredContent.agents).toHaveLength(7);
    expect(calls[0]).toBe(1);
    expect(calls[1]).toBe(1);
    await client.close();
    await closeAll(human, ...agents);
  });
});

describe("pause_agent and resume_agent", () => {
  for (const era of ERAS) {
    it(`${era}: a paused agent's token only reads until resumed; its data is untouched`, async () => {
      const acc = await seedAccount();
      const other = await seedAccount("Other");
      const human = await connect(acc.human, era);
      const agent = await connect(acc.agent, era);
      const otherBot = await connect(other.agent, era);
      const { task } = await agent.ok("create_task", { title: "Keep going" });
      await agent.ok("claim_task", { task_id: task.id });
      const { run } = await agent.ok("start_run", { task_id: task.id });
      expect(await agent.listTools()).toHaveLength(AGENT_WRITE_COUNT);

      const tablesBefore = await dataOf(acc.accountId);
      const paused = await human.ok("pause_agent", { agent: acc.agentName, reason: "Too many emails" });
      expect(paused).toMatchObject({ changed: true, agent: { name: acc.agentName, state: "paused", paused_by: "human" } });
      expect(await dataOf(acc.accountId)).toEqual(tablesBefore);

      const tools = await agent.listTools();
      expect(tools).toHaveLength(READ_COUNT);
      expect(tools.every((t) => t.annotations?.readOnlyHint === true)).toBe(true);
      const before = await snapshotDb();
      expect(await agent.fails("log_run_event", { run_id: run.id, kind: "note", message: "still here" })).toMatch(/is paused by a person/);
      expect(await agent.fails("create_task", { title: "Sneaky" })).toMatch(/is paused by a person/);
      expect(await snapshotDb()).toBe(before);
      expect((await agent.ok("whoami", {})).token.paused).toBe(true);
      expect((await agent.ok("get_run", { run_id: run.id })).run.status).toBe("running");
      expect(await otherBot.ok("create_task", { title: "Another account's bot is not paused" })).toBeTruthy();

      const again = await human.ok("pause_agent", { agent: acc.agentName });
      expect(again).toMatchObject({ changed: false, agent: { paused_at: paused.agent.paused_at } });
      const agentId = paused.agent.id;
      expect(await activityOf(agentId)).toEqual([expect.objectContaining({ tool: "pause_agent", summary: expect.stringContaining("Too many emails") })]);

      const resumed = await human.ok("resume_agent", { agent: acc.agentName });
      expect(resumed).toMatchObject({ changed: true, agent: { state: "active", paused_at: null, paused_by: null } });
      expect(await agent.listTools()).toHaveLength(AGENT_WRITE_COUNT);
      expect(await agent.ok("log_run_event", { run_id: run.id, kind: "note", message: "back" })).toBeTruthy();
      expect(await human.ok("resume_agent", { agent: acc.agentName })).toMatchObject({ changed: false });
      expect((await activityOf(agentId)).map((e) => e.tool)).toEqual(["pause_agent", "resume_agent"]);

      expect(await human.fails("pause_agent", { agent: "ghost" })).toMatch(/No agent ghost in this account; list_agents/);
      expect(await human.fails("pause_agent", { agent: "Not A Name" })).toMatch(/agent:/);
      await closeAll(human, agent, otherBot);
    });
  }
});

/** The account's tasks, runs, run events, approvals and tokens, for "pausing does not touch the agent's data". */
async function dataOf(accountId: string) {
  const out: Record<string, unknown[]> = {};
  for (const table of ["tasks", "runs", "run_events", "approvals", "tokens", "comments"]) {
    const cols = table === "tokens" ? "id, scope, revoked_at, expires_at" : "*";
    out[table] = (await env.DB.prepare(`SELECT ${cols} FROM ${table} WHERE account_id = ? ORDER BY id`).bind(accountId).all()).results;
  }
  return out;
}

describe("list_agents, get_agent, get_workload", () => {
  it("lists agents by name in cursor pages with working token counts, and shows one agent with its recent runs", async () => {
    const acc = await seedAccount();
    const human = await connect(acc.human);
    const [c1] = await agentClients(acc, ["c1", "c2", "c3"]);
    const revoked = await createToken({ accountId: acc.accountId, kind: "agent", scope: "write", agent: "c2" });
    await env.DB.prepare("UPDATE tokens SET revoked_at = ? WHERE id = ?").bind(new Date().toISOString(), revoked.id).run();
    const p1 = await human.ok("list_agents", { limit: 2 });
    expect(p1.items.map((g: { name: string }) => g.name)).toEqual(["bot", "c1"]);
    expect(p1.items[0]).toMatchObject({ state: "active", active_tokens: 2 });
    const p2 = await c1.ok("list_agents", { limit: 2, cursor: p1.next_cursor });
    expect(p2.items.map((g: { name: string }) => g.name)).toEqual(["c2", "c3"]);
    expect(p2.items[0].active_tokens).toBe(1);
    expect(p2.next_cursor).toBeNull();

    const { task } = await c1.ok("create_task", { title: "Observe" });
    await c1.ok("claim_task", { task_id: task.id });
    const r1 = (await c1.ok("start_run", { task_id: task.id })).run;
    await c1.ok("cancel_run", { run_id: r1.id });
    const r2 = (await c1.ok("start_run", { task_id: task.id })).run;
    const got = await human.ok("get_agent", { agent: "c1" });
    expect(got).toMatchObject({ agent: { name: "c1", state: "active", active_tokens: 1 }, running_runs: 1, claimed_tasks: 1 });
    expect(got.recent_runs.map((r: { id: string }) => r.id)).toEqual([r2.id, r1.id]);
    expect(await human.fails("get_agent", { agent: "nobody" })).toMatch(/No agent nobody in this account/);
    const other = await seedAccount("Other");
    const stranger = await connect(other.human);
    expect(await stranger.fails("get_agent", { agent: "c1" })).toMatch(/No agent c1/);
    await closeAll(human, c1, stranger);
  });

  it("counts open tasks per assignee by status, idle agents included, snoozed left out unless asked", async () => {
    const acc = await seedAccount();
    const human = await connect(acc.human);
    const agent = await connect(acc.agent);
    await createToken({ accountId: acc.accountId, kind: "agent", scope: "write", agent: "idle" });
    const { project } = await human.ok("create_project", { name: "Home" });
    const mk = async (title: string, extra: Record<string, unknown> = {}) => (await human.ok("create_task", { title, ...extra })).task;
    await mk("h1", { assignee: "human", project_id: project.id });
    const h2 = await mk("h2", { assignee: "human" });
    await human.ok("claim_task", { task_id: h2.id });
    const b1 = await mk("b1");
    await agent.ok("claim_task", { task_id: b1.id });
    await agent.ok("complete_task", { task_id: b1.id });
    await mk("u1");
    const snoozed = await mk("u2");
    await asServer(env.DB, env.DB.prepare("UPDATE tasks SET snoozed_until = ? WHERE id = ?").bind(new Date(Date.now() + 86_400_000).toISOString(), snoozed.id));
    const done = await mk("d1");
    await human.ok("complete_task", { task_id: done.id });

    const w = await agent.ok("get_workload", {});
    const by = (name: string | null) => w.assignees.find((e: { assignee: string | null }) => e.assignee === name);
    expect(by("human")).toMatchObject({ kind: "human", total: 2, by_status: { open: 1, in_progress: 1, blocked: 0, awaiting_approval: 0 } });
    expect(by(acc.agentName)).toMatchObject({ kind: "agent", paused: false, total: 1, by_status: { awaiting_approval: 1 } });
    expect(by("idle")).toMatchObject({ kind: "agent", total: 0 });
    expect(by(null)).toMatchObject({ kind: "unassigned", total: 1 });
    expect(w.total).toBe(4);
    expect((await agent.ok("get_workload", { include_snoozed: true })).total).toBe(5);
    const inProject = await agent.ok("get_workload", { project_id: project.id });
    expect(inProject.total).toBe(1);
    expect(await agent.fails("get_workload", { project_id: "prj_0000000000000000" })).toMatch(/No project/);
    await closeAll(human, agent);
  });
});
