/**
 * A real browser for the tests: Playwright (playwright-core, which downloads
 * nothing) driving the headless Chromium that the npm package
 * @sparticuz/chromium ships inside node_modules (unpacked once into the
 * temporary folder). Screenshots go to the git-ignored `screenshots/` folder.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import chromium from "@sparticuz/chromium";
import { chromium as playwright, type Browser, type BrowserContext, type Page } from "playwright-core";
import { ROOT } from "./d1.ts";

export const SCREENSHOT_DIR = join(ROOT, "screenshots");

/** Launches headless Chromium; close it with browser.close() (Playwright also kills it if this process exits). */
export async function launchBrowser(): Promise<Browser> {
  const executablePath = await chromium.executablePath();
  return playwright.launch({ executablePath, args: chromium.args, headless: true, timeout: 60_000 });
}

/**
 * A fresh context (its own cookies) for one person. JavaScript is off unless
 * asked for: every Taskgate page must work without it, so the tests prove that.
 */
export async function newPersonContext(browser: Browser, options: { javaScript?: boolean } = {}): Promise<BrowserContext> {
  const context = await browser.newContext({
    javaScriptEnabled: options.javaScript ?? false,
    viewport: { width: 1024, height: 800 },
    locale: "en-US",
  });
  context.setDefaultTimeout(20_000);
  context.setDefaultNavigationTimeout(30_000);
  return context;
}

/** Saves a full-page screenshot as screenshots/<name>.png; returns the path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
