/**
 * The service worker in a real Chromium (JavaScript on, as Web Push needs it)
 * against `wrangler dev`: Settings → "Notify this device" registers /sw.js; a
 * push delivered through the DevTools protocol (ServiceWorker.deliverPushMessage,
 * what a push service's message becomes inside the browser) makes the worker
 * show a notification with the question and no action buttons; its click opens
 * the task's decide page, and a signed-out
 * browser goes through sign-in and comes back to it. The device's form is
 * then sent with a subscription from the stand-in push service
 * (web-push-testing), and Settings lists it: screenshots/settings-push.png
 * (with SAVE_DOC_IMAGES=1 also docs/images/settings-push.png, the README's image):
 *   SAVE_DOC_IMAGES=1 npx vitest run --config vitest.browser.config.ts test/browser/push.test.ts
 */
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, CDPSession, Page } from "playwright-core";
import { launchBrowser, newPersonContext, screenshot } from "../../scripts/lib/browser.ts";
import { ROOT } from "../../scripts/lib/d1.ts";
import { connect, type McpSession } from "../../scripts/lib/e2e-harness.ts";
import { setPassword } from "../../scripts/lib/oauth-pages.ts";
import { pushService } from "../push/push-service.ts";
import { seriousViolations } from "./axe.ts";
import { adminCli, taskgate } from "./context.ts";
import { expectSafeHeaders, pageText } from "./expect-page.ts";

const PASSWORD = "correct horse battery";
let browser: Browser;
let context: BrowserContext;
let page: Page;
let agent: McpSession;
let cdp: CDPSession;
const registrations = new Map<string, { scopeURL: string }>();

beforeAll(async () => {
  browser = await launchBrowser();
  const base = taskgate().base;
  const account = await adminCli(["create-account", "--name", "Push in the browser"]);
  const token = await adminCli(["create-token", "--account", account.id, "--kind", "agent", "--scope", "write", "--agent", "deploy-bot", "--label", "deploy bot"]);
  const invite = await adminCli(["invite", "--account", account.id, "--email", `push.${Date.now().toString(36)}@example.com`, "--url", base]);
  context = await newPersonContext(browser, { javaScript: true });
  await context.grantPermissions(["notifications"], { origin: base });
  page = await context.newPage();
  await setPassword(page, invite.setup_url, PASSWORD);
  await page.waitForURL((u) => u.pathname === "/", { timeout: 20_000 });
  agent = await connect(`${base}/mcp`, token.token, "modern");
  cdp = await context.newCDPSession(page);
  cdp.on("ServiceWorker.workerRegistrationUpdated", (e: { registrations: { registrationId: string; scopeURL: string; isDeleted: boolean }[] }) => {
    for (const r of e.registrations) if (!r.isDeleted) registrations.set(r.registrationId, { scopeURL: r.scopeURL });
  });
  await cdp.send("ServiceWorker.enable");
});

afterAll(async () => {
  await agent?.close().catch(() => {});
  await context?.close().catch(() => {});
  await browser?.close();
});

/** The agent asks a question on a task it claimed; the task's id. */
async function question(title: string, text: string): Promise<string> {
  const { task } = await agent.ok("create_task", { title });
  await agent.ok("claim_task", { task_id: task.id });
  await agent.ok("request_approval", { task_id: task.id, question: text });
  return task.id as string;
}

/**
 * The project's Chromium (@sparticuz/chromium's chrome-headless-shell) has no
 * platform notification service, so it refuses every showNotification
 * ("No notification permission has been granted"), whatever permission is
 * granted, and registration.getNotifications() stays empty. The test records
 * each call the worker makes to showNotification (and still passes it on to
 * the browser), and reads those: what the worker asked the browser to show.
 */
async function watchNotifications(): Promise<void> {
  const worker = context.serviceWorkers()[0] ?? (await context.waitForEvent("serviceworker"));
  await worker.evaluate(() => {
    const g = self as any;
    if (g.__shown) return;
    g.__shown = [];
    const real = g.registration.showNotification.bind(g.registration);
    g.registration.showNotification = (title: string, options: any) => {
      g.__shown.push({ title, body: options?.body, data: options?.data, actions: options?.actions ?? [], tag: options?.tag });
      return real(title, options).catch(() => undefined);
    };
  });
}

/** The notifications the worker showed since the last call. */
async function notifications(): Promise<{ title: string; body: string; data: { url: string }; actions: unknown[] }[]> {
  const worker = context.serviceWorkers()[0];
  return worker.evaluate(() => (self as any).__shown.splice(0));
}

/** A push message as the browser hands it to the service worker: the payload the Worker encrypts, in clear. */
async function deliver(payload: object): Promise<void> {
  const base = taskgate().base;
  const [registrationId] = [...registrations].find(([, r]) => r.scopeURL === `${base}/`) ?? [];
  expect(registrationId, "the service worker's registration").toBeTruthy();
  await cdp.send("ServiceWorker.deliverPushMessage", { origin: base, registrationId: registrationId as string, data: JSON.stringify(payload) });
}

