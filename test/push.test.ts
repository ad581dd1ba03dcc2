/**
 * Web Push through the real surface: a signed-in person adds a device on
 * Settings (CSRF-protected form), an agent asks a question through MCP, and the
 * Worker's queue consumer sends the message to a stand-in push service, the
 * `web-push-testing` package run in Node (test/push/push-service.ts), which
 * decrypts the aes128gcm payload and verifies the VAPID signature. Expired
 * subscriptions (410) are removed; a failing push service is retried with the
 * queue's backoff; a device gets each event once.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { claimLapsedEvent, newEvent } from "../src/domain/events.ts";
import { listPushDevices } from "../src/db/push.ts";
import { actionApproval, actionRequested, findPendingAction } from "../src/db/pending-actions.ts";
import { POLICY_PRESETS, rulesText } from "../src/catalog/policy.ts";
import { forgetResolvedTokens } from "../src/db/principals.ts";
import { parseVapidKey } from "../src/domain/push.ts";
import { newVapidKeyValue } from "../scripts/lib/demo.ts";
import { connect } from "./helpers.ts";
import { flashOn, open, signedInPerson, unescape, type Person } from "./console.helpers.ts";
import { field, ORIGIN } from "./web-helpers.ts";
import { consume, waitFor, workerEnv } from "./webhooks.helpers.ts";

afterEach(() => {
  vi.restoreAllMocks();
});

const PUSH_HOST = "push.example.test";
const ANDROID = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36";

interface Subscription {
  endpoint: string;
  keys: { p256dh: string; auth: string };
  clientHash: string;
}

async function standIn(path: string, body: unknown): Promise<{ status: number; json: any }> {
  const res = await env.PUSH_SERVICE.fetch(`https://${PUSH_HOST}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, json: res.headers.get("content-type")?.includes("json") ? JSON.parse(text) : null };
}

/** A browser's subscription at the stand-in, made with the Worker's public key (as pushManager.subscribe does); its endpoint on an https host. */
async function subscribe(publicKey = parseVapidKey(env.VAPID_KEY).publicKey): Promise<Subscription> {
  const { status, json } = await standIn("/subscribe", { userVisibleOnly: "true", applicationServerKey: publicKey });
  expect(status).toBe(200);
  const path = new URL(json.data.endpoint).pathname;
  return { endpoint: `https://${PUSH_HOST}${path}`, keys: json.data.keys, clientHash: json.data.clientHash };
}

/** What the stand-in decrypted for the subscription, oldest first. */
async function received(sub: Subscription): Promise<any[]> {
  const { json } = await standIn("/get-notifications", { clientHash: sub.clientHash });
  return (json.data.messages as string[]).map((m) => JSON.parse(m));
}

interface Sent {
  url: string;
  headers: Record<string, string>;
  status: number;
}

/**
 * Every outbound request of the Worker: to PUSH_HOST it goes on to the stand-in
 * (through its service binding); `answer` may answer instead (a failing service).
 */
function pushNetwork(answer?: (url: URL) => Response | null): Sent[] {
  const sent: Sent[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = new Request(input, init);
    const url = new URL(req.url);
    const own = answer?.(url) ?? null;
    const res = own ?? (url.hostname === PUSH_HOST ? await env.PUSH_SERVICE.fetch(req) : new Response("no such host", { status: 502 }));
    sent.push({ url: req.url, headers: Object.fromEntries(req.headers), status: res.status });
    return res;
  });
  return sent;
}

/** Adds the subscription as a device through the Settings form; returns the flash the page then shows. */
async function addDevice(p: Person, sub: Subscription, events: string[] = ["approval.requested"], ua = ANDROID): Promise<string | null> {
  const { html } = await open(p.b, "/settings");
  const res = await p.b.post("/settings/push", {
    csrf: field(html, "csrf"), endpoint: sub.endpoint, p256dh: sub.keys.p256dh, auth: sub.keys.auth, events_shown: "1", events,
  }, { "user-agent": ua });
  expect(res.status).toBe(303);
  expect(res.headers.get("location")).toBe("/settings");
  return flashOn(p.b, "/settings");
}

async function askQuestion(p: Person, title: string, question: string): Promise<string> {
  const agent = await connect(p.acc.agent);
  const { task } = await agent.ok("create_task", { title });
  await agent.ok("claim_task", { task_id: task.id });
  await agent.ok("request_approval", { task_id: task.id, question });
  await agent.close();
  return task.id as string;
}

