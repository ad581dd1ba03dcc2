/// <reference types="vite/client" />
/**
 * Which push endpoints Taskgate sends to, through the real surface: a device is
 * added on Settings (a signed-in person, the form's CSRF token) only when its
 * endpoint is on a browser push service (Google FCM, Mozilla autopush, Apple,
 * Microsoft WNS), on the default port, with no user name or password, and the
 * outbound rule allows it; the tests' stand-in push service only in local
 * development (ALLOW_HTTP_WEBHOOKS). The queue consumer checks each stored
 * endpoint again before sending: one on an internal name, as a database of an
 * older version may hold, is never fetched.
 */
import { env } from "cloudflare:workers";
import { createExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../src/index.ts";
import { listPushDevices } from "../src/db/push.ts";
import { newEvent } from "../src/domain/events.ts";
import { ID_PREFIX, newId } from "../src/domain/ids.ts";
import { parseVapidKey, PUSH_SERVICES, STAND_IN_PUSH_HOST, toBase64Url } from "../src/domain/push.ts";
import type { Env } from "../src/env.ts";
import { snapshotDb } from "./helpers.ts";
import { flashOn, open, signedInPerson, type Person } from "./console.helpers.ts";
import { field, ORIGIN } from "./web-helpers.ts";
import { consume, workerEnv } from "./webhooks.helpers.ts";

afterEach(() => {
  vi.restoreAllMocks();
});

const STAND_IN = "push.example.test";
const ANDROID = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36";

/** The Worker as deployed: no ALLOW_HTTP_WEBHOOKS. */
const production = { ...workerEnv, ALLOW_HTTP_WEBHOOKS: undefined } as Env;
const viaProduction = async (url: URL, init: RequestInit) => worker.fetch!(new Request(url, init) as never, production, createExecutionContext());
type Via = typeof viaProduction | undefined;

/** A browser's subscription keys: a real P-256 public key (65 bytes, so a message can be encrypted for it) and an auth secret (16 bytes). */
async function keys(): Promise<{ p256dh: string; auth: string }> {
  const pair = (await crypto.subtle.generateKey({ name: "ECDH", namedCurve: "P-256" }, true, ["deriveBits"])) as CryptoKeyPair;
  const point = new Uint8Array((await crypto.subtle.exportKey("raw", pair.publicKey)) as ArrayBuffer);
  return { p256dh: toBase64Url(point), auth: toBase64Url(crypto.getRandomValues(new Uint8Array(16))) };
}

/** Sends the Settings form with an endpoint (as the page's script does); the flash Settings then shows. */
async function add(p: Person, endpoint: string, via?: Via): Promise<string | null> {
  const { html } = await open(p.b, "/settings");
  const res = await p.b.post("/settings/push", {
    csrf: field(html, "csrf"), endpoint, ...(await keys()), events_shown: "1", events: ["approval.requested"],
  }, { "user-agent": ANDROID }, via);
  expect(res.status, endpoint).toBe(303);
  expect(res.headers.get("location")).toBe("/settings");
  return flashOn(p.b, "/settings");
}

const SERVICES = "fcm.googleapis.com, *.push.services.mozilla.com, *.push.apple.com or *.notify.windows.com";
const refusal = (what: string) =>
  `error: Nothing was added: ${what}. Push endpoints must be on a browser push service: ${SERVICES}; subscribe from a current Chrome, Edge, Firefox or Safari.`;
/** The same refusal on a development server, which names the stand-in too. */
const localRefusal = (what: string) =>
  `error: Nothing was added: ${what}. Push endpoints must be on a browser push service: ${SERVICES} (or the tests' stand-in, ${STAND_IN}); subscribe from a current Chrome, Edge, Firefox or Safari.`;

/** Endpoints on internal names, each on a name that resolves only inside a network, and what the page calls its host. */
const INTERNAL: [endpoint: string, what: string][] = [
  ["https://metadata.google.internal/computeMetadata/v1/", "metadata.google.internal is a name internal by convention (*.internal), not a browser push service"],
  ["https://sink.internal:8951/p", "sink.internal is a name internal by convention (*.internal), not a browser push service"],
  ["https://printer.local/x", "printer.local is a name internal by convention (*.local), not a browser push service"],
  ["https://router.lan/x", "router.lan is a name internal by convention (*.lan), not a browser push service"],
  ["https://x.home.arpa/", "x.home.arpa is a name internal by convention (*.home.arpa), not a browser push service"],
  ["https://localhost.:8951/p", "localhost. is a loopback name (localhost), not a browser push service"],
  ["https://vm.:8951/p", "vm. is a single-label name, which resolves only inside a network, not a browser push service"],
  ["https://intranet.corp/x", "intranet.corp is a name internal by convention (*.corp), not a browser push service"],
  ["https://a.localdomain/", "a.localdomain is a name internal by convention (*.localdomain), not a browser push service"],
];

/** Near misses of the push services' names, and what the page says of each. */
const LOOKALIKES: [endpoint: string, message: string][] = [
  ["https://evil-fcm.googleapis.com.attacker.tld/fcm/send/x", refusal("evil-fcm.googleapis.com.attacker.tld is not a browser push service")],
  ["https://fcm.googleapis.com.attacker.tld/fcm/send/x", refusal("fcm.googleapis.com.attacker.tld is not a browser push service")],
  ["https://fcm.googleapis.com./fcm/send/x", refusal("fcm.googleapis.com. is not a browser push service")],
  ["https://evilfcm.googleapis.com/fcm/send/x", refusal("evilfcm.googleapis.com is not a browser push service")],
  ["https://push.apple.com/x", refusal("push.apple.com is not a browser push service")],
  ["https://web.push.apple.com.evil.example/x", refusal("web.push.apple.com.evil.example is not a browser push service")],
  ["https://notpush.services.mozilla.com/wpush/v2/x", refusal("notpush.services.mozilla.com is not a browser push service")],
  ["https://notify.windows.com/w/?token=x", refusal("notify.windows.com is not a browser push service")],
  ["https://142.250.74.42/fcm/send/x", refusal("142.250.74.42 is not a browser push service")],
  ["https://169.254.169.254/latest/meta-data/", refusal("169.254.169.254 is a link-local address (169.254.0.0/16, where cloud metadata services live), not a browser push service")],
  ["https://[2607:f8b0:4004:c1b::5f]/fcm/send/x", refusal("[2607:f8b0:4004:c1b::5f] is not a browser push service")],
  ["https://fcm.googleapis.com:8443/fcm/send/x", "error: Nothing was added: the push endpoint must not name a port (:8443); push services answer on https's own port, 443."],
  ["https://user:pw@fcm.googleapis.com/fcm/send/x", "error: Nothing was added: the push endpoint must not carry a user name or password."],
  ["http://fcm.googleapis.com/fcm/send/x", "error: Nothing was added: the push endpoint must use https."],
];

const devicesOf = (p: Person) => listPushDevices(env.DB, p.personId);

const PUSH_DOC = (import.meta.glob("../docs/push.md", { query: "?raw", import: "default", eager: true }) as Record<string, string>)["../docs/push.md"];

it("docs/push.md lists every push service the Worker sends to, and the stand-in's host", () => {
  const table = PUSH_DOC.split("\n").filter((line) => line.startsWith("| `")).map((line) => /^\| `([^`]+)`/.exec(line)![1]);
  expect(table).toEqual(PUSH_SERVICES.map((s) => s.host));
  expect(STAND_IN_PUSH_HOST).toBe(STAND_IN);
  expect(PUSH_DOC).toContain(`\`${STAND_IN_PUSH_HOST}\``);
});

