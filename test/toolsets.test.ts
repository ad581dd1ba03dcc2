/// <reference types="vite/client" />
import { describe, expect, it } from "vitest";
import connectingDoc from "../docs/connecting.md?raw";
import toolsDoc from "../docs/tools.md?raw";
import { HUMAN_TOOLS, TOOL_NAMES, WRITE_TOOLS, type ToolName } from "../src/catalog/effects.ts";
import { PRESETS, TOOLSET_NAMES, TOOLSETS } from "../src/catalog/toolsets.ts";
import { connect, ERAS, MCP_URL, seedAccount, workerFetch, type ConnectOptions, type SeededAccount } from "./helpers.ts";

const BASE = MCP_URL.replace(/\/mcp$/, "");
const toolsOf = (...names: string[]) => new Set([...TOOLSETS, ...PRESETS].filter((t) => names.includes(t.name)).flatMap((t) => t.tools));
const READ = new Set(TOOL_NAMES.filter((n) => !WRITE_TOOLS.has(n)));

/** What each kind of token may call, whatever the connection selects. */
function permitted(acc: SeededAccount, secret: string): Set<ToolName> {
  if (secret === acc.humanRead || secret === acc.agentRead) return READ;
  if (secret === acc.agent) return new Set(TOOL_NAMES.filter((n) => !HUMAN_TOOLS.has(n)));
  return new Set(TOOL_NAMES);
}

/** The tools/list a selection should give a token: permitted ∩ selected, in catalog order. */
function expected(acc: SeededAccount, secret: string, selected: Set<ToolName>): string[] {
  const may = permitted(acc, secret);
  return TOOL_NAMES.filter((n) => may.has(n) && selected.has(n));
}

/** Every form of asking for the same selection. */
const FORMS: { label: string; opts: (list: string) => ConnectOptions; readonly?: boolean }[] = [
  { label: "query ?toolsets=", opts: (list) => ({ url: `${MCP_URL}?toolsets=${list}` }) },
  { label: "path /mcp/x/…", opts: (list) => ({ url: `${MCP_URL}/x/${list}` }) },
  { label: "header X-MCP-Toolsets", opts: (list) => ({ headers: { "X-MCP-Toolsets": list } }) },
  { label: "path /mcp/x/…/readonly", opts: (list) => ({ url: `${MCP_URL}/x/${list}/readonly` }), readonly: true },
  { label: "header X-MCP-Readonly", opts: (list) => ({ headers: { "X-MCP-Toolsets": list, "X-MCP-Readonly": "true" } }), readonly: true },
];

describe("toolsets as data", () => {
  it("the catalog's 13 groups hold every tool exactly once, in catalog order", () => {
    expect(TOOLSETS).toHaveLength(13);
    expect(TOOLSETS.flatMap((t) => t.tools)).toEqual(TOOL_NAMES);
    for (const t of [...TOOLSETS, ...PRESETS]) {
      expect(t.name, t.name).toMatch(/^[a-z]+$/);
      expect(t.description.length, t.name).toBeGreaterThan(10);
      expect(new Set(t.tools).size, t.name).toBe(t.tools.length);
    }
    expect(new Set(TOOLSET_NAMES).size).toBe(TOOLSETS.length + PRESETS.length);
  });

  it("the agent preset covers the working loop and nothing only a person may do", () => {
    const agent = PRESETS.find((p) => p.name === "agent")!;
    for (const t of ["list_my_tasks", "claim_task", "start_run", "log_run_event", "finish_run", "add_steps", "set_step_status", "comment_on_task", "complete_task", "request_approval"]) {
      expect(agent.tools, t).toContain(t);
    }
    for (const t of agent.tools) expect(HUMAN_TOOLS.has(t), t).toBe(false);
    expect(agent.tools.length).toBeLessThanOrEqual(25);
  });

  it("the catalog of docs/tools.md heads each group with its toolset name", () => {
    const heads = [...toolsDoc.matchAll(/^\*\*(.+?)\*\* \(toolset `([a-z]+)`: (\d+) read, (\d+) write\)$/gm)].map((m) => [m[1], m[2], Number(m[3]), Number(m[4])]);
    expect(heads).toEqual(TOOLSETS.map((t) => [t.title, t.name, t.tools.filter((n) => READ.has(n)).length, t.tools.filter((n) => !READ.has(n)).length]));
  });

  it("docs/connecting.md names every toolset, alias and preset a connection may ask for", () => {
    for (const name of TOOLSET_NAMES) expect(connectingDoc, name).toContain(`\`${name}\``);
  });
});

