/**
 * Approvals that reach the person inside their host: a complete_task or
 * request_approval that leaves an approval pending answers a 2026-07-28
 * client that declares URL elicitation with an input_required URL request
 * (its retry returns the person's decision), and one that declares the Tasks
 * extension with a task handle that tasks/get reports. The person decides in
 * the console, through real HTTP posts with a signed-in session. Clients that
 * declare neither, and legacy clients, get today's answer.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { Client, SdkError, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { activityCount, connect, createToken, MCP_URL, workerFetch } from "./helpers.ts";
import { act, open, signedInPerson, type Person } from "./console.helpers.ts";
import { ORIGIN } from "./web-helpers.ts";
import { lifecycleTools } from "../src/tools/lifecycle.ts";
import { approvalTools } from "../src/tools/approvals.ts";

const TASKS = { extensions: { "io.modelcontextprotocol/tasks": {} } };
const URL_ELICITATION = { elicitation: { url: {} } };

interface Elicited {
  mode?: string;
  url?: string;
  message: string;
}

/**
 * A 2.x client (2026-07-28) that declares URL elicitation: the SDK drives the
 * rounds itself, calling `onElicit` for each URL request (the host showing the
 * page to its person), then retrying with the server's requestState.
 */
async function urlClient(secret: string, onElicit: (e: Elicited, round: number) => Promise<"accept" | "decline">) {
  const client = new Client({ name: "host-with-url-elicitation", version: "1.0.0" }, { capabilities: URL_ELICITATION, versionNegotiation: { mode: "auto" } });
  let round = 0;
  client.setRequestHandler("elicitation/create", async (request) => ({ action: await onElicit(request.params as Elicited, ++round) }));
  await client.connect(new StreamableHTTPClientTransport(new URL(MCP_URL), { fetch: workerFetch, requestInit: { headers: { authorization: `Bearer ${secret}` } } }));
  expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
  await client.listTools(); // the client then checks structuredContent against each tool's output schema
  return {
    client,
    rounds: () => round,
    async call(name: string, args: Record<string, unknown>) {
      const r = (await client.callTool({ name, arguments: args })) as { structuredContent?: Record<string, any>; isError?: boolean; content: { type: string; text?: string }[] };
      expect(r.isError, JSON.stringify(r.content)).not.toBe(true);
      return { structured: r.structuredContent as Record<string, any>, text: r.content.map((c) => c.text ?? "").join("\n") };
    },
  };
}

