/**
 * The approvals view (MCP Apps) in Chromium, inside a test host built on
 * ext-apps' AppBridge (apps-host.ts): the view in a sandboxed iframe under
 * the CSP its resource declares, its tools/call forwarded to `wrangler dev`
 * by a real MCP client with a real token, in both protocol eras.
 *
 * A person's connection approves a sign-off and answers a question from the
 * view, and the task history shows the person's approve_task; an agent's
 * connection shows the same cards without decide buttons, its forged
 * approve_task is refused by the server, and "Open in Taskgate" asks the host
 * to open the decide page; a tool result the host sends again redraws the
 * view. No CSP violation, no request beyond the host page.
 * Screenshots: screenshots/approvals-view-<who>-<era>.png; with
 * SAVE_DOC_IMAGES=1 also docs/images/approvals-view-person.png and
 * approvals-view-agent.png (2026-07-28 era):
 *   SAVE_DOC_IMAGES=1 npx vitest run --config vitest.browser.config.ts test/browser/approvals-view.test.ts
 */
import { copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Frame, Page } from "playwright-core";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { launchBrowser, newPersonContext, screenshot } from "../../scripts/lib/browser.ts";
import { ROOT } from "../../scripts/lib/d1.ts";
import { adminCli, taskgate } from "./context.ts";

const HOST = "http://apps-host.test";
const VIEW = "ui://taskgate/approvals";
const PHONE = { width: 390, height: 844 };

type Era = "modern" | "legacy";
type Result = { isError?: boolean; content?: { type: string; text?: string }[]; structuredContent?: Record<string, any> };

interface Mcp {
  protocol: string | undefined;
  call(name: string, args?: Record<string, unknown>): Promise<Result>;
  ok(name: string, args?: Record<string, unknown>): Promise<Record<string, any>>;
  view(): Promise<{ html: string; csp: Record<string, string[]> | undefined }>;
  close(): Promise<void>;
}

