import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { verifyTaskgateSignature } from "../examples/verify-webhook.mjs";
import { importConnectorKey, sealText } from "../src/domain/crypto.ts";
import { newEvent, type TaskgateEvent } from "../src/domain/events.ts";
import { listWebhooks, openSecret, planWebhook, removeWebhook, type WebhookTarget } from "../src/db/webhooks-d1.ts";
import { secretContext } from "../src/db/webhooks.ts";
import { standardWebhookSecret, WebhookInputError } from "../src/domain/webhooks.ts";
import { deliverEvent, retryDelaySeconds } from "../src/webhooks/deliver.ts";
import { connect, seedAccount } from "./helpers.ts";
import { addHook, consume, consumeBatch, deliveryRows, fakeReceivers, verifyStandard, waitFor, workerEnv } from "./webhooks.helpers.ts";

afterEach(() => {
  vi.restoreAllMocks();
});

const HOUR = 3_600_000;

function completed(accountId: string, ageMs = 0): TaskgateEvent {
  return newEvent("task.completed", accountId, new Date(Date.now() - ageMs).toISOString(), {
    task: { id: "tsk_00000000000000aa", title: "Done", status: "done", project_id: null, assignee: null, due_at: null },
    completed_by: "human", completed_by_person: null, approval_id: null, next_occurrence: null,
  });
}

/** Registers an endpoint as if long ago, so that old events are its business too. */
async function oldHook(accountId: string, url: string) {
  const hook = await addHook(accountId, url);
  await env.DB.prepare("UPDATE webhooks SET created_at = '2020-01-01T00:00:00.000Z' WHERE id = ?").bind(hook.webhook.id).run();
  return hook;
}

