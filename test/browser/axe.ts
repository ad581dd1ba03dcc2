/**
 * axe-core on a Taskgate page, through @axe-core/playwright: the violations of
 * serious or critical impact, each with the elements it found. The page must
 * have JavaScript on (axe is a script) and be the page the person sees: the
 * script is evaluated through the browser's debugging protocol, which the
 * pages' Content-Security-Policy does not block, and adds nothing to the
 * document. A frame (the approvals view inside a host) is checked alone, with
 * axe-core's own script evaluated in it.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { AxeBuilder } from "@axe-core/playwright";
import type { AxeResults } from "axe-core";
import type { Frame, Page } from "playwright-core";

let axeSource: string | undefined;

async function inFrame(frame: Frame): Promise<AxeResults> {
  axeSource ??= readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
  await frame.evaluate(axeSource);
  return frame.evaluate(() => (window as unknown as { axe: { run(context: Document, options: object): Promise<AxeResults> } }).axe.run(document, { resultTypes: ["violations"] }));
}

/** The serious and critical violations axe finds on the page (or in the frame) shown now, one line each: "rule: what it checks (the elements)". */
export async function seriousViolations(target: Page | Frame): Promise<string[]> {
  const results = "mainFrame" in target ? await new AxeBuilder({ page: target }).analyze() : await inFrame(target);
  return results.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`);
}
