/**
 * axe-core on a Taskgate page, through @axe-core/playwright: the violations of
 * serious or critical impact, each with the elements it found. The page must
 * have JavaScript on (axe is a script) and be the page the person sees: the
 * script is evaluated through the browser's debugging protocol, which the
 * pages' Content-Security-Policy does not block, and adds nothing to the
 * document.
 */
import { AxeBuilder } from "@axe-core/playwright";
import type { Page } from "playwright-core";

/** The serious and critical violations axe finds on the page shown now, one line each: "rule: what it checks (the elements)". */
export async function seriousViolations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page }).analyze();
  return results.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`);
}
