/**
 * Every console page, and the consent page, with hostile text from agents and
 * apps: 500-character words without a space, a right-to-left override
 * (U+202E) and other bidi controls, combining marks, emoji and markup in
 * titles, notes, names, comments, steps, run events, questions, labels,
 * token labels and an app's name. At 1280 and 390 wide, each page must not
 * scroll sideways, the Tasks table must keep its Status, Project, Assignee,
 * Due and Priority columns in view, on a phone each task is one compact row,
 * and no text the page itself writes may be turned around by the caller's
 * text (every piece of caller text is isolated). Screenshots go to
 * screenshots/hostile/<page>-<width>.png.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { launchBrowser, newPersonContext, SCREENSHOT_DIR } from "../../scripts/lib/browser.ts";
import { connect, type McpSession } from "../../scripts/lib/e2e-harness.ts";
import { setPassword } from "../../scripts/lib/oauth-pages.ts";
import { adminCli, taskgate } from "./context.ts";
import { authorizationUrl, discover, register } from "./oauth-client.ts";
import { horizontalOverflow } from "./layout.ts";

const WIDTHS = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;
const DIR = join(SCREENSHOT_DIR, "hostile");

const RLO = "\u202E";
/** Words a caller may write: each piece of text below carries several. */
const LONG = (n: number, c = "W") => c.repeat(n);
const HOSTILE = {
  title: `${LONG(480)}${RLO}txet desrever`,
  title2: `${RLO}Pay the invoice \u2066isolate\u2069 \u202Bembed Ż̷̛͉̖a̵̡͔l̸̢̨g̶̛o̷ 👩‍👩‍👧‍👦🚀 <b>bold</b><script>alert(1)</script>`,
  project: `${RLO}${LONG(150, "P")} project`,
  notes: `${LONG(3000, "n")} ${RLO}after the override\n<img src=x onerror=alert(1)> Z̤͔ͧ̑̓ä͖̭̈̇lͮ̒ͫǧ̗͚̚o̙̔ͮ̇͐̇ 🧑🏽‍💻`,
  comment: `${LONG(900, "c")}${RLO} reversed comment <i>markup</i>`,
  step: `${LONG(300, "s")}${RLO} step`,
  event: `${LONG(400, "e")}${RLO} event`,
  question: `${LONG(900, "q")}${RLO} question?`,
  label: `${RLO}${LONG(90, "l")}`,
  app: `${LONG(150, "A")} Host 🚀 Ż̷̛͉̖`,
};

let browser: Browser;
const contexts: BrowserContext[] = [];
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

async function seed(base: string, accountId: string) {
  const bot = await adminCli(["create-token", "--account", accountId, "--kind", "agent", "--scope", "write", "--agent", "hostile-bot", "--label", HOSTILE.app]);
  const agent = await connect(`${base}/mcp`, bot.token, "modern");
  sessions.push(agent);
  const { project } = await agent.ok("create_project", { name: HOSTILE.project, description: HOSTILE.notes.slice(0, 2000) });
  const { task } = await agent.ok("create_task", { project_id: project.id, title: HOSTILE.title, notes: HOSTILE.notes, due_at: new Date(Date.now() + 86_400_000).toISOString() });
  await agent.ok("add_steps", { task_id: task.id, steps: [HOSTILE.step, "plain step"] });
  await agent.ok("claim_task", { task_id: task.id });
  const { run } = await agent.ok("start_run", { task_id: task.id });
  await agent.ok("log_run_event", { run_id: run.id, kind: "progress", message: HOSTILE.event });
  await agent.ok("label_task", { task_id: task.id, labels: [HOSTILE.label] });
  await agent.ok("comment_on_task", { task_id: task.id, body: HOSTILE.comment });
  await agent.ok("request_approval", { task_id: task.id, question: HOSTILE.question });
  const { task: second } = await agent.ok("create_task", { project_id: project.id, title: HOSTILE.title2, notes: HOSTILE.title2, priority: "urgent" });
  await agent.ok("claim_task", { task_id: second.id });
  await agent.ok("comment_on_task", { task_id: second.id, body: HOSTILE.title2 });
  for (let i = 0; i < 6; i++) await agent.ok("create_task", { project_id: project.id, title: `${RLO}${LONG(200 + i, "t")} ${i}` });
  const { task: gone } = await agent.ok("create_task", { title: HOSTILE.title2 });
  await agent.ok("delete_task", { task_id: gone.id });
  return { taskId: task.id as string, secondId: second.id as string, projectId: project.id as string };
}

/**
 * Letters the page itself wrote that are laid out backwards: for each text
 * node outside caller text (`.u`), two neighbouring letters on one line where
 * the second sits left of the first. Caller text left unisolated carries its
 * override into the words after it, and is then itself outside `.u`.
 */
