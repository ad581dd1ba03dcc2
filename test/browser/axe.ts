/**
 * axe-core (the npm package, run inside the page) on a Taskgate page: the
 * violations of serious or critical impact, each with the elements it found.
 * The page must have JavaScript on (axe is a script) and be the page the
 * person sees: the script is evaluated through the browser's debugging
 * protocol, which the pages' Content-Security-Policy does not block, and adds
 * nothing to the document.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { AxeResults } from "axe-core";
import type { Page } from "playwright-core";

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/** The serious and critical violations axe finds on the page shown now, one line each: "rule: what it checks (the elements)". */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  const results = await page.evaluate(() => (window as unknown as { axe: { run(context: Document, options: object): Promise<AxeResults> } }).axe.run(document, { resultTypes: ["violations"] }));
  return results.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`);
}
