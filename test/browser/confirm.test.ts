/**
 * Projects and the confirmation step of what cannot wait, in a real Chromium
 * against `wrangler dev`: the person archives a project, unarchives it and
 * deletes it; deleting a task (with subtasks) or a project, revoking a token,
 * purging a trash item and emptying the trash each show what will happen
 * first, and leaving that step (Cancel, or just going elsewhere) changes
 * nothing, read back through the person's own MCP client. A form sent without
 * `confirmed` is shown the step again instead of acting. (Revoking an app and
 * removing a push device share the step; test/console-confirm.test.ts and
 * test/push.test.ts prove them through the routes.)
 */
import { describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { screenshot } from "../../scripts/lib/browser.ts";
import { connect } from "../../scripts/lib/e2e-harness.ts";
import { seriousViolations } from "./axe.ts";
import { adminCli, taskgate } from "./context.ts";
import { browserStage, flash, WIDTHS } from "./stage.ts";
import { horizontalOverflow } from "./layout.ts";

/** A title an agent (or anyone) may write: one very long word and a right-to-left override. */
const HOSTILE = `Launch \u202eevil\u202c ${"W".repeat(180)} plan`;

const stage = browserStage();

const heading = (page: Page) => page.locator("h1").innerText();
const facts = (page: Page) => page.locator("section.confirm ul.facts > li").allInnerTexts();

async function mcpStatus(secret: string): Promise<number> {
  const res = await fetch(`${taskgate().base}/mcp`, {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "whoami", arguments: {} } }),
  });
  await res.body?.cancel();
  return res.status;
}

/** Checks the page at both widths: no serious or critical axe violation, nothing wider than the screen. */
async function fits(page: Page, what: string) {
  for (const width of ["desktop", "phone"] as const) {
    await page.setViewportSize(WIDTHS[width]);
    expect(await seriousViolations(page), `${what}: axe at ${width}`).toEqual([]);
    expect(await horizontalOverflow(page), `${what}: wider than the screen at ${width}`).toEqual([]);
  }
  await page.setViewportSize(WIDTHS.desktop);
}