function reversedText(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const out: string[] = [];
    const walker = document.createTreeWalker(document.querySelector("main") ?? document.body, NodeFilter.SHOW_TEXT);
    const range = document.createRange();
    for (let n = walker.nextNode(); n && out.length < 5; n = walker.nextNode()) {
      const el = n.parentElement;
      if (!el || el.closest(".u, select, option, textarea, script, style, title")) continue;
      const text = n.textContent ?? "";
      const limit = Math.min(text.length - 1, 300);
      for (let i = 0; i < limit; i++) {
        if (!/[A-Za-z]/.test(text[i]) || !/[A-Za-z]/.test(text[i + 1])) continue;
        range.setStart(n, i);
        range.setEnd(n, i + 1);
        const a = range.getBoundingClientRect();
        range.setStart(n, i + 1);
        range.setEnd(n, i + 2);
        const b = range.getBoundingClientRect();
        if (a.width === 0 || b.width === 0 || Math.abs(a.top - b.top) > 2) continue;
        if (b.left < a.left - 0.5) {
          out.push(`<${el.tagName.toLowerCase()}> "${text.slice(Math.max(0, i - 15), i + 15)}"`);
          break;
        }
      }
    }
    return out;
  });
}

/** The Tasks table's columns: the header cells (desktop) or the cells of the first rows (phone), each wholly in view. */
function tasksColumns(page: Page): Promise<{ label: string; visible: boolean }[]> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const labels = ["Status", "Project", "Assignee", "Due", "Priority"];
    const rows = Array.from(document.querySelectorAll("table.tasks tbody tr")).slice(0, 5);
    return rows.flatMap((tr) =>
      labels.map((label) => {
        const td = tr.querySelector(`td[data-label="${label}"]`);
        const r = td?.getBoundingClientRect();
        return { label, visible: Boolean(r && r.width > 0 && r.height > 0 && r.left >= 0 && r.right <= width + 0.5) };
      }),
    );
  });
}

describe("hostile text from agents and apps", () => {
  it("breaks no page at 1280 and 390 wide", async () => {
    const base = taskgate().base;
    const account = await adminCli(["create-account", "--name", `${RLO}${LONG(120, "N")}`]);
    const ids = await seed(base, account.id);
    const email = `hostile.${Date.now().toString(36)}@example.com`;
    const invite = await adminCli(["invite", "--account", account.id, "--email", email, "--url", base]);
    const c = await newPersonContext(browser, { javaScript: true });
    contexts.push(c);
    const page = await c.newPage();
    await setPassword(page, invite.setup_url, "correct horse battery");
    await expect.poll(() => new URL(page.url()).pathname, { timeout: 20_000 }).toBe("/");
    await page.goto(`${base}/webhooks`);
    await page.getByLabel("Endpoint URL").fill(`https://hooks.example.com/${LONG(400, "u")}`);
    await page.getByRole("button", { name: "Add webhook" }).click();
    await page.getByLabel("Signing secret").waitFor();

    const found = await discover(base);
    const clientId = await register(found.as, HOSTILE.app, "http://127.0.0.1:9/callback");
    const auth = authorizationUrl(found.as, { clientId, redirectUri: "http://127.0.0.1:9/callback", resource: found.resource, scope: found.scopes.join(" ") });

    const pages: [string, string][] = [
      ["inbox", "/"], ["tasks", "/tasks"], ["tasks-project", `/tasks?project=${ids.projectId}`], ["task", `/tasks/${ids.taskId}`],
      ["task-2", `/tasks/${ids.secondId}`], ["notes", `/tasks/${ids.taskId}/text/notes`], ["agents", "/agents"], ["apps", "/apps"],
      ["webhooks", "/webhooks"], ["trash", "/trash"], ["activity", "/activity"], ["settings", "/settings"], ["consent", auth.url],
    ];
    for (const width of ["desktop", "phone"] as const) {
      await page.setViewportSize(WIDTHS[width]);
      for (const [name, path] of pages) {
        const res = await page.goto(path.startsWith("http") ? path : `${base}${path}`);
        await page.screenshot({ path: join(DIR, `${name}-${width}.png`), fullPage: true });
        const where = `${name} at ${width}`;
        expect.soft(res?.status(), `${where}: status`).toBe(200);
        expect.soft(await horizontalOverflow(page), `${where}: elements wider than the screen`).toEqual([]);
        expect.soft(await reversedText(page), `${where}: the page's own words turned around by caller text`).toEqual([]);
        if (name === "tasks" || name === "tasks-project") {
          const columns = await tasksColumns(page);
          expect.soft(columns.length, `${where}: rows`).toBeGreaterThan(10);
          expect.soft(columns.filter((x) => !x.visible), `${where}: columns out of view`).toEqual([]);
          if (width === "phone") {
            // A compact row per task: the title's first lines and one line of facts.
            const heights = await page.locator("table.tasks tbody tr").evaluateAll((rows) => rows.map((r) => Math.round(r.getBoundingClientRect().height)));
            expect.soft(Math.max(...heights), `${where}: row heights ${heights.join(",")}`).toBeLessThanOrEqual(110);
          }
        }
      }
    }
    // A title cut to two lines in the Tasks table is whole on hover.
    await page.setViewportSize(WIDTHS.desktop);
    await page.goto(`${base}/tasks`);
    const link = page.locator("table.tasks a.clamp", { hasText: LONG(40) }).first();
    expect(await link.textContent()).toBe(HOSTILE.title);
    const cut = () => link.evaluate((a) => a.scrollHeight > a.clientHeight + 1);
    expect(await cut(), "cut to two lines").toBe(true);
    await link.hover();
    expect(await cut(), "whole on hover").toBe(false);
  }, 300_000);
});
