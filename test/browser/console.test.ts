/**
 * The person's web console in a real Chromium (JavaScript off), against the
 * running `wrangler dev`; each scenario starts from a fresh account made with
 * the admin CLI, the person signs in through the setup link, and the agent is
 * a real MCP client with its own tg_ token. Screenshots of every page go to
 * the git-ignored screenshots/ folder.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { launchBrowser, newPersonContext, screenshot } from "../../scripts/lib/browser.ts";
import { connect, type McpSession } from "../../scripts/lib/e2e-harness.ts";
import { setPassword } from "../../scripts/lib/oauth-pages.ts";
import { adminCli, taskgate } from "./context.ts";
import { expectNoLeak, expectSafeHeaders } from "./expect-page.ts";

const PASSWORD = "correct horse battery";
let browser: Browser;
const open: { context: BrowserContext; sessions: McpSession[] }[] = [];
let seq = 0;

interface Fresh {
  accountId: string;
  page: Page;
  agent: McpSession;
  agentToken: string;
  mcp(secret: string): Promise<McpSession>;
}

/** A new account with an agent token and a person who set a password through the invitation and is signed in. */
async function fresh(name: string): Promise<Fresh> {
  const base = taskgate().base;
  const account = await adminCli(["create-account", "--name", name]);
  const token = await adminCli(["create-token", "--account", account.id, "--kind", "agent", "--scope", "write", "--agent", "bot", "--label", "bot in CI"]);
  const email = `person.${Date.now().toString(36)}.${++seq}@example.com`;
  const invite = await adminCli(["invite", "--account", account.id, "--email", email, "--url", base]);
  const context = await newPersonContext(browser);
  const sessions: McpSession[] = [];
  open.push({ context, sessions });
  const page = await context.newPage();
  await setPassword(page, invite.setup_url, PASSWORD);
  await expect.poll(() => new URL(page.url()).pathname, { timeout: 20_000 }).toBe("/");
  const mcp = async (secret: string) => {
    const s = await connect(`${base}/mcp`, secret, "modern");
    sessions.push(s);
    return s;
  };
  return { accountId: account.id, page, agent: await mcp(token.token), agentToken: token.token, mcp };
}

/** The agent does a task the way agents do: claim, a run with a log, complete (it then awaits the person's approval). */
async function agentWorks(agent: McpSession, title: string, log: string[]): Promise<string> {
  const { task } = await agent.ok("create_task", { title, notes: "Draft the release notes from the merged pull requests." });
  await agent.ok("claim_task", { task_id: task.id });
  const { run } = await agent.ok("start_run", { task_id: task.id });
  for (const message of log) await agent.ok("log_run_event", { run_id: run.id, kind: "progress", message });
  await agent.ok("finish_run", { run_id: run.id, outcome: "succeeded", summary: "Notes drafted" });
  const done = await agent.ok("complete_task", { task_id: task.id, note: `Is “${title}” good to publish?` });
  expect(done.outcome).toBe("awaiting_approval");
  return task.id;
}

async function flash(page: Page): Promise<string> {
  return (await page.locator("main > .flash").innerText()).trim();
}

