/**
 * Approvals where the person is: the approvals view (MCP Apps) as resources
 * in both eras, the tools that link it, the inbox's context in
 * list_pending_approvals with whether the connection may decide, and the
 * decide link in every answer that leaves an approval waiting.
 */
import { describe, expect, it } from "vitest";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { connect, ERAS, MCP_URL, seedAccount, workerFetch, type Era } from "./helpers.ts";

const VIEW = "ui://taskgate/approvals";
const MIME = "text/html;profile=mcp-app";
const LINKED = ["complete_task", "get_approval", "list_pending_approvals", "request_approval"];

interface Resources {
  listResources(): Promise<{ resources: { uri: string; mimeType?: string; _meta?: Record<string, any> }[] }>;
  readResource(p: { uri: string }): Promise<{ contents: { uri: string; mimeType?: string; text?: string; _meta?: Record<string, any> }[] }>;
  close(): Promise<void>;
}

async function resourcesClient(secret: string, era: Era): Promise<Resources> {
  const requestInit = { headers: { authorization: `Bearer ${secret}` } };
  if (era === "modern") {
    const client = new Client({ name: "apps-host", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
    await client.connect(new StreamableHTTPClientTransport(new URL(MCP_URL), { fetch: workerFetch, requestInit }));
    expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
    return client as unknown as Resources;
  }
  const client = new LegacyClient({ name: "apps-host-legacy", version: "1.0.0" });
  await client.connect(new LegacyTransport(new URL(MCP_URL), { fetch: workerFetch, requestInit }));
  return client as unknown as Resources;
}

describe.each(ERAS)("the approvals view (%s)", (era) => {
  it("is listed and read as one ui:// resource of the MCP Apps type, with its CSP, under 15 KB", async () => {
    const { human, agent } = await seedAccount();
    for (const secret of [human, agent]) {
      const client = await resourcesClient(secret, era);
      try {
        const { resources } = await client.listResources();
        expect(resources.map((r) => [r.uri, r.mimeType])).toEqual([[VIEW, MIME]]);
        expect(resources[0]._meta?.ui?.csp).toEqual({ connectDomains: [], resourceDomains: [] });
        const { contents } = await client.readResource({ uri: VIEW });
        expect(contents).toHaveLength(1);
        const [view] = contents;
        expect([view.uri, view.mimeType]).toEqual([VIEW, MIME]);
        expect(view._meta?.ui?.csp).toEqual({ connectDomains: [], resourceDomains: [] });
        const bytes = new TextEncoder().encode(view.text).length;
        expect(bytes).toBeLessThanOrEqual(15 * 1024);
        // Hand-written and self-contained: nothing loaded from anywhere, no markup built from strings.
        expect(view.text).not.toMatch(/\bsrc=|<link|@import|fetch\(|XMLHttpRequest|WebSocket|innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
        await expect(client.readResource({ uri: "ui://taskgate/other" })).rejects.toThrow(/Unknown resource/);
      } finally {
        await client.close();
      }
    }
  });

  it("is linked (_meta.ui.resourceUri) from exactly the tools whose results it shows", async () => {
    const { human, agent } = await seedAccount();
    for (const secret of [human, agent]) {
      const client = await connect(secret, era);
      const tools = (await client.listTools()) as { name: string; _meta?: Record<string, any> }[];
      const linked = tools.filter((t) => t._meta?.ui?.resourceUri === VIEW && t._meta?.["ui/resourceUri"] === VIEW).map((t) => t.name).sort();
      expect(linked).toEqual(LINKED);
      expect(tools.filter((t) => t._meta?.ui !== undefined || t._meta?.["ui/resourceUri"] !== undefined)).toHaveLength(LINKED.length);
      await client.close();
    }
  });

  it("list_pending_approvals carries the inbox's context, the decide page and whether this connection may decide", async () => {
    const { human, agent, humanRead } = await seedAccount();
    const bot = await connect(agent, era);
    const task = (await bot.ok("create_task", { title: "Ship the release notes" })).task;
    await bot.ok("claim_task", { task_id: task.id });
    const run = (await bot.ok("start_run", { task_id: task.id })).run;
    for (const message of ["drafted", "checked links", "spell-checked", "ready"]) await bot.ok("log_run_event", { run_id: run.id, kind: "progress", message });
    await bot.ok("comment_on_task", { task_id: task.id, body: "x".repeat(400) });
    await bot.ok("request_approval", { task_id: task.id, question: "Publish on Friday?" });
    const asPerson = await connect(human, era);
    const list = await asPerson.ok("list_pending_approvals");
    expect(list.can_decide).toBe(true);
    expect(list.items).toHaveLength(1);
    const [item] = list.items;
    expect(item).toMatchObject({ task_id: task.id, kind: "question", question: "Publish on Friday?", decide_url: `https://taskgate.test/tasks/${task.id}` });
    expect(item.run).toMatchObject({ id: run.id, agent: "bot", status: "running" });
    expect(item.run.events.map((e: { message: string }) => e.message)).toEqual(["checked links", "spell-checked", "ready"]);
    expect(item.latest_comment).toMatchObject({ author: "bot", body: `${"x".repeat(280)}…` });
    expect((await bot.ok("list_pending_approvals")).can_decide).toBe(false);
    const reader = await connect(humanRead, era);
    expect((await reader.ok("list_pending_approvals")).can_decide).toBe(false);
    const one = await asPerson.ok("get_approval", { approval_id: item.id });
    expect(one.decide_url).toBe(`https://taskgate.test/tasks/${task.id}`);
    for (const c of [bot, asPerson, reader]) await c.close();
  });

  it("every answer that leaves an approval waiting carries the decide page, in its text and its structured content", async () => {
    const { human, agent } = await seedAccount();
    const bot = await connect(agent, era);
    const page = (id: string) => `https://taskgate.test/tasks/${id}`;
    const signoff = (await bot.ok("create_task", { title: "Rotate the keys" })).task;
    await bot.ok("claim_task", { task_id: signoff.id });
    const question = (await bot.ok("create_task", { title: "Pick a date" })).task;
    const calls: [string, Record<string, unknown>, string][] = [
      ["complete_task", { task_id: signoff.id, note: "Rotated." }, signoff.id],
      ["complete_task", { task_id: signoff.id, note: "Rotated." }, signoff.id], // the repeat
      ["request_approval", { task_id: question.id, question: "Friday?" }, question.id],
      ["request_approval", { task_id: question.id, question: "Friday?" }, question.id], // the repeat
    ];
    for (const [name, args, taskId] of calls) {
      const r = await bot.call(name, args);
      expect(r.isError, r.text).toBe(false);
      expect(r.structured.approval.status).toBe("pending");
      expect(r.structured.decide_url, name).toBe(page(taskId));
      expect(r.text).toContain(`A person decides this approval in Taskgate: ${page(taskId)}`);
    }
    // Nothing waits: no link.
    const person = await connect(human, era);
    const own = (await person.ok("create_task", { title: "Water the plants" })).task;
    const done = await person.call("complete_task", { task_id: own.id });
    expect(done.structured).toMatchObject({ outcome: "completed", decide_url: null });
    expect(done.text).not.toContain("decides this approval");
    await bot.close();
    await person.close();
  });
});

describe("the decide page's origin", () => {
  it("is the origin the MCP request reached", async () => {
    const { agent } = await seedAccount();
    const url = "https://tasks.example.org/mcp";
    const client = await connect(agent, "legacy", { url });
    const task = (await client.ok("create_task", { title: "Renew the domain" })).task;
    const asked = await client.ok("request_approval", { task_id: task.id, question: "Two years?" });
    expect(asked.decide_url).toBe(`https://tasks.example.org/tasks/${task.id}`);
    await client.close();
  });
});
