/**
 * Every console and OAuth page in Chromium at a desktop width (1280) and a
 * phone width (390), with the data a person sees in daily use: a sign-off and
 * a question waiting in the inbox, a task with its history and its editing
 * views, three agents (one with a pending action), a webhook, a token list,
 * the trash, the policy pages and the confirmation steps. Each page is saved as
 * screenshots/screens/<page>-<width>.png and measured for what a person
 * notices: nothing wider than the screen, the reject box's placeholder shown
 * whole, the Pause buttons in one line, the Settings labels in line, tool
 * names never broken inside a word, and the same header on the OAuth pages as
 * in the console. Each is checked with axe-core (0 serious or critical
 * violations at either width, listed in screens/axe.json) and walked by
 * keyboard alone (Tab reaches every control, each with a visible focus).
 * With SAVE_DOC_IMAGES=1 it also writes the README's
 * images docs/images/inbox.png, consent.png and task.png:
 *   SAVE_DOC_IMAGES=1 npx vitest run --config vitest.browser.config.ts test/browser/screens.test.ts
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { launchBrowser, newPersonContext, SCREENSHOT_DIR } from "../../scripts/lib/browser.ts";
import { ROOT } from "../../scripts/lib/d1.ts";
import { connect, type McpSession } from "../../scripts/lib/e2e-harness.ts";
import { setPassword } from "../../scripts/lib/oauth-pages.ts";
import { seriousViolations } from "./axe.ts";
import { adminCli, taskgate } from "./context.ts";
import { authorizationUrl, discover, register } from "./oauth-client.ts";
import { brokenNames, headerLook, horizontalOverflow, keyboardWalk, lineCount, placeholderFits, type HeaderLook } from "./layout.ts";

const PASSWORD = "correct horse battery";
const WIDTHS = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;
type Width = keyof typeof WIDTHS;
const DIR = join(SCREENSHOT_DIR, "screens");

let browser: Browser;
const contexts: BrowserContext[] = [];
/** axe's serious and critical findings on each page at each width ("inbox-phone"), written to screens/axe.json beside the screenshots. */
const axeFound: Record<string, string[]> = {};
/** How many controls Tab reached on each page (desktop). */
const keyboard: Record<string, number> = {};
const sessions: McpSession[] = [];

beforeAll(async () => {
  browser = await launchBrowser();
  mkdirSync(DIR, { recursive: true });
});

afterAll(async () => {
  await Promise.allSettled(sessions.map((s) => s.close()));
  for (const c of contexts) await c.close().catch(() => {});
  await browser?.close();
});

async function context(): Promise<Page> {
  // JavaScript on only so the test can measure: the pages carry none (their CSP allows no script).
  const c = await newPersonContext(browser, { javaScript: true });
  contexts.push(c);
  return c.newPage();
}

/** Opens `url` at `width`, checks it fits the screen, and saves the screenshot. */
async function shoot(page: Page, name: string, width: Width, url?: string): Promise<void> {
  await page.setViewportSize(WIDTHS[width]);
  if (url) {
    const res = await page.goto(url);
    expect(res?.status(), `${name} status`).toBe(200);
  }
  expect(await horizontalOverflow(page), `${name} at ${width}: elements wider than the screen`).toEqual([]);
  expect(await brokenNames(page), `${name} at ${width}: names broken inside a word`).toEqual([]);
  axeFound[`${name}-${width}`] = await seriousViolations(page);
  if (width === "desktop") {
    // By keyboard alone: Tab reaches every control, each with a visible focus.
    const walk = await keyboardWalk(page);
    expect(walk.unreached, `${name}: controls Tab never reaches`).toEqual([]);
    expect(walk.unseen, `${name}: controls focused without a visible focus`).toEqual([]);
    keyboard[name] = walk.reached;
  }
  await page.screenshot({ path: join(DIR, `${name}-${width}.png`), fullPage: true });
}