describe("adding a device: only the browsers' push services", () => {
  it("refuses endpoints on internal names (a cloud metadata host, *.internal, *.local, *.lan, *.home.arpa, trailing dots, *.corp, *.localdomain), in production and in local development, saying what to fix; nothing is stored", async () => {
    const p = await signedInPerson("Push internal names");
    const before = await snapshotDb();
    for (const [endpoint, what] of INTERNAL) {
      expect(await add(p, endpoint, viaProduction), endpoint).toBe(refusal(what));
      expect(await add(p, endpoint), endpoint).toBe(localRefusal(what));
    }
    expect(await devicesOf(p)).toEqual([]);
    expect(await snapshotDb()).toBe(before);
  });

  it("refuses names that only look like a push service's, IP addresses, other ports, a user name, and http", async () => {
    const p = await signedInPerson("Push lookalikes");
    const before = await snapshotDb();
    for (const [endpoint, message] of LOOKALIKES) expect(await add(p, endpoint, viaProduction), endpoint).toBe(message);
    expect(await devicesOf(p)).toEqual([]);
    expect(await snapshotDb()).toBe(before);
  });

  it("accepts Google's, Mozilla's, Apple's and Microsoft's push services in production; the tests' stand-in only in local development", async () => {
    const p = await signedInPerson("Push services");
    const accepted = [
      "https://fcm.googleapis.com/fcm/send/dQw4w9WgXcQ:APA91bHUn3hY9Ux8tqTlZrWvB1o2m3n4o5p6q7r8s9t0",
      "https://fcm.googleapis.com:443/wp/fVx1cRk2QjE:APA91bGk3l4m5n6o7p8q9r0s",
      "https://updates.push.services.mozilla.com/wpush/v2/gAAAAABmZ3x4y5z6A7B8C9D0E1F2G3H4",
      "https://web.push.apple.com/QGuQyavXutnMH2OFdZ4bPo5rA7Rw0hjv1P6Jfbnv2kHkQ",
      "https://wns2-by3p.notify.windows.com/w/?token=BQYAAADx9k2m3n4o5p6q7r8s9t0u1v2w3x4y5z6",
    ];
    for (const endpoint of accepted) expect(await add(p, endpoint, viaProduction), endpoint).toBe("ok: Chrome on Android will be notified. Settings lists it below.");
    expect(await devicesOf(p)).toHaveLength(accepted.length);
    const stored = await env.DB.prepare("SELECT endpoint FROM push_subscriptions WHERE person_id = ? ORDER BY created_at, id").bind(p.personId).all<{ endpoint: string }>();
    // The default port is no port: stored as the browser would send it.
    expect(stored.results.map((r) => r.endpoint).sort()).toEqual(accepted.map((e) => e.replace(":443/", "/")).sort());

    const standIn = `https://${STAND_IN}/notify/stand-in-only-locally`;
    expect(await add(p, standIn, viaProduction)).toBe(refusal(`${STAND_IN} is not a browser push service`));
    expect(await devicesOf(p)).toHaveLength(accepted.length);
    expect(await add(p, standIn)).toBe("ok: Chrome on Android will be notified. Settings lists it below.");
    expect(await devicesOf(p)).toHaveLength(accepted.length + 1);
  });
});

