/**
 * The task page's parts in a real Chromium, against the running `wrangler dev`:
 * the person adds, checks, renames, moves and deletes steps; adds an existing
 * label, makes a new one inline and removes one; finds a task by title and makes
 * the task wait on it, then removes that; links a calendar event with its times
 * (beside one an agent linked before) and removes it. After each, the stored
 * result is read back through the person's own MCP client. A dependency cycle is
 * refused with the tool's words. axe finds no serious violation with the add
 * forms open at 1280 and 390 wide, and a long hostile label and step keep the
 * phone width without sideways scroll.
 */
import { describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { screenshot } from "../../scripts/lib/browser.ts";
import { connect } from "../../scripts/lib/e2e-harness.ts";
import { seriousViolations } from "./axe.ts";
import { adminCli, taskgate } from "./context.ts";
import { browserStage, flash, WIDTHS } from "./stage.ts";
import { horizontalOverflow } from "./layout.ts";

const HOSTILE = `\u202Eevil${"x".repeat(180)}\u202C`;

const stage = browserStage();

/** Clicks a form's button and waits for the page it comes back to. */
async function press(page: Page, button: ReturnType<Page["getByRole"]>): Promise<void> {
  await Promise.all([page.waitForNavigation(), button.click()]);
}

describe("the task page's parts in Chromium", () => {
  it("steps, labels, dependencies and calendar links are managed from the task page, each change stored as the tools store it", async () => {
    const base = taskgate().base;
    const account = await adminCli(["create-account", "--name", "Task parts in the browser"]);
    const email = `parts.${Date.now().toString(36)}@example.com`;
    // The admin CLI's calls at once: each is a wrangler process of its own, and they write different rows.
    const [agentToken, personToken, invite] = await Promise.all([
      adminCli(["create-token", "--account", account.id, "--kind", "agent", "--scope", "write", "--agent", "bot", "--label", "bot in CI"]),
      adminCli(["create-token", "--account", account.id, "--kind", "human", "--scope", "write", "--label", "person's client"]),
      adminCli(["invite", "--account", account.id, "--email", email, "--url", base]),
    ]);
    const agent = await connect(`${base}/mcp`, agentToken.token, "modern");
    stage.keep(agent);
    const me = await connect(`${base}/mcp`, personToken.token, "modern");
    stage.keep(me);
    await me.ok("update_account_settings", { time_zone: "Europe/Berlin" });

    const { task } = await agent.ok("create_task", { title: "Ship the release" });
    const { task: docs } = await agent.ok("create_task", { title: "Write the quokka handbook" });
    await agent.ok("add_steps", { task_id: task.id, steps: ["Tag the build", "Run the checks", "Publish"] });
    await agent.ok("create_label", { name: "backend" });
    await agent.ok("label_task", { task_id: task.id, labels: ["urgent"] });
    // Events stored in UTC: 2026-12-07 08:00–09:30 UTC is 09:00–10:30 in Berlin.
    await agent.ok("link_calendar_event", {
      task_id: task.id, provider: "google", event_id: "evt-agent-1", title: "Release sync", starts_at: "2026-12-07T08:00:00Z", ends_at: "2026-12-07T09:30:00Z",
    });
    // JavaScript on only so axe can run and the test can measure: the pages carry none.
    const page = await stage.signIn(invite.setup_url);
    await page.goto(`${base}/tasks/${task.id}`);
    // The agent's calendar link is listed with its times in the account's zone.
    const cal = page.locator("section", { has: page.locator("#h-cal") });
    expect(await cal.locator("ul.links").innerText()).toContain("Release sync");
    expect(await cal.locator("ul.links").innerText()).toContain("7 Dec 2026, 09:00 – 10:30");
    // Steps: add two, check one, rename one, move one up, delete one.
    const steps = page.locator("section", { has: page.locator("#h-steps") });
    await steps.locator("summary", { hasText: "Add steps" }).click();
    await page.getByLabel("New steps", { exact: true }).fill("Write the notes\n\n  Tell the team  \n");
    await press(page, steps.getByRole("button", { name: "Add steps" }));
    expect(await flash(page)).toBe("Added 2 steps.");
    let listed = (await me.ok("list_steps", { task_id: task.id })).steps as { id: string; text: string; status: string }[];
    expect(listed.map((s) => s.text)).toEqual(["Tag the build", "Run the checks", "Publish", "Write the notes", "Tell the team"]);

    // Each step's changes open in place, one step at a time, and stay open after each change.
    await press(page, page.getByRole("link", { name: "Change step 1" }));
    await press(page, page.getByRole("button", { name: "Mark done step 1" }));
    expect(await flash(page)).toBe("Marked the step “Tag the build” done.");
    expect((await me.ok("list_steps", { task_id: task.id })).steps[0].status).toBe("done");
    await press(page, page.getByRole("button", { name: "Mark pending step 1" }));
    expect(await flash(page)).toBe("Marked the step “Tag the build” pending.");
    await press(page, page.getByRole("button", { name: "Mark done step 1" }));

    await press(page, page.getByRole("link", { name: "Change step 2" }));
    await page.getByLabel("Step text", { exact: true }).fill("Run every check");
    await press(page, steps.getByRole("button", { name: "Rename" }));
    expect(await flash(page)).toBe("Renamed the step to “Run every check”.");

    await press(page, page.getByRole("link", { name: "Change step 5" }));
    await press(page, page.getByRole("button", { name: "Move up step 5" }));
    expect(await flash(page)).toBe("Moved the step “Tell the team” up; it is step 4 now.");

    await press(page, page.getByRole("link", { name: "Change step 3" }));
    await press(page, page.getByRole("button", { name: "Delete step 3" }));
    expect(await flash(page)).toBe("Moved the step “Publish” to the trash; Trash restores it.");
    listed = (await me.ok("list_steps", { task_id: task.id })).steps;
    expect(listed.map((s) => [s.text, s.status])).toEqual([
      ["Tag the build", "done"], ["Run every check", "pending"], ["Tell the team", "pending"], ["Write the notes", "pending"],
    ]);
    // Labels: add an existing one, make a new one inline, remove one.
    const labels = page.locator("section", { has: page.locator("#h-labels") });
    await press(page, page.getByRole("link", { name: "Change labels" }));
    await page.getByLabel("Existing label", { exact: true }).selectOption("backend");
    await press(page, labels.getByRole("button", { name: "Add", exact: true }));
    expect(await flash(page)).toBe("Added the label “backend”.");
    await page.getByLabel("New label", { exact: true }).fill("docs");
    await press(page, labels.getByRole("button", { name: "Create and add" }));
    expect(await flash(page)).toBe("Made the new label “docs” and added it.");
    expect(((await me.ok("get_task", { task_id: task.id })).labels as { name: string }[]).map((l) => l.name)).toEqual(["backend", "docs", "urgent"]);
    await press(page, page.getByRole("button", { name: "Remove label urgent" }));
    expect(await flash(page)).toBe("Removed the label “urgent”.");
    expect(((await me.ok("get_task", { task_id: task.id })).labels as { name: string }[]).map((l) => l.name)).toEqual(["backend", "docs"]);
    // Dependencies: find a task by a word of its title, add it, then remove it.
    const deps = page.locator("section", { has: page.locator("#h-deps") });
    await press(page, page.getByRole("link", { name: "Change dependencies" }));
    await page.getByLabel("Find a task by title", { exact: true }).fill("quokka");
    await Promise.all([page.waitForNavigation(), page.getByLabel("Find a task by title", { exact: true }).press("Enter")]);
    expect(new URL(page.url()).search).toBe("?dep=quokka");
    const found = deps.getByRole("list", { name: "Tasks found" });
    expect(await found.innerText()).toContain("Write the quokka handbook");
    await press(page, found.getByRole("button", { name: "Add Write the quokka handbook" }));
    expect(await flash(page)).toBe("“Ship the release” now waits on “Write the quokka handbook” (open).");
    expect(new URL(page.url()).search).toBe("?edit=deps");
    expect((await me.ok("list_dependencies", { task_id: task.id })).waits_on.map((d: { id: string }) => d.id)).toEqual([docs.id]);

    // A cycle is refused with the tool's words: the handbook cannot wait on the release.
    await page.goto(`${base}/tasks/${docs.id}?dep=release`);
    await press(page, page.getByRole("button", { name: "Add Ship the release" }));
    expect(await page.locator("main > .flash.error").innerText()).toMatch(/^refused: .* that would be a cycle/);
    expect((await me.ok("list_dependencies", { task_id: docs.id })).waits_on).toEqual([]);

    await page.goto(`${base}/tasks/${task.id}?edit=deps`);
    await press(page, page.getByRole("button", { name: "Remove dependency Write the quokka handbook" }));
    expect(await flash(page)).toBe("“Ship the release” no longer waits on “Write the quokka handbook”.");
    expect((await me.ok("list_dependencies", { task_id: task.id })).waits_on).toEqual([]);
    // Calendar: link an event with its times (Berlin wall time), see it listed, remove it.
    await press(page, page.getByRole("link", { name: "Change calendar links" }));
    await cal.getByLabel("Title", { exact: true }).fill("Launch review");
    await cal.getByLabel("Starts", { exact: true }).fill("2026-07-01T14:00");
    await cal.getByLabel("Ends", { exact: true }).fill("2026-07-01T15:15");
    await cal.getByLabel("Event id", { exact: true }).fill("evt-person-1");
    await press(page, cal.getByRole("button", { name: "Link the event" }));
    expect(await flash(page)).toBe("Linked the event “Launch review”, 1 Jul 2026, 14:00 – 15:15.");
    const links = (await me.ok("list_calendar_links", { task_id: task.id })).items as { id: string; title: string; starts_at: string; ends_at: string }[];
    expect(links.map((l) => [l.title, l.starts_at, l.ends_at])).toEqual([
      ["Launch review", "2026-07-01T12:00:00.000Z", "2026-07-01T13:15:00.000Z"],
      ["Release sync", "2026-12-07T08:00:00.000Z", "2026-12-07T09:30:00.000Z"],
    ]);
    const shown = await cal.locator("ul.links").innerText();
    expect(shown).toContain("1 Jul 2026, 14:00 – 15:15");
    expect(shown).toContain("7 Dec 2026, 09:00 – 10:30");
    await press(page, page.getByRole("button", { name: "Remove calendar link Launch review" }));
    expect(await flash(page)).toBe("Removed the calendar link “Launch review”.");
    expect(((await me.ok("list_calendar_links", { task_id: task.id })).items as { title: string }[]).map((l) => l.title)).toEqual(["Release sync"]);

    // A refused link keeps what was typed: an end before the start.
    await cal.getByLabel("Title", { exact: true }).fill("Backwards");
    await cal.getByLabel("Starts", { exact: true }).fill("2026-07-02T10:00");
    await cal.getByLabel("Ends", { exact: true }).fill("2026-07-02T09:00");
    await cal.getByLabel("Event id", { exact: true }).fill("evt-person-2");
    await press(page, cal.getByRole("button", { name: "Link the event" }));
    expect(await page.locator("main > .flash.error").innerText()).toContain("before");
    expect(await cal.getByLabel("Title", { exact: true }).inputValue()).toBe("Backwards");
    // Hostile text, then axe and the layout with every add form open, at both widths.
    await agent.ok("add_steps", { task_id: task.id, steps: [HOSTILE] });
    await agent.ok("label_task", { task_id: task.id, labels: [HOSTILE.slice(0, 100)] });
    await page.goto(`${base}/tasks/${task.id}?dep=quokka`);
    await page.setViewportSize(WIDTHS.desktop);
    await screenshot(page, "task-parts");
    for (const d of await page.locator("section.parts details").all()) await d.evaluate((el) => el.setAttribute("open", ""));
    for (const width of ["desktop", "phone"] as const) {
      await page.setViewportSize(WIDTHS[width]);
      expect(await seriousViolations(page), `axe at ${width}`).toEqual([]);
      expect(await horizontalOverflow(page), `wider than the screen at ${width}`).toEqual([]);
    }
    await screenshot(page, "task-parts-phone");
  }, 90_000);
});
