/**
 * What the console's browser tests share: the two widths every page is held
 * to, the test person's password, one Chromium a file with the contexts and
 * MCP sessions its tests open (all closed after the file, also when a test
 * failed), the person signed in from an invite, and the flash message a page
 * shows after a form.
 */
import { afterAll, beforeAll, expect } from "vitest";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { launchBrowser, newPersonContext } from "../../scripts/lib/browser.ts";
import type { McpSession } from "../../scripts/lib/e2e-harness.ts";
import { setPassword } from "../../scripts/lib/oauth-pages.ts";

export const PASSWORD = "correct horse battery";
export const WIDTHS = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;

export interface Stage {
  /** A new person's browser context (JavaScript on, so a test can measure and run axe), closed after the file. */
  context(): Promise<BrowserContext>;
  /** An MCP session to close after the file. */
  keep(session: McpSession): void;
  /** A new context's page, signed in as the person an invite's setup link (admin CLI `invite`) sets up, on the inbox. */
  signIn(setupUrl: string): Promise<Page>;
}

/** One Chromium for this file's tests: launched before them, closed after them with what they opened. */
export function browserStage(): Stage {
  let browser: Browser | undefined;
  const contexts: BrowserContext[] = [];
  const sessions: McpSession[] = [];
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await Promise.allSettled(sessions.map((s) => s.close()));
    for (const c of contexts) await c.close().catch(() => {});
    await browser?.close();
  });
  return {
    async context() {
      if (!browser) throw new Error("browserStage: the browser starts in beforeAll; open contexts in a test");
      const c = await newPersonContext(browser, { javaScript: true });
      contexts.push(c);
      return c;
    },
    keep: (session) => void sessions.push(session),
    async signIn(setupUrl) {
      const page = await (await this.context()).newPage();
      await setPassword(page, setupUrl, PASSWORD);
      await expect.poll(() => new URL(page.url()).pathname, { timeout: 20_000 }).toBe("/");
      return page;
    },
  };
}

/** The message the page shows after a form was sent (what was done, or why not). */
export async function flash(page: Page): Promise<string> {
  return (await page.locator("main > .flash").innerText()).trim();
}
