/**
 * The browser harness itself: Chromium from @sparticuz/chromium renders a real
 * answer of the running Worker, saves a screenshot, and closing it leaves no
 * browser process behind.
 */
import { existsSync, statSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { launchBrowser, newPersonContext, screenshot } from "../../scripts/lib/browser.ts";
import { canListProcesses, descendants, settle } from "../../scripts/lib/processes.ts";
import { taskgate } from "./context.ts";

const chromiumProcesses = () => descendants().filter((p) => /chromium|headless_shell/.test(p.command));

describe("the browser harness", () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("renders GET /health from wrangler dev and saves a screenshot", async () => {
    const context = await newPersonContext(browser);
    try {
      const page = await context.newPage();
      const response = await page.goto(`${taskgate().base}/health`);
      expect(response?.status()).toBe(200);
      expect(response?.headers()["content-type"]).toMatch(/^application\/json/);
      expect(JSON.parse(await page.locator("body").innerText())).toMatchObject({ ok: true });
      const path = await screenshot(page, "health");
      expect(existsSync(path) && statSync(path).size).toBeGreaterThan(1000);
    } finally {
      await context.close();
    }
  });

  it("keeps people apart: each context has its own cookies", async () => {
    const a = await newPersonContext(browser);
    const b = await newPersonContext(browser);
    try {
      await a.addCookies([{ name: "probe", value: "a", url: taskgate().base }]);
      expect((await a.cookies(taskgate().base)).map((c) => c.name)).toEqual(["probe"]);
      expect(await b.cookies(taskgate().base)).toEqual([]);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it.runIf(canListProcesses())("a second browser closes without leaving a process behind", async () => {
    const before = chromiumProcesses().length;
    const second = await launchBrowser();
    const page = await second.newPage();
    await page.goto(`${taskgate().base}/health`);
    expect(chromiumProcesses().length).toBeGreaterThan(before);
    await second.close();
    const left = await settle(() => chromiumProcesses().slice(before));
    expect(left.map((p) => `${p.pid} ${p.command.slice(0, 80)}`)).toEqual([]);
  });
});