/** The data of a day's use, made by two agents through MCP; returns the ids the pages need. */
async function seed(base: string, accountId: string) {
  const bot = await adminCli(["create-token", "--account", accountId, "--kind", "agent", "--scope", "write", "--agent", "release-bot", "--label", "release-bot in CI"]);
  await adminCli(["create-token", "--account", accountId, "--kind", "agent", "--scope", "write", "--agent", "scout", "--label", "scout on laptop"]);
  const agent = await connect(`${base}/mcp`, bot.token, "modern");
  sessions.push(agent);
  const { project } = await agent.ok("create_project", { name: "Website" });
  const { task } = await agent.ok("create_task", { project_id: project.id, title: "Publish the release notes", notes: "Draft the release notes from the merged pull requests." });
  await agent.ok("add_steps", { task_id: task.id, steps: ["Collect merged pull requests", "Write the summary", "Check the links"] });
  await agent.ok("claim_task", { task_id: task.id });
  const { run } = await agent.ok("start_run", { task_id: task.id });
  for (const message of ["Collected 14 merged pull requests", "Wrote the summary", "Checked the links"]) {
    await agent.ok("log_run_event", { run_id: run.id, kind: "progress", message });
  }
  await agent.ok("finish_run", { run_id: run.id, outcome: "succeeded", summary: "Notes drafted" });
  await agent.ok("label_task", { task_id: task.id, labels: ["release", "docs"] });
  await agent.ok("comment_on_task", { task_id: task.id, body: "The changelog link points at the draft branch until the tag exists." });
  await agent.ok("complete_task", { task_id: task.id, note: "Are the release notes good to publish?" });
  const { task: asked_ } = await agent.ok("create_task", { project_id: project.id, title: "Renew the example.com domain", priority: "urgent" });
  const { approval } = await agent.ok("request_approval", { task_id: asked_.id, question: "Renew for 1 year at $12 or 3 years at $33? I would take 3 years." });
  await agent.ok("create_task", { project_id: project.id, title: "Pick photos for the pricing page", due_at: new Date(Date.now() + 2 * 86_400_000).toISOString() });
  const { task: gone } = await agent.ok("create_task", { title: "Old draft of the launch post" });
  await agent.ok("delete_task", { task_id: gone.id });
  // An agent whose policy asks before destructive tools: its delete waits as a pending action with a page of its own.
  const careful = await adminCli(["create-token", "--account", accountId, "--kind", "agent", "--scope", "write", "--agent", "tidy-bot", "--label", "tidy-bot", "--policy", "careful"]);
  const tidy = await connect(`${base}/mcp`, careful.token, "modern");
  sessions.push(tidy);
  const asked = await tidy.call("delete_task", { task_id: asked_.id });
  const pendingId = (asked.meta["dev.taskgate/pending_action"] as { approval_id: string }).approval_id;
  return { taskId: task.id as string, projectId: project.id as string, approvalId: approval.id as string, pendingId, tokenId: bot.id as string };
}

