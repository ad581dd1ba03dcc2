/** What every Taskgate page must be, checked in the browser tests. */
import { expect } from "vitest";
import type { Page, Response } from "playwright-core";

/** The page's visible text, whitespace folded. */
export async function pageText(page: Page): Promise<string> {
  return (await page.locator("body").innerText()).replace(/\s+/g, " ");
}

/** The security headers of a page: a CSP that allows no script at all (Settings: its push script, from this origin) and no framing. */
export function expectSafeHeaders(response: Response | null, path?: string): void {
  expect(response, "the page's response").not.toBeNull();
  const headers = response?.headers() ?? {};
  const csp = headers["content-security-policy"] ?? "";
  expect(csp).toMatch(/default-src 'none'/);
  if (path === "/settings") expect(csp).toMatch(/script-src 'self'; worker-src 'self'/);
  else expect(csp).not.toMatch(/script-src/);
  expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
  expect(csp).toMatch(/frame-ancestors 'none'/);
  expect(headers["x-frame-options"]).toBe("DENY");
}

/** Nothing on the page that looks like a stack trace, and not the given secrets. */
export async function expectNoLeak(page: Page, secrets: string[] = []): Promise<void> {
  const shown = await pageText(page);
  expect(shown).not.toMatch(/\bat \S+ \(|Error: |node_modules|\.tsx?:\d+/);
  for (const s of secrets) expect(shown).not.toContain(s);
}
