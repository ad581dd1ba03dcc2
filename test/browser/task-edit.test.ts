/**
 * The task page's edits in a real Chromium, against the running `wrangler dev`:
 * as the person, each field of the task (title, notes, due time in the
 * account's zone, priority, estimate, repeat set and cleared), its assignee
 * (an agent, Take it myself, Let it go), snooze and wake, block and unblock,
 * and its project; after each, a person's MCP client reads the task back with
 * get_task. A stale edit (an agent changed the task meanwhile) is refused in
 * plain words with the typed values kept; a task an agent holds says who holds
 * it and what the person may still do. axe finds no serious violation with the
 * edit form open at 1280 and 390 wide, and nothing is wider than the phone.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { launchBrowser, newPersonContext, screenshot } from "../../scripts/lib/browser.ts";
import { connect, type McpSession } from "../../scripts/lib/e2e-harness.ts";
import { setPassword } from "../../scripts/lib/oauth-pages.ts";
import { seriousViolations } from "./axe.ts";
import { adminCli, taskgate } from "./context.ts";
import { horizontalOverflow } from "./layout.ts";

const PASSWORD = "correct horse battery";
const ZONE = "Europe/Berlin";

let browser: Browser;
let context: BrowserContext;
let page: Page;
let agent: McpSession;
let person: McpSession;
let personName: string;

beforeAll(async () => {
  const base = taskgate().base;
  const launched = launchBrowser();
  const account = await adminCli(["create-account", "--name", "Task edits"]);
  const email = `editor.${Date.now().toString(36)}@example.com`;
  personName = email.split("@")[0];
  const [bot, human, invite] = await Promise.all([
    adminCli(["create-token", "--account", account.id, "--kind", "agent", "--scope", "write", "--agent", "bot", "--label", "bot in CI"]),
    adminCli(["create-token", "--account", account.id, "--kind", "human", "--scope", "write", "--label", "person's reader"]),
    adminCli(["invite", "--account", account.id, "--email", email, "--url", base]),
  ]);
  agent = await connect(`${base}/mcp`, bot.token, "modern");
  person = await connect(`${base}/mcp`, human.token, "modern");
  await person.ok("update_account_settings", { time_zone: ZONE });
  browser = await launched;
  // JavaScript on only so axe can run and the test can measure: the pages carry none.
  context = await newPersonContext(browser, { javaScript: true });
  page = await context.newPage();
  await setPassword(page, invite.setup_url, PASSWORD);
  await page.waitForURL((u) => u.pathname === "/", { timeout: 20_000 });
}, 120_000);

afterAll(async () => {
  await Promise.allSettled([agent?.close(), person?.close()]);
  await context?.close().catch(() => {});
  await browser?.close();
});

async function flash(): Promise<string> {
  return (await page.locator("main > .flash").innerText()).trim();
}

/** Clicks a submit button and waits for the page it leads to. */
async function send(name: string | RegExp, within = page.locator("main")) {
  await Promise.all([page.waitForNavigation(), within.getByRole("button", { name, exact: typeof name === "string" }).click()]);
}

const editForm = () => page.locator("form[aria-label='Edit the task']");
const handling = () => page.locator("section[aria-labelledby=h-handling]");

async function openEdit() {
  const details = page.locator("details.edit");
  if (!(await details.evaluate((d) => (d as HTMLDetailsElement).open))) await details.locator("summary").click();
}

/** axe at 1280 and 390 wide, and nothing wider than the phone. */
async function checkWidths(what: string) {
  for (const size of [{ width: 1280, height: 800 }, { width: 390, height: 844 }]) {
    await page.setViewportSize(size);
    expect(await seriousViolations(page), `axe on ${what} at ${size.width}`).toEqual([]);
    if (size.width === 390) expect(await horizontalOverflow(page), `${what} wider than the phone`).toEqual([]);
  }
  await page.setViewportSize({ width: 1280, height: 800 });
}