describe("delivery: the stored endpoint is checked again", () => {
  /** Every outbound request of the Worker: to the stand-in it goes on to web-push-testing; any other host answers 201 (a push service that took it). */
  function network(): string[] {
    const sent: string[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
      const req = new Request(input, init);
      sent.push(req.url);
      return new URL(req.url).hostname === STAND_IN ? env.PUSH_SERVICE.fetch(req) : new Response(null, { status: 201 });
    });
    return sent;
  }

  /** A device written straight into D1, as a database of an older version may hold it. */
  async function storedDevice(p: Person, endpoint: string, label: string, given?: { p256dh: string; auth: string }): Promise<string> {
    const subscription = given ?? (await keys());
    const id = newId(ID_PREFIX.pushSubscription);
    await env.DB.prepare(
      `INSERT INTO push_subscriptions (id, account_id, person_id, endpoint, p256dh, auth, origin, label, events, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'approval.requested', ?)`,
    ).bind(id, p.acc.accountId, p.personId, endpoint, subscription.p256dh, subscription.auth, ORIGIN, label, new Date().toISOString()).run();
    return id;
  }

  /** A subscription at the stand-in, made with the Worker's public key; its endpoint on the stand-in's host. */
  async function standInSubscription(): Promise<{ endpoint: string; keys: { p256dh: string; auth: string }; clientHash: string }> {
    const res = await env.PUSH_SERVICE.fetch(`https://${STAND_IN}/subscribe`, {
      method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify({ userVisibleOnly: "true", applicationServerKey: parseVapidKey(env.VAPID_KEY).publicKey }),
    });
    const { data } = (await res.json()) as { data: { endpoint: string; keys: { p256dh: string; auth: string }; clientHash: string } };
    return { endpoint: `https://${STAND_IN}${new URL(data.endpoint).pathname}`, keys: data.keys, clientHash: data.clientHash };
  }

  const question = (accountId: string, n: string) => newEvent("approval.requested", accountId, new Date().toISOString(), {
    task: { id: `tsk_0000000000000${n}`, title: "Stored endpoints", status: "in_progress", project_id: null, assignee: null, due_at: null },
    approval: { id: `apr_0000000000000${n}`, kind: "question", question: "Is this sent?", requested_by: "bot", choices: null, accepts_words: false },
  });

  it("never fetches a stored endpoint on an internal name: the device keeps the reason as its last failure and is not retried; the others are sent", async () => {
    const p = await signedInPerson("Push stored internal");
    const sent = network();
    const internal = new Map<string, string>();
    // Each internal endpoint, made this device's own by a query (endpoints are unique across people).
    const own = new Map(INTERNAL.map(([endpoint]) => [endpoint, `${endpoint}?device=${crypto.randomUUID()}`]));
    for (const [endpoint] of INTERNAL) internal.set(await storedDevice(p, own.get(endpoint)!, "Old device"), endpoint);
    const good = await standInSubscription();
    const goodId = await storedDevice(p, good.endpoint, "Chrome on Android", good.keys);

    const event = question(p.acc.accountId, "a01");
    const first = await consume(event, 1);
    // Only the stand-in's device was sent to.
    expect(sent).toEqual([good.endpoint]);
    expect(first.retryMessages).toEqual([]);
    const got = await env.PUSH_SERVICE.fetch(`https://${STAND_IN}/get-notifications`, {
      method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ clientHash: good.clientHash }),
    }).then((r) => r.json() as Promise<{ data: { messages: string[] } }>);
    expect(got.data.messages.map((m) => JSON.parse(m).body)).toEqual(["Is this sent?"]);
    const devices = await devicesOf(p);
    expect(devices).toHaveLength(INTERNAL.length + 1);
    for (const d of devices) {
      if (d.id === goodId) {
        expect(d).toMatchObject({ last_failure_at: null, last_error: null });
        expect(d.last_delivered_at).not.toBeNull();
        continue;
      }
      const endpoint = internal.get(d.id)!;
      const [, what] = INTERNAL.find(([e]) => e === endpoint)!;
      expect(d.last_delivered_at, endpoint).toBeNull();
      expect(d.last_failure_at, endpoint).not.toBeNull();
      expect(d.last_error, endpoint).toBe(
        `not sent: ${what}. Push endpoints must be on a browser push service: ${SERVICES} (or the tests' stand-in, ${STAND_IN}); subscribe from a current Chrome, Edge, Firefox or Safari. Remove this device`,
      );
    }
    // Settings shows why, so the person knows to remove them.
    const settings = await open(p.b, "/settings");
    expect(settings.html).toContain("not sent: metadata.google.internal is a name internal by convention");
    // The message coming back once more (for a webhook, say) still sends nothing to them.
    expect((await consume(event, 2)).retryMessages).toEqual([]);
    expect(sent).toEqual([good.endpoint]);
  });

  it("in production a stored stand-in endpoint is refused too, while a browser push service's is sent", async () => {
    const p = await signedInPerson("Push stored stand-in");
    const sent = network();
    await storedDevice(p, `https://${STAND_IN}/notify/left-from-development`, "Dev device");
    await storedDevice(p, "https://fcm.googleapis.com/fcm/send/stored:APA91bStored", "Chrome on Android");
    const result = await consume(question(p.acc.accountId, "a02"), 1, "prod", production);
    expect(sent).toEqual(["https://fcm.googleapis.com/fcm/send/stored:APA91bStored"]);
    expect(result.retryMessages).toEqual([]);
    const devices = await devicesOf(p);
    const dev = devices.find((d) => d.label === "Dev device")!;
    const chrome = devices.find((d) => d.label === "Chrome on Android")!;
    expect(dev.last_error).toBe(`not sent: ${STAND_IN} is not a browser push service. Push endpoints must be on a browser push service: ${SERVICES}; subscribe from a current Chrome, Edge, Firefox or Safari. Remove this device`);
    expect(chrome.last_delivered_at).not.toBeNull();
  });
});