/** A status 401 for an MCP call with this token (raw HTTP, as any client would see it). */
async function mcpStatus(secret: string): Promise<number> {
  const res = await fetch(`${taskgate().base}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${secret}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-06-18",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "whoami", arguments: {} } }),
  });
  await res.body?.cancel();
  return res.status;
}

beforeAll(async () => {
  browser = await launchBrowser();
});

afterAll(async () => {
  for (const o of open) {
    await Promise.allSettled(o.sessions.map((s) => s.close()));
    await o.context.close().catch(() => {});
  }
  await browser?.close();
});

describe("the web console in Chromium", () => {
  it("an agent completes a task; the person sees it in the inbox with the run log and approves; the agent's get_task shows done", async () => {
    const f = await fresh("Approve in the browser");
    const taskId = await agentWorks(f.agent, "Publish the release notes", ["Collected 14 merged pull requests", "Wrote the summary", "Checked the links"]);
    const page = f.page;
    await page.goto(`${taskgate().base}/`);
    await expect.poll(() => page.title(), { timeout: 20_000 }).toBe("(1) Inbox · Taskgate");
    const card = page.locator("article", { hasText: "Publish the release notes" });
    expect(await card.locator(".q").innerText()).toContain("good to publish?");
    const log = await card.getByRole("list", { name: "Run log" }).innerText();
    expect(log).toContain("Collected 14 merged pull requests");
    expect(log).toContain("Checked the links");
    expect(await page.getByRole("navigation", { name: "Console" }).innerText()).toContain("1");
    await screenshot(page, "console-inbox");
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, "console-inbox-phone");
    await page.setViewportSize({ width: 1024, height: 800 });

    await card.getByRole("button", { name: /^Approve / }).click();
    expect(await flash(page)).toBe("Approved “Publish the release notes”: it is done.");
    expect(await page.title()).toBe("Inbox · Taskgate");
    const seen = await f.agent.ok("get_task", { task_id: taskId });
    expect(seen.task.status).toBe("done");
    expect(seen.pending_approval).toBeNull();
    const history = await f.agent.ok("get_task_history", { task_id: taskId });
    expect(history.items[0]).toMatchObject({ tool: "approve_task", actor: "human" });
    expect(history.items[0].token_id).toMatch(/^web_per_/);
  });

  it("rejecting with a reason sends the task back; the agent reads the reason as a comment", async () => {
    const f = await fresh("Reject in the browser");
    const taskId = await agentWorks(f.agent, "Email the customers", ["Wrote the email"]);
    const page = f.page;
    await page.goto(`${taskgate().base}/`);
    const card = page.locator("article", { hasText: "Email the customers" });
    await card.getByLabel("Reason for rejecting").fill("Mention the new pricing first.");
    await card.getByRole("button", { name: /^Reject / }).click();
    expect(await flash(page)).toMatch(/^Rejected “Email the customers”: it is back in progress/);
    const seen = await f.agent.ok("get_task", { task_id: taskId });
    expect(seen.task.status).toBe("in_progress");
    expect(seen.latest_comments[0]).toMatchObject({ author: "human", body: "Rejected: Mention the new pricing first." });
    const comments = await f.agent.ok("list_comments", { task_id: taskId, newest_first: true });
    expect(comments.items[0].body).toBe("Rejected: Mention the new pricing first.");
  });

  it("a task deleted in the browser comes back from the trash page exactly as it was (export_project)", async () => {
    const f = await fresh("Trash in the browser");
    const { project } = await f.agent.ok("create_project", { name: "Website relaunch" });
    const { task } = await f.agent.ok("create_task", { project_id: project.id, title: "Rewrite the pricing page", notes: "Shorter, with a table.", priority: "high" });
    await f.agent.ok("decompose_task", { task_id: task.id, subtasks: [{ title: "Draft copy" }, { title: "Build the table" }] });
    await f.agent.ok("add_steps", { task_id: task.id, steps: ["Collect prices", "Write copy", "Review"] });
    await f.agent.ok("comment_on_task", { task_id: task.id, body: "The old page converts poorly on phones." });
    await f.agent.ok("label_task", { task_id: task.id, labels: ["web", "q3"] });
    const { task: other } = await f.agent.ok("create_task", { project_id: project.id, title: "Pick new photos" });
    await f.agent.ok("add_dependency", { task_id: other.id, depends_on_id: task.id });
    const before = await f.agent.ok("export_project", { project_id: project.id });

    const page = f.page;
    await page.goto(`${taskgate().base}/tasks?project=${project.id}`);
    await screenshot(page, "console-tasks");
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, "console-tasks-phone");
    await page.setViewportSize({ width: 1024, height: 800 });
    await page.getByRole("link", { name: "Rewrite the pricing page" }).click();
    await expect.poll(() => page.locator("h1").innerText(), { timeout: 20_000 }).toBe("Rewrite the pricing page");
    await screenshot(page, "console-task");
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, "console-task-phone");
    await page.setViewportSize({ width: 1024, height: 800 });
    await page.getByRole("button", { name: "Delete" }).click();
    // The confirmation step first: what goes to the trash; nothing happens until it is confirmed.
    await expect.poll(() => page.locator("h1").innerText(), { timeout: 20_000 }).toBe("Delete “Rewrite the pricing page”?");
    await page.getByRole("button", { name: "Delete the task and its 2 subtasks" }).click();
    expect(await flash(page)).toMatch(/^Moved the task and 2 subtask\(s\) to the trash/);
    expect((await f.agent.ok("export_project", { project_id: project.id })).tasks.map((t: { title: string }) => t.title)).toEqual(["Pick new photos"]);

    // What waits on it still waits: its page shows the task in the trash, still unfinished, linked to its trash item.
    await page.goto(`${taskgate().base}/tasks/${other.id}`);
    const deps = page.locator("section[aria-labelledby=h-deps]");
    await expect.poll(() => deps.innerText(), { timeout: 20_000 }).toMatch(/Waits on\s+Rewrite the pricing page\s+open\s+in the trash \(trs_[0-9a-z]{16}\), still unfinished/);
    await screenshot(page, "console-task-waits-on-trash");
    await deps.getByRole("link", { name: /^trs_/ }).click();
    await expect.poll(() => new URL(page.url()).pathname).toBe("/trash");
    await expect.poll(() => page.locator(`tr[id="${new URL(page.url()).hash.slice(1)}"]`).innerText()).toMatch(/Rewrite the pricing page/);

    await screenshot(page, "console-trash");
    await page.getByRole("button", { name: "Restore Rewrite the pricing page" }).click();
    expect(await flash(page)).toMatch(/^Restored the task/);
    const after = await f.agent.ok("export_project", { project_id: project.id });
    expect(after).toEqual(before);
  });

  it("revoking a token on the page: that token's next MCP call gets 401; a token made on the page works", async () => {
    const f = await fresh("Tokens in the browser");
    const extra = await adminCli(["create-token", "--account", f.accountId, "--kind", "agent", "--scope", "read", "--agent", "reader", "--label", "reader on laptop"]);
    expect(await mcpStatus(extra.token)).toBe(200);
    const page = f.page;
    await page.goto(`${taskgate().base}/apps`);
    await page.getByLabel("Acts as").selectOption("agent");
    await page.getByLabel("Agent name").fill("scribe");
    await page.getByLabel("May").selectOption("write");
    await page.getByLabel("Label").fill("scribe in CI");
    await page.getByRole("button", { name: "Create token" }).click();
    const secret = (await page.getByLabel("Token", { exact: true }).innerText()).trim();
    expect(secret).toMatch(/^tg_[A-Za-z0-9_-]{43}$/);
    expect(await page.locator("pre.secret").nth(2).textContent()).toContain(`"Authorization": "Bearer ${secret}"`);
    await screenshot(page, "console-apps-new-token");
    const scribe = await f.mcp(secret);
    expect((await scribe.ok("whoami")).token).toMatchObject({ kind: "agent", agent: "scribe", scope: "write" });

    // The page after the form is a GET: a reload shows it without the secret and creates nothing.
    expect(new URL(page.url()).pathname).toBe("/apps");
    await page.reload();
    expect(await page.content()).not.toContain(secret);
    expect(await page.getByRole("button", { name: "Revoke scribe in CI" }).count()).toBe(1);
    await screenshot(page, "console-apps");
    await page.getByRole("button", { name: "Revoke reader on laptop" }).click();
    await expect.poll(() => page.locator("h1").innerText(), { timeout: 20_000 }).toBe("Revoke “reader on laptop”?");
    await page.getByRole("button", { name: "Revoke the token" }).click();
    expect(await flash(page)).toBe("Revoked “reader on laptop”: its next request is refused.");
    expect(await mcpStatus(extra.token)).toBe(401);
    expect(await mcpStatus(f.agentToken)).toBe(200);
  });

  it("pausing an agent on the page: its next write is refused; resuming lets it write again", async () => {
    const f = await fresh("Pause in the browser");
    await agentWorks(f.agent, "Tidy the backlog", ["Closed 3 duplicates"]);
    const { task } = await f.agent.ok("create_task", { title: "Long-running import" });
    await f.agent.ok("claim_task", { task_id: task.id });
    await f.agent.ok("start_run", { task_id: task.id });
    const page = f.page;
    await page.goto(`${taskgate().base}/agents`);
    await screenshot(page, "console-agents");
    await page.getByRole("button", { name: "Pause bot" }).click();
    expect(await flash(page)).toBe("Paused bot: its tokens may only read until you resume it.");
    const refused = await f.agent.fails("create_task", { title: "Sneak one in" });
    expect(refused).toMatch(/agent bot is paused by a person/);
    expect((await f.agent.ok("list_tasks", {})).items.map((t: { title: string }) => t.title)).not.toContain("Sneak one in");
    await page.getByRole("button", { name: "Resume bot" }).click();
    expect(await flash(page)).toMatch(/^Resumed bot/);
    await f.agent.ok("create_task", { title: "Allowed again" });
  });

  it("the tasks filters, activity and settings pages work with the keyboard and are captured", async () => {
    const f = await fresh("Every page in the browser");
    await agentWorks(f.agent, "Prepare the board meeting", ["Booked the room", "Sent the agenda"]);
    await f.agent.ok("create_task", { title: "Renew the domain", due_at: new Date(Date.now() + 2 * 86_400_000).toISOString(), priority: "urgent" });
    const page = f.page;
    await page.goto(`${taskgate().base}/tasks`);
    await page.getByLabel("Status").selectOption("awaiting_approval");
    await Promise.all([page.waitForURL(/status=awaiting_approval/), page.getByRole("button", { name: "Show" }).press("Enter")]);
    expect(await page.locator("tbody tr").count()).toBe(1);
    expect(await page.locator("tbody").innerText()).toContain("Prepare the board meeting");
    await page.getByLabel("Search").fill("domain");
    await page.getByLabel("Status").selectOption("");
    await page.getByRole("button", { name: "Show" }).click();
    expect(await page.locator("tbody").innerText()).toContain("Renew the domain");

    await page.goto(`${taskgate().base}/activity`);
    await screenshot(page, "console-activity");
    await page.getByLabel("Tool").selectOption("complete_task");
    await page.getByRole("button", { name: "Show" }).click();
    expect(await page.locator("tbody tr").count()).toBe(1);

    await page.goto(`${taskgate().base}/settings`);
    await page.getByLabel("Time zone").fill("Europe/Berlin");
    await page.getByLabel("Trash retention (days)").fill("14");
    await page.keyboard.press("Enter");
    expect(await flash(page)).toBe("Settings saved.");
    await screenshot(page, "console-settings");
    await page.goto(`${taskgate().base}/activity?tool=update_account_settings`);
    expect(await page.locator("tbody").innerText()).toContain("web");

    for (const path of ["/", "/tasks", "/agents", "/apps", "/trash", "/activity", "/settings"]) {
      const response = await page.goto(`${taskgate().base}${path}`);
      expect(response?.status(), path).toBe(200);
      expectSafeHeaders(response, path);
      await expectNoLeak(page, [f.agentToken, PASSWORD]);
      expect(await page.getByRole("navigation", { name: "Console" }).locator('[aria-current="page"]').count(), path).toBe(1);
    }
  });
});
