/**
 * The console's webhooks page through real HTTP requests against the Worker,
 * with a real session: it lists the account's endpoints, adds one (the
 * signing secret shown once, on the page the form's answer leads to), removes
 * one, and refuses what the admin CLI refuses, with the reason on the page.
 * One form adds one endpoint, however often it is sent.
 */
import { env } from "cloudflare:workers";
import { createExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../src/index.ts";
import type { Env } from "../src/env.ts";
import { seedAccount, snapshotDb } from "./helpers.ts";
import { field } from "./web-helpers.ts";
import { flashOn, open, signedInPerson, unescape, type Person } from "./console.helpers.ts";
import { addHook } from "./webhooks.helpers.ts";
import { WEBHOOKS_PER_ACCOUNT } from "../src/domain/webhooks.ts";
import { EVENT_TYPES } from "../src/domain/events.ts";

async function hooksOf(accountId: string) {
  return (
    await env.DB.prepare("SELECT id, url, events, secret, secret_prefix FROM webhooks WHERE account_id = ? ORDER BY created_at, id")
      .bind(accountId)
      .all<{ id: string; url: string; events: string; secret: string; secret_prefix: string }>()
  ).results;
}

/** Posts the add form the way the page does (its CSRF token, its one-time id, the ticked events). */
async function add(p: Person, url: string, events: string[], via?: Parameters<Person["b"]["post"]>[3]) {
  const { html } = await open(p.b, "/webhooks");
  return p.b.post("/webhooks", { csrf: field(html, "csrf"), form_id: field(html, "form_id"), url, events }, {}, via);
}

/** Adds an endpoint and follows the answer's redirect: the page that shows the secret once. */
async function addAndShow(p: Person, url: string, events: string[]) {
  const res = await add(p, url, events);
  expect(res.status).toBe(303);
  expect(res.headers.get("location")).toBe("/webhooks");
  return { res, shown: await open(p.b, "/webhooks") };
}

async function remove(p: Person, id: string) {
  const { html } = await open(p.b, "/webhooks");
  return p.b.post("/webhooks/remove", { csrf: field(html, "csrf"), webhook_id: id });
}

const SECRET = /<pre class="secret" aria-label="Signing secret">(whsec_[A-Za-z0-9+/]{43}=)<\/pre>/;

describe("the webhooks page", () => {
  it("is in the navigation; adds an endpoint and shows its secret once; lists it without the secret; removes it", async () => {
    const p = await signedInPerson("Webhook page");
    const inbox = await open(p.b, "/");
    expect(inbox.html).toContain('<a href="/webhooks">Webhooks</a>');
    const empty = await open(p.b, "/webhooks");
    expect(empty.res.status).toBe(200);
    expect(empty.html).toContain("No webhooks yet.");
    expect(empty.html).toContain('<a href="/webhooks" aria-current="page">Webhooks</a>');

    const form = await open(p.b, "/webhooks");
    const fields = { csrf: field(form.html, "csrf"), form_id: field(form.html, "form_id"), url: "https://hooks.example.test/taskgate", events: ["task.completed", "claim.lapsed"] };
    const res = await p.b.post("/webhooks", fields);
    expect(res.status, "post/redirect/get: a reload of the next page sends nothing").toBe(303);
    expect(res.headers.get("location")).toBe("/webhooks");
    const { res: next, html } = await open(p.b, "/webhooks");
    expect(next.headers.get("cache-control")).toContain("no-store");
    const secret = SECRET.exec(html)?.[1];
    expect(secret, "the secret is shown once").toBeDefined();
    expect(html).toContain("it is shown only once");
    const [row] = await hooksOf(p.acc.accountId);
    expect(row).toMatchObject({ url: "https://hooks.example.test/taskgate", events: "task.completed,claim.lapsed" });
    expect(row.secret, "stored sealed").not.toContain(secret!);
    expect(secret!.startsWith(row.secret_prefix.replace("…", ""))).toBe(true);
    expect(res.headers.getSetCookie().join(";"), "the secret travels sealed").not.toContain(secret!);
    expect(await snapshotDb()).not.toContain(secret!);

    const listed = await open(p.b, "/webhooks");
    expect(listed.html).toContain('<code title="https://hooks.example.test/taskgate"><bdi class="u">https://hooks.example.test/taskgate</bdi></code>');
    expect(listed.html).toContain("task.completed, claim.lapsed");
    expect(listed.html).toContain(row.secret_prefix);
    expect(listed.html).toContain("none yet");
    expect(listed.html).not.toContain(secret!);
    expect(listed.html).not.toContain('aria-label="Signing secret"');

    // The same form again (Back and send, a second click): nothing more is added, and the secret is not shown again.
    const again = await p.b.post("/webhooks", fields);
    expect(again.status).toBe(303);
    expect(await flashOn(p.b, "/webhooks")).toMatch(/^error: This form already added its webhook, and its signing secret was shown once/);
    expect(await hooksOf(p.acc.accountId)).toHaveLength(1);
    expect((await open(p.b, "/webhooks")).html).not.toContain(secret!);
    const older = await p.b.post("/webhooks", { ...fields, form_id: undefined });
    expect(older.status).toBe(303);
    expect(await flashOn(p.b, "/webhooks")).toMatch(/^error: This webhook form is from an older page: nothing was added/);
    expect(await hooksOf(p.acc.accountId)).toHaveLength(1);

    const gone = await remove(p, row.id);
    expect(gone.status).toBe(303);
    expect(gone.headers.get("location")).toBe("/webhooks");
    expect(gone.headers.getSetCookie().join(";")).not.toContain(secret!);
    expect(await flashOn(p.b, "/webhooks")).toBe(`ok: Removed webhook ${row.id}: it receives no more events.`);
    expect(await hooksOf(p.acc.accountId)).toEqual([]);
  });

  it("with every box ticked, stores all events (those added later too) and says so; a box left empty keeps the list", async () => {
    const p = await signedInPerson("Webhook all events");
    const form = (await open(p.b, "/webhooks")).html;
    const boxes = [...form.matchAll(/<input type="checkbox" name="events" value="([^"]+)"/g)].map((m) => m[1]);
    expect(boxes).toEqual([...EVENT_TYPES]);
    expect(form).toContain("With every box ticked, the webhook receives all events, those added later too.");

    const { shown } = await addAndShow(p, "https://hooks.example.test/every-box", boxes);
    expect(shown.html).toContain("<code>https://hooks.example.test/every-box</code> receives all events, those added later too.");
    const stored = async (url: string) => (await hooksOf(p.acc.accountId)).find((h) => h.url === url)?.events;
    expect(await stored("https://hooks.example.test/every-box")).toBe("all");
    // The page's own default leaves run.stale and task.handed_off unticked: that is a choice, kept as the list.
    expect([...form.matchAll(/<input type="checkbox" name="events" value="([^"]+)"\s*\/?>/g)].map((m) => m[1])).toEqual(["run.stale", "task.handed_off"]);
    await addAndShow(p, "https://hooks.example.test/default-boxes", boxes.filter((t) => t !== "run.stale" && t !== "task.handed_off"));
    expect(await stored("https://hooks.example.test/default-boxes")).toBe("approval.requested,approval.answered,approval.withdrawn,approval.decided,task.completed,task.rejected,claim.lapsed");

    const listed = (await open(p.b, "/webhooks")).html;
    expect(listed).toContain('<td data-label="Events">all events</td>');
    expect(listed).toContain('<td data-label="Events">approval.requested, approval.answered, approval.withdrawn, approval.decided, task.completed, task.rejected, claim.lapsed</td>');
  });

  it("shows each endpoint's stored delivery outcomes and its latest failure", async () => {
    const p = await signedInPerson("Webhook deliveries");
    const hook = await addHook(p.acc.accountId, "https://hooks.example.test/outcomes", "all");
    const now = new Date().toISOString();
    const insert = (id: string, status: string, error: string | null, at = now, attempts = 3) =>
      env.DB.prepare(
        `INSERT INTO webhook_deliveries (id, account_id, webhook_id, event_id, event_type, status, attempts, last_status, last_error, created_at, updated_at)
         VALUES (?, ?, ?, ?, 'task.completed', ?, ?, 500, ?, ?, ?)`,
      ).bind(id, p.acc.accountId, hook.webhook.id, `wev_${id}`, status, attempts, error, at, at).run();
    await insert("dlv_1", "delivered", null);
    await insert("dlv_2", "failed", "the endpoint answered HTTP 500 <oops>");
    const { html } = await open(p.b, "/webhooks");
    expect(html).toContain("1 delivered, 0 retrying, 1 failed");
    expect(html).toContain('last failure <time');
    expect(html).toContain('task.completed, <bdi class="u">the endpoint answered HTTP 500 &lt;oops&gt;</bdi>');

    // A delivery still being retried says why its last attempt failed.
    await insert("dlv_3", "pending", "the endpoint did not answer within 10 s", new Date(Date.now() + 1000).toISOString(), 2);
    await insert("dlv_4", "pending", null, new Date(Date.now() + 2000).toISOString(), 0);
    const retrying = (await open(p.b, "/webhooks")).html;
    expect(retrying).toContain("1 delivered, 2 retrying, 1 failed");
    expect(retrying).toMatch(/retrying after attempt 2 failed <time[^>]*>[^<]*<\/time>: task\.completed, <bdi class="u">the endpoint did not answer within 10 s<\/bdi>/);
  });

  it("refuses what the admin CLI refuses, with the reason on the page and nothing added", async () => {
    const p = await signedInPerson("Webhook refusals");
    const before = await snapshotDb();
    const cases: [string, string[], RegExp][] = [
      ["not a url", ["task.completed"], /^error: Nothing was added\. URL: "not a url" is not a URL; give the full address/],
      ["ftp://hooks.example.test/x", ["task.completed"], /^error: Nothing was added\. URL: must start with https:\/\/ or http:\/\//],
      ["https://user:pw@hooks.example.test/x", ["task.completed"], /^error: Nothing was added\. URL: must not carry a user name or password/],
      ["https://hooks.example.test/x", [], /^error: Nothing was added\. Events: name at least one of approval\.requested/],
      ["https://hooks.example.test/x", ["task.done"], /^error: Nothing was added\. Events: task\.done is not an event/],
    ];
    for (const [url, events, message] of cases) {
      const res = await add(p, url, events);
      expect(res.status, url).toBe(303);
      expect(res.headers.get("location")).toBe("/webhooks");
      expect(await flashOn(p.b, "/webhooks"), `${url} ${events}`).toMatch(message);
    }
    expect(await snapshotDb()).toBe(before);
  });

  it("http:// only where the Worker delivers to it (ALLOW_HTTP_WEBHOOKS), the rule of delivery", async () => {
    const p = await signedInPerson("Webhook http");
    const production = { ...(env as unknown as Env), ALLOW_HTTP_WEBHOOKS: undefined } as Env;
    const viaProduction = async (url: URL, init: RequestInit) => worker.fetch!(new Request(url, init) as never, production, createExecutionContext());
    const refused = await add(p, "http://hooks.example.test/plain", ["task.completed"], viaProduction);
    expect(refused.status).toBe(303);
    expect(await flashOn(p.b, "/webhooks")).toBe("error: Nothing was added. URL: must start with https:// (http:// is accepted only in local development)");
    expect(await hooksOf(p.acc.accountId)).toEqual([]);
    const page = await viaProduction(new URL("https://taskgate.test/webhooks"), { headers: { cookie: [...p.b.cookies].map(([k, v]) => `${k}=${v}`).join("; ") } });
    expect(await page.text()).toContain("https:// only");

    await addAndShow(p, "http://127.0.0.1:8787/hook", ["task.completed"]);
    expect((await hooksOf(p.acc.accountId)).map((h) => h.url)).toEqual(["http://127.0.0.1:8787/hook"]);
  });

  it("refuses an endpoint on an internal host, with why; local development accepts loopback receivers only", async () => {
    const p = await signedInPerson("Webhook internal hosts");
    const production = { ...(env as unknown as Env), ALLOW_HTTP_WEBHOOKS: undefined } as Env;
    const viaProduction = async (url: URL, init: RequestInit) => worker.fetch!(new Request(url, init) as never, production, createExecutionContext());
    const before = await snapshotDb();
    const everywhere: [string, RegExp][] = [
      ["https://169.254.169.254/latest", /URL: 169\.254\.169\.254 is a link-local address .*Taskgate sends requests only to public hosts$/],
      ["https://10.0.0.5/hook", /URL: 10\.0\.0\.5 is a private address \(10\.0\.0\.0\/8\)/],
      ["https://0xa000005/hook", /URL: 10\.0\.0\.5 is a private address/],
      ["https://[::ffff:10.0.0.5]/hook", /URL: \[::ffff:a00:5\] is an IPv4-mapped address of a private address/],
      ["https://metadata.google.internal/hook", /URL: metadata\.google\.internal is a name internal by convention/],
      ["https://192.168.1.20:8080/hook", /URL: 192\.168\.1\.20 is a private address/],
    ];
    const loopback = ["https://127.0.0.1/hook", "https://localhost/hook", "https://[::1]/hook", "https://2130706433/hook"];
    for (const [url, message] of everywhere) {
      for (const via of [undefined, viaProduction]) {
        expect((await add(p, url, ["task.completed"], via)).status, url).toBe(303);
        expect(await flashOn(p.b, "/webhooks"), url).toMatch(new RegExp(`^error: Nothing was added\\. ${message.source}`));
      }
    }
    for (const url of loopback) {
      expect((await add(p, url, ["task.completed"], viaProduction)).status, url).toBe(303);
      expect(await flashOn(p.b, "/webhooks"), url).toMatch(/is (a|the) loopback (address|name).*loopback receivers are accepted only in local development/);
    }
    expect(await snapshotDb()).toBe(before);
    for (const url of loopback) expect((await add(p, url, ["task.completed"])).status, url).toBe(303);
    expect((await hooksOf(p.acc.accountId)).map((h) => h.url).sort()).toEqual(["https://127.0.0.1/hook", "https://127.0.0.1/hook", "https://[::1]/hook", "https://localhost/hook"]);
  });

  it("an account has at most WEBHOOKS_PER_ACCOUNT endpoints: the page says so instead of the form, and a post adds nothing", async () => {
    const p = await signedInPerson("Webhook limit");
    for (let i = 1; i < WEBHOOKS_PER_ACCOUNT; i++) await addHook(p.acc.accountId, `https://hooks.example.test/${i}`, "all");
    const open1 = await open(p.b, "/webhooks");
    expect(open1.html).toContain(`An account has at most ${WEBHOOKS_PER_ACCOUNT}; this one has ${WEBHOOKS_PER_ACCOUNT - 1}.`);
    expect(open1.html).toContain('aria-label="Add a webhook"');
    const last = await addAndShow(p, "https://hooks.example.test/last", ["task.completed"]);
    expect(last.shown.html, "the last one that fits").toMatch(SECRET);

    const full = await open(p.b, "/webhooks");
    expect(full.html).not.toContain('aria-label="Add a webhook"');
    expect(full.html).toContain(`This account has ${WEBHOOKS_PER_ACCOUNT} webhooks, the most it may have: remove one to add another.`);
    const before = await snapshotDb();
    const formId = crypto.randomUUID();
    const refused = await p.b.post("/webhooks", { csrf: field(full.html, "csrf"), form_id: formId, url: "https://hooks.example.test/one-too-many", events: ["task.completed"] });
    expect(refused.status).toBe(303);
    expect(await flashOn(p.b, "/webhooks")).toBe(`error: Nothing was added. An account has at most ${WEBHOOKS_PER_ACCOUNT} webhooks; remove one before adding another`);
    await expect(addHook(p.acc.accountId, "https://hooks.example.test/direct")).rejects.toThrow(/at most 20 webhooks/);
    expect(await snapshotDb()).toBe(before);

    // Another account is not counted against this one.
    const other = await seedAccount("Webhook limit, someone else");
    await addHook(other.accountId, "https://theirs.example.test/hook");
    const [first] = await hooksOf(p.acc.accountId);
    await remove(p, first.id);
    expect((await open(p.b, "/webhooks")).html).toContain('aria-label="Add a webhook"');
    expect((await addAndShow(p, "https://hooks.example.test/again", ["task.completed"])).shown.html).toMatch(SECRET);
    // A form refused at the limit did not use up its id.
    await remove(p, (await hooksOf(p.acc.accountId))[0].id);
    const retried = await p.b.post("/webhooks", { csrf: field(full.html, "csrf"), form_id: formId, url: "https://hooks.example.test/one-too-many", events: ["task.completed"] });
    expect(retried.status).toBe(303);
    expect((await open(p.b, "/webhooks")).html).toMatch(SECRET);
    expect(await hooksOf(p.acc.accountId)).toHaveLength(WEBHOOKS_PER_ACCOUNT);
  });

  it("a URL with markup in it shows as text", async () => {
    const p = await signedInPerson("Webhook escaping");
    const shown = (await addAndShow(p, `https://hooks.example.test/a?x=1&y="'<b>hi</b>`, ["task.completed"])).shown.html;
    const { html } = await open(p.b, "/webhooks");
    for (const page of [shown, html]) {
      expect(page).not.toContain("<b>hi</b>");
      expect(page).toContain("x=1&amp;y=");
    }
    const [row] = await hooksOf(p.acc.accountId);
    expect(unescape(/<bdi class="u">(https:\/\/hooks\.example\.test\/a\?[^<]*)<\/bdi><\/code>/.exec(html)![1])).toBe(row.url);
  });
});

describe("refusals", () => {
  it("without this session's CSRF token, adding and removing change nothing", async () => {
    const p = await signedInPerson("Webhook CSRF");
    const hook = await addHook(p.acc.accountId, "https://hooks.example.test/kept", "all");
    const before = await snapshotDb();
    for (const csrf of [undefined, "wrong"]) {
      const a = await p.b.post("/webhooks", { csrf, url: "https://hooks.example.test/new", events: ["task.completed"] });
      expect(a.status).toBe(403);
      expect(await a.text()).toContain("Nothing was changed");
      const r = await p.b.post("/webhooks/remove", { csrf, webhook_id: hook.webhook.id });
      expect(r.status).toBe(403);
    }
    const { html } = await open(p.b, "/webhooks");
    const crossSite = await p.b.post("/webhooks/remove", { csrf: field(html, "csrf"), webhook_id: hook.webhook.id }, { origin: "https://evil.example" });
    expect(crossSite.status).toBe(403);
    expect(await snapshotDb()).toBe(before);
    expect((await hooksOf(p.acc.accountId)).map((h) => h.id)).toEqual([hook.webhook.id]);
  });

  it("another account's webhook id is not found, and both accounts keep their endpoints", async () => {
    const p = await signedInPerson("Webhook tenancy");
    const other = await seedAccount("Someone else");
    const theirs = await addHook(other.accountId, "https://theirs.example.test/hook", "all");
    const before = await snapshotDb();
    const res = await remove(p, theirs.webhook.id);
    expect(res.status).toBe(303);
    expect(await flashOn(p.b, "/webhooks")).toBe(`error: There is no webhook ${theirs.webhook.id} in this account; nothing was removed.`);
    expect(await snapshotDb()).toBe(before);
    expect((await open(p.b, "/webhooks")).html).not.toContain("theirs.example.test");
  });

  it("signed out, the page leads to sign-in and a post changes nothing", async () => {
    const p = await signedInPerson("Webhook signed out");
    const { html } = await open(p.b, "/webhooks");
    p.b.cookies.clear();
    const page = await p.b.get("/webhooks");
    expect([302, 303]).toContain(page.status);
    expect(page.headers.get("location")).toMatch(/^\/signin/);
    const before = await snapshotDb();
    const res = await p.b.post("/webhooks", { csrf: field(html, "csrf"), url: "https://hooks.example.test/x", events: ["task.completed"] });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/signin");
    expect(await snapshotDb()).toBe(before);
  });
});