/** The click on a notification the worker showed (on one of its buttons: `action`), through the worker's own notificationclick handler. */
async function clickNotification(shown: { title: string; data: { url: string } }, action = ""): Promise<void> {
  const worker = context.serviceWorkers()[0];
  await worker.evaluate(([n, a]) => {
    const event = new Event("notificationclick") as any;
    let closed = false;
    event.notification = { ...n, close: () => (closed = true) };
    event.action = a;
    event.waitUntil = (p: Promise<unknown>) => p.then(() => ((self as any).__clicked = closed));
    self.dispatchEvent(event);
  }, [shown, action] as const);
}

describe("the service worker", () => {
  it("registers from Settings, shows a pushed question as a notification without buttons, and its click opens the decide page", async () => {
    const base = taskgate().base;
    const response = await page.goto(`${base}/settings`);
    expectSafeHeaders(response, "/settings");
    const csp: string[] = [];
    page.on("console", (m) => {
      if (/Content Security Policy/i.test(m.text())) csp.push(m.text());
    });
    await page.getByRole("button", { name: "Notify this device" }).click();
    // The worker registers; this headless browser has no push service of its own, so subscribing is refused and the page says so.
    await expect.poll(() => page.evaluate(async () => (await navigator.serviceWorker.getRegistration("/"))?.active?.scriptURL ?? null), { timeout: 20_000 }).toBe(`${base}/sw.js`);
    await expect.poll(() => page.locator("#push-status").innerText(), { timeout: 20_000 }).toMatch(/^This device was not added: /);
    await expect.poll(() => registrations.size).toBeGreaterThan(0);
    await watchNotifications();

    const taskId = await question("Release 2.4 to production", "May I deploy release 2.4 tonight?");
    await deliver({ title: "deploy-bot asks: Release 2.4 to production", body: "May I deploy release 2.4 tonight?", url: `/tasks/${taskId}`, tag: "apr_1" });
    let shown: Awaited<ReturnType<typeof notifications>> = [];
    await expect.poll(async () => (shown = [...shown, ...(await notifications())]).length, { timeout: 20_000 }).toBe(1);
    expect(shown[0]).toEqual({ title: "deploy-bot asks: Release 2.4 to production", body: "May I deploy release 2.4 tonight?", data: { url: `/tasks/${taskId}` }, actions: [], tag: "apr_1" });

    await clickNotification(shown[0]);
    await expect.poll(() => new URL(page.url()).pathname, { timeout: 20_000 }).toBe(`/tasks/${taskId}`);
    const text = await pageText(page);
    expect(text).toContain("May I deploy release 2.4 tonight?");
    // The page offers the decision; the notification made none.
    expect(await page.getByRole("button", { name: /^(Answer yes|Yes|Approve)/ }).count()).toBeGreaterThan(0);
    const pending = (await agent.ok("list_pending_approvals", {})) as { items: { task_id: string }[] };
    expect(pending.items.map((a) => a.task_id)).toContain(taskId);
    expect(await context.serviceWorkers()[0].evaluate(() => (self as any).__clicked)).toBe(true);
    expect(csp).toEqual([]);
  });

  it("a question with choices shows one button per choice, as many as the platform allows; a button opens the decide page with that choice picked", async () => {
    const base = taskgate().base;
    await page.goto(`${base}/settings`);
    await watchNotifications();
    const { task } = await agent.ok("create_task", { title: "Team lunch" });
    await agent.ok("claim_task", { task_id: task.id });
    const { approval } = await agent.ok("request_approval", { task_id: task.id, question: "Where for lunch?", choices: ["Noodles", "Tacos", "Curry"] });
    const actions = ["Noodles", "Tacos", "Curry"].map((title, i) => ({ action: `choice-${i}`, title, url: `/tasks/${task.id}?approval=${approval.id}&choice=${i}` }));
    await deliver({ title: "deploy-bot asks: Team lunch", body: "Where for lunch?", url: `/tasks/${task.id}`, tag: approval.id, actions });
    let shown: Awaited<ReturnType<typeof notifications>> = [];
    await expect.poll(async () => (shown = [...shown, ...(await notifications())]).length, { timeout: 20_000 }).toBe(1);
    const max = await context.serviceWorkers()[0].evaluate(() => (self as any).Notification?.maxActions ?? 0);
    expect(shown[0].actions).toEqual(actions.slice(0, max).map(({ action, title }) => ({ action, title })));

    // The second choice's button (its page is the same whatever the platform shows): the choice picked, nothing decided.
    await clickNotification(shown[0], "choice-1");
    await expect.poll(() => page.url(), { timeout: 20_000 }).toBe(`${base}/tasks/${task.id}?approval=${approval.id}&choice=1`);
    expect(await page.getByRole("group", { name: "Pick one" }).getByRole("radio", { name: "Tacos" }).isChecked()).toBe(true);
    expect((await agent.ok("get_approval", { approval_id: approval.id })).approval.status).toBe("pending");
    await page.getByRole("button", { name: "Send answer" }).click();
    await expect.poll(async () => (await agent.ok("get_approval", { approval_id: approval.id })).approval.answer, { timeout: 20_000 }).toEqual({ choice: "Tacos", words: null });
  });

  it("Settings lists a subscribed device with its choices, last delivery and a Remove button (docs/images/settings-push.png)", async () => {
    const base = taskgate().base;
    await page.goto(`${base}/settings`);
    const key = await page.locator("#push-subscribe").getAttribute("data-key");
    // A subscription made with the page's VAPID key at the stand-in push service, sent by the form as the script sends it
    // (the stand-in's host is accepted only in local development, which this wrangler dev is: global-setup.ts).
    const made = await fetch(`${await pushService()}/subscribe`, {
      method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ userVisibleOnly: "true", applicationServerKey: key }),
    }).then((r) => r.json() as Promise<{ data: { endpoint: string; keys: { p256dh: string; auth: string } } }>);
    const endpoint = `https://push.example.test${new URL(made.data.endpoint).pathname}`;
    await page.evaluate(({ endpoint, keys }) => {
      const form = document.getElementById("push-subscribe") as HTMLFormElement;
      (form.elements.namedItem("endpoint") as HTMLInputElement).value = endpoint;
      (form.elements.namedItem("p256dh") as HTMLInputElement).value = keys.p256dh;
      (form.elements.namedItem("auth") as HTMLInputElement).value = keys.auth;
      (form.querySelector('input[value="claim.lapsed"]') as HTMLInputElement).checked = true;
      form.submit();
    }, { endpoint, keys: made.data.keys });
    await expect.poll(() => page.locator(".flash").innerText(), { timeout: 20_000 }).toMatch(/^Chrome on Linux will be notified/);
    const device = page.locator("ul.devices > li");
    expect(await device.count()).toBe(1);
    const text = await device.innerText();
    expect(text).toMatch(/Chrome on Linux/);
    expect(text).toMatch(/Last delivery: none yet/);
    expect(await device.getByLabel("An approval is requested").isChecked()).toBe(true);
    expect(await device.getByLabel("An agent's claim lapses").isChecked()).toBe(true);
    expect(await device.getByLabel("A run goes stale").isChecked()).toBe(false);
    expect(await device.getByRole("button", { name: "Remove" }).count()).toBe(1);
    expect(await page.content()).not.toContain(made.data.keys.auth);
    await page.locator("#h-push").scrollIntoViewIfNeeded();
    const shot = await screenshot(page, "settings-push");
    if (process.env.SAVE_DOC_IMAGES === "1") copyFileSync(shot, join(ROOT, "docs", "images", "settings-push.png"));
  });

  it("Remove asks first: the confirmation names the device, Cancel keeps it, confirming removes it", async () => {
    const base = taskgate().base;
    await page.goto(`${base}/settings`);
    const device = page.locator("ul.devices > li");
    expect(await device.count()).toBe(1);
    await Promise.all([page.waitForNavigation(), device.getByRole("button", { name: "Remove" }).click()]);
    expect(new URL(page.url()).pathname).toBe("/confirm/remove_device");
    expect(await page.locator("h1").innerText()).toMatch(/^Remove “Chrome on Linux.*”\?$/);
    expect(await seriousViolations(page)).toEqual([]);
    await Promise.all([page.waitForNavigation(), page.getByRole("link", { name: "Cancel" }).click()]);
    expect(new URL(page.url()).pathname).toBe("/settings");
    expect(await device.count(), "Cancel changes nothing").toBe(1);
    await Promise.all([page.waitForNavigation(), device.getByRole("button", { name: "Remove" }).click()]);
    await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Remove the device" }).click()]);
    expect(new URL(page.url()).pathname).toBe("/settings");
    expect(await device.count(), "confirmed, the device is gone").toBe(0);
  });

  it("a payload pointing off-site opens Taskgate's own start page; signed out, the click goes through sign-in with the way back to the task", async () => {
    const base = taskgate().base;
    await page.goto(`${base}/settings`);
    await watchNotifications();
    await deliver({ title: "Odd", body: "elsewhere", url: "https://evil.example/phish" });
    let odd: Awaited<ReturnType<typeof notifications>> = [];
    await expect.poll(async () => (odd = await notifications()).length, { timeout: 20_000 }).toBe(1);
    expect(odd[0].data.url).toBe("/");
    await clickNotification(odd[0]);
    await expect.poll(() => page.url(), { timeout: 20_000 }).toBe(`${base}/`);

    const taskId = await question("Rotate the API keys", "Rotate the keys now?");
    await page.goto(`${base}/settings`);
    await context.clearCookies();
    await deliver({ title: "deploy-bot asks: Rotate the API keys", body: "Rotate the keys now?", url: `/tasks/${taskId}` });
    let rotate: Awaited<ReturnType<typeof notifications>> = [];
    await expect.poll(async () => (rotate = await notifications()).length, { timeout: 20_000 }).toBe(1);
    await clickNotification(rotate[0]);
    await expect.poll(() => new URL(page.url()).pathname, { timeout: 20_000 }).toBe("/signin");
    expect(new URL(page.url()).searchParams.get("return_to")).toBe(`/tasks/${taskId}`);
  });
});
