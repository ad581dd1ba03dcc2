import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { connect, createToken, seedAccount } from "../helpers.ts";

/** Concurrent calls resolve the way a single writer would: one winner, no duplicates. */
describe("races", () => {
  it("50 concurrent update_task with the same expected_version: exactly one succeeds, the rest are conflicts", async () => {
    const acc = await seedAccount();
    const client = await connect(acc.human);
    const { task } = await client.ok("create_task", { title: "Contended" });
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => client.call("update_task", { task_id: task.id, title: `Writer ${i}`, expected_version: task.version })),
    );
    const winners = results.filter((r) => !r.isError);
    expect(winners).toHaveLength(1);
    for (const r of results.filter((r) => r.isError)) expect(r.text).toMatch(/has changed since version 1/);
    const row = await env.DB.prepare("SELECT title, version FROM tasks WHERE id = ?").bind(task.id).first<{ title: string; version: number }>();
    expect(row).toEqual({ title: winners[0].structured.task.title, version: 2 });
    const updates = await env.DB.prepare("SELECT count(*) AS n FROM activity WHERE target_id = ? AND tool = 'update_task'").bind(task.id).first<{ n: number }>();
    expect(updates?.n).toBe(1);
    await client.close();
  });

  it("concurrent claim_task by different agents: one owner, the others told who holds it", async () => {
    const acc = await seedAccount();
    const human = await connect(acc.human);
    const { task } = await human.ok("create_task", { title: "Claim me" });
    const agents = await Promise.all(
      ["a1", "a2", "a3", "a4", "a5", "a6"].map((name) => createToken({ accountId: acc.accountId, kind: "agent", scope: "write", agent: name })),
    );
    const clients = await Promise.all(agents.map((a) => connect(a.secret)));
    const results = await Promise.all(clients.map((c) => c.call("claim_task", { task_id: task.id })));
    const winners = results.filter((r) => !r.isError);
    expect(winners).toHaveLength(1);
    const row = await env.DB.prepare("SELECT assignee, status FROM tasks WHERE id = ?").bind(task.id).first<{ assignee: string; status: string }>();
    expect(row?.status).toBe("in_progress");
    for (const r of results.filter((r) => r.isError)) expect(r.text).toContain(`claimed by agent ${row?.assignee}`);
    await Promise.all([...clients, human].map((c) => c.close()));
  });

  it("50 racing retries with one idempotency_key: one record, one answer", async () => {
    const acc = await seedAccount();
    const client = await connect(acc.agent);
    const results = await Promise.all(
      Array.from({ length: 50 }, () => client.call("create_task", { title: "Exactly once", idempotency_key: "retry-7" })),
    );
    expect(results.every((r) => !r.isError)).toBe(true);
    expect(new Set(results.map((r) => r.structured.task.id)).size).toBe(1);
    const n = await env.DB.prepare("SELECT count(*) AS n FROM tasks WHERE account_id = ?").bind(acc.accountId).first<{ n: number }>();
    expect(n?.n).toBe(1);
    const a = await env.DB.prepare("SELECT count(*) AS n FROM activity WHERE account_id = ?").bind(acc.accountId).first<{ n: number }>();
    expect(a?.n).toBe(1);
    await client.close();
  });
});