const devicesOf = (p: Person) => listPushDevices(env.DB, p.personId);

describe("the sending path against web-push-testing", () => {
  it("an agent's question reaches the device: decrypted as sent, VAPID verified, nothing in clear around it; a redelivered message is not sent twice", async () => {
    const p = await signedInPerson("Push delivery");
    const sent = pushNetwork();
    const sub = await subscribe();
    expect(await addDevice(p, sub)).toBe("ok: Chrome on Android will be notified. Settings lists it below.");

    const question = "May I deploy <the> release & tag it?";
    const taskId = await askQuestion(p, "Ship v2.1", question);
    await waitFor("the push", async () => (await devicesOf(p))[0]?.last_delivered_at !== null);

    const messages = await received(sub);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatchObject({ title: `${p.acc.agentName} asks: Ship v2.1`, body: question, url: `/tasks/${taskId}` });
    expect(Object.keys(messages[0]).sort()).toEqual(["body", "tag", "title", "url"]);
    // What the push service saw: the ciphertext, VAPID, a TTL; no topic, no urgency, nothing readable.
    const push = sent.find((s) => s.url === sub.endpoint)!;
    expect(push.status).toBe(201);
    expect(push.headers["content-encoding"]).toBe("aes128gcm");
    expect(push.headers.authorization).toMatch(/^vapid t=[\w-]+\.[\w-]+\.[\w-]+, k=[\w-]+$/);
    expect(Object.keys(push.headers).sort()).toEqual(["authorization", "content-encoding", "content-length", "content-type", "ttl"]);
    expect(JSON.stringify(push.headers)).not.toContain("deploy");

    const [device] = await devicesOf(p);
    expect(device).toMatchObject({ label: "Chrome on Android", events: ["approval.requested"], last_failure_at: null });
    const settings = await open(p.b, "/settings");
    expect(settings.html).toContain("Chrome on Android");
    expect(settings.html).not.toContain(sub.keys.auth);
    expect(settings.html).not.toContain(sub.clientHash);
  });

  it("a question with choices carries one action per choice, each opening the decide page with that choice picked; a question without has none", async () => {
    const p = await signedInPerson("Push choices actions");
    pushNetwork();
    const sub = await subscribe();
    await addDevice(p, sub);
    const agent = await connect(p.acc.agent);
    const { task } = await agent.ok("create_task", { title: "Lunch order" });
    await agent.ok("claim_task", { task_id: task.id });
    const { approval } = await agent.ok("request_approval", { task_id: task.id, question: "Which lunch?", choices: ["Soup", "Salad", "Sandwich"] });
    await agent.close();
    await waitFor("the push", async () => (await devicesOf(p))[0]?.last_delivered_at !== null);
    const [message] = await received(sub);
    expect(message).toMatchObject({ body: "Which lunch?", url: `/tasks/${task.id}`, tag: approval.id });
    expect(message.actions).toEqual(["Soup", "Salad", "Sandwich"].map((title, i) => ({ action: `choice-${i}`, title, url: `/tasks/${task.id}?approval=${approval.id}&choice=${i}` })));
    // The action's page shows that choice picked, for the person to send with the page's form.
    const { html } = await open(p.b, message.actions[2].url);
    expect(html).toMatch(new RegExp(`value="Sandwich" id="choice-${approval.id}-2" required="" checked=""`));
    expect(html.match(/checked=""/g)).toHaveLength(1);
  });

  it("a push signed with another VAPID key is refused by the stand-in (it verifies the signature): recorded as a failure and retried", async () => {
    const p = await signedInPerson("Push VAPID");
    pushNetwork();
    const sub = await subscribe();
    await addDevice(p, sub);
    const event = newEvent("approval.requested", p.acc.accountId, new Date().toISOString(), {
      task: { id: "tsk_00000000000000aa", title: "Wrong key", status: "in_progress", project_id: null, assignee: null, due_at: null },
      approval: { id: "apr_00000000000000aa", kind: "question", question: "Is this signed?", requested_by: "bot", choices: null, accepts_words: false },
    });
    const wrongKey = { ...workerEnv, VAPID_KEY: newVapidKeyValue() };
    const first = await consume(event, 1, "msg-1", wrongKey);
    expect(first.retryMessages).toEqual([{ msgId: "msg-1", delaySeconds: 30 }]);
    expect(await received(sub)).toEqual([]);
    const [device] = await devicesOf(p);
    expect(device.last_error).toBe("the push service answered HTTP 400");
    // With the Worker's own key the retry goes through.
    const again = await consume(event, 2);
    expect(again.retryMessages).toEqual([]);
    expect((await received(sub)).map((m) => m.body)).toEqual(["Is this signed?"]);
  });

  it("an expired subscription (410) is removed; a push service answering 500 is retried with backoff and reaches each device once", async () => {
    const p = await signedInPerson("Push expiry");
    let down = true;
    const sent = pushNetwork((url) => (down && url.pathname.startsWith("/notify/") && sentTo(url) === "flaky" ? new Response("busy", { status: 500 }) : null));
    const gone = await subscribe();
    const flaky = await subscribe();
    const steady = await subscribe();
    const labelOf = new Map([[flaky.endpoint, "flaky"]]);
    function sentTo(url: URL): string | undefined {
      return labelOf.get(url.toString());
    }
    await addDevice(p, gone, ["approval.requested"], "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Mobile/15E148 Safari/604.1");
    await addDevice(p, flaky, ["approval.requested"], "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0");
    await addDevice(p, steady);
    expect((await standIn(`/expire-subscription/${gone.clientHash}`, {})).status).toBe(200);

    const event = newEvent("approval.requested", p.acc.accountId, new Date().toISOString(), {
      task: { id: "tsk_00000000000000ab", title: "Three devices", status: "in_progress", project_id: null, assignee: null, due_at: null },
      approval: { id: "apr_00000000000000ab", kind: "signoff", question: "Sign off the report?", requested_by: "bot", choices: null, accepts_words: false },
    });
    const first = await consume(event, 1);
    expect(first.retryMessages).toEqual([{ msgId: "msg-1", delaySeconds: 30 }]);
    const devices = await devicesOf(p);
    expect(devices.map((d) => d.label)).toEqual(["Firefox on Linux", "Chrome on Android"]);
    expect(devices[0]).toMatchObject({ last_delivered_at: null, last_error: "the push service answered HTTP 500" });
    expect(devices[1].last_delivered_at).not.toBeNull();
    expect(sent.filter((s) => s.url === gone.endpoint).map((s) => s.status)).toEqual([410]);

    // The second attempt comes 60 s later by the queue's backoff while still down; the third goes through.
    expect((await consume(event, 2)).retryMessages).toEqual([{ msgId: "msg-2", delaySeconds: 60 }]);
    down = false;
    expect((await consume(event, 3)).retryMessages).toEqual([]);
    expect((await received(flaky)).map((m) => m.body)).toEqual(["Sign off the report?"]);
    expect((await received(steady)).map((m) => m.body)).toEqual(["Sign off the report?"]);
    expect(sent.filter((s) => s.url === steady.endpoint)).toHaveLength(1);
    expect(sent.filter((s) => s.url === flaky.endpoint).map((s) => s.status)).toEqual([500, 500, 201]);
    const after = await devicesOf(p);
    expect(after[0].last_delivered_at).not.toBeNull();
    // A message that comes back once more sends nothing.
    expect((await consume(event, 4)).retryMessages).toEqual([]);
    // 1 (gone: 410) + 3 (flaky: 500, 500, 201) + 1 (steady: 201).
    expect(sent.filter((s) => s.url.startsWith(`https://${PUSH_HOST}/notify/`))).toHaveLength(5);
  });

  it("an agent's call held for approval reaches the device with the tool's title and opens its decide page", async () => {
    const p = await signedInPerson("Push action");
    pushNetwork();
    const sub = await subscribe();
    await addDevice(p, sub);
    await env.DB.prepare("UPDATE agents SET policy = ? WHERE account_id = ?").bind(rulesText(POLICY_PRESETS.careful.rules), p.acc.accountId).run();
    forgetResolvedTokens();
    const person = await connect(p.acc.human);
    const { task } = await person.ok("create_task", { title: "Old invoices" });
    const agent = await connect(p.acc.agent);
    const id = /pending action (apr_[0-9a-z]+)/.exec(await agent.fails("delete_task", { task_id: task.id }))![1];
    await Promise.all([person.close(), agent.close()]);
    const row = (await findPendingAction(env.DB, p.acc.accountId, id))!;
    const event = actionRequested(p.acc.accountId, row.created_at, row, actionApproval(row, row.created_at));
    expect((await consume(event, 1)).retryMessages).toEqual([]);
    const [message] = await received(sub);
    expect(message).toMatchObject({ title: "bot asks to run: Delete task", url: `/approvals/${id}`, tag: id });
    expect(message.body).toContain("Old invoices");
  });

  it("each device gets only the events it chose: claim lapsed and run stale are opt-in", async () => {
    const p = await signedInPerson("Push choices");
    pushNetwork();
    const quiet = await subscribe();
    const all = await subscribe();
    await addDevice(p, quiet);
    await addDevice(p, all, ["approval.requested", "claim.lapsed", "run.stale"]);
    const now = new Date().toISOString();
    const task = { id: "tsk_00000000000000ac", title: "Nightly import", status: "in_progress", project_id: null, assignee: "bot", due_at: null };
    await consume(claimLapsedEvent(p.acc.accountId, now, { task, holder: "bot", lease_expired_at: now, taken_over_by: null, stale_run_id: null }), 1);
    await consume(newEvent("run.stale", p.acc.accountId, now, {
      run: { id: "run_00000000000000ac", task_id: task.id, agent: "bot", started_at: now, last_event_at: now }, task: { id: task.id, title: task.title }, stale_after_minutes: 15,
    }), 1);
    await consume(newEvent("task.completed", p.acc.accountId, now, { task, completed_by: "human", completed_by_person: null, approval_id: null, next_occurrence: null }), 1);
    expect(await received(quiet)).toEqual([]);
    expect((await received(all)).map((m) => [m.title, m.url])).toEqual([
      ["Claim lapsed: Nightly import", `/tasks/${task.id}`],
      ["Run stale: Nightly import", `/tasks/${task.id}`],
    ]);

    // Changing the choice on Settings: the quiet device now hears of lapses too.
    const [first] = await devicesOf(p);
    const { html } = await open(p.b, "/settings");
    await p.b.post("/settings/push/events", { csrf: field(html, "csrf"), device_id: first.id, events: ["approval.requested", "claim.lapsed"] });
    expect(await flashOn(p.b, "/settings")).toBe("ok: Saved what this device is notified of.");
    await consume(claimLapsedEvent(p.acc.accountId, now, { task, holder: "bot", lease_expired_at: now, taken_over_by: null, stale_run_id: null }), 1);
    expect((await received(quiet)).map((m) => m.title)).toEqual(["Claim lapsed: Nightly import"]);
  });
});

