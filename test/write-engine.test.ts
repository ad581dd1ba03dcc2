import { env } from "cloudflare:workers";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../src/index.ts";
import type { Env } from "../src/env.ts";
import { makeContext } from "../src/mcp/engine.ts";
import { AGAIN, type Outcome } from "../src/catalog/tool.ts";
import { ToolError } from "../src/domain/errors.ts";
import type { Principal } from "../src/domain/principal.ts";
import type { TaskgateEvent } from "../src/domain/events.ts";
import { activityCount, asServer, MCP_URL, seedAccount } from "./helpers.ts";

function contextFor(accountId: string) {
  const principal: Principal = {
    tokenId: "tok_engine",
    accountId,
    kind: "human",
    scope: "write",
    agentId: null,
    agentName: null,
    paused: false,
    label: "engine test",
    expiresAt: null,
    person: null,
  };
  const committed: TaskgateEvent[] = [];
  return makeContext({ env: env as unknown as Env, principal, requestId: "req_engine", waitUntil: () => {} }, "block_task", {}, null, committed);
}

/** An outcome whose `apply` misses `misses` times, and whose diagnosis answers as `diagnosis` says. */
function scripted(misses: number, diagnosis: "again" | "answer" | "lost" | "refuse") {
  const calls = { apply: 0, diagnose: 0 };
  const outcome: Outcome<string> = {
    subject: "task tsk_scripted",
    async apply(miss) {
      calls.apply++;
      if (calls.apply <= misses) throw miss;
      return "applied";
    },
    async diagnose(lost) {
      calls.diagnose++;
      if (diagnosis === "again") return AGAIN;
      if (diagnosis === "lost") throw lost;
      if (diagnosis === "refuse") throw new ToolError("conflict", "task tsk_scripted is done");
      return "no-op";
    },
  };
  return { outcome, calls };
}

describe("the write engine applies one outcome", () => {
  it("whose batch holds: no diagnosis", async () => {
    const acc = await seedAccount("Engine applied");
    const { outcome, calls } = scripted(0, "answer");
    expect(await contextFor(acc.accountId).write(outcome)).toBe("applied");
    expect(calls).toEqual({ apply: 1, diagnose: 0 });
  });

  it("whose batch missed: the diagnosis answers (a no-op) or refuses, and the outcome is not applied again", async () => {
    const acc = await seedAccount("Engine diagnosed");
    const answered = scripted(1, "answer");
    expect(await contextFor(acc.accountId).write(answered.outcome)).toBe("no-op");
    expect(answered.calls).toEqual({ apply: 1, diagnose: 1 });
    const refused = scripted(1, "refuse");
    await expect(contextFor(acc.accountId).write(refused.outcome)).rejects.toThrow("task tsk_scripted is done");
    expect(refused.calls).toEqual({ apply: 1, diagnose: 1 });
  });

  it("whose diagnosis finds the rows as the outcome assumes: the same outcome is applied again", async () => {
    const acc = await seedAccount("Engine again");
    const { outcome, calls } = scripted(1, "again");
    expect(await contextFor(acc.accountId).write(outcome)).toBe("applied");
    expect(calls).toEqual({ apply: 2, diagnose: 1 });
  });

  it("whose rows keep changing under it: refused after three tries, naming what changed", async () => {
    const acc = await seedAccount("Engine lost");
    for (const kind of ["again", "lost"] as const) {
      const { outcome, calls } = scripted(99, kind);
      await expect(contextFor(acc.accountId).write(outcome)).rejects.toThrow("task tsk_scripted changed while this call ran; read it again and retry.");
      expect(calls).toEqual({ apply: 3, diagnose: 3 });
    }
  });

  it("whose batch fails for another reason: that error, with no diagnosis", async () => {
    const acc = await seedAccount("Engine error");
    let diagnosed = 0;
    const outcome: Outcome<string> = {
      subject: "task tsk_x",
      apply: async () => {
        throw new Error("no such table: tasks");
      },
      diagnose: async () => {
        diagnosed++;
        return "no-op";
      },
    };
    await expect(contextFor(acc.accountId).write(outcome)).rejects.toThrow("no such table");
    expect(diagnosed).toBe(0);
  });
});

/**
 * env.DB whose next tool batch (the one that records its caller) meets a rival
 * write: `before` runs just before the batch and `after` just after it failed,
 * so the call's guard misses and its diagnosis reads the rows as `after` left them.
 */
function racedDb(before: string, after: string): D1Database & { batches: number; raced: boolean } {
  const state = { batches: 0, raced: false };
  // The database, and each session made of it: the Worker's tools write through their request's session (src/db/read-sessions.ts).
  const raced = <T extends D1Database | D1DatabaseSession>(target: T): T =>
    new Proxy(target, {
      get(t, prop) {
        if (prop === "batches") return state.batches;
        if (prop === "raced") return state.raced;
        if (prop === "withSession") return (constraint?: string) => raced((t as D1Database).withSession(constraint));
        if (prop === "batch") {
          return async (statements: D1PreparedStatement[]) => {
            const toolBatch = statements.some((s) => String((s as unknown as { statement?: string }).statement ?? "").includes("call_actor"));
            if (!toolBatch) return t.batch(statements);
            state.batches++;
            if (state.raced) return t.batch(statements);
            state.raced = true;
            // The rival is another writer, with its own caller (the rules refuse a write with none).
            await asServer(env.DB, env.DB.prepare(before));
            try {
              return await t.batch(statements);
            } finally {
              await asServer(env.DB, env.DB.prepare(after));
            }
          };
        }
        const value = Reflect.get(t, prop);
        return typeof value === "function" ? value.bind(t) : value;
      },
    });
  return raced(env.DB) as D1Database & { batches: number; raced: boolean };
}

