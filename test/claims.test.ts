import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { claimHolder, holderOf } from "../src/domain/claims.ts";
import { actorIn, actorOut } from "../src/db/consent.ts";
import { TASK_STATUSES } from "../src/tools/schemas.ts";
import { callTool } from "../src/mcp/registry.ts";
import { findByHash } from "../src/db/tokens.ts";
import { hashToken } from "../src/domain/tokens.ts";
import type { Principal } from "../src/domain/principal.ts";
import { asServer, connect, createToken, seedAccount, snapshotDb, type TestClient } from "./helpers.ts";

const GUARDED = ["start_run", "complete_task", "request_approval"] as const;

function argsFor(tool: (typeof GUARDED)[number], taskId: string): Record<string, unknown> {
  return tool === "request_approval" ? { task_id: taskId, question: "Is this right?" } : { task_id: taskId };
}

/** An account whose agent `builder` has claimed a task, and a second agent `intruder`. */
async function claimed() {
  const acc = await seedAccount("Claims", "builder");
  const intruderToken = await createToken({ accountId: acc.accountId, kind: "agent", scope: "write", agent: "intruder" });
  const human = await connect(acc.human);
  const builder = await connect(acc.agent);
  const intruder = await connect(intruderToken.secret, "legacy");
  const { task } = await human.ok("create_task", { title: "Held", auto_ok: false });
  await builder.ok("claim_task", { task_id: task.id });
  return { acc, human, builder, intruder, taskId: task.id as string, close: () => Promise.all([human, builder, intruder].map((c) => c.close())) };
}

async function row(taskId: string) {
  return env.DB.prepare("SELECT status, assignee FROM tasks WHERE id = ?").bind(taskId).first<{ status: string; assignee: string | null }>();
}

async function count(sql: string, ...binds: unknown[]): Promise<number> {
  return (await env.DB.prepare(sql).bind(...binds).first<{ n: number }>())!.n;
}