describe("the server's instructions", () => {
  it("name every toolset and the preset in one line each, for hosts that search tools", async () => {
    const acc = await seedAccount("Instructions");
    const res = await workerFetch(MCP_URL, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${acc.human}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } }),
    });
    const text = await res.text();
    const json = text.startsWith("event:") ? text.split("\n").find((l) => l.startsWith("data: "))!.slice(6) : text;
    const lines = (JSON.parse(json).result.instructions as string).split("\n");
    for (const t of [...TOOLSETS, ...PRESETS]) expect(lines, t.name).toContain(`- ${t.name}: ${t.description}`);
  });
});

describe("a connection narrows itself to toolsets", () => {
  for (const era of ERAS) {
    it(`${era}: every form lists and allows exactly the intersection of the token's tools and the toolsets`, async () => {
      const acc = await seedAccount(`Toolsets ${era}`);
      for (const form of FORMS) {
        for (const secret of [acc.human, acc.agent, acc.humanRead]) {
          for (const list of ["tasks,runs", "agent", "approvals,agents"]) {
            const client = await connect(secret, era, form.opts(list));
            let selected = toolsOf(...list.split(","));
            if (form.readonly) selected = new Set([...selected].filter((n) => READ.has(n)));
            const names = (await client.listTools()).map((t) => t.name);
            expect(names, `${form.label} ${list} ${secret === acc.human ? "human" : secret === acc.agent ? "agent" : "read"}`).toEqual(expected(acc, secret, selected));
            expect(await client.fails("list_labels", {}), `${form.label} ${list}`).toMatch(/^list_labels is outside this connection's toolsets .* in the toolset `labels`/);
            await client.close();
          }
        }
      }
    });

    it(`${era}: /mcp/readonly and X-MCP-Readonly list and allow only reads, whatever the token's scope`, async () => {
      const acc = await seedAccount(`Readonly ${era}`);
      for (const opts of [{ url: `${MCP_URL}/readonly` }, { headers: { "X-MCP-Readonly": "true" } }] as ConnectOptions[]) {
        for (const secret of [acc.human, acc.agent]) {
          const client = await connect(secret, era, opts);
          expect((await client.listTools()).map((t) => t.name)).toEqual(TOOL_NAMES.filter((n) => READ.has(n)));
          expect(await client.fails("create_task", { title: "Not through a read-only connection" })).toBe(
            "create_task writes, and this connection is read-only (/mcp/readonly, …/readonly or X-MCP-Readonly: true); a connection without that offers it. " +
              "tools/list names the tools this connection offers.",
          );
          expect((await client.ok("whoami")).token.scope).toBe("write");
          await client.close();
        }
      }
      expect(await countTasks(acc)).toBe(0);
    });

    it(`${era}: a tool outside the chosen toolsets is refused like any other refusal, saying which toolset holds it; a tool inside works`, async () => {
      const acc = await seedAccount(`Outside ${era}`);
      const client = await connect(acc.human, era, { url: `${MCP_URL}/x/tasks` });
      expect(await client.fails("create_project", { name: "Outside" })).toBe(
        "create_project is outside this connection's toolsets (tasks); it is in the toolset `projects`. " +
          "To call it, connect with toolsets that include projects (/mcp/x/tasks,projects, ?toolsets=tasks,projects or X-MCP-Toolsets: tasks,projects) or with none (/mcp); " +
          "an app connected through OAuth keeps the toolsets chosen when it was allowed, so allow it again with projects among them. " +
          "tools/list names the tools this connection offers.",
      );
      expect(await client.fails("start_run", { task_id: "tsk_0123456789abcdef" })).toMatch(/^start_run is outside .* in the toolset `runs`/);
      // What the token may never do is said first: no connection would offer it.
      const reader = await connect(acc.humanRead, era, { url: `${MCP_URL}/x/tasks` });
      expect(await reader.fails("create_project", { name: "x" })).toMatch(/^create_project changes data and needs a token with scope write/);
      await reader.close();
      // A name outside the catalog stays an unknown tool, a protocol error.
      await expect(client.call("create_projects", {})).rejects.toThrow(/Unknown tool: create_projects/);
      const { task } = await client.ok("create_task", { title: "Inside" });
      expect((await client.ok("get_task", { task_id: task.id })).task.title).toBe("Inside");
      await client.close();
      const agent = await connect(acc.agent, era, { headers: { "X-MCP-Toolsets": "agent" } });
      expect((await agent.ok("claim_task", { task_id: task.id })).task.assignee).toBe(acc.agentName);
      expect(await agent.fails("delete_task", { task_id: task.id })).toMatch(/^delete_task is outside this connection's toolsets \(agent\); it is in the toolset `tasks`\. .*\/mcp\/x\/agent,tasks/);
      await agent.close();
      // Toolsets and the read-only view together: both reasons, and a refused call writes nothing.
      const both = await connect(acc.human, era, { url: `${MCP_URL}/x/tasks/readonly` });
      expect(await both.fails("create_project", { name: "Outside" })).toMatch(/^create_project is outside .*`projects`.* create_project writes, and this connection is read-only/);
      await both.close();
      expect(await countTasks(acc)).toBe(1);
    });

    it(`${era}: a write refused for a read token and a tool refused for the toolsets answer alike: an isError result with what to do`, async () => {
      const acc = await seedAccount(`Alike ${era}`);
      const reader = await connect(acc.humanRead, era);
      const narrowed = await connect(acc.human, era, { url: `${MCP_URL}/x/projects` });
      const byScope = await reader.call("create_task", { title: "No" });
      const byToolset = await narrowed.call("create_task", { title: "No" });
      for (const r of [byScope, byToolset]) {
        expect(r.isError).toBe(true);
        expect(r.structured).toEqual({});
        expect(r.text).toMatch(/^create_task /);
      }
      await Promise.all([reader.close(), narrowed.close()]);
      expect(await countTasks(acc)).toBe(0);
    });
  }

  it("several forms narrow each other; names are case- and space-tolerant", async () => {
    const acc = await seedAccount("Narrowing");
    const client = await connect(acc.human, "modern", { url: `${MCP_URL}/x/tasks,runs?toolsets=agent`, headers: { "X-MCP-Toolsets": " Runs , Steps " } });
    const agentTools = toolsOf("agent");
    expect((await client.listTools()).map((t) => t.name)).toEqual(TOOL_NAMES.filter((n) => toolsOf("runs").has(n) && agentTools.has(n)));
    await client.close();
  });

  it("an unknown toolset name is a 400 that lists the valid names, in every form", async () => {
    const acc = await seedAccount("Unknown toolset");
    const init = (headers: Record<string, string> = {}) => ({
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${acc.human}`, ...headers },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });
    for (const [url, headers] of [
      [`${MCP_URL}/x/tasks,frobnicate`, {}],
      [`${MCP_URL}?toolsets=frobnicate`, {}],
      [MCP_URL, { "X-MCP-Toolsets": "tasks, frobnicate" }],
      [`${MCP_URL}/x/frobnicate/readonly`, {}],
    ] as [string, Record<string, string>][]) {
      const res = await workerFetch(url, init(headers));
      expect(res.status, url).toBe(400);
      const body = (await res.json()) as { error: string; error_description: string; valid_toolsets: string[] };
      expect(body.error).toBe("unknown_toolset");
      expect(body.error_description).toMatch(/frobnicate/);
      for (const name of TOOLSET_NAMES) expect(body.error_description).toContain(name);
      expect(body.valid_toolsets).toEqual(TOOLSET_NAMES);
    }
    const bad = await workerFetch(MCP_URL, init({ "X-MCP-Readonly": "maybe" }));
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error_description: string }).error_description).toMatch(/X-MCP-Readonly/);
    expect((await workerFetch(`${BASE}/mcp/elsewhere`, init())).status).toBe(404);
    expect((await workerFetch(`${MCP_URL}/x/tasks`, { method: "GET" })).status).toBe(405);
    const unauthenticated = await workerFetch(`${MCP_URL}/x/tasks`, { ...init(), headers: { "content-type": "application/json" } });
    expect(unauthenticated.status).toBe(401);
  });

  it("prints the bytes of each preset's and toolset's tools/list for a person's write token", async () => {
    const acc = await seedAccount("Bytes");
    const sizes: Record<string, { tools: number; bytes: number }> = {};
    for (const name of ["(all)", ...TOOLSET_NAMES, "(readonly)"]) {
      const url = name === "(all)" ? MCP_URL : name === "(readonly)" ? `${MCP_URL}/readonly` : `${MCP_URL}/x/${name}`;
      const res = await workerFetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${acc.human}`, "mcp-protocol-version": "2025-06-18" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
      });
      const text = await res.text();
      const json = text.startsWith("event:") ? text.split("\n").find((l) => l.startsWith("data: "))!.slice(6) : text;
      const tools = JSON.parse(json).result.tools as unknown[];
      sizes[name] = { tools: tools.length, bytes: new TextEncoder().encode(JSON.stringify(tools)).length };
    }
    console.log(`tools/list bytes (the tools array, human write token):\n${Object.entries(sizes).map(([n, s]) => `${n}: ${s.tools} tools, ${s.bytes} bytes`).join("\n")}`);
    expect(sizes.agent.bytes).toBeLessThan(sizes["(all)"].bytes / 3);
    expect(sizes["(all)"].tools).toBe(84);
  });
});

async function countTasks(acc: SeededAccount): Promise<number> {
  const client = await connect(acc.human);
  const { items } = await client.ok("list_tasks", { limit: 100 });
  await client.close();
  return items.length;
}

