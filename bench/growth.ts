/**
 * How fast the database grows: an account's tasks made through the tools with
 * a typical mix (notes, steps, comments, a run with events, an edit, the
 * completion), and the bytes the database uses (dbstat: page bytes in use,
 * node:sqlite on the file) before and after: bytes per task and per write call.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { applySchemaFile } from "../scripts/lib/d1.ts";
import { callOk } from "./mcp.ts";
import { accountSql, tokenSql } from "./seed.ts";
import { startDev } from "./worker.ts";
import { d1File } from "./tenancy.ts";

export const GROWTH_TASKS = 40;

export interface Growth {
  tasks: number;
  writeCalls: number;
  bytes: number;
  bytesPerTask: number;
  bytesPerWrite: number;
  /** The tables (and their indexes) that grew most, bytes per task. */
  byTable: { table: string; bytesPerTask: number }[];
}

function usedBytes(persist: string): Map<string, number> {
  const db = new DatabaseSync(d1File(persist));
  try {
    const rows = db
      .prepare("SELECT coalesce(m.tbl_name, s.name) AS t, sum(s.pgsize - s.unused) AS used FROM dbstat s LEFT JOIN sqlite_master m ON m.name = s.name GROUP BY 1")
      .all() as { t: string; used: number }[];
    return new Map(rows.map((r) => [r.t, r.used]));
  } finally {
    db.close();
  }
}

/** Makes GROWTH_TASKS tasks with the typical mix in a new account of the database at `persist` (wrangler dev is started and stopped here). */
export async function measureGrowth(persist: string, tmp: string, nowIso: string, o: { devLog: { write(s: string): void } }): Promise<Growth> {
  const account = accountSql("Growth", nowIso);
  const human = await tokenSql({ accountId: account.id, kind: "human", scope: "write", label: "growth human" }, nowIso);
  const agent = await tokenSql({ accountId: account.id, kind: "agent", scope: "write", agent: "growth-agent", label: "growth agent" }, nowIso);
  const file = join(tmp, "growth.sql");
  writeFileSync(file, [...account.sql, ...human.sql, ...agent.sql].join("\n") + "\n");
  applySchemaFile({ remote: false, persistTo: persist }, file);

  const before = usedBytes(persist);
  const dev = await startDev(persist, o.devLog);
  let writeCalls = 0;
  try {
    const as = (secret: string) => (name: string, args: Record<string, unknown>) => (writeCalls++, callOk(dev.base, secret, name, args));
    const h = as(human.secret);
    const a = as(agent.secret);
    for (let i = 0; i < GROWTH_TASKS; i++) {
      const { task } = await h("create_task", {
        title: `Prepare the monthly report ${i}`,
        notes: "Numbers from finance, charts from the dashboard, a short summary for the team.",
        assignee: "growth-agent",
        auto_ok: true,
      });
      await h("add_steps", { task_id: task.id, steps: ["Collect the numbers", "Draw the charts", "Write the summary"] });
      await h("comment_on_task", { task_id: task.id, body: "Finance sent the numbers this morning." });
      const { run } = await a("start_run", { task_id: task.id });
      for (const message of ["Collected the numbers.", "Charts drawn.", "Summary written."]) {
        await a("log_run_event", { run_id: run.id, kind: "progress", message });
      }
      await a("comment_on_task", { task_id: task.id, body: "Draft is ready for a look." });
      await a("finish_run", { run_id: run.id, outcome: "succeeded", summary: "Report drafted." });
      await h("update_task", { task_id: task.id, priority: "high" });
      await a("complete_task", { task_id: task.id, note: "Sent." });
    }
  } finally {
    await dev.stop();
  }
  const after = usedBytes(persist);
  const grew = [...after].map(([t, used]) => ({ table: t, bytes: used - (before.get(t) ?? 0) }));
  const bytes = grew.reduce((s, g) => s + g.bytes, 0);
  return {
    tasks: GROWTH_TASKS,
    writeCalls,
    bytes,
    bytesPerTask: bytes / GROWTH_TASKS,
    bytesPerWrite: bytes / writeCalls,
    byTable: grew
      .filter((g) => g.bytes > 0)
      .sort((x, y) => y.bytes - x.bytes)
      .slice(0, 8)
      .map((g) => ({ table: g.table, bytesPerTask: g.bytes / GROWTH_TASKS })),
  };
}

export function growthMarkdown(g: Growth): string {
  return [
    `Growth: ${g.tasks} tasks made through the tools with a typical mix (notes, 3 steps, 2 comments, a run with 3 events, an edit, the completion: ${g.writeCalls / g.tasks} write calls each).`,
    `Bytes per task: ${g.bytesPerTask.toFixed(0)}; bytes per write call: ${g.bytesPerWrite.toFixed(0)} (database pages in use, dbstat; indexes counted with their table).`,
    `Most per task: ${g.byTable.map((t) => `${t.table} ${t.bytesPerTask.toFixed(0)}`).join(", ")}.`,
  ].join("\n");
}