describe("every page at desktop and phone width", () => {
  it("is captured, fits the screen and keeps its layout", async () => {
    const base = taskgate().base;
    const account = await adminCli(["create-account", "--name", "Acme Studio"]);
    const { taskId, projectId, pendingId, tokenId } = await seed(base, account.id);
    const email = `screens.${Date.now().toString(36)}@example.com`;
    const invite = await adminCli(["invite", "--account", account.id, "--email", email, "--url", base]);

    const outside = await context();
    for (const width of ["desktop", "phone"] as const) {
      await shoot(outside, "setup", width, invite.setup_url);
      await shoot(outside, "signin", width, `${base}/signin`);
    }
    const page = await context();
    await setPassword(page, invite.setup_url, PASSWORD);
    await expect.poll(() => new URL(page.url()).pathname, { timeout: 20_000 }).toBe("/");
    await page.goto(`${base}/webhooks`);
    await page.getByLabel("Endpoint URL").fill("https://hooks.example.com/taskgate");
    await page.getByRole("button", { name: "Add webhook" }).click();
    await page.getByLabel("Signing secret").waitFor();

    const headers: Record<string, HeaderLook> = {};
    const pages: [string, string][] = [
      ["inbox", "/"], ["tasks", "/tasks"], ["task", `/tasks/${taskId}`], ["agents", "/agents"], ["apps", "/apps"],
      ["webhooks", "/webhooks"], ["trash", "/trash"], ["activity", "/activity"], ["settings", "/settings"],
      ["project", `/tasks?project=${projectId}`], ["decide", `/approvals/${pendingId}`], ["task-notes", `/tasks/${taskId}/text/notes`],
      ["agent-policy", "/agents/release-bot/policy"], ["token-policy", `/apps/tokens/${tokenId}/policy`],
      ["task-move", `/tasks/${taskId}/move`], ["task-labels", `/tasks/${taskId}?edit=labels`], ["task-deps", `/tasks/${taskId}?edit=deps&dep=domain`],
      ["confirm-delete", `/confirm/delete?task_id=${taskId}&back=${encodeURIComponent(`/tasks/${taskId}`)}`],
      ["confirm-revoke", `/confirm/revoke?token_id=${tokenId}&back=%2Fapps`],
    ];
    for (const width of ["desktop", "phone"] as const) {
      for (const [name, path] of pages) {
        await shoot(page, name, width, `${base}${path}`);
        if (name === "inbox") headers[`console-${width}`] = await headerLook(page);
        if (name === "inbox") {
          // The reject box shows its whole placeholder, at every width.
          for (const box of await page.locator("form.reject textarea").all()) expect(await placeholderFits(box), `reject placeholder at ${width}`).toBe(true);
        }
        if (name === "task") {
          // A tool name in the history is never broken inside its word.
          const tools = await page.locator("#h-history + ol code").all();
          expect(tools.length).toBeGreaterThan(3);
          for (const code of tools) expect(await lineCount(code), `${await code.innerText()} at ${width}`).toBe(1);
        }
        if (name === "agents") {
          const buttons = await page.getByRole("button", { name: /^(Pause|Resume) / }).all();
          expect(buttons.length).toBe(3);
          const boxes = await Promise.all(buttons.map((b) => b.boundingBox()));
          // Side by side on a desktop, the two cards' buttons sit on one line.
          if (width === "desktop") expect(boxes[0]?.y).toBe(boxes[1]?.y);
        }
        if (name === "apps") {
          // The token form's field labels start on one line (desktop) or at one left edge (phone); its preset choice follows them.
          const labels = await Promise.all((await page.getByRole("form", { name: "Create a token" }).locator(".row label").all()).map((l) => l.boundingBox()));
          expect(labels.length).toBe(4);
          const edge = width === "desktop" ? "y" : "x";
          expect(new Set(labels.map((b) => b?.[edge])).size, `token form labels at ${width}`).toBe(1);
        }
        if (name === "settings") {
          const labels = await Promise.all(["Time zone", "Trash retention (days)"].map((l) => page.locator(`label:text-is("${l}")`).boundingBox()));
          if (width === "desktop") expect(labels[0]?.y, "the labels of one row at one height").toBe(labels[1]?.y);
          else expect(labels[0]?.x, "the labels of stacked fields at one left edge").toBe(labels[1]?.x);
          const input = await page.getByLabel("Time zone").boundingBox();
          expect(input?.x, "a label starts where its field starts").toBe(labels[0]?.x);
        }
      }
    }

    // The consent page (an app connecting by URL), signed in.
    const found = await discover(base);
    const clientId = await register(found.as, "Claude", "http://127.0.0.1:9/callback");
    const auth = authorizationUrl(found.as, { clientId, redirectUri: "http://127.0.0.1:9/callback", resource: found.resource, scope: found.scopes.join(" ") });
    for (const width of ["desktop", "phone"] as const) {
      await shoot(page, "consent", width, auth.url);
      headers[`consent-${width}`] = await headerLook(page);
      const text = await page.locator("main").innerText();
      expect(text).not.toMatch(/\b[a-z]+_[a-z_]+\b/);
    }
    for (const width of ["desktop", "phone"] as const) {
      await outside.setViewportSize(WIDTHS[width]);
      await outside.goto(`${base}/signin`);
      headers[`signin-${width}`] = await headerLook(outside);
    }
    // One header everywhere: the same bar, brand and sign-out control on the OAuth pages as in the console.
    for (const width of ["desktop", "phone"] as const) {
      expect(headers[`consent-${width}`], `consent header at ${width}`).toEqual(headers[`console-${width}`]);
      const { signOut: _, ...bar } = headers[`console-${width}`];
      const { signOut: none, ...signinBar } = headers[`signin-${width}`];
      expect(none).toBeNull();
      expect(signinBar, `sign-in header at ${width}`).toEqual(bar);
    }

    // axe-core: no serious or critical violation on any page at either width.
    writeFileSync(join(DIR, "axe.json"), JSON.stringify({ axe: axeFound, keyboard }, null, 2));
    expect(Object.keys(axeFound).length).toBeGreaterThan(30);
    expect(Object.fromEntries(Object.entries(axeFound).filter(([, v]) => v.length)), "axe: serious or critical violations").toEqual({});

    if (process.env.SAVE_DOC_IMAGES === "1") {
      const out = join(ROOT, "docs", "images");
      mkdirSync(out, { recursive: true });
      await page.setViewportSize({ width: 1100, height: 760 });
      await page.goto(`${base}/`);
      await page.screenshot({ path: join(out, "inbox.png"), fullPage: false });
      await page.setViewportSize({ width: 1000, height: 760 });
      await page.goto(auth.url);
      await page.screenshot({ path: join(out, "consent.png"), fullPage: false });
      // A task's page with its edit form open, and the side column's holder, snooze, block and project.
      await page.setViewportSize({ width: 1100, height: 1000 });
      await page.goto(`${base}/tasks/${taskId}`);
      await page.getByText("Edit the task", { exact: true }).click();
      await page.screenshot({ path: join(out, "task.png"), fullPage: false });
    }
  }, 240_000);
});
