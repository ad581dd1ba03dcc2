import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../src/index.ts";
import { verifyTaskgateSignature } from "../examples/verify-webhook.mjs";
import { claimLapsedEvent } from "../src/domain/events.ts";
import { enqueueEvents } from "../src/webhooks/queue.ts";
import { asServer, connect, seedAccount } from "./helpers.ts";
import { addHook, consume, deliveryRows, fakeReceivers, sleep, verifyStandard, waitFor, workerEnv, type Received } from "./webhooks.helpers.ts";

afterEach(() => {
  vi.restoreAllMocks();
});

const at = (seen: Received[], url: string) => seen.filter((r) => r.url === url);

describe("webhook events through the queue", () => {
  it("arrive signed, exactly once per event id, at each endpoint subscribed to them, and nowhere else", async () => {
    const seen = fakeReceivers();
    const acc = await seedAccount("Hooks");
    const other = await seedAccount("Other hooks");
    const all = await addHook(acc.accountId, "https://hooks.example.test/all");
    const doneOnly = await addHook(acc.accountId, "http://127.0.0.1:9/done", "task.completed");
    const foreign = await addHook(other.accountId, "https://other.example.test/all");
    const human = await connect(acc.human);
    const agent = await connect(acc.agent, "legacy");
    const otherHuman = await connect(other.human);

    const { task } = await human.ok("create_task", { title: "Ship the release", assignee: acc.agentName });
    const first = await agent.ok("complete_task", { task_id: task.id, note: "tagged v1.0" });
    await human.ok("reject_task", { task_id: task.id, reason: "the changelog is missing" });
    await agent.ok("complete_task", { task_id: task.id, note: "changelog added" });
    await human.ok("approve_task", { task_id: task.id });
    const asked = (await human.ok("create_task", { title: "Budget" })).task;
    const question = await agent.ok("request_approval", { task_id: asked.id, question: "May I spend 20 EUR on a domain?" });
    await human.ok("approve_task", { task_id: asked.id, note: "yes, the .com one" }); // answers the question: the task stays open
    await otherHuman.ok("create_task", { title: "Not yours" });
    await human.ok("approve_task", { task_id: task.id }); // a no-op: no event
    await human.ok("approve_task", { task_id: asked.id, note: "yes, the .com one" }); // the same answer again: no event

    await waitFor("6 deliveries to the all-events endpoint", () => at(seen, all.webhook.url).length >= 6 && at(seen, doneOnly.webhook.url).length >= 1);
    await sleep(2500);
    const got = at(seen, all.webhook.url);
    expect(got.map((r) => r.event.type).sort()).toEqual([
      "approval.answered", "approval.requested", "approval.requested", "approval.requested", "task.completed", "task.rejected",
    ]);
    expect(new Set(got.map((r) => r.event.id)).size).toBe(6);
    const done = at(seen, doneOnly.webhook.url);
    expect(done).toHaveLength(1);
    expect(done[0].event.id).toBe(got.find((r) => r.event.type === "task.completed")!.event.id);
    expect(at(seen, foreign.webhook.url)).toHaveLength(0);

    for (const r of [...got, ...done]) {
      const secret = r.url === all.webhook.url ? all.secret : doneOnly.secret;
      expect(await verifyTaskgateSignature(secret, r.headers["taskgate-signature"], r.body)).toBe(true);
      expect(await verifyTaskgateSignature(foreign.secret, r.headers["taskgate-signature"], r.body)).toBe(false);
      expect(await verifyTaskgateSignature(secret, r.headers["taskgate-signature"], r.body.replace("}", ' }'))).toBe(false);
      // Standard Webhooks, verified with the standardwebhooks library as a receiver would.
      expect(verifyStandard(secret, r)).toEqual(r.event);
      expect(() => verifyStandard(foreign.secret, r)).toThrow(/No matching signature/);
      expect(() => verifyStandard(secret, { ...r, body: r.body.replace("}", " }") })).toThrow(/No matching signature/);
      expect(r.headers["webhook-id"]).toBe(r.event.id);
      expect(r.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
      expect(Math.abs(Number(r.headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(60);
      expect(r.headers["taskgate-event"]).toBe(r.event.type);
      expect(r.headers["taskgate-event-id"]).toBe(r.event.id);
      expect(r.headers["content-type"]).toBe("application/json");
      expect(r.event.account_id).toBe(acc.accountId);
      expect(Date.parse(r.event.created_at)).not.toBeNaN();
      const wire = JSON.stringify(r);
      for (const s of [acc.human, acc.agent, acc.humanRead, acc.agentRead, all.secret, doneOnly.secret]) expect(wire).not.toContain(s);
      expect(wire).not.toMatch(/tg_|whsec_|v1:[A-Za-z0-9+/]/);
    }
    const byType = (t: string) => got.filter((r) => r.event.type === t).map((r) => r.event.data);
    expect(byType("approval.requested")).toContainEqual(
      expect.objectContaining({ approval: { id: first.approval.id, kind: "signoff", question: "tagged v1.0", requested_by: acc.agentName, choices: null, accepts_words: false }, task: expect.objectContaining({ id: task.id, status: "awaiting_approval" }) }),
    );
    expect(byType("approval.answered")).toEqual([
      {
        task: { id: asked.id, title: "Budget", status: "open", project_id: null, assignee: null, due_at: null },
        approval: { id: question.approval.id, question: "May I spend 20 EUR on a domain?", requested_by: acc.agentName },
        answer: "yes",
        reason: "yes, the .com one",
        answered_by: "human",
        answered_by_person: null, // a person's tg_ token names no person
        choice: null,
        words: null,
      },
    ]);
    expect(byType("task.rejected")[0]).toMatchObject({ task: { id: task.id, status: "in_progress" }, rejected_by: "human", reason: "the changelog is missing" });
    expect(byType("task.completed")[0]).toMatchObject({ task: { id: task.id, title: "Ship the release", status: "done" }, completed_by: "human", next_occurrence: null });

    expect((await deliveryRows(all.webhook.id)).map((d) => [d.status, d.attempts, d.last_status])).toEqual(Array(6).fill(["delivered", 1, 200]));
    // The queue may deliver a message again: a delivered endpoint is not called twice.
    const again = await consume(got[0].event, 2, "redelivered");
    expect(again.explicitAcks).toEqual(["redelivered"]);
    expect(at(seen, all.webhook.url)).toHaveLength(6);
    await Promise.all([human.close(), agent.close(), otherHuman.close()]);
  });

  it("a completion retried with the same idempotency key emits one event; a recurring task's event names the next occurrence", async () => {
    const seen = fakeReceivers();
    const acc = await seedAccount("Hooks replay");
    const hook = await addHook(acc.accountId, "https://hooks.example.test/replay", "task.completed");
    const human = await connect(acc.human);
    const { task } = await human.ok("create_task", { title: "Daily log", due_at: "2027-02-01T09:00:00Z", recurrence: "FREQ=DAILY" });
    const r1 = await human.ok("complete_task", { task_id: task.id, idempotency_key: "c-1" });
    await human.ok("complete_task", { task_id: task.id, idempotency_key: "c-1" });
    await human.ok("complete_task", { task_id: task.id });
    await waitFor("the completion event", () => at(seen, hook.webhook.url).length >= 1);
    await sleep(2500);
    const got = at(seen, hook.webhook.url);
    expect(got).toHaveLength(1);
    expect(got[0].event.data.next_occurrence).toEqual({ id: r1.next_occurrence.id, due_at: "2027-02-02T09:00:00.000Z" });
    await human.close();
  });

  it("a slow receiver does not slow the tool call that caused the event", async () => {
    const seen = fakeReceivers(async () => {
      await sleep(5000);
      return new Response("finally");
    });
    const acc = await seedAccount("Slow hooks");
    const hook = await addHook(acc.accountId, "https://slow.example.test/hook", "task.completed");
    const human = await connect(acc.human);
    const { task } = await human.ok("create_task", { title: "Quick one" });
    const started = Date.now();
    await human.ok("complete_task", { task_id: task.id });
    const took = Date.now() - started;
    expect(took).toBeLessThan(2500);
    await waitFor("the slow delivery to be recorded", async () => (await deliveryRows(hook.webhook.id))[0]?.status === "delivered", 25_000);
    expect(at(seen, hook.webhook.url)).toHaveLength(1);
    console.log(`complete_task answered in ${took} ms; the receiver took 5000 ms`);
    await human.close();
  });

  it("claim.lapsed: the event the claim-lease change emits is delivered like the others", async () => {
    const seen = fakeReceivers();
    const acc = await seedAccount("Lapsed hooks");
    const hook = await addHook(acc.accountId, "https://hooks.example.test/lapsed", "claim.lapsed");
    const now = new Date().toISOString();
    const event = claimLapsedEvent(acc.accountId, now, {
      task: { id: "tsk_0000000000000001", title: "Held too long", status: "in_progress", project_id: null, assignee: "bot-2", due_at: null },
      holder: "bot", lease_expired_at: now, taken_over_by: "bot-2", stale_run_id: null,
    });
    await enqueueEvents(workerEnv, [event]);
    await waitFor("the claim.lapsed delivery", () => at(seen, hook.webhook.url).length === 1);
    expect(at(seen, hook.webhook.url)[0].event).toEqual(event);
    expect(await verifyTaskgateSignature(hook.secret, at(seen, hook.webhook.url)[0].headers["taskgate-signature"], at(seen, hook.webhook.url)[0].body)).toBe(true);
  });
});

describe("run.stale from the minute cron", () => {
  it("announces a run once per silence, again after it logs and falls silent again, and forgets it once it ends", async () => {
    const seen = fakeReceivers();
    const acc = await seedAccount("Stale hooks", "sleepy");
    const hook = await addHook(acc.accountId, "https://hooks.example.test/stale", "run.stale");
    const human = await connect(acc.human);
    const agent = await connect(acc.agent);
    const { task } = await human.ok("create_task", { title: "Long job" });
    const { run } = await agent.ok("start_run", { task_id: task.id });
    const silence = async () =>
      asServer(env.DB, env.DB.prepare("UPDATE runs SET last_event_at = ? WHERE id = ?").bind(new Date(Date.now() - 20 * 60_000).toISOString(), run.id));
    const tick = async () => {
      const pending: Promise<unknown>[] = [];
      const ctx = { waitUntil: (p: Promise<unknown>) => pending.push(p), passThroughOnException() {}, props: {} } as unknown as ExecutionContext;
      await worker.scheduled!({ cron: "* * * * *", scheduledTime: Date.now(), noRetry() {} } as ScheduledController, workerEnv, ctx);
      await Promise.all(pending);
    };

    await tick();
    await sleep(1500);
    expect(at(seen, hook.webhook.url)).toHaveLength(0);
    await silence();
    await tick();
    await tick();
    await waitFor("the run.stale delivery", () => at(seen, hook.webhook.url).length >= 1);
    await sleep(1500);
    expect(at(seen, hook.webhook.url)).toHaveLength(1);
    expect(at(seen, hook.webhook.url)[0].event.data).toMatchObject({
      run: { id: run.id, task_id: task.id, agent: "sleepy" }, task: { id: task.id, title: "Long job" }, stale_after_minutes: 15,
    });

    await agent.ok("log_run_event", { run_id: run.id, kind: "progress", message: "still here" });
    await tick();
    await silence();
    await tick();
    await waitFor("the second run.stale delivery", () => at(seen, hook.webhook.url).length >= 2);
    const [a, b] = at(seen, hook.webhook.url);
    expect(a.event.id).not.toBe(b.event.id);

    await agent.ok("finish_run", { run_id: run.id, outcome: "succeeded", summary: "done" });
    await tick();
    const notices = await env.DB.prepare("SELECT count(*) AS n FROM stale_run_notices WHERE run_id = ?").bind(run.id).first<{ n: number }>();
    expect(notices?.n).toBe(0);
    await Promise.all([human.close(), agent.close()]);
  });
});

describe("the verification snippet of docs/webhooks.md", () => {
  it("is examples/verify-webhook.mjs verbatim, the module these tests verify every delivery with", () => {
    expect(env.VERIFY_SNIPPET).toMatch(/export async function verifyTaskgateSignature/);
    expect(env.DOCS_WEBHOOKS_MD).toContain("```js\n" + env.VERIFY_SNIPPET + "```");
  });
});