async function callOn(db: D1Database, secret: string, name: string, args: Record<string, unknown>) {
  const request = new Request(MCP_URL, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${secret}` },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }),
  });
  const ctx = createExecutionContext();
  const res = await worker.fetch!(request as never, { ...(env as unknown as Env), DB: db } as Env, ctx);
  await waitOnExecutionContext(ctx);
  const text = await res.text();
  const line = text.split("\n").find((l) => l.startsWith("data: ")) ?? text;
  return JSON.parse(line.replace(/^data: /, "")) as { result: { isError?: boolean; structuredContent: Record<string, any> } };
}

describe("one call down both paths, through the real surface", () => {
  it("block_task misses its batch in a race, its diagnosis finds the task blockable again, and the one outcome is applied once", async () => {
    const acc = await seedAccount("Engine race");
    const created = await callOn(env.DB, acc.human, "create_task", { title: "Raced" });
    const id = created.result.structuredContent.task.id as string;
    const before = await activityCount(acc.accountId, id);
    // A rival finishes the task just before the batch and reopens it just after: the guard misses, the diagnosis sees it open.
    const db = racedDb(`UPDATE tasks SET status = 'done' WHERE id = '${id}'`, `UPDATE tasks SET status = 'open' WHERE id = '${id}'`);
    const res = await callOn(db, acc.human, "block_task", { task_id: id, reason: "waits for the vendor" });
    expect(res.result.isError ?? false).toBe(false);
    expect(db.raced).toBe(true);
    expect(db.batches).toBe(2);
    expect(res.result.structuredContent).toMatchObject({ changed: true, task: { status: "blocked", blocked_reason: "waits for the vendor" } });
    const row = await env.DB.prepare("SELECT status, status_before_block FROM tasks WHERE id = ?").bind(id).first();
    expect(row).toEqual({ status: "blocked", status_before_block: "open" });
    expect(await activityCount(acc.accountId, id)).toBe(before + 1);
  });

  it("block_task whose rival blocked it for the same reason: the diagnosis answers the no-op, nothing is written twice", async () => {
    const acc = await seedAccount("Engine race no-op");
    const created = await callOn(env.DB, acc.human, "create_task", { title: "Raced twice" });
    const id = created.result.structuredContent.task.id as string;
    const before = await activityCount(acc.accountId, id);
    const db = racedDb(`UPDATE tasks SET status = 'blocked', blocked_reason = 'same' WHERE id = '${id}'`, "SELECT 1");
    const res = await callOn(db, acc.human, "block_task", { task_id: id, reason: "same" });
    expect(res.result.structuredContent).toMatchObject({ changed: false, task: { status: "blocked" } });
    expect(db.batches).toBe(1);
    expect(await activityCount(acc.accountId, id)).toBe(before);
  });
});

/** env.DB (and its sessions) whose next `faults` executions fail as a locked local database does, then run as usual. */
function faultyDb(faults: number): D1Database & { failed: number } {
  const state = { left: faults, failed: 0 };
  const fault = () => {
    state.left--;
    state.failed++;
    return Promise.reject(new Error("D1_ERROR: Failed to get session commit token: internal error; reference = test"));
  };
  const faulty = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(t, prop) {
        if (prop === "failed") return state.failed;
        if (prop === "withSession") return (constraint?: string) => faulty((t as D1Database).withSession(constraint));
        if (prop === "prepare") {
          return (sql: string) => {
            const stmt = (t as D1Database).prepare(sql);
            const wrapStmt = (s: D1PreparedStatement): D1PreparedStatement =>
              new Proxy(s, {
                get(st, p) {
                  if (p === "bind") return (...v: unknown[]) => wrapStmt(st.bind(...v));
                  if ((p === "first" || p === "all" || p === "run" || p === "raw") && state.left > 0) return fault;
                  const value = Reflect.get(st, p);
                  return typeof value === "function" ? value.bind(st) : value;
                },
              });
            return wrapStmt(stmt);
          };
        }
        if (prop === "batch") return (statements: D1PreparedStatement[]) => (state.left > 0 ? fault() : (t as D1Database).batch(statements));
        const value = Reflect.get(t, prop);
        return typeof value === "function" ? value.bind(t) : value;
      },
    });
  return faulty(env.DB) as D1Database & { failed: number };
}

describe("a passing fault", () => {
  it("a read that meets one runs once more and answers; a second in a row is the caller's to retry, said as such", async () => {
    const acc = await seedAccount("Passing fault");
    const created = await callOn(env.DB, acc.human, "create_task", { title: "Read through a fault" });
    const id = created.result.structuredContent.task.id as string;
    // The token is resolved (cached) by the call above: the faults meet the tool's own read.
    const once = faultyDb(1);
    const read = await callOn(once, acc.human, "get_task", { task_id: id });
    expect(once.failed).toBe(1);
    expect(read.result.isError ?? false).toBe(false);
    expect(read.result.structuredContent.task.id).toBe(id);
    const twice = faultyDb(2);
    const refused = await callOn(twice, acc.human, "get_task", { task_id: id });
    expect(twice.failed).toBe(2);
    expect(refused.result.isError).toBe(true);
    expect(JSON.stringify(refused.result)).toContain("briefly unavailable");
  });

  it("a write that meets one is not run again: the caller hears of it", async () => {
    const acc = await seedAccount("Passing fault write");
    await callOn(env.DB, acc.human, "whoami", {});
    const db = faultyDb(1);
    const res = await callOn(db, acc.human, "create_task", { title: "Not written twice" });
    expect(db.failed).toBe(1);
    expect(res.result.isError).toBe(true);
    expect(JSON.stringify(res.result)).toContain("briefly unavailable");
    expect(await activityCount(acc.accountId)).toBe(0);
  });
});