/** A raw 2026-07-28 JSON-RPC request, as a host without the SDK sends it; returns the parsed body. */
async function rpc(secret: string, method: string, params: Record<string, unknown>, capabilities: Record<string, unknown> = {}): Promise<any> {
  const name = method === "tools/call" ? (params.name as string) : (params.taskId as string | undefined);
  const res = await workerFetch(MCP_URL, {
    method: "POST",
    headers: {
      authorization: `Bearer ${secret}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": method,
      ...(name ? { "mcp-name": name } : {}),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method,
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

/** An agent's task, claimed and worked on, not yet completed. */
async function workedTask(p: Person, title: string): Promise<string> {
  const agent = await connect(p.acc.agent);
  const { task } = await agent.ok("create_task", { title });
  await agent.ok("claim_task", { task_id: task.id });
  await agent.close();
  return task.id as string;
}

const completeOutput = lifecycleTools.find((t) => t.name === "complete_task")!.output;
const requestOutput = approvalTools.find((t) => t.name === "request_approval")!.output;

describe("URL elicitation: the person decides in the console, the client's retry returns the decision", () => {
  it("complete_task: asked again until the person approves, then the task is done", async () => {
    const p = await signedInPerson();
    const taskId = await workedTask(p, "Send the invoice");
    const seen: Elicited[] = [];
    const host = await urlClient(p.acc.agent, async (e, round) => {
      seen.push(e);
      // Round 1: the person opens the page and reads it, but decides only in round 2.
      const page = await open(p.b, new URL(e.url!).pathname);
      expect(page.res.status).toBe(200);
      expect(page.html).toContain("Waiting for your sign-off");
      if (round === 2) expect((await act(p.b, `/tasks/${taskId}`, "approve", { task_id: taskId })).status).toBe(303);
      return "accept";
    });
    const { structured, text } = await host.call("complete_task", { task_id: taskId, note: "Sent?" });
    expect(host.rounds()).toBe(2);
    expect(seen[0]).toMatchObject({ mode: "url", url: `${ORIGIN}/tasks/${taskId}` });
    expect(seen[0].message).toMatch(/^A person must decide approval apr_[0-9a-z]{16} of task tsk_/);
    expect(structured).toMatchObject({ outcome: "completed", task: { id: taskId, status: "done" }, approval: { status: "approved", task_id: taskId }, changed: true });
    expect(completeOutput.safeParse(structured).success).toBe(true);
    expect(text).toMatch(/^A person decided approval apr_\w+: approved by .+\. Task tsk_\w+ is done\./);
  });

  it("complete_task rejected: the retry says so with the reason, and the task is back in progress", async () => {
    const p = await signedInPerson();
    const taskId = await workedTask(p, "Draft the letter");
    const host = await urlClient(p.acc.agent, async () => {
      await act(p.b, `/tasks/${taskId}`, "reject", { task_id: taskId, reason: "Use the new letterhead." });
      return "accept";
    });
    const { structured } = await host.call("complete_task", { task_id: taskId });
    expect(host.rounds()).toBe(1);
    expect(structured).toMatchObject({ outcome: "rejected", task: { status: "in_progress" }, approval: { status: "rejected", reason: "Use the new letterhead." } });
    expect(completeOutput.safeParse(structured).success).toBe(true);
  });

  it("request_approval: the person's answer comes back in the call", async () => {
    const p = await signedInPerson();
    const taskId = await workedTask(p, "Order the parts");
    const host = await urlClient(p.acc.agent, async () => {
      await act(p.b, `/tasks/${taskId}`, "approve", { task_id: taskId, note: "Go ahead." });
      return "accept";
    });
    const { structured } = await host.call("request_approval", { task_id: taskId, question: "May I order from the usual shop?" });
    expect(structured).toMatchObject({ approval: { status: "approved", question: "May I order from the usual shop?" }, changed: true });
    expect(requestOutput.safeParse(structured).success).toBe(true);
  });

  it("request_approval with choices: the person picks one in the console, and the choice comes back in the call as data", async () => {
    const p = await signedInPerson();
    const taskId = await workedTask(p, "Book the flight");
    const host = await urlClient(p.acc.agent, async () => {
      const page = await open(p.b, `/tasks/${taskId}`);
      expect(page.html).toContain("<legend>Pick one</legend>");
      await act(p.b, `/tasks/${taskId}`, "answer_yes", { task_id: taskId, choice: "Window" });
      return "accept";
    });
    const { structured } = await host.call("request_approval", { task_id: taskId, question: "Window or aisle?", choices: ["Window", "Aisle"] });
    expect(structured).toMatchObject({
      approval: { status: "approved", choices: ["Window", "Aisle"], accepts_words: false, answer: { choice: "Window", words: null } },
      changed: true,
    });
    expect(requestOutput.safeParse(structured).success).toBe(true);
  });

  it("a person who declines to open the page: the call answers as today, awaiting approval", async () => {
    const p = await signedInPerson();
    const taskId = await workedTask(p, "Book the room");
    const host = await urlClient(p.acc.agent, async () => "decline");
    const { structured } = await host.call("complete_task", { task_id: taskId });
    expect(structured).toMatchObject({ outcome: "awaiting_approval", task: { status: "awaiting_approval" }, approval: { status: "pending" } });
    // Still one click away: the answer links the decide page.
    expect(structured.decide_url).toBe(`${ORIGIN}/tasks/${taskId}`);
  });

  it("requestState is signed and bound to the token: tampered, or sent by another token, it is refused and the tool does not run", async () => {
    const p = await signedInPerson();
    const taskId = await workedTask(p, "Pay the bill");
    const first = await rpc(p.acc.agent, "tools/call", { name: "complete_task", arguments: { task_id: taskId } }, URL_ELICITATION);
    expect(first.result).toMatchObject({ resultType: "input_required", requestState: expect.stringMatching(/^v1\./) });
    const [key] = Object.keys(first.result.inputRequests);
    expect(first.result.inputRequests[key]).toMatchObject({ method: "elicitation/create", params: { mode: "url", url: `${ORIGIN}/tasks/${taskId}` } });
    const state: string = first.result.requestState;
    const retry = (secret: string, requestState: string, args = { task_id: taskId }) =>
      rpc(secret, "tools/call", { name: "complete_task", arguments: args, requestState, inputResponses: { [key]: { action: "accept" } } }, URL_ELICITATION);

    const written = await activityCount(p.acc.accountId, taskId);
    const [head, body, mac] = state.split(".");
    const forged = JSON.parse(atob(body.replace(/-/g, "+").replace(/_/g, "/")));
    forged.p.approval = "apr_0000000000000000";
    const forgedBody = btoa(JSON.stringify(forged)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    for (const bad of [`${head}.${forgedBody}.${mac}`, `${state}x`, "not-a-state"]) {
      expect((await retry(p.acc.agent, bad)).error).toMatchObject({ code: -32602, message: "Invalid or expired requestState" });
    }
    const other = await createToken({ accountId: p.acc.accountId, kind: "agent", scope: "write", agent: p.acc.agentName });
    expect((await retry(other.secret, state)).error).toMatchObject({ code: -32602 });
    // The right state on another call of the same token is refused too.
    const elsewhere = await retry(p.acc.agent, state, { task_id: "tsk_0000000000000000" });
    expect(elsewhere.error).toMatchObject({ code: -32602, message: expect.stringContaining("belongs to complete_task on task") });

    expect(await activityCount(p.acc.accountId, taskId)).toBe(written);

    // Still pending: asked again, with a fresh state.
    const again = await retry(p.acc.agent, state);
    expect(again.result).toMatchObject({ resultType: "input_required", inputRequests: { [key]: expect.anything() } });
    expect(await activityCount(p.acc.accountId, taskId)).toBe(written);
    await act(p.b, `/tasks/${taskId}`, "approve", { task_id: taskId });
    const done = await retry(p.acc.agent, again.result.requestState);
    expect(done.result).toMatchObject({ resultType: "complete", structuredContent: { outcome: "completed", task: { status: "done" } } });
  });
});

describe("a retry that asks something else", () => {
  it("request_approval retried with another question and the old requestState is refused as a plain call would be, and writes nothing", async () => {
    const p = await signedInPerson();
    const taskId = await workedTask(p, "Order the chairs");
    const first = await rpc(p.acc.agent, "tools/call", { name: "request_approval", arguments: { task_id: taskId, question: "Blue or grey?" } }, URL_ELICITATION);
    expect(first.result).toMatchObject({ resultType: "input_required" });
    const [key] = Object.keys(first.result.inputRequests);
    const written = await activityCount(p.acc.accountId, taskId);
    const changed = await rpc(
      p.acc.agent,
      "tools/call",
      { name: "request_approval", arguments: { task_id: taskId, question: "Oak or pine?" }, requestState: first.result.requestState, inputResponses: { [key]: { action: "accept" } } },
      URL_ELICITATION,
    );
    expect(changed.result).toMatchObject({ isError: true });
    expect(changed.result.content[0].text).toMatch(/already has a request from .*"Blue or grey\?", and this requestState waits on it, not on another question/);
    expect(await activityCount(p.acc.accountId, taskId)).toBe(written);
  });
});

describe("Tasks extension: a task handle that completes when the person decides", () => {
  it("tools/call answers with a task; tasks/get reports it working, then completed with the call's result", async () => {
    const p = await signedInPerson();
    const taskId = await workedTask(p, "Renew the domain");
    const first = await rpc(p.acc.agent, "tools/call", { name: "complete_task", arguments: { task_id: taskId } }, TASKS);
    expect(first.result).toMatchObject({ resultType: "task", status: "working", taskId: expect.any(String), pollIntervalMs: 5000, ttlMs: expect.any(Number) });
    expect(first.result.statusMessage).toContain(`${ORIGIN}/tasks/${taskId}`);
    const handle: string = first.result.taskId;

    const working = await rpc(p.acc.agent, "tasks/get", { taskId: handle }, TASKS);
    expect(working.result).toMatchObject({ resultType: "complete", taskId: handle, status: "working" });
    expect(working.result.result).toBeUndefined();

    await act(p.b, `/tasks/${taskId}`, "reject", { task_id: taskId, reason: "Not this year." });
    const decided = await rpc(p.acc.agent, "tasks/get", { taskId: handle }, TASKS);
    expect(decided.result).toMatchObject({
      status: "completed",
      result: { structuredContent: { outcome: "rejected", approval: { status: "rejected", reason: "Not this year." }, task: { status: "in_progress" } } },
    });
    expect(completeOutput.safeParse(decided.result.result.structuredContent).success).toBe(true);
    expect((await rpc(p.acc.agent, "tasks/cancel", { taskId: handle }, TASKS)).result).toMatchObject({ resultType: "complete" });
  });

  it("request_approval that takes words: tasks/get completes with the person's words in the approval", async () => {
    const p = await signedInPerson();
    const taskId = await workedTask(p, "Write the toast");
    const first = await rpc(p.acc.agent, "tools/call", { name: "request_approval", arguments: { task_id: taskId, question: "How should it open?", accepts_words: true } }, TASKS);
    expect(first.result).toMatchObject({ resultType: "task", status: "working" });
    await act(p.b, `/tasks/${taskId}`, "answer_yes", { task_id: taskId, answer: "With the story of the lost luggage." });
    const decided = await rpc(p.acc.agent, "tasks/get", { taskId: first.result.taskId }, TASKS);
    expect(decided.result).toMatchObject({
      status: "completed",
      result: { structuredContent: { approval: { status: "approved", accepts_words: true, answer: { choice: null, words: "With the story of the lost luggage." } } } },
    });
    expect(requestOutput.safeParse(decided.result.result.structuredContent).success).toBe(true);
  });

  it("a handle works only for the token it was given to, and a made-up one is an unknown task", async () => {
    const p = await signedInPerson();
    const taskId = await workedTask(p, "File the taxes");
    const { result } = await rpc(p.acc.agent, "tools/call", { name: "request_approval", arguments: { task_id: taskId, question: "File now?" } }, TASKS);
    expect(result).toMatchObject({ resultType: "task", status: "working" });
    for (const [secret, taskIdSent] of [[p.acc.human, result.taskId], [p.acc.agent, `${result.taskId}x`], [p.acc.agent, "tsk_0000000000000000"]]) {
      const r = await rpc(secret, "tasks/get", { taskId: taskIdSent }, TASKS);
      expect(r.error).toMatchObject({ code: -32602, message: expect.stringMatching(/^Unknown task/) });
    }
  });

  it("the 2.x client reads tasks/get with an explicit schema, but SDK 2.4 cannot take a task handle from tools/call", async () => {
    const p = await signedInPerson();
    const taskId = await workedTask(p, "Check the backups");
    const client = new Client({ name: "host-with-tasks", version: "1.0.0" }, { capabilities: TASKS, versionNegotiation: { mode: "auto" } });
    await client.connect(new StreamableHTTPClientTransport(new URL(MCP_URL), { fetch: workerFetch, requestInit: { headers: { authorization: `Bearer ${p.acc.agent}` } } }));
    expect(client.getServerCapabilities()?.extensions).toEqual(TASKS.extensions);
    const refused = await client.callTool({ name: "complete_task", arguments: { task_id: taskId } }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(SdkError);
    expect((refused as SdkError).message).toMatch(/Unsupported result type 'task'/);
    // The call ran all the same: a raw retry of the host finds the handle, complete_task answering with the pending sign-off.
    const { result } = await rpc(p.acc.agent, "tools/call", { name: "complete_task", arguments: { task_id: taskId } }, TASKS);
    const got = await client.request({ method: "tasks/get", params: { taskId: result.taskId } }, z.looseObject({ taskId: z.string(), status: z.string() }));
    expect(got).toMatchObject({ taskId: result.taskId, status: "working" });
    await client.close();
  });
});

describe("clients that declare neither get today's answer", () => {
  it("modern without URL elicitation or Tasks (form elicitation only, or nothing), and legacy: awaiting approval with the decide page's link, no elicitation, no task", async () => {
    const p = await signedInPerson();
    for (const capabilities of [{}, { elicitation: {} }, { elicitation: { form: {} } }]) {
      const taskId = await workedTask(p, "Plain host");
      const r = await rpc(p.acc.agent, "tools/call", { name: "complete_task", arguments: { task_id: taskId } }, capabilities);
      expect(r.result).toMatchObject({
        resultType: "complete",
        structuredContent: { outcome: "awaiting_approval", approval: { status: "pending" }, decide_url: `${ORIGIN}/tasks/${taskId}` },
      });
    }
    for (const era of ["modern", "legacy"] as const) {
      const taskId = await workedTask(p, `Plain ${era} host`);
      const agent = await connect(p.acc.agent, era);
      expect(await agent.ok("complete_task", { task_id: taskId })).toMatchObject({
        outcome: "awaiting_approval", approval: { status: "pending" }, decide_url: `${ORIGIN}/tasks/${taskId}`,
      });
      await agent.close();
    }
  });

  it("a requestState sent by a host that was never asked for one is refused, never trusted", async () => {
    const p = await signedInPerson();
    const taskId = await workedTask(p, "Sneaky host");
    const r = await rpc(p.acc.agent, "tools/call", { name: "complete_task", arguments: { task_id: taskId }, requestState: "v1.e30.AAAA" });
    expect(r.error).toMatchObject({ code: -32602 });
  });
});