describe("retries and giving up", () => {
  it("a failing receiver is retried with growing delays until 24 hours after the event, then the delivery is recorded as failed", async () => {
    const seen = fakeReceivers(() => new Response("down", { status: 500 }));
    const acc = await seedAccount("Failing hooks");
    const hook = await oldHook(acc.accountId, "https://down.example.test/hook");
    const event = completed(acc.accountId);

    const first = await consume(event, 1);
    expect(first.retryMessages).toEqual([{ msgId: "msg-1", delaySeconds: 30 }]);
    expect(await deliveryRows(hook.webhook.id)).toEqual([
      { event_id: event.id, event_type: "task.completed", status: "pending", attempts: 1, last_status: 500, last_error: "the endpoint answered HTTP 500" },
    ]);
    expect((await consume(event, 2)).retryMessages[0].delaySeconds).toBe(60);
    expect((await consume(event, 3)).retryMessages[0].delaySeconds).toBe(120);
    expect([1, 2, 3, 4, 5, 6, 7, 8, 9, 30].map(retryDelaySeconds)).toEqual([30, 60, 120, 240, 480, 960, 1920, 3600, 3600, 3600]);
    expect(seen).toHaveLength(3);

    // Near the end of the day the last retry is timed to the deadline …
    const late = { ...event, created_at: new Date(Date.now() - 24 * HOUR + 20_000).toISOString() };
    const nearEnd = await consume(late, 29);
    expect(nearEnd.retryMessages[0].delaySeconds).toBeGreaterThanOrEqual(18);
    expect(nearEnd.retryMessages[0].delaySeconds).toBeLessThanOrEqual(20);
    // … and the attempt past it gives up: recorded as failed, the message acknowledged.
    const expired = { ...event, created_at: new Date(Date.now() - 24 * HOUR - 1000).toISOString() };
    const last = await consume(expired, 30, "last");
    expect(last.explicitAcks).toEqual(["last"]);
    expect(last.retryMessages).toEqual([]);
    const [row] = await deliveryRows(hook.webhook.id);
    expect(row).toMatchObject({ status: "failed", attempts: 5, last_status: 500, last_error: "the endpoint answered HTTP 500" });
    const [listed] = await listWebhooks(env.DB, acc.accountId);
    expect(listed.deliveries).toEqual({ delivered: 0, pending: 0, failed: 1 });
    expect(listed.last_failure).toMatchObject({ event_id: event.id, event_type: "task.completed", attempts: 5, last_error: "the endpoint answered HTTP 500" });

    // A message that comes back after giving up changes nothing and calls nobody.
    expect((await consume(event, 31, "again")).explicitAcks).toEqual(["again"]);
    expect(seen).toHaveLength(5);
    expect((await deliveryRows(hook.webhook.id))[0].attempts).toBe(5);
  });

  it("through the real queue: the first attempt's failure is recorded and the message is put back", async () => {
    const seen = fakeReceivers(() => new Response("no", { status: 503 }));
    const acc = await seedAccount("Queue retry");
    const hook = await addHook(acc.accountId, "https://down.example.test/queue", "task.completed");
    const human = await connect(acc.human);
    const { task } = await human.ok("create_task", { title: "Will fail to notify" });
    await human.ok("complete_task", { task_id: task.id });
    await waitFor("the first attempt", async () => (await deliveryRows(hook.webhook.id))[0]?.attempts === 1);
    expect((await deliveryRows(hook.webhook.id))[0]).toMatchObject({ status: "pending", last_status: 503 });
    expect(seen).toHaveLength(1);
    // The retry comes back in 30 s: with the endpoint gone it finds nobody to call, whatever runs then.
    await removeWebhook(env.DB, acc.accountId, hook.webhook.id);
    await human.close();
  });

  it("a receiver that recovers gets the event once; a second endpoint that answered is not called again", async () => {
    let up = false;
    const seen = fakeReceivers((r) => new Response("", { status: r.url.includes("flaky") && !up ? 502 : 204 }));
    const acc = await seedAccount("Flaky hooks");
    const flaky = await oldHook(acc.accountId, "https://flaky.example.test/hook");
    const steady = await oldHook(acc.accountId, "https://steady.example.test/hook");
    const event = completed(acc.accountId);
    expect((await consume(event, 1)).retryMessages).toHaveLength(1);
    up = true;
    expect((await consume(event, 2, "second")).explicitAcks).toEqual(["second"]);
    expect((await consume(event, 3, "third")).explicitAcks).toEqual(["third"]);
    const hosts = seen.map((r) => new URL(r.url).host);
    expect([...hosts.slice(0, 2)].sort()).toEqual(["flaky.example.test", "steady.example.test"]);
    expect(hosts.slice(2)).toEqual(["flaky.example.test"]);
    expect((await deliveryRows(flaky.webhook.id))[0]).toMatchObject({ status: "delivered", attempts: 2, last_status: 204, last_error: null });
    expect((await deliveryRows(steady.webhook.id))[0]).toMatchObject({ status: "delivered", attempts: 1 });
    const [a, b] = [seen.find((r) => r.url.includes("flaky"))!, seen[2]];
    expect(a.body).toBe(b.body);
    expect(await verifyTaskgateSignature(flaky.secret, b.headers["taskgate-signature"], b.body)).toBe(true);
    // Standard Webhooks: the same webhook-id on every attempt (a receiver de-duplicates by it), each attempt signed anew.
    expect(a.headers["webhook-id"]).toBe(event.id);
    expect(b.headers["webhook-id"]).toBe(event.id);
    expect(verifyStandard(flaky.secret, a)).toEqual(event);
    expect(verifyStandard(flaky.secret, b)).toEqual(event);
  });

  it("a receiver that does not answer within 10 s is abandoned for this attempt; redirects are not followed", async () => {
    const seen = fakeReceivers(
      (r) =>
        r.url.includes("redirect")
          ? new Response(null, { status: 302, headers: { location: "https://elsewhere.example.test/" } })
          : new Promise<Response>((_, reject) => r.signal?.addEventListener("abort", () => reject(r.signal?.reason))),
    );
    const acc = await seedAccount("Silent hooks");
    const silent = await oldHook(acc.accountId, "https://silent.example.test/hook");
    const moved = await oldHook(acc.accountId, "https://redirect.example.test/hook");
    const started = Date.now();
    const result = await consume(completed(acc.accountId), 1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(9_500);
    expect(result.retryMessages).toHaveLength(1);
    expect((await deliveryRows(silent.webhook.id))[0]).toMatchObject({ status: "pending", last_error: "no answer within 10 s" });
    expect((await deliveryRows(moved.webhook.id))[0]).toMatchObject({ status: "pending", last_status: 302, last_error: "the endpoint answered HTTP 302 (redirects are not followed)" });
    expect(seen).toHaveLength(2);
  });

  it("an endpoint registered after the event does not get it", async () => {
    const seen = fakeReceivers();
    const acc = await seedAccount("Late hooks");
    const event = completed(acc.accountId, 60_000);
    await addHook(acc.accountId, "https://late.example.test/hook");
    expect((await consume(event, 1, "late")).explicitAcks).toEqual(["late"]);
    expect(seen).toHaveLength(0);
  });
});

describe("order", () => {
  it("one account's events in a batch go out in the order they were sent, even when the first one's receiver is slow; another account's go alongside", async () => {
    const arrivals: string[] = [];
    let release: () => void = () => {};
    const held = new Promise<void>((r) => (release = r));
    fakeReceivers(async (r) => {
      arrivals.push(`${r.url.includes("first") ? "A" : "B"}:${r.event.type}:${r.event.data.task.title}`);
      // Account A's first event waits until account B's has arrived: B does not queue behind A.
      if (r.event.data.task.title === "A1") await held;
      if (r.url.includes("second")) release();
      return new Response("ok");
    });
    const a = await seedAccount("Ordered hooks A");
    const b = await seedAccount("Ordered hooks B");
    await oldHook(a.accountId, "https://first.example.test/hook");
    await oldHook(b.accountId, "https://second.example.test/hook");
    const event = (accountId: string, title: string) => ({
      ...completed(accountId),
      id: `wev_${title.toLowerCase().padEnd(16, "0")}`,
      data: { ...completed(accountId).data, task: { ...completed(accountId).data.task, title } },
    });
    const result = await consumeBatch([
      event(a.accountId, "A1"),
      event(a.accountId, "A2"),
      event(b.accountId, "B1"),
      event(a.accountId, "A3"),
    ]);
    expect(result.explicitAcks.sort()).toEqual(["msg-0", "msg-1", "msg-2", "msg-3"]);
    expect(arrivals.filter((x) => x.startsWith("A"))).toEqual(["A:task.completed:A1", "A:task.completed:A2", "A:task.completed:A3"]);
    expect(arrivals.indexOf("B:task.completed:B1")).toBeLessThan(arrivals.indexOf("A:task.completed:A2"));
  });
});

describe("endpoints", () => {
  it("https only in production, any http(s) URL in local development; events named; clear errors naming the field", async () => {
    const acc = await seedAccount("Endpoint rules");
    const req = (url: string, events = "all", allowHttp = false) => planWebhook({ accountId: acc.accountId, url, events, key: env.CONNECTOR_KEY, allowHttp }, new Date().toISOString());
    await expect(req("http://receiver.example.test/hook")).rejects.toThrow(/^url: must start with https:\/\/ \(http:\/\/ is accepted only in local development\)/);
    expect((await req("http://127.0.0.1:8080/hook", "all", true)).webhook.url).toBe("http://127.0.0.1:8080/hook");
    await expect(req("ftp://x.example.test/", "all", true)).rejects.toThrow(/^url: must start with https:\/\/ or http:\/\//);
    await expect(req("not a url")).rejects.toThrow(/^url: "not a url" is not a URL/);
    await expect(req("https://user:pass@x.example.test/")).rejects.toThrow(/^url: must not carry a user name or password/);
    await expect(req("https://x.example.test/#frag")).rejects.toThrow(/^url: must not have a #fragment/);
    await expect(req("https://x.example.test/", "task.done,task.completed")).rejects.toThrow(/^events: task.done is not an event; the events are approval.requested, approval.answered, approval.withdrawn, approval.decided, task.completed, task.rejected, run.stale, claim.lapsed/);
    await expect(req("https://x.example.test/", " , ")).rejects.toThrow(WebhookInputError);
    expect((await req("https://x.example.test/", "all")).webhook.events).toBe("all");
    expect((await req("https://x.example.test/", "task.rejected, approval.requested")).webhook.events).toEqual(["approval.requested", "task.rejected"]);
  });

  it("an http:// endpoint is not delivered to by a production Worker: failed at once, nobody called", async () => {
    const seen = fakeReceivers();
    const acc = await seedAccount("Prod hooks");
    const hook = await oldHook(acc.accountId, "http://plain.example.test/hook");
    const result = await consume(completed(acc.accountId), 1, "prod", { ...workerEnv, ALLOW_HTTP_WEBHOOKS: undefined });
    expect(result.explicitAcks).toEqual(["prod"]);
    expect(seen).toHaveLength(0);
    expect((await deliveryRows(hook.webhook.id))[0]).toMatchObject({ status: "failed", last_error: expect.stringMatching(/only in local development/) });
  });

  it("an endpoint on an internal host: refused when registered (the CLI's remote and local rules), and checked again at each delivery", async () => {
    const acc = await seedAccount("Internal hooks");
    const req = (url: string, allowHttp = false) => planWebhook({ accountId: acc.accountId, url, events: "all", key: env.CONNECTOR_KEY, allowHttp }, new Date().toISOString());
    await expect(req("https://10.0.0.5/hook")).rejects.toThrow(/^url: 10\.0\.0\.5 is a private address \(10\.0\.0\.0\/8\); Taskgate sends requests only to public hosts$/);
    await expect(req("https://10.0.0.5/hook", true)).rejects.toThrow(/^url: 10\.0\.0\.5 is a private address/);
    await expect(req("https://[fd00::5]/hook", true)).rejects.toThrow(/^url: \[fd00::5\] is a unique-local address/);
    await expect(req("https://127.0.0.1/hook")).rejects.toThrow(/^url: 127\.0\.0\.1 is a loopback address .*accepted only in local development/);
    await expect(req("https://0177.0.0.1/hook")).rejects.toThrow(/^url: 127\.0\.0\.1 is a loopback address/);
    expect((await req("https://0177.0.0.1/hook", true)).webhook.url).toBe("https://127.0.0.1/hook");

    // Rows stored before the rule (or by hand): the consumer refuses them at delivery time, for good, with why.
    const seen = fakeReceivers();
    const metadata = await oldHook(acc.accountId, "https://meta.example.test/hook");
    const loopback = await oldHook(acc.accountId, "http://127.0.0.1:9/hook");
    await env.DB.prepare("UPDATE webhooks SET url = 'https://169.254.169.254/latest' WHERE id = ?").bind(metadata.webhook.id).run();
    const prod = await consume(completed(acc.accountId), 1, "prod", { ...workerEnv, ALLOW_HTTP_WEBHOOKS: undefined });
    expect(prod.explicitAcks).toEqual(["prod"]);
    expect(prod.retryMessages).toEqual([]);
    expect(seen).toHaveLength(0);
    expect((await deliveryRows(metadata.webhook.id))[0]).toMatchObject({ status: "failed", last_status: null, last_error: expect.stringMatching(/^url: 169\.254\.169\.254 is a link-local address .*; register another endpoint$/) });
    expect((await deliveryRows(loopback.webhook.id))[0]).toMatchObject({ status: "failed", last_error: expect.stringMatching(/only in local development/) });

    // Local development delivers to the loopback receiver, and still not to the metadata service.
    const dev = await consume(completed(acc.accountId), 1, "dev");
    expect(dev.explicitAcks).toEqual(["dev"]);
    expect(seen.map((r) => r.url)).toEqual(["http://127.0.0.1:9/hook"]);
    expect((await deliveryRows(metadata.webhook.id))[1]).toMatchObject({ status: "failed", last_error: expect.stringMatching(/link-local/) });
  });

  it("the secret is stored only sealed to its own row, never listed, and removing an endpoint removes its records", async () => {
    const seen = fakeReceivers();
    const acc = await seedAccount("Sealed hooks");
    const one = await oldHook(acc.accountId, "https://one.example.test/hook");
    const two = await oldHook(acc.accountId, "https://two.example.test/hook");
    expect(one.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(standardWebhookSecret(one.secret)).toBe(one.secret);
    const rows = (await env.DB.prepare("SELECT id, account_id, url, secret, secret_prefix FROM webhooks WHERE account_id = ? ORDER BY created_at, id").bind(acc.accountId).all<WebhookTarget & { secret_prefix: string }>()).results;
    for (const r of rows) {
      expect(r.secret).toMatch(/^v1:/);
      expect(r.secret).not.toContain(one.secret.slice(6, 20));
      expect(r.secret_prefix).toMatch(/^whsec_.{4}…$/);
    }
    const key = await importConnectorKey(env.CONNECTOR_KEY);
    const rowOne = rows.find((r) => r.id === one.webhook.id)!;
    expect(await openSecret(key, rowOne)).toBe(one.secret);
    await expect(openSecret(key, { ...rowOne, id: two.webhook.id })).rejects.toThrow();
    const listed = await listWebhooks(env.DB, acc.accountId);
    expect(listed.map((w) => w.id).sort()).toEqual([one.webhook.id, two.webhook.id].sort());
    const listedText = JSON.stringify(listed);
    // The secrets are base64 (with + and /): compared as text, not as a pattern.
    for (const secret of [one.secret, two.secret]) expect(listedText).not.toContain(secret);
    expect(listedText).not.toContain("v1:");

    await consume(completed(acc.accountId), 1);
    expect(seen).toHaveLength(2);
    expect(await removeWebhook(env.DB, acc.accountId, one.webhook.id)).toBe(true);
    expect(await removeWebhook(env.DB, acc.accountId, one.webhook.id)).toBe(false);
    const other = await seedAccount("Not the owner");
    expect(await removeWebhook(env.DB, other.accountId, two.webhook.id)).toBe(false);
    expect(await deliveryRows(one.webhook.id)).toEqual([]);
    expect((await listWebhooks(env.DB, acc.accountId)).map((w) => w.id)).toEqual([two.webhook.id]);
  });
});

describe("Standard Webhooks and the older Taskgate-Signature", () => {
  it("a secret made by an earlier version (base64url) keeps working: the old snippet with it as it is, the library with its base64 form", async () => {
    const seen = fakeReceivers();
    const acc = await seedAccount("Old secret");
    const hook = await oldHook(acc.accountId, "https://old.example.test/hook");
    const raw = crypto.getRandomValues(new Uint8Array(32));
    raw[0] = 0xfb; // base64url "-" or "_" in the text: a form the library's strict base64 refuses as it is
    const old = `whsec_${Buffer.from(raw).toString("base64url")}`;
    expect(old).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const envelope = await sealText(await importConnectorKey(env.CONNECTOR_KEY), secretContext(acc.accountId, hook.webhook.id), old);
    await env.DB.prepare("UPDATE webhooks SET secret = ? WHERE id = ?").bind(envelope, hook.webhook.id).run();

    const event = completed(acc.accountId);
    await consume(event, 1);
    expect(seen).toHaveLength(1);
    const [r] = seen;
    expect(await verifyTaskgateSignature(old, r.headers["taskgate-signature"], r.body)).toBe(true);
    // The conversion docs/webhooks.md gives, and the library verifying with its result.
    const converted = "whsec_" + Buffer.from(old.slice(6), "base64url").toString("base64");
    expect(converted).toBe(standardWebhookSecret(old));
    expect(verifyStandard(converted, r)).toEqual(event);
    expect(() => verifyStandard(old, r)).toThrow();
    // Both schemes sign the same attempt at the same second.
    expect(r.headers["taskgate-signature"]).toMatch(new RegExp(`^t=${r.headers["webhook-timestamp"]},v1=[0-9a-f]{64}$`));
  });

  it("a delivery older than five minutes is refused by the library (replays), a tampered id too", async () => {
    const seen = fakeReceivers();
    const acc = await seedAccount("Replays");
    const hook = await oldHook(acc.accountId, "https://replay.example.test/hook");
    const event = completed(acc.accountId);
    await deliverEvent(workerEnv, event, 1, Date.now() - 10 * 60_000);
    expect(() => verifyStandard(hook.secret, seen[0])).toThrow(/too old/);
    expect(await verifyTaskgateSignature(hook.secret, seen[0].headers["taskgate-signature"], seen[0].body)).toBe(false);
    vi.restoreAllMocks();
    const fresh = fakeReceivers();
    await consume(completed(acc.accountId), 1);
    expect(() => verifyStandard(hook.secret, { ...fresh[0], headers: { ...fresh[0].headers, "webhook-id": "wev_other" } })).toThrow(/No matching signature/);
  });
});