describe("projects, and confirming what cannot wait, in Chromium", () => {
  it("archive, unarchive, delete; every step says what will happen, and leaving it changes nothing", async () => {
    const base = taskgate().base;
    const account = await adminCli(["create-account", "--name", "Confirm in the browser"]);
    const email = `confirm.${Date.now().toString(36)}@example.com`;
    const invite = await adminCli(["invite", "--account", account.id, "--email", email, "--url", base]);
    // JavaScript on only so axe can run and the test can measure and hand-edit a form: the pages carry none.
    const page = await stage.signIn(invite.setup_url);
    await page.setViewportSize(WIDTHS.desktop);

    // The person's own token (for an MCP client that makes what the test needs and reads back what the pages did), and an agent's.
    const tokenFrom = async (kind: "You" | "An agent", fields: { agent?: string; scope: "Read and write" | "Read only"; label: string }) => {
      await page.goto(`${base}/apps`);
      const form = page.getByRole("form", { name: "Create a token" });
      await form.getByLabel("Acts as").selectOption({ label: kind });
      if (fields.agent) await form.getByLabel("Agent name").fill(fields.agent);
      await form.getByLabel("May").selectOption({ label: fields.scope });
      await form.getByLabel("Label").fill(fields.label);
      await form.getByRole("button", { name: "Create token" }).click();
      return (await page.locator("pre.secret").first().innerText()).trim();
    };
    const humanSecret = await tokenFrom("You", { scope: "Read and write", label: "my client" });
    const readerSecret = await tokenFrom("An agent", { agent: "reader", scope: "Read only", label: "reader on laptop" });
    const human = await connect(`${base}/mcp`, humanSecret, "modern");
    stage.keep(human);

    const { project } = await human.ok("create_project", { name: "Website" });
    const ids: string[] = [];
    for (const title of ["Hero", "Footer", "Pricing"]) ids.push((await human.ok("create_task", { title, project_id: project.id })).task.id);
    await human.ok("complete_task", { task_id: ids[2] });
    const { task: launch } = await human.ok("create_task", { title: HOSTILE });
    await human.ok("decompose_task", { task_id: launch.id, subtasks: [{ title: "Draft" }, { title: "Review" }] });

    // Archive: the project leaves the tabs, is listed under Archived, and opens with Unarchive.
    const projectPage = `${base}/tasks?project=${project.id}`;
    await page.goto(projectPage);
    await page.getByRole("button", { name: "Archive Website" }).click();
    expect(await flash(page)).toBe(
      "Archived “Website”: its 2 unfinished tasks stay as they are (agents still see and work on them), but no agent may add a task to it, move one in or out, rename it or unarchive it. It leaves the project tabs; Archived, under them, lists it.",
    );
    expect((await human.ok("get_project", { project_id: project.id })).project.archived_at).not.toBeNull();
    await page.goto(`${base}/tasks`);
    expect(await page.getByRole("list", { name: "Projects" }).innerText()).not.toContain("Website");
    await page.getByText("Archived projects (1)").click();
    await page.getByRole("list", { name: "Archived projects" }).getByRole("link", { name: /Website/ }).click();
    expect(await page.locator("main p.notice").innerText()).toMatch(/^Website is archived/);
    await fits(page, "an archived project");
    await page.getByRole("button", { name: "Unarchive Website" }).click();
    expect(await flash(page)).toBe("Unarchived “Website”: it is back among the project tabs.");
    expect((await human.ok("get_project", { project_id: project.id })).project.archived_at).toBeNull();

    // Delete the project: the step says how many tasks go to the trash; Cancel changes nothing.
    await page.getByRole("button", { name: "Delete project Website" }).click();
    expect(await heading(page)).toBe("Delete the project “Website”?");
    expect(await facts(page)).toEqual([
      "The project “Website” and its 3 tasks (2 of them unfinished) go to the trash together, as one item.",
      "Agents no longer see its tasks, and runs on them that are still going end.",
      "The trash keeps them for 30 days (Settings); until then, Restore on the Trash page brings them back exactly as before. After that they are purged for good.",
    ]);
    await page.getByRole("link", { name: "Cancel" }).click();
    expect(page.url()).toBe(projectPage);
    expect((await human.ok("get_project", { project_id: project.id })).project.task_counts.total).toBe(3);
    // A form sent without `confirmed` (as a stale or hand-made one would be) is shown the step again and does nothing.
    await page.getByRole("button", { name: "Delete project Website" }).click();
    await page.locator('section.confirm input[name="confirmed"]').evaluate((e) => e.remove());
    await page.getByRole("button", { name: "Delete the project and its 3 tasks" }).click();
    expect(await heading(page)).toBe("Delete the project “Website”?");
    expect((await human.ok("get_project", { project_id: project.id })).project.task_counts.total).toBe(3);
    await page.reload();
    await page.getByRole("button", { name: "Delete the project and its 3 tasks" }).click();
    expect(new URL(page.url()).pathname).toBe("/tasks");
    expect(await flash(page)).toMatch(/^Moved the project and its 3 tasks to the trash; Trash restores them until \d{4}-\d\d-\d\d \d\d:\d\d UTC\.$/);
    expect(await human.fails("get_project", { project_id: project.id })).toMatch(new RegExp(`${project.id}`));
    expect((await human.ok("list_trash")).items.map((i: { kind: string; target_id: string; item_count: number }) => [i.kind, i.target_id, i.item_count])).toEqual([
      ["project", project.id, 4],
    ]);

    // Delete a task with subtasks: the step names them; leaving it (Cancel, or just going elsewhere) changes nothing.
    await page.goto(`${base}/tasks/${launch.id}`);
    await page.getByRole("button", { name: "Delete", exact: true }).click();
    expect(new URL(page.url()).pathname).toBe("/confirm/delete");
    expect(await facts(page)).toEqual([
      `The task “${HOSTILE}” and its 2 subtasks go to the trash together, as one item.`,
      "Agents no longer see them, and a run on them that is still going ends.",
      "The trash keeps them for 30 days (Settings); until then, Restore on the Trash page brings them back exactly as before. After that they are purged for good.",
    ]);
    await fits(page, "the confirmation step of a hostile title");
    await page.setViewportSize(WIDTHS.phone);
    await screenshot(page, "confirm-delete-task-phone");
    await page.setViewportSize(WIDTHS.desktop);
    await page.getByRole("link", { name: "Cancel" }).click();
    expect(new URL(page.url()).pathname).toBe(`/tasks/${launch.id}`);
    await page.getByRole("button", { name: "Delete", exact: true }).click();
    await page.goto(`${base}/trash`);
    expect((await human.ok("get_task", { task_id: launch.id })).task.title).toBe(HOSTILE);
    await page.goto(`${base}/tasks/${launch.id}`);
    await page.getByRole("button", { name: "Delete", exact: true }).click();
    await page.getByRole("button", { name: "Delete the task and its 2 subtasks" }).click();
    expect(await flash(page)).toMatch(/^Moved the task and 2 subtask\(s\) to the trash/);
    expect((await human.ok("list_trash")).items.map((i: { target_id: string; item_count: number }) => [i.target_id, i.item_count])).toEqual([
      [launch.id, 3],
      [project.id, 4],
    ]);

    // Revoke a token: what it is, and that its next request is refused; Cancel leaves it working.
    await page.goto(`${base}/apps`);
    await page.getByRole("button", { name: "Revoke reader on laptop" }).click();
    expect(await heading(page)).toBe("Revoke “reader on laptop”?");
    const tokenFacts = await facts(page);
    expect(tokenFacts[0]).toMatch(/^A tg_ token \(tg_\S+\); it acts as the agent “reader” and may only read\.$/);
    expect(tokenFacts.slice(1)).toEqual([
      "Its next request is refused, at once: whatever it is doing stops there.",
      "This cannot be undone, and the trash does not keep tokens: to let it in again, create a new token here.",
    ]);
    await fits(page, "the confirmation step of a revoke");
    await page.getByRole("link", { name: "Cancel" }).click();
    expect(new URL(page.url()).pathname).toBe("/apps");
    expect(await mcpStatus(readerSecret)).toBe(200);
    await page.getByRole("button", { name: "Revoke reader on laptop" }).click();
    await page.getByRole("button", { name: "Revoke the token" }).click();
    expect(await flash(page)).toBe("Revoked “reader on laptop”: its next request is refused.");
    expect(await mcpStatus(readerSecret)).toBe(401);

    // Purge one item: it goes for good; Cancel keeps it.
    await page.goto(`${base}/trash`);
    await page.getByRole("button", { name: /^Delete forever Website/ }).click();
    expect(await heading(page)).toBe("Delete “Website” forever?");
    expect(await facts(page)).toEqual([
      "The project “Website” and its 3 tasks are purged for good.",
      "Steps and comments deleted from its tasks on their own go with it.",
      "This cannot be undone: Restore can no longer bring it back.",
    ]);
    await page.getByRole("link", { name: "Cancel" }).click();
    expect((await human.ok("list_trash")).items).toHaveLength(2);
    await page.getByRole("button", { name: /^Delete forever Website/ }).click();
    await page.getByRole("button", { name: "Delete forever" }).click();
    expect(await flash(page)).toBe("Purged “Website” for good.");
    expect((await human.ok("list_trash")).items.map((i: { target_id: string }) => i.target_id)).toEqual([launch.id]);

    // Empty the trash: how many go; going elsewhere keeps them; confirmed, the trash is empty.
    await page.getByRole("button", { name: "Empty the trash" }).click();
    expect(await heading(page)).toBe("Empty the trash?");
    expect(await facts(page)).toEqual([
      "The 1 item in the trash (3 rows deleted in all: tasks, projects, steps, comments) is purged for good.",
      "This cannot be undone: Restore can no longer bring any of them back.",
    ]);
    await page.goto(`${base}/tasks`);
    expect((await human.ok("list_trash")).items).toHaveLength(1);
    await page.goto(`${base}/trash`);
    await page.getByRole("button", { name: "Empty the trash" }).click();
    await page.getByRole("button", { name: "Empty the trash: purge 1 item" }).click();
    expect(await flash(page)).toBe("Purged 1 item(s) for good.");
    expect((await human.ok("list_trash")).items).toEqual([]);
  }, 90_000);
});