async function mcp(secret: string, era: Era): Promise<Mcp> {
  const url = new URL(`${taskgate().base}/mcp`);
  const requestInit = { headers: { authorization: `Bearer ${secret}` } };
  let client: { callTool(p: unknown): Promise<unknown>; readResource(p: { uri: string }): Promise<any>; close(): Promise<void> };
  let protocol: string | undefined;
  if (era === "modern") {
    const c = new Client({ name: "apps-test-host", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
    await c.connect(new StreamableHTTPClientTransport(url, { requestInit }));
    protocol = c.getNegotiatedProtocolVersion();
    client = c as never;
  } else {
    const c = new LegacyClient({ name: "apps-test-host-legacy", version: "1.0.0" });
    const transport = new LegacyTransport(url, { requestInit });
    await c.connect(transport);
    protocol = transport.protocolVersion;
    client = c as never;
  }
  const call = async (name: string, args: Record<string, unknown> = {}) => (await client.callTool({ name, arguments: args })) as Result;
  return {
    protocol,
    call,
    async ok(name, args) {
      const r = await call(name, args);
      if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r.content)}`);
      return r.structuredContent ?? {};
    },
    async view() {
      const { contents } = await client.readResource({ uri: VIEW });
      return { html: contents[0].text, csp: contents[0]._meta?.ui?.csp };
    },
    close: () => client.close(),
  };
}

let browser: Browser;
let hostScript: string;
let tokens: { person: string; agent: string };
/** Kept open until the end: closing a context of this single-process Chromium ends the browser. */
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  const bundled = await build({ entryPoints: [join(ROOT, "test/browser/apps-host.ts")], bundle: true, format: "iife", write: false, platform: "browser", target: "chrome120", logLevel: "silent" });
  hostScript = bundled.outputFiles[0].text;
  browser = await launchBrowser();
  const account = await adminCli(["create-account", "--name", "Approvals view"]);
  const person = await adminCli(["create-token", "--account", account.id, "--kind", "human", "--scope", "write", "--label", "person in a host"]);
  const agent = await adminCli(["create-token", "--account", account.id, "--kind", "agent", "--scope", "write", "--agent", "release-bot", "--label", "bot in a host"]);
  tokens = { person: person.token, agent: agent.token };
}, 180_000);

afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => {});
  await browser?.close();
});

interface Hosted {
  page: Page;
  frame: Frame;
  /** CSP violations and requests beyond the host page, as the browser reported them. */
  problems(): Promise<string[]>;
  close(): Promise<void>;
}

/** Opens the test host at phone width with the view showing `toolResult`, its calls going through `client`. */
async function host(client: Mcp, toolResult: Result, theme: "light" | "dark", label: string): Promise<Hosted> {
  const context = await newPersonContext(browser, { javaScript: true });
  contexts.push(context);
  const page = await context.newPage();
  await page.setViewportSize(PHONE);
  const seen: string[] = [];
  page.on("console", (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) seen.push(`console: ${m.text()}`);
  });
  page.on("pageerror", (e) => seen.push(`page error: ${e.message}`));
  page.on("request", (r) => {
    if (!r.url().startsWith(HOST)) seen.push(`request: ${r.url()}`);
  });
  const bg = theme === "dark" ? "#1f1f23" : "#fafafa";
  const fg = theme === "dark" ? "#e4e4e7" : "#27272a";
  await page.route(`${HOST}/**`, (route) => {
    const path = new URL(route.request().url()).pathname;
    if (path === "/host.js") return route.fulfill({ contentType: "text/javascript", body: hostScript });
    return route.fulfill({
      contentType: "text/html",
      body: `<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>MCP Apps test host</title></head>
        <body style="margin:0;padding:10px;background:${bg};color:${fg};font:13px system-ui,sans-serif">
        <p style="margin:0 0 8px">MCP Apps test host · ${label}</p>
        <div id="host"></div><style>iframe{width:100%;border:0;display:block;min-height:200px}</style>
        <script src="/host.js"></script></body></html>`,
    });
  });
  await page.exposeFunction("hostCallTool", (name: string, args: Record<string, unknown>) => client.call(name, args));
  await page.goto(`${HOST}/`);
  const { html, csp } = await client.view();
  await page.evaluate((o) => window.openHost(o as never), { html, csp, toolResult, theme });
  const frame = page.frames().find((f) => f !== page.mainFrame())!;
  await frame.locator("article.card").first().waitFor({ timeout: 10_000 }).catch(async (e) => {
    throw new Error(`${e.message}\nview: ${await frame.locator("body").innerText()}\nseen: ${seen.join("\n")}`);
  });
  await frame.evaluate(() => {
    (window as any).violations = [];
    document.addEventListener("securitypolicyviolation", (e) => (window as any).violations.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  return {
    page,
    frame,
    async problems() {
      const inFrame = (await frame.evaluate(() => (window as any).violations)) as string[];
      return [...seen, ...inFrame.map((v) => `violation: ${v}`)];
    },
    close: () => page.close(),
  };
}

const card = (frame: Frame, title: string) => frame.locator("article.card", { hasText: title });

async function saveShot(page: Page, name: string, era: Era): Promise<void> {
  const path = await screenshot(page, `${name}-${era}`);
  if (process.env.SAVE_DOC_IMAGES === "1" && era === "modern") {
    mkdirSync(join(ROOT, "docs/images"), { recursive: true });
    copyFileSync(path, join(ROOT, "docs/images", `${name}.png`));
  }
}

describe.each(["modern", "legacy"] as const)("the approvals view in a host (%s)", (era) => {
  it("a person's connection approves a sign-off and answers a question from the view; the server records the person's approve_task", async () => {
    const bot = await mcp(tokens.agent, era);
    const person = await mcp(tokens.person, era);
    expect(person.protocol).toBe(era === "modern" ? "2026-07-28" : "2025-11-25");
    const keys = (await bot.ok("create_task", { title: `Rotate the signing keys (${era})` })).task;
    await bot.ok("claim_task", { task_id: keys.id });
    const run = (await bot.ok("start_run", { task_id: keys.id })).run;
    for (const message of ["Generated the new key pair", "Deployed it to staging", "Old key revoked on staging"]) {
      await bot.ok("log_run_event", { run_id: run.id, kind: "progress", message });
    }
    const done = await bot.ok("complete_task", { task_id: keys.id, note: "Rotated on staging; production next." });
    expect(done.decide_url).toBe(`${taskgate().base}/tasks/${keys.id}`);
    const date = (await bot.ok("create_task", { title: `Pick the launch date (${era})` })).task;
    await bot.ok("comment_on_task", { task_id: date.id, body: "Marketing prefers a Friday; the <b>support rota</b> is thin then." });
    await bot.ok("request_approval", { task_id: date.id, question: "Launch on Friday the 11th?" });

    const list = await person.call("list_pending_approvals");
    expect(list.structuredContent?.can_decide).toBe(true);
    const h = await host(person, list, "light", `a person's connection (${person.protocol})`);
    try {
      const signoff = card(h.frame, keys.title);
      const question = card(h.frame, date.title);
      await signoff.waitFor();
      expect(await signoff.locator(".box li").allTextContents()).toEqual([
        "progress: Generated the new key pair", "progress: Deployed it to staging", "progress: Old key revoked on staging",
      ]);
      // Agent-written text stays text: the comment's markup is shown, not made.
      expect(await question.locator(".box").innerText()).toContain("the <b>support rota</b> is thin");
      expect(await question.locator("b").count()).toBe(0);
      expect(await h.frame.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth)).toBe(true);
      expect(await h.frame.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe("rgb(255, 255, 255)");
      await saveShot(h.page, "approvals-view-person", era);

      await signoff.getByRole("button", { name: "Approve" }).click();
      await h.frame.getByText(`Approved: ${keys.title}`).waitFor();
      await signoff.waitFor({ state: "detached" });
      await question.getByRole("button", { name: "Answer yes" }).click();
      await h.frame.getByText(`Answered yes: ${date.title}`).waitFor();
      await question.waitFor({ state: "detached" });
      expect(await h.problems()).toEqual([]);
    } finally {
      await h.close();
    }
    expect((await person.ok("get_task", { task_id: keys.id })).task.status).toBe("done");
    const history = (await person.ok("get_task_history", { task_id: keys.id })).items as { actor: string; tool: string }[];
    expect(history[0]).toMatchObject({ actor: "human", tool: "approve_task" });
    const answered = (await person.ok("get_task_history", { task_id: date.id })).items as { actor: string; tool: string; summary: string }[];
    expect(answered[0]).toMatchObject({ actor: "human", tool: "approve_task" });
    expect(answered[0].summary).toMatch(/^answered question .*: yes/);
    const activity = (await person.ok("list_activity", {})).items as { actor: string; tool: string; target_id: string }[];
    expect(activity.filter((a) => a.tool === "approve_task" && a.actor === "human").length).toBeGreaterThanOrEqual(2);
    await bot.close();
    await person.close();
  });

  it("a question with choices is answered by picking one, a question in words by writing; the agent reads both answers as data", async () => {
    const bot = await mcp(tokens.agent, era);
    const person = await mcp(tokens.person, era);
    const venue = (await bot.ok("create_task", { title: `Book the venue (${era})` })).task;
    const pick = (await bot.ok("request_approval", { task_id: venue.id, question: "Which hall?", choices: ["Hall <A>", "Hall B", "Hall C"] })).approval;
    const speech = (await bot.ok("create_task", { title: `Write the speech (${era})` })).task;
    const words = (await bot.ok("request_approval", { task_id: speech.id, question: "What should it end with?", accepts_words: true })).approval;

    const h = await host(person, await person.call("list_pending_approvals"), "light", `a person's connection (${person.protocol})`);
    try {
      const chooser = card(h.frame, venue.title);
      await chooser.waitFor();
      const group = chooser.getByRole("group", { name: "Pick one" });
      expect(await group.getByRole("radio").count()).toBe(3);
      // Sending without a pick says what is missing and calls nothing.
      await chooser.getByRole("button", { name: "Send answer" }).click();
      await chooser.getByText("Pick one of the choices first.").waitFor();
      await group.getByRole("radio", { name: "Hall <A>" }).check();
      await chooser.getByRole("button", { name: "Send answer" }).click();
      await h.frame.getByText(`Answered \u201cHall <A>\u201d: ${venue.title}`).waitFor();
      await chooser.waitFor({ state: "detached" });

      const writer = card(h.frame, speech.title);
      await writer.getByRole("textbox", { name: "Your answer in words" }).fill("A thank-you to the volunteers.");
      await writer.getByRole("button", { name: "Send answer" }).click();
      await h.frame.getByText(`Answered in words: ${speech.title}`).waitFor();
      expect(await h.problems()).toEqual([]);
    } finally {
      await h.close();
    }
    expect((await bot.ok("get_approval", { approval_id: pick.id })).approval.answer).toEqual({ choice: "Hall <A>", words: null });
    expect((await bot.ok("get_task", { task_id: speech.id })).latest_answer).toMatchObject({ id: words.id, answer: "yes", choice: null, words: "A thank-you to the volunteers." });
    await bot.close();
    await person.close();
  });

  it("an agent's connection shows the cards without decide buttons; its forged approve_task is refused; a result sent again redraws the view", async () => {
    const bot = await mcp(tokens.agent, era);
    const task = (await bot.ok("create_task", { title: `Publish the changelog (${era})` })).task;
    await bot.ok("claim_task", { task_id: task.id });
    const run = (await bot.ok("start_run", { task_id: task.id })).run;
    await bot.ok("log_run_event", { run_id: run.id, kind: "progress", message: "Changelog drafted from 14 merged PRs" });
    const waiting = await bot.call("complete_task", { task_id: task.id, note: "Ready to publish." });
    expect(waiting.structuredContent?.outcome).toBe("awaiting_approval");
    const h = await host(bot, waiting, "dark", `an agent's connection (${bot.protocol})`);
    try {
      const shown = card(h.frame, task.title);
      await shown.waitFor();
      expect(await h.frame.getByRole("button").count()).toBe(0);
      expect(await h.frame.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe("rgb(24, 24, 27)");
      expect(await h.frame.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth)).toBe(true);
      await saveShot(h.page, "approvals-view-agent", era);

      await shown.getByRole("link", { name: "Open in Taskgate" }).click();
      await expect.poll(() => h.page.evaluate(() => window.openedLinks)).toEqual([`${taskgate().base}/tasks/${task.id}`]);

      // A view (or a model) on an agent's connection calls approve_task anyway: the server refuses it.
      const forged = (await h.frame.evaluate(
        (taskId) =>
          new Promise((resolve) => {
            addEventListener("message", (e) => {
              if (e.data?.id === "forged") resolve(e.data);
            });
            parent.postMessage({ jsonrpc: "2.0", id: "forged", method: "tools/call", params: { name: "approve_task", arguments: { task_id: taskId } } }, "*");
          }),
        task.id,
      )) as { result: Result };
      expect(forged.result.isError).toBe(true);
      expect(forged.result.content?.[0].text).toMatch(/^approve_task .*a person must do it/);

      // The host sends a new result of list_pending_approvals: the view redraws with it.
      const next = (await bot.ok("create_task", { title: `Tag the release (${era})` })).task;
      await bot.ok("request_approval", { task_id: next.id, question: "Tag it v2.0.0?" });
      const list = await bot.call("list_pending_approvals");
      await h.page.evaluate((r) => window.sendToolResult(r as never), list as never);
      await card(h.frame, next.title).waitFor();
      expect(await h.frame.locator("#count").innerText()).toBe(`${list.structuredContent?.items.length} waiting`);
      expect(await h.frame.getByRole("button").count()).toBe(0);
      expect(await h.problems()).toEqual([]);
    } finally {
      await h.close();
    }
    const after = (await bot.ok("get_task", { task_id: task.id })).task;
    expect(after.status).toBe("awaiting_approval");
    await bot.close();
  });
});
