/**
 * A host for the approvals view (MCP Apps) in Chromium: ext-apps' AppBridge
 * (apps-host.ts) in a page of its own, the view in a sandboxed iframe under
 * the CSP its resource declares, its tools/call forwarded to `wrangler dev`
 * by a real MCP client with a real token, in either protocol era.
 */
import { copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
import type { Browser, BrowserContext, Frame, Page } from "playwright-core";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { launchBrowser, newPersonContext, screenshot } from "../../scripts/lib/browser.ts";
import { ROOT } from "../../scripts/lib/d1.ts";
import { taskgate } from "./context.ts";

export const HOST = "http://apps-host.test";
export const VIEW = "ui://taskgate/approvals";
export const PHONE = { width: 390, height: 844 };

export type Era = "modern" | "legacy";
export type Result = { isError?: boolean; content?: { type: string; text?: string }[]; structuredContent?: Record<string, any> };

export interface Mcp {
  protocol: string | undefined;
  call(name: string, args?: Record<string, unknown>): Promise<Result>;
  ok(name: string, args?: Record<string, unknown>): Promise<Record<string, any>>;
  view(): Promise<{ html: string; csp: Record<string, string[]> | undefined }>;
  close(): Promise<void>;
}

export async function mcp(secret: string, era: Era): Promise<Mcp> {
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
/** Kept open until the end: closing a context of this single-process Chromium ends the browser. */
const contexts: BrowserContext[] = [];

/** The test host's script (bundled once) and the Chromium it runs in: a file's beforeAll opens them, its afterAll closes them. */
export async function openApps(): Promise<Browser> {
  const bundled = await build({ entryPoints: [join(ROOT, "test/browser/apps-host.ts")], bundle: true, format: "iife", write: false, platform: "browser", target: "chrome120", logLevel: "silent" });
  hostScript = bundled.outputFiles[0].text;
  browser = await launchBrowser();
  return browser;
}

export async function closeApps(): Promise<void> {
  for (const c of contexts) await c.close().catch(() => {});
  await browser?.close();
}

export interface Hosted {
  page: Page;
  frame: Frame;
  /** CSP violations and requests beyond the host page, as the browser reported them. */
  problems(): Promise<string[]>;
  /** The names of the tools the view called through the host, in order. */
  calls: string[];
  close(): Promise<void>;
}

/**
 * Opens the test host at phone width with the view showing `toolResult` (null: the host gives none), its calls going
 * through `client`; done when `ready` (a selector in the view, a card by default) shows.
 */
export async function host(client: Mcp, toolResult: Result | null, theme: "light" | "dark", label: string, ready = "article.card"): Promise<Hosted> {
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
  const calls: string[] = [];
  await page.exposeFunction("hostCallTool", (name: string, args: Record<string, unknown>) => (calls.push(name), client.call(name, args)));
  await page.goto(`${HOST}/`);
  const { html, csp } = await client.view();
  await page.evaluate((o) => window.openHost(o as never), { html, csp, toolResult, theme });
  const frame = page.frames().find((f) => f !== page.mainFrame())!;
  await frame.locator(ready).first().waitFor({ timeout: 10_000 }).catch(async (e) => {
    throw new Error(`${e.message}\nview: ${await frame.locator("body").innerText()}\nseen: ${seen.join("\n")}`);
  });
  await frame.evaluate(() => {
    (window as any).violations = [];
    document.addEventListener("securitypolicyviolation", (e) => (window as any).violations.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  return {
    page,
    frame,
    calls,
    async problems() {
      const inFrame = (await frame.evaluate(() => (window as any).violations)) as string[];
      return [...seen, ...inFrame.map((v) => `violation: ${v}`)];
    },
    close: () => page.close(),
  };
}

export const card = (frame: Frame, title: string) => frame.locator("article.card", { hasText: title });

export async function saveShot(page: Page, name: string, era: Era): Promise<void> {
  const path = await screenshot(page, `${name}-${era}`);
  if (process.env.SAVE_DOC_IMAGES === "1" && era === "modern") {
    mkdirSync(join(ROOT, "docs/images"), { recursive: true });
    copyFileSync(path, join(ROOT, "docs/images", `${name}.png`));
  }
}

