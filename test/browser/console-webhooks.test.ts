/**
 * The console's webhooks page in a real Chromium (JavaScript off), against the
 * running `wrangler dev`: the person adds an endpoint, sees its signing secret
 * once, and removes it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext } from "playwright-core";
import { launchBrowser, newPersonContext, screenshot } from "../../scripts/lib/browser.ts";
import { setPassword } from "../../scripts/lib/oauth-pages.ts";
import { adminCli, taskgate } from "./context.ts";
import { expectNoLeak, expectSafeHeaders, pageText } from "./expect-page.ts";

const PASSWORD = "correct horse battery";
let browser: Browser;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  browser = await launchBrowser();
});

afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => {});
  await browser?.close();
});

describe("the webhooks page in Chromium", () => {
  it("adds a webhook, shows its secret once, lists it without the secret, and removes it", async () => {
    const base = taskgate().base;
    const account = await adminCli(["create-account", "--name", "Webhooks in the browser"]);
    const email = `hooks.${Date.now().toString(36)}@example.com`;
    const invite = await adminCli(["invite", "--account", account.id, "--email", email, "--url", base]);
    const context = await newPersonContext(browser);
    contexts.push(context);
    const page = await context.newPage();
    await setPassword(page, invite.setup_url, PASSWORD);
    await expect.poll(() => new URL(page.url()).pathname, { timeout: 20_000 }).toBe("/");

    await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Webhooks" }).click();
    await expect.poll(() => new URL(page.url()).pathname).toBe("/webhooks");
    expect(await pageText(page)).toContain("No webhooks yet.");

    const form = page.getByRole("form", { name: "Add a webhook" });
    await form.getByLabel("Endpoint URL").fill("https://hooks.example.com/taskgate");
    await form.getByRole("checkbox", { name: /approval\.requested/ }).uncheck();
    await form.getByRole("checkbox", { name: /task\.rejected/ }).uncheck();
    await form.getByRole("checkbox", { name: /approval\.answered/ }).uncheck();
    // Post/redirect/get: the POST answers 303 and the page after it, a GET, shows the secret once.
    const [posted, added] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith("/webhooks") && r.request().method() === "POST"),
      page.waitForResponse((r) => r.url().endsWith("/webhooks") && r.request().method() === "GET"),
      form.getByRole("button", { name: "Add webhook" }).click(),
    ]);
    expect(posted.status()).toBe(303);
    expectSafeHeaders(added);
    const secret = (await page.getByLabel("Signing secret").innerText()).trim();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(await pageText(page)).toContain("it is shown only once");
    const row = page.locator("tbody tr", { hasText: "https://hooks.example.com/taskgate" });
    expect(await row.locator('td[data-label="Events"]').innerText()).toBe("approval.withdrawn, approval.decided, task.completed, claim.lapsed");
    await screenshot(page, "console-webhook-added");

    await page.reload();
    await expectNoLeak(page, [secret]);
    expect(await page.locator("tbody tr").count(), "a reload adds nothing").toBe(1);
    expect(await page.getByLabel("Signing secret").count()).toBe(0);
    expect(await row.locator('td[data-label="Deliveries"]').innerText()).toBe("none yet");
    const listed = await adminCli(["list-webhooks", "--account", account.id]);
    expect(JSON.stringify(listed)).toContain("https://hooks.example.com/taskgate");
    expect(JSON.stringify(listed)).not.toContain(secret);

    await row.getByRole("button", { name: "Remove https://hooks.example.com/taskgate" }).click();
    await expect.poll(() => new URL(page.url()).pathname).toBe("/webhooks");
    expect((await page.locator("main > .flash").innerText()).trim()).toMatch(/^Removed webhook whk_[0-9a-z]{16}: it receives no more events\.$/);
    expect(await pageText(page)).toContain("No webhooks yet.");
    await expectNoLeak(page, [secret]);
    await screenshot(page, "console-webhook-removed");
  });
});
