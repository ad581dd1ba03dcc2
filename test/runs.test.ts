import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { asServer, connect, ERAS, seedAccount, snapshotDb } from "./helpers.ts";
import { activityOf, agentClients, closeAll, MISSING, setTaskColumn } from "./lifecycle.helpers.ts";

async function runRow(id: string) {
  return env.DB.prepare("SELECT status, summary, finished_at, last_event_at FROM runs WHERE id = ?").bind(id).first<{
    status: string; summary: string | null; finished_at: string | null; last_event_at: string;
  }>();
}

describe("start_run", () => {
  for (const era of ERAS) {
    it(`${era}: an agent's run moves an open task to in_progress; a person's token is refused`, async () => {
      const acc = await seedAccount();
      const human = await connect(acc.human, era);
      const agent = await connect(acc.agent, era);
      const { task } = await human.ok("create_task", { title: "Migrate the database" });
      const before = await snapshotDb();
      expect(await human.fails("start_run", { task_id: task.id })).toMatch(/needs the agent's own token/);
      expect(await snapshotDb()).toBe(before);

      const r = await agent.ok("start_run", { task_id: task.id });
      expect(r).toMatchObject({ task_status: "in_progress", run: { task_id: task.id, task_title: "Migrate the database", agent: acc.agentName, status: "running", finished_at: null } });
      expect(r.run.id).toMatch(/^run_/);
      expect((await human.ok("get_task", { task_id: task.id })).task).toMatchObject({ status: "in_progress", version: 2 });
      const second = await agent.ok("start_run", { task_id: task.id });
      expect(second.task_status).toBe("in_progress");
      expect(second.run.id).not.toBe(r.run.id);
      expect((await activityOf(task.id)).filter((e) => e.tool === "start_run")).toHaveLength(2);
      await closeAll(human, agent);
    });
  }

  it("replays an idempotency key, refuses finished and unknown tasks", async () => {
    const acc = await seedAccount();
    const other = await seedAccount("Other");
    const agent = await connect(acc.agent);
    const stranger = await connect(other.agent);
    const { task } = await agent.ok("create_task", { title: "Once only" });
    const a = await agent.ok("start_run", { task_id: task.id, idempotency_key: "k-1" });
    const b = await agent.ok("start_run", { task_id: task.id, idempotency_key: "k-1" });
    expect(b).toEqual(a);
    expect((await agent.ok("list_runs", { task_id: task.id })).items).toHaveLength(1);

    const human = await connect(acc.human);
    const { task: done } = await human.ok("create_task", { title: "Already done", auto_ok: true });
    await agent.ok("complete_task", { task_id: done.id });
    const before = await snapshotDb();
    expect(await agent.fails("start_run", { task_id: done.id })).toMatch(/is done; a run needs an unfinished task/);
    expect(await stranger.fails("start_run", { task_id: task.id })).toMatch(/No task .* in this account/);
    expect(await agent.fails("start_run", { task_id: MISSING.task })).toMatch(/No task/);
    expect(await snapshotDb()).toBe(before);

    await setTaskColumn(done.id, "status", "blocked");
    expect(await agent.ok("start_run", { task_id: done.id })).toMatchObject({ task_status: "blocked" });
    await closeAll(agent, stranger);
  });
});

describe("log_run_event, finish_run, cancel_run", () => {
  it("appends bounded events and stamps last_event_at in the same batch", async () => {
    const acc = await seedAccount();
    const agent = await connect(acc.agent);
    const { task } = await agent.ok("create_task", { title: "Index the archive" });
    const { run } = await agent.ok("start_run", { task_id: task.id });
    await asServer(env.DB, env.DB.prepare("UPDATE runs SET last_event_at = '2020-01-01T00:00:00.000Z' WHERE id = ?").bind(run.id));
    const { event } = await agent.ok("log_run_event", { run_id: run.id, kind: "progress", message: "40% indexed" });
    expect(event).toMatchObject({ run_id: run.id, kind: "progress", message: "40% indexed", url: null });
    expect((await runRow(run.id))?.last_event_at).toBe(event.created_at);
    await agent.ok("log_run_event", { run_id: run.id, kind: "artifact", message: "Report", url: "https://example.com/report.pdf" });
    await agent.ok("log_run_event", { run_id: run.id, kind: "note", message: "x".repeat(4000) });

    const before = await snapshotDb();
    expect(await agent.fails("log_run_event", { run_id: run.id, kind: "note", message: "x".repeat(4001) })).toMatch(/message/);
    expect(await agent.fails("log_run_event", { run_id: run.id, kind: "artifact", message: "m", url: "https://e.com/" + "a".repeat(2000) })).toMatch(/url/);
    expect(await agent.fails("log_run_event", { run_id: run.id, kind: "artifact", message: "no link" })).toMatch(/url: an artifact event needs/);
    expect(await agent.fails("log_run_event", { run_id: run.id, kind: "shout", message: "hi" })).toMatch(/kind/);
    expect(await agent.fails("log_run_event", { run_id: run.id, kind: "note", message: "" })).toMatch(/message: must not be empty/);
    expect(await agent.fails("log_run_event", { run_id: run.id, kind: "artifact", message: "m", url: "javascript:alert(1)" })).toMatch(/url/);
    expect(await agent.fails("log_run_event", { run_id: MISSING.run, kind: "note", message: "m" })).toMatch(/No run run_0+ in this account; list_runs/);
    expect(await snapshotDb()).toBe(before);

    const replay1 = await agent.ok("log_run_event", { run_id: run.id, kind: "note", message: "once", idempotency_key: "e-1" });
    const replay2 = await agent.ok("log_run_event", { run_id: run.id, kind: "note", message: "once", idempotency_key: "e-1" });
    expect(replay2).toEqual(replay1);
    const got = await agent.ok("get_run", { run_id: run.id });
    expect(got.event_count).toBe(4);
    expect(got.events.map((e: { kind: string }) => e.kind)).toEqual(["progress", "artifact", "note", "note"]);
    expect((await activityOf(task.id)).filter((e) => e.tool === "log_run_event")).toHaveLength(4);
    await agent.close();
  });

  it("only the run's own agent may log to, finish or cancel it", async () => {
    const acc = await seedAccount();
    const human = await connect(acc.human);
    const [a1, a2] = await agentClients(acc, ["a1", "a2"]);
    const { task } = await human.ok("create_task", { title: "Shared task" });
    const { run } = await a1.ok("start_run", { task_id: task.id });
    const other = await seedAccount("Other");
    const stranger = await connect(other.agent);
    const before = await snapshotDb();
    for (const client of [a2, human]) {
      expect(await client.fails("log_run_event", { run_id: run.id, kind: "note", message: "hijack" })).toMatch(/belongs to agent a1; only that agent's token/);
      expect(await client.fails("finish_run", { run_id: run.id, outcome: "failed", summary: "nope" })).toMatch(/belongs to agent a1/);
      expect(await client.fails("cancel_run", { run_id: run.id })).toMatch(/belongs to agent a1/);
    }
    expect(await stranger.fails("finish_run", { run_id: run.id, outcome: "failed", summary: "x" })).toMatch(/No run .* in this account/);
    expect(await stranger.fails("get_run", { run_id: run.id })).toMatch(/No run/);
    expect(await snapshotDb()).toBe(before);
    await closeAll(human, a1, a2, stranger);
  });

  for (const era of ERAS) {
    it(`${era}: finishing or cancelling twice is a no-op; a different ending is refused; an ended run takes no events`, async () => {
      const acc = await seedAccount();
      const agent = await connect(acc.agent, era);
      const { task } = await agent.ok("create_task", { title: "Run it" });
      const { run } = await agent.ok("start_run", { task_id: task.id });
      const done = await agent.ok("finish_run", { run_id: run.id, outcome: "succeeded", summary: "All green." });
      expect(done).toMatchObject({ changed: true, run: { status: "succeeded", summary: "All green." } });
      expect(done.run.finished_at).toEqual(expect.any(String));
      expect(await runRow(run.id)).toMatchObject({ status: "succeeded", summary: "All green.", finished_at: done.run.finished_at });
      const before = await snapshotDb();
      expect(await agent.ok("finish_run", { run_id: run.id, outcome: "succeeded", summary: "All green." })).toMatchObject({ changed: false, run: done.run });
      expect(await agent.fails("finish_run", { run_id: run.id, outcome: "failed", summary: "x" })).toMatch(/already ended as succeeded/);
      expect(await agent.fails("cancel_run", { run_id: run.id })).toMatch(/already ended as succeeded/);
      expect(await agent.fails("log_run_event", { run_id: run.id, kind: "note", message: "late" })).toMatch(/has ended \(succeeded\)/);
      expect(await agent.fails("finish_run", { run_id: run.id, outcome: "succeeded" })).toMatch(/summary/);
      expect(await snapshotDb()).toBe(before);

      const { run: r2 } = await agent.ok("start_run", { task_id: task.id });
      expect(await agent.ok("cancel_run", { run_id: r2.id, reason: "Superseded" })).toMatchObject({ changed: true, run: { status: "cancelled", summary: "Superseded" } });
      expect(await agent.ok("cancel_run", { run_id: r2.id })).toMatchObject({ changed: false });
      const ends = (await activityOf(task.id)).filter((e) => e.tool === "finish_run" || e.tool === "cancel_run");
      expect(ends).toHaveLength(2);
      await agent.close();
    });
  }
});

describe("list_runs and get_run", () => {
  it("filters by task, agent and status, in cursor pages, newest first", async () => {
    const acc = await seedAccount();
    const human = await connect(acc.human);
    const [a1, a2] = await agentClients(acc, ["a1", "a2"]);
    const { task: t1 } = await human.ok("create_task", { title: "One" });
    const { task: t2 } = await human.ok("create_task", { title: "Two" });
    const r1 = (await a1.ok("start_run", { task_id: t1.id })).run;
    const r2 = (await a1.ok("start_run", { task_id: t2.id })).run;
    const r3 = (await a2.ok("start_run", { task_id: t1.id })).run;
    await a1.ok("finish_run", { run_id: r1.id, outcome: "failed", summary: "Timeout" });

    const ids = (r: Record<string, any>) => (r.items as { id: string }[]).map((x) => x.id);
    expect(ids(await human.ok("list_runs", {}))).toEqual([r3.id, r2.id, r1.id]);
    expect(ids(await human.ok("list_runs", { task_id: t1.id }))).toEqual([r3.id, r1.id]);
    expect(ids(await human.ok("list_runs", { agent: "a1" }))).toEqual([r2.id, r1.id]);
    expect(ids(await human.ok("list_runs", { status: ["failed"] }))).toEqual([r1.id]);
    expect(ids(await human.ok("list_runs", { agent: "a1", status: ["running"] }))).toEqual([r2.id]);
    const p1 = await a2.ok("list_runs", { limit: 2 });
    expect(ids(p1)).toEqual([r3.id, r2.id]);
    const p2 = await a2.ok("list_runs", { limit: 2, cursor: p1.next_cursor });
    expect(ids(p2)).toEqual([r1.id]);
    expect(p2.next_cursor).toBeNull();
    expect(p2.items[0]).toMatchObject({ agent: "a1", task_title: "One", status: "failed", summary: "Timeout" });

    expect(await human.fails("list_runs", { agent: "ghost" })).toMatch(/No agent ghost in this account; list_agents/);
    expect(await human.fails("list_runs", { task_id: MISSING.task })).toMatch(/No task/);
    expect(await human.fails("list_runs", { status: ["sleeping"] })).toMatch(/status/);
    const other = await seedAccount("Other");
    const stranger = await connect(other.human);
    expect((await stranger.ok("list_runs", {})).items).toEqual([]);

    await asServer(env.DB, env.DB.prepare("UPDATE tasks SET trash_id = 'trs_test' WHERE id = ?").bind(t2.id));
    expect(ids(await human.ok("list_runs", {}))).toEqual([r3.id, r1.id]);
    expect(await human.fails("get_run", { run_id: r2.id })).toMatch(/No run/);
    await closeAll(human, a1, a2, stranger);
  });

  it("get_run shows the latest 200 events, oldest first, with the full count", async () => {
    const acc = await seedAccount();
    const agent = await connect(acc.agent);
    const { task } = await agent.ok("create_task", { title: "Chatty" });
    const { run } = await agent.ok("start_run", { task_id: task.id });
    const base = Date.parse("2026-01-01T00:00:00Z");
    const statements = Array.from({ length: 230 }, (_, i) =>
      env.DB.prepare("INSERT INTO run_events (id, account_id, run_id, kind, message, created_at) VALUES (?, ?, ?, 'progress', ?, ?)")
        .bind(`evt_${String(i).padStart(16, "0")}`, acc.accountId, run.id, `step ${i}`, new Date(base + i * 1000).toISOString()),
    );
    await env.DB.batch(statements);
    const got = await agent.ok("get_run", { run_id: run.id });
    expect(got.event_count).toBe(230);
    expect(got.events).toHaveLength(200);
    expect(got.events[0].message).toBe("step 30");
    expect(got.events[199].message).toBe("step 229");
    expect(got.run).toMatchObject({ id: run.id, status: "running" });
    await agent.close();
  });
});
