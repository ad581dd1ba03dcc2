/**
 * An approval that reaches the person inside their host, end to end against
 * `wrangler dev`: an agent's 2.x MCP client (Node, protocol 2026-07-28) that
 * declares URL elicitation completes a task; the SDK hands the elicited URL
 * to the host's handler, which opens it in Chromium for a person who is not
 * signed in: sign-in, back to the task's page, Approve. The client's retry
 * then returns the decision. Screenshot: screenshots/approval-wait.png.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser } from "playwright-core";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { launchBrowser, newPersonContext, screenshot } from "../../scripts/lib/browser.ts";
import { setPassword, signIn, signOut } from "../../scripts/lib/oauth-pages.ts";
import { adminCli, taskgate } from "./context.ts";

const PASSWORD = "correct horse battery";
let browser: Browser;

beforeAll(async () => {
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
});

describe("approvals inside the host", () => {
  it("the person opens the elicited URL, signs in, approves; the agent's call returns the decision", async () => {
    const base = taskgate().base;
    const account = await adminCli(["create-account", "--name", "Approvals in the host"]);
    const token = await adminCli(["create-token", "--account", account.id, "--kind", "agent", "--scope", "write", "--agent", "bot", "--label", "bot in a host"]);
    const email = `host.${Date.now().toString(36)}@example.com`;
    const invite = await adminCli(["invite", "--account", account.id, "--email", email, "--url", base]);
    // The person sets a password, then signs out: the host's page finds them signed out.
    const context = await newPersonContext(browser);
    const page = await context.newPage();
    await setPassword(page, invite.setup_url, PASSWORD);
    await signOut(page);

    const elicited: string[] = [];
    const client = new Client({ name: "host-with-url-elicitation", version: "1.0.0" }, { capabilities: { elicitation: { url: {} } }, versionNegotiation: { mode: "auto" } });
    client.setRequestHandler("elicitation/create", async (request) => {
      const url = (request.params as { url: string }).url;
      elicited.push(url);
      // The host opens the page in the person's browser, signed out: sign-in first, then back to the page.
      await page.goto(url);
      expect(new URL(page.url()).pathname).toBe("/signin");
      await signIn(page, { email, password: PASSWORD });
      expect(page.url()).toBe(url);
      expect(await page.getByRole("heading", { name: "Waiting for your sign-off" }).count()).toBe(1);
      await screenshot(page, "approval-wait");
      await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: /^Approve/ }).first().click()]);
      expect(await page.locator("main > .flash").innerText()).toMatch(/^Approved /);
      return { action: "accept" };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token.token}` } } }));
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
      const created = (await client.callTool({ name: "create_task", arguments: { title: "Publish the changelog" } })) as { structuredContent: any };
      const taskId = created.structuredContent.task.id as string;
      await client.callTool({ name: "claim_task", arguments: { task_id: taskId } });

      const done = (await client.callTool({ name: "complete_task", arguments: { task_id: taskId, note: "Good to publish?" } })) as { structuredContent: any };
      expect(elicited).toEqual([`${base}/tasks/${taskId}`]);
      expect(done.structuredContent).toMatchObject({ outcome: "completed", task: { id: taskId, status: "done" }, approval: { status: "approved" } });
    } finally {
      await client.close();
      await context.close();
    }
  }, 240_000); // three admin CLI runs and a password set take most of a minute on a busy machine
});
