import { env } from "cloudflare:workers";
import { asServer, connect, createToken, type Era, type SeededAccount, type TestClient } from "./helpers.ts";

/** A write token for each named agent of the account, connected. */
export async function agentClients(acc: SeededAccount, names: string[], era: Era = "modern"): Promise<TestClient[]> {
  const clients: TestClient[] = [];
  for (const agent of names) {
    const t = await createToken({ accountId: acc.accountId, kind: "agent", scope: "write", agent });
    clients.push(await connect(t.secret, era));
  }
  return clients;
}

export async function closeAll(...clients: TestClient[]): Promise<void> {
  await Promise.all(clients.map((c) => c.close()));
}

export async function activityOf(targetId: string): Promise<{ tool: string; actor: string; summary: string }[]> {
  const { results } = await env.DB.prepare("SELECT tool, actor, summary FROM activity WHERE target_id = ? ORDER BY created_at, rowid")
    .bind(targetId)
    .all<{ tool: string; actor: string; summary: string }>();
  return results;
}

export async function approvalsOf(taskId: string): Promise<{ id: string; status: string; reason: string | null; decided_by: string | null }[]> {
  const { results } = await env.DB.prepare("SELECT id, status, reason, decided_by FROM approvals WHERE task_id = ? ORDER BY created_at, rowid")
    .bind(taskId)
    .all<{ id: string; status: string; reason: string | null; decided_by: string | null }>();
  return results;
}

export async function setTaskColumn(taskId: string, column: "status" | "assignee", value: string | null): Promise<void> {
  await asServer(env.DB, env.DB.prepare(`UPDATE tasks SET ${column} = ? WHERE id = ?`).bind(value, taskId));
}

/** An id of the right shape that exists nowhere. */
export const MISSING = { task: "tsk_0000000000000000", run: "run_0000000000000000", approval: "apr_0000000000000000" };