describe("a claim stops other agents", () => {
  it("refuses another agent's start_run, complete_task and request_approval, naming the holder and what to do; writes nothing", async () => {
    const { builder, intruder, taskId, close } = await claimed();
    const before = await snapshotDb();
    for (const tool of GUARDED) {
      const text = await intruder.fails(tool, argsFor(tool, taskId));
      expect(text, tool).toContain(`task ${taskId} is claimed by agent builder`);
      expect(text, tool).toContain("intruder may not");
      expect(text, tool).toMatch(/Ask a person to decide .*, or pick another task \(list_tasks with unassigned: true/);
      expect(text, tool).not.toContain("assign_task");
    }
    expect(await snapshotDb()).toBe(before);

    const { run } = await builder.ok("start_run", { task_id: taskId });
    expect(run.agent).toBe("builder");
    expect((await builder.ok("request_approval", { task_id: taskId, question: "Looks done?" })).approval.requested_by).toBe("builder");
    // Its own question waits for the person (C3): withdrawn first, the completion asks for the sign-off.
    expect((await builder.ok("request_approval", { task_id: taskId, withdraw: true })).approval.status).toBe("withdrawn");
    expect((await builder.ok("complete_task", { task_id: taskId })).outcome).toBe("awaiting_approval");
    await close();
  });

  it("a person may still do anything on a claimed task, and after reassigning it the new assignee may work", async () => {
    const { human, intruder, taskId, close } = await claimed();
    expect((await human.ok("request_approval", { task_id: taskId, question: "Mine to decide" })).approval.requested_by).toBe("human");
    await human.ok("assign_task", { task_id: taskId, assignee: "intruder" });
    expect((await intruder.ok("start_run", { task_id: taskId })).run.agent).toBe("intruder");
    expect((await human.ok("complete_task", { task_id: taskId })).outcome).toBe("completed");
    await close();
  });

  it("a task the person holds is held too (C1); assigned but not started, others may work on it", async () => {
    const acc = await seedAccount("Unclaimed", "builder");
    const human = await connect(acc.human);
    const agent = await connect(acc.agent);
    const { task: mine } = await human.ok("create_task", { title: "The person's", assignee: "human" });
    await human.ok("claim_task", { task_id: mine.id });
    expect(await agent.fails("start_run", { task_id: mine.id })).toMatch(/held by the person \(in progress\), so builder may not change it/);
    expect(await count("SELECT count(*) AS n FROM runs WHERE task_id = ?", mine.id)).toBe(0);
    await createToken({ accountId: acc.accountId, kind: "agent", scope: "write", agent: "helper" });
    const { task: planned } = await human.ok("create_task", { title: "Assigned, not started", assignee: "helper" });
    expect((await agent.ok("request_approval", { task_id: planned.id, question: "May I?" })).changed).toBe(true);
    await Promise.all([human.close(), agent.close()]);
  });

  it("racing non-holders: 36 concurrent calls from 6 other agents are all refused; the holder's own calls go through", async () => {
    const { acc, builder, taskId, close } = await claimed();
    const names = ["r1", "r2", "r3", "r4", "r5", "r6"];
    const others: TestClient[] = [];
    for (const name of names) others.push(await connect((await createToken({ accountId: acc.accountId, kind: "agent", scope: "write", agent: name })).secret));
    const racing = others.flatMap((c) => GUARDED.flatMap((tool) => [c.call(tool, argsFor(tool, taskId)), c.call(tool, argsFor(tool, taskId))]));
    const holder = [builder.call("start_run", { task_id: taskId }), builder.call("start_run", { task_id: taskId })];
    const [results, own] = await Promise.all([Promise.all(racing), Promise.all(holder)]);
    for (const r of results) {
      expect(r.isError, r.text).toBe(true);
      expect(r.text).toContain("is claimed by agent builder");
    }
    for (const r of own) expect(r.isError, r.text).toBe(false);
    expect(await row(taskId)).toEqual({ status: "in_progress", assignee: "builder" });
    expect(await count("SELECT count(*) AS n FROM runs r JOIN agents g ON g.id = r.agent_id WHERE r.task_id = ? AND g.name <> 'builder'", taskId)).toBe(0);
    expect(await count("SELECT count(*) AS n FROM approvals WHERE task_id = ?", taskId)).toBe(0);
    expect((await builder.ok("complete_task", { task_id: taskId })).outcome).toBe("awaiting_approval");
    await Promise.all([close(), ...others.map((c) => c.close())]);
  });

  it("a claim taken just before another agent's write batch stops the write (the rule is in the batch, no read comes first)", async () => {
    const acc = await seedAccount("Claim window", "builder");
    const human = await connect(acc.human);
    const starter = await connect((await createToken({ accountId: acc.accountId, kind: "agent", scope: "write", agent: "starter" })).secret);
    const intruder = await createToken({ accountId: acc.accountId, kind: "agent", scope: "write", agent: "intruder" });
    const builderPrincipal = (await findByHash(env.DB, await hashToken(acc.agent)))!.principal;
    const intruderPrincipal = (await findByHash(env.DB, await hashToken(intruder.secret)))!.principal;
    for (const tool of GUARDED) {
      // In progress but nobody's: a run was started before anyone claimed it.
      const { task } = await human.ok("create_task", { title: `Window for ${tool}` });
      await starter.ok("start_run", { task_id: task.id });
      const before = await count("SELECT count(*) AS n FROM activity WHERE target_id = ?", task.id);
      const db = claimBeforeFirstBatch(() => callTool(scopeOf(builderPrincipal, env.DB), "claim_task", { task_id: task.id }));
      const r = await callTool(scopeOf(intruderPrincipal, db), tool, argsFor(tool, task.id));
      expect(r.isError, `${tool} went through after the claim`).toBe(true);
      expect((r.content[0] as { text: string }).text, tool).toContain("is claimed by agent builder");
      expect(await row(task.id)).toEqual({ status: "in_progress", assignee: "builder" });
      expect(await count("SELECT count(*) AS n FROM activity WHERE target_id = ?", task.id), "only the claim was written").toBe(before + 1);
    }
    await Promise.all([human.close(), starter.close()]);
  });
});

/** The caller's scope for a direct registry call, on the given database. */
function scopeOf(principal: Principal, db: D1Database) {
  return { env: { ...env, DB: db } as never, principal, requestId: "claims-test", waitUntil: () => {} };
}

/**
 * The real database, where `interleave` runs right before the call's first
 * batch: the write's batch (a write takes one round trip, no read first) then
 * meets the interleaved claim, as the losing side of a race does.
 */
function claimBeforeFirstBatch(interleave: () => Promise<unknown>): D1Database {
  let fired = false;
  return new Proxy(env.DB, {
    get(target, prop) {
      if (prop === "batch") {
        return async (statements: D1PreparedStatement[]) => {
          if (!fired) {
            fired = true;
            await interleave();
          }
          return target.batch(statements);
        };
      }
      const value = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

describe("held is defined once: the rule and the view `holds` agree", () => {
  it("on every status, assignee, lease and writing agent", async () => {
    const acc = await seedAccount("Rule matrix");
    const now = new Date().toISOString();
    const past = new Date(Date.now() - 60_000).toISOString();
    const future = new Date(Date.now() + 60_000).toISOString();
    const assignees = [null, "human", "builder", "other"];
    let n = 0;
    for (const status of TASK_STATUSES) {
      for (const assignee of assignees) {
        for (const expires of [null, past, now, future]) {
          const id = `tsk_matrix${String(n++).padStart(8, "0")}`;
          await asServer(env.DB, env.DB.prepare(
            "INSERT INTO tasks (id, account_id, title, status, assignee, created_by, created_at, updated_at, claim_expires_at, claim_lease_minutes) VALUES (?, ?, 'm', ?, ?, 'human', ?, ?, ?, 30)",
          )
            .bind(id, acc.accountId, status, assignee, now, now, expires));
          const t = { id, status, assignee, claim_expires_at: expires };
          for (const actor of ["builder", "other", "third"]) {
            // What the rules read while `actor` writes: the view, with the caller recorded as the engine records it.
            const [, seen] = await env.DB.batch([
              actorIn(env.DB, "matrix", { kind: "agent", name: actor, now }),
              env.DB.prepare("SELECT holder FROM holds WHERE task_id = ?").bind(id),
              actorOut(env.DB, "matrix"),
            ]);
            const holder = holderOf(t, now);
            const label = `${status} / ${assignee} / ${expires} / ${actor}`;
            expect((seen.results[0] as { holder: string } | undefined)?.holder ?? null, label).toBe(holder !== null && holder !== actor ? holder : null);
            // A claim is a hold by an agent in progress.
            expect(claimHolder(t, now), label).toBe(status === "in_progress" && holder !== "human" ? holder : null);
          }
        }
      }
    }
  });
});
