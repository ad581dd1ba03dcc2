/**
 * The policy editor in a real Chromium, against the running `wrangler dev`:
 * the person reaches an agent's policy page from Agents, axe finds no serious
 * violation at desktop and phone width, nothing is wider than the screen, and
 * by keyboard alone the person chooses Careful and saves it; the agent's MCP
 * client is told at once. Saves screenshots/policy-page.png (and the phone
 * width beside it).
 */
import { describe, expect, it } from "vitest";
import { screenshot } from "../../scripts/lib/browser.ts";
import { connect } from "../../scripts/lib/e2e-harness.ts";
import { seriousViolations } from "./axe.ts";
import { adminCli, taskgate } from "./context.ts";
import { browserStage, WIDTHS } from "./stage.ts";
import { brokenNames, horizontalOverflow } from "./layout.ts";


const stage = browserStage();

describe("the policy page in Chromium", () => {
  it("has no serious axe violation at either width, fits the screen, and Careful is chosen and saved by keyboard", async () => {
    const base = taskgate().base;
    const account = await adminCli(["create-account", "--name", "Policy in the browser"]);
    const token = await adminCli(["create-token", "--account", account.id, "--kind", "agent", "--scope", "write", "--agent", "release-bot", "--label", "release-bot in CI"]);
    const agent = await connect(`${base}/mcp`, token.token, "modern");
    stage.keep(agent);
    await agent.ok("create_project", { name: "Website" });
    const email = `policy.${Date.now().toString(36)}@example.com`;
    const invite = await adminCli(["invite", "--account", account.id, "--email", email, "--url", base]);
    // JavaScript on only so axe can run and the test can measure: the pages carry none.
    const page = await stage.signIn(invite.setup_url);

    // From Agents, the card's policy link.
    await page.goto(`${base}/agents`);
    await page.getByRole("link", { name: "Policy of release-bot: Trusted" }).click();
    expect(new URL(page.url()).pathname).toBe("/agents/release-bot/policy");
    expect(await page.locator("h2#h-current").innerText()).toBe("Now: Trusted");

    for (const width of ["desktop", "phone"] as const) {
      await page.setViewportSize(WIDTHS[width]);
      expect(await seriousViolations(page), `axe at ${width}`).toEqual([]);
      expect(await horizontalOverflow(page), `wider than the screen at ${width}`).toEqual([]);
      expect(await brokenNames(page), `names broken inside a word at ${width}`).toEqual([]);
    }
    await screenshot(page, "policy-page-phone");
    await page.setViewportSize(WIDTHS.desktop);

    // By keyboard alone: Tab to the preset group, arrow to Careful, Tab to its button, Enter.
    await page.locator("body").focus();
    let reached = false;
    for (let i = 0; i < 80 && !reached; i++) {
      await page.keyboard.press("Tab");
      reached = await page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.name === "preset");
    }
    expect(reached, "the preset choice is reached with Tab").toBe(true);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("preset-trusted");
    await page.keyboard.press("ArrowDown");
    expect(await page.getByLabel(/^Careful/).isChecked()).toBe(true);
    await page.keyboard.press("Tab");
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Save preset");
    await Promise.all([page.waitForNavigation(), page.keyboard.press("Enter")]);
    expect(new URL(page.url()).pathname).toBe("/agents/release-bot/policy");
    expect((await page.locator("main > .flash").innerText()).trim()).toMatch(/^Saved release-bot's policy: Careful\./);
    expect(await page.locator("h2#h-current").innerText()).toBe("Now: Careful");

    const who = await agent.ok("whoami", {});
    expect(who.policy.preset).toBe("careful");
    expect(who.policy.ask.map((a: { tool: string }) => a.tool)).toContain("delete_task");

    // The page with its rules, a project rule added, and the table of decisions: what the screenshot shows.
    await page.getByLabel("One tool", { exact: true }).check();
    await page.getByLabel("Tool", { exact: true }).selectOption("update_task");
    await page.getByLabel("Decision", { exact: true }).selectOption("deny");
    await page.getByLabel("Only in the project below").check();
    await page.getByLabel("Project", { exact: true }).selectOption({ label: "Website" });
    await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Add rule" }).click()]);
    expect((await page.locator("main > .flash").innerText()).trim()).toBe("Saved release-bot's policy: added the rule “deny update_task in project “Website””. It now has 3 rules.");
    expect(await seriousViolations(page), "axe with three rules and a message").toEqual([]);
    await screenshot(page, "policy-page");
  }, 120_000);
});