async function read(id: string) {
  return (await person.ok("get_task", { task_id: id })).task as Record<string, any>;
}

describe("the task page edits the task", () => {
  it("edits every field, who holds it, snooze, block and project; refuses a stale edit keeping what was typed", async () => {
    const base = taskgate().base;
    const website = (await agent.ok("create_project", { name: "Website" })).project;
    const { task } = await agent.ok("create_task", { title: "Draft the launch post", notes: "First ideas." });
    await page.goto(`${base}/tasks/${task.id}`);

    // The fields, all at once: local time in the account's zone, a named repeat.
    await openEdit();
    const form = editForm();
    await form.getByLabel("Title").fill("Write the launch post");
    await form.getByLabel("Notes").fill("Line one\nLine two");
    await form.getByLabel("Due").fill("2026-12-24T18:00");
    await form.getByLabel("Priority").selectOption("high");
    await form.getByLabel("Estimate (minutes)").fill("90");
    await form.getByLabel("Repeats").selectOption({ label: "Every week" });
    await send("Save changes", form);
    expect(await flash()).toBe(`Saved “Write the launch post”: due 2026-12-24 18:00 ${ZONE}, priority high, estimate 90 min, repeats every week, notes saved.`);
    let t = await read(task.id);
    expect(t).toMatchObject({ title: "Write the launch post", notes: "Line one\nLine two", due_at: "2026-12-24T17:00:00.000Z", priority: "high", estimate_minutes: 90, recurrence: "FREQ=WEEKLY" });
    expect(await page.locator("#te-due").inputValue()).toBe("2026-12-24T18:00");

    // Saving again as shown changes nothing (the notes' line ends and the due time come back as they were).
    await openEdit();
    await send("Save changes", editForm());
    expect(await flash()).toBe("Nothing to change in “Write the launch post”.");
    expect((await read(task.id)).version).toBe(t.version);

    // A rule written out, then no repeat, no estimate and no due time.
    await openEdit();
    await editForm().getByLabel("Repeats").selectOption({ label: "Another rule, written below" });
    await editForm().getByLabel("Rule (for another rule)").fill("FREQ=MONTHLY;BYMONTHDAY=1");
    await send("Save changes", editForm());
    expect(await flash()).toBe("Saved “Write the launch post”: repeats every month on day 1 of the month.");
    expect((await read(task.id)).recurrence).toBe("FREQ=MONTHLY;BYMONTHDAY=1");
    await openEdit();
    await editForm().getByLabel("Repeats").selectOption({ label: "Does not repeat" });
    await editForm().getByLabel("Estimate (minutes)").fill("");
    await editForm().getByLabel("Due").fill("");
    await editForm().getByLabel("Priority").selectOption("low");
    await send("Save changes", editForm());
    expect(await flash()).toBe("Saved “Write the launch post”: no due time, priority low, no estimate, does not repeat.");
    t = await read(task.id);
    expect(t).toMatchObject({ recurrence: null, estimate_minutes: null, due_at: null, priority: "low", notes: "Line one\nLine two" });

    // Its scope, one area a line; then none.
    await openEdit();
    await editForm().getByLabel("Scope").fill("src/db/**\n\nBilling");
    await send("Save changes", editForm());
    expect(await flash()).toBe("Saved “Write the launch post”: scope src/db/**, Billing.");
    expect((await person.ok("get_task", { task_id: task.id })).scope).toEqual(["src/db/**", "billing"]);
    await openEdit();
    expect(await editForm().getByLabel("Scope").inputValue()).toBe("src/db/**\nbilling");
    await send("Save changes", editForm());
    expect(await flash(), "the scope as shown is not sent again").toBe("Nothing to change in “Write the launch post”.");
    await openEdit();
    await editForm().getByLabel("Scope").fill("../up");
    await send("Save changes", editForm());
    expect(await flash()).toMatch(/^Scope.*must not contain/);
    await openEdit();
    await editForm().getByLabel("Scope").fill("");
    await send("Save changes", editForm());
    expect(await flash()).toBe("Saved “Write the launch post”: no scope.");
    expect((await person.ok("get_task", { task_id: task.id })).scope).toEqual([]);

    // A stale edit: the agent renames the task while the person types.
    await openEdit();
    await editForm().getByLabel("Title").fill("Publish the launch post");
    await editForm().getByLabel("Notes").fill("Typed by the person");
    await agent.ok("update_task", { task_id: task.id, title: "Launch post (agent's title)" });
    await send("Save changes", editForm());
    expect(await flash()).toMatch(/^Not saved: the task was changed by someone else since this page was opened\./);
    expect(await page.locator("details.edit").evaluate((d) => (d as HTMLDetailsElement).open)).toBe(true);
    expect(await editForm().getByLabel("Title").inputValue()).toBe("Publish the launch post");
    expect(await editForm().getByLabel("Notes").inputValue()).toBe("Typed by the person");
    expect(await page.locator("h1").innerText()).toBe("Launch post (agent's title)");
    expect((await read(task.id)).title).toBe("Launch post (agent's title)");
    // Sent again from the page that now shows the current version: saved over theirs.
    await send("Save changes", editForm());
    expect(await flash()).toBe("Saved “Publish the launch post”: notes saved.");
    expect(await read(task.id)).toMatchObject({ title: "Publish the launch post", notes: "Typed by the person" });

    // Axe and width with the edit form open, a refusal's message on the page.
    await openEdit();
    for (const size of [{ width: 1280, height: 800 }, { width: 390, height: 844 }]) {
      await page.setViewportSize(size);
      expect(await seriousViolations(page), `axe at ${size.width}`).toEqual([]);
      if (size.width === 390) expect(await horizontalOverflow(page), "wider than the phone").toEqual([]);
    }
    await screenshot(page, "task-edit-phone");
    await page.setViewportSize({ width: 1280, height: 800 });

    // Assignee: an agent, then the agent claims it and the page says who holds it.
    await handling().getByLabel("Assignee", { exact: true }).selectOption("bot");
    await send("Assign", handling());
    expect(await flash()).toBe("Assigned “Publish the launch post” to bot.");
    expect((await read(task.id)).assignee).toBe("bot");
    await agent.ok("claim_task", { task_id: task.id });
    await page.reload();
    const held = await handling().innerText();
    expect(held).toContain("Agent bot holds this task: it is in progress and assigned to it");
    expect(held).toContain("You still may: edit every field, snooze, block or move it");
    await openEdit();
    expect(await page.locator("details.edit").innerText()).toContain("Agent bot holds this task; you may still change every field here");
    for (const size of [{ width: 1280, height: 800 }, { width: 390, height: 844 }]) {
      await page.setViewportSize(size);
      expect(await seriousViolations(page), `axe with an agent holding it at ${size.width}`).toEqual([]);
      if (size.width === 390) expect(await horizontalOverflow(page), "wider than the phone").toEqual([]);
    }
    await screenshot(page, "task-edit-held-phone");
    await page.setViewportSize({ width: 1280, height: 800 });
    // Take it myself is the tool's to refuse while the claim is live; the person is told the way on.
    await send("Take it myself", handling());
    expect(await flash()).toMatch(/^Not taken: agent bot holds this task with a live claim.*choose Me under Assignee/);
    expect((await read(task.id)).assignee).toBe("bot");

    // Let it go, then take it myself.
    await handling().getByLabel("Assignee", { exact: true }).selectOption("human");
    await send("Assign", handling());
    expect(await flash()).toBe("Assigned “Publish the launch post” to you.");
    expect(await read(task.id)).toMatchObject({ assignee: "human", assignee_person: { name: personName } });
    expect(await handling().innerText()).toContain("You hold this task.");
    await send("Let it go", handling());
    expect(await flash()).toBe("You let “Publish the launch post” go: nobody holds it now.");
    expect((await read(task.id)).assignee).toBeNull();
    await send("Take it myself", handling());
    expect(await flash()).toBe("You took “Publish the launch post”: it is yours and in progress.");
    expect(await read(task.id)).toMatchObject({ assignee: "human", status: "in_progress", assignee_person: { name: personName } });
    await send("Let it go", handling());
    // Released, the task it held in progress is open again, for anyone to take.
    expect(await read(task.id)).toMatchObject({ assignee: null, status: "open" });

    // Snooze until a local time, then wake.
    await handling().getByLabel("Snooze until", { exact: true }).fill("2030-01-15T09:30");
    await send("Snooze", handling());
    expect(await flash()).toBe(`Snoozed “Publish the launch post” until 2030-01-15 09:30 ${ZONE}: open lists leave it out until then.`);
    expect((await read(task.id)).snoozed_until).toBe("2030-01-15T08:30:00.000Z");
    await send("Wake it", handling());
    expect(await flash()).toBe("Woke “Publish the launch post”: open lists show it again.");
    expect((await read(task.id)).snoozed_until).toBeNull();

    // Block with a reason, then unblock.
    await handling().getByLabel("Waiting for", { exact: true }).fill("the legal review");
    await send("Block", handling());
    expect(await flash()).toBe("Blocked “Publish the launch post”: it waits for “the legal review”.");
    expect(await read(task.id)).toMatchObject({ status: "blocked", blocked_reason: "the legal review" });
    await send("Unblock", handling());
    expect(await flash()).toBe("Unblocked “Publish the launch post”: it is open again.");
    expect(await read(task.id)).toMatchObject({ status: "open", blocked_reason: null });

    // Move to a project and out of it, on the move page.
    const move = async (label: string) => {
      await Promise.all([page.waitForNavigation(), handling().getByRole("link", { name: "Move it" }).click()]);
      await page.getByLabel("Project", { exact: true }).selectOption({ label });
      await send("Move");
    };
    await Promise.all([page.waitForNavigation(), handling().getByRole("link", { name: "Move it" }).click()]);
    await checkWidths("the move page");
    await page.goBack();
    await move("Website");
    expect(await flash()).toBe("Moved “Publish the launch post” to the project “Website”.");
    expect(new URL(page.url()).pathname).toBe(`/tasks/${task.id}`);
    expect((await read(task.id)).project_id).toBe(website.id);
    await move("No project");
    expect(await flash()).toBe("Moved “Publish the launch post” out of any project.");
    expect((await read(task.id)).project_id).toBeNull();

    // Notes longer than the page shows: the task page's form leaves them be, and their own page edits them whole.
    const long = `${"A long brief. ".repeat(400)}\nThe end.`;
    const { task: brief } = await agent.ok("create_task", { title: "Long brief", notes: long });
    await page.goto(`${base}/tasks/${brief.id}`);
    await openEdit();
    await editForm().getByLabel("Title").fill("Long brief, renamed");
    await send("Save changes", editForm());
    expect(await flash()).toBe("Saved “Long brief, renamed”.");
    expect(await read(brief.id)).toMatchObject({ title: "Long brief, renamed", notes: long });
    await openEdit();
    await Promise.all([page.waitForNavigation(), page.getByRole("link", { name: "edit the whole notes on their own page" }).click()]);
    await page.locator("details.edit summary").click();
    await checkWidths("the notes page with its form open");
    await page.getByLabel("Notes", { exact: true }).fill(`${long}\nOne more line.`);
    await send("Save notes");
    expect(await flash()).toBe("Saved “Long brief, renamed”: notes saved.");
    expect((await read(brief.id)).notes).toBe(`${long}\nOne more line.`);
  }, 120_000);
});