describe("Settings: the devices, CSRF, and a page that works without JavaScript", () => {
  it("serves the Worker's public key to the page and loads only its own script; other pages run none", async () => {
    const p = await signedInPerson("Push settings");
    const settings = await open(p.b, "/settings");
    expect(settings.html).toContain(`data-key="${parseVapidKey(env.VAPID_KEY).publicKey}"`);
    expect(settings.html).toMatch(/<script src="\/assets\/taskgate-push-[0-9a-f]{8}\.js" defer=""><\/script>/);
    expect(settings.res.headers.get("content-security-policy")).toContain("script-src 'self'; worker-src 'self'");
    expect(settings.html).not.toContain(env.VAPID_KEY.split(".")[1]);
    const inbox = await open(p.b, "/");
    expect(inbox.res.headers.get("content-security-policy")).not.toContain("script-src");
    expect(inbox.html).not.toContain("<script");
    expect(inbox.html).toContain('<link rel="manifest" href="/manifest.webmanifest"/>');
  });

  it("the form sent without JavaScript says what is needed; a form from another session changes nothing; a device is removed by its form", async () => {
    const p = await signedInPerson("Push forms");
    const { html } = await open(p.b, "/settings");
    await p.b.post("/settings/push", { csrf: field(html, "csrf"), endpoint: "", p256dh: "", auth: "", events_shown: "1", events: "approval.requested" });
    expect(await flashOn(p.b, "/settings")).toMatch(/^error: This browser sent no subscription, so nothing was added\. Notify this device needs JavaScript/);
    const sub = await subscribe();
    await p.b.post("/settings/push", { csrf: field(html, "csrf"), endpoint: sub.endpoint.replace("https:", "http:"), p256dh: sub.keys.p256dh, auth: sub.keys.auth });
    expect(await flashOn(p.b, "/settings")).toBe("error: Nothing was added: the push endpoint must use https.");
    const forged = await p.b.post("/settings/push", { csrf: "not-the-token", endpoint: sub.endpoint, p256dh: sub.keys.p256dh, auth: sub.keys.auth });
    expect(forged.status).toBe(403);
    expect(await devicesOf(p)).toEqual([]);

    await addDevice(p, sub);
    const [device] = await devicesOf(p);
    const other = await signedInPerson("Someone else");
    const theirs = await open(other.b, "/settings");
    await other.b.post("/settings/push/remove", { csrf: field(theirs.html, "csrf"), device_id: device.id, confirmed: "yes" });
    expect(await flashOn(other.b, "/settings")).toBe(`error: You have no device ${device.id}; nothing was removed.`);
    const page = await open(p.b, "/settings");
    // Remove starts a confirmation step (a GET form); a POST without `confirmed` is sent there and removes nothing.
    expect(page.html).toContain(`action="/confirm/remove_device"`);
    const unconfirmed = await p.b.post("/settings/push/remove", { csrf: field(page.html, "csrf"), device_id: device.id });
    expect(unconfirmed.status).toBe(303);
    const step = unconfirmed.headers.get("location") as string;
    expect(step).toBe(`/confirm/remove_device?device_id=${device.id}&back=%2Fsettings`);
    expect(await devicesOf(p)).toHaveLength(1);
    const shown = await open(p.b, step);
    expect(shown.res.status).toBe(200);
    expect(unescape(shown.html)).toContain("Remove “Chrome on Android”?");
    expect(shown.html).toContain("This device is notified of nothing more");
    expect(shown.html).toContain('<a class="button" href="/settings">Cancel</a>');
    expect(await devicesOf(p)).toHaveLength(1);
    // Another person's step for this device shows nothing of it.
    const theirStep = await open(other.b, step);
    expect(theirStep.res.status).toBe(404);
    expect(theirStep.html).not.toContain("Chrome on Android");
    await p.b.post("/settings/push/remove", { csrf: field(shown.html, "csrf"), device_id: device.id, confirmed: "yes" });
    expect(await flashOn(p.b, "/settings")).toBe("ok: Removed the device: it is notified of nothing more.");
    expect(await devicesOf(p)).toEqual([]);
  });

  it("the same browser subscribing again renews its device instead of adding one; a person has at most 20 devices", async () => {
    const p = await signedInPerson("Push limits");
    const sub = await subscribe();
    await addDevice(p, sub);
    const renewed = await subscribe();
    // A browser that subscribes again keeps its endpoint and gets new keys.
    expect(await addDevice(p, { ...renewed, endpoint: sub.endpoint })).toBe("ok: Chrome on Android will be notified. Settings lists it below.");
    expect(await devicesOf(p)).toHaveLength(1);
    for (let i = 1; i < 20; i++) await addDevice(p, { ...renewed, endpoint: `https://${PUSH_HOST}/notify/extra-${i}` });
    expect(await devicesOf(p)).toHaveLength(20);
    expect(await addDevice(p, { ...renewed, endpoint: `https://${PUSH_HOST}/notify/one-too-many` })).toMatch(/^error: Nothing was added: you already have 20 devices/);
    expect(await devicesOf(p)).toHaveLength(20);
    // Another person of another account cannot take this browser's endpoint over.
    const other = await signedInPerson("Push other");
    expect(await addDevice(other, { ...renewed, endpoint: sub.endpoint })).toMatch(/notified for another person here\.$/);
    expect(await devicesOf(other)).toEqual([]);
  });

  it("the manifest, the icon and the service worker are served with their content types and a CSP; the worker never decides", async () => {
    const get = (path: string) => workerEnvFetch(path);
    const manifest = await get("/manifest.webmanifest");
    expect(manifest.headers.get("content-type")).toBe("application/manifest+json");
    expect(await manifest.json()).toMatchObject({ name: "Taskgate", start_url: "/", display: "standalone" });
    const sw = await get("/sw.js");
    expect(sw.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(sw.headers.get("content-security-policy")).toBe("default-src 'none'");
    const code = await sw.text();
    expect(code).toContain("notificationclick");
    // A choice's action only opens the decide page with it picked: the worker sends nothing anywhere, and decides nothing.
    expect(code).not.toMatch(/fetch\(|XMLHttpRequest|sendBeacon|approve|answer_yes|choice=/);
    expect(code).toContain("openPage(event.notification, event.action)");
    const icon = await get("/assets/taskgate-icon.svg");
    expect(icon.headers.get("content-type")).toBe("image/svg+xml");
  });
});

async function workerEnvFetch(path: string): Promise<Response> {
  const { workerFetch } = await import("./helpers.ts");
  return workerFetch(new URL(path, ORIGIN), {});
}
