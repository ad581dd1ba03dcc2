/**
 * A per-agent policy from the person's first click to the agent's last read,
 * in a real Chromium against the running `wrangler dev`, in both protocol eras:
 *
 * - the person names themselves in Settings and, in Apps & tokens, connects
 *   an agent with the Careful preset (and makes a token of their own);
 * - the agent's tools/list tells `ask`, with the rule and a reason, on the
 *   destructive and open-world tools, and `allow` on the rest;
 * - the agent's delete_task becomes a pending action; the person sees its
 *   card, with what it would touch, in the approvals view (MCP Apps) and
 *   approves it there: the task goes to the trash exactly once, and deciding
 *   again applies nothing;
 * - the person denies delete_label on the agent's policy page: the tool is
 *   gone from the agent's list and whoami says which rule;
 * - a question with three choices is answered by a choice on the console's
 *   decide page, another in words in the approvals view; the agent reads both;
 * - every decision names the person.
 *
 * Screenshot: screenshots/pending-action-card-<era>.png (the card before it is approved).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BrowserContext, Page } from "playwright-core";
import { newPersonContext, screenshot } from "../../scripts/lib/browser.ts";
import { connect, type McpSession } from "../../scripts/lib/e2e-harness.ts";
import { setPassword } from "../../scripts/lib/oauth-pages.ts";
import { card, closeApps, host, mcp, openApps, type Mcp } from "./apps-view-host.ts";
import { adminCli, taskgate } from "./context.ts";
import { DESTRUCTIVE_TOOLS, isToolName, OPEN_WORLD_TOOLS } from "../../src/catalog/effects.ts";

const PASSWORD = "correct horse battery";
const POLICY = "dev.taskgate/policy";
const PENDING = "dev.taskgate/pending_action";
const asks = (tool: string) => isToolName(tool) && (DESTRUCTIVE_TOOLS.has(tool) || OPEN_WORLD_TOOLS.has(tool));

let browser: Awaited<ReturnType<typeof openApps>>;
const contexts: BrowserContext[] = [];
const sessions: (McpSession | Mcp)[] = [];

beforeAll(async () => {
  browser = await openApps();
}, 180_000);

afterAll(async () => {
  await Promise.allSettled(sessions.map((s) => s.close()));
  for (const c of contexts) await c.close().catch(() => {});
  await closeApps();
});

/** Creates a tg_ token on Apps & tokens and reads the secret the page shows once. */
async function createToken(page: Page, o: { kind: "agent" | "human"; agent?: string; preset?: string; label: string }): Promise<string> {
  await page.goto(`${taskgate().base}/apps`);
  await page.selectOption("#k-kind", o.kind);
  if (o.agent) await page.fill("#k-agent", o.agent);
  await page.fill("#k-label", o.label);
  if (o.preset) await page.check(`#k-policy-${o.preset}`);
  await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Create token" }).click()]);
  return (await page.locator('pre.secret[aria-label="Token"]').innerText()).trim();
}

describe.each(["modern", "legacy"] as const)("a Careful agent, from the console to its last read (%s)", (era) => {
  it("asks before destructive and open-world tools, waits for the person's approval, loses a denied tool, and reads answers given by choice and in words; every decision names the person", async () => {
    const base = taskgate().base;
    const name = `Ada ${era}`;
    const account = await adminCli(["create-account", "--name", `Careful agent ${era}`]);
    const invite = await adminCli(["invite", "--account", account.id, "--email", `ada.${era}.${Date.now().toString(36)}@example.com`, "--url", base]);
    const context = await newPersonContext(browser);
    contexts.push(context);
    const page = await context.newPage();
    await setPassword(page, invite.setup_url, PASSWORD);
    await expect.poll(() => new URL(page.url()).pathname, { timeout: 20_000 }).toBe("/");

    // The person's name, then the agent connected with Careful, and a token of the person's own for their host.
    await page.goto(`${base}/settings`);
    await page.fill("#s-name", name);
    await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Save name" }).click()]);
    const agentSecret = await createToken(page, { kind: "agent", agent: "release-bot", preset: "careful", label: `release-bot (${era})` });
    const personSecret = await createToken(page, { kind: "human", label: `Ada's host (${era})` });
    const agent = await connect(`${base}/mcp`, agentSecret, era);
    const person = await mcp(personSecret, era);
    sessions.push(agent, person);

    // Told before the call: ask on exactly the destructive and open-world tools, each with its rule and reason.
    const listed = await agent.listTools();
    expect(listed.length).toBeGreaterThan(60);
    for (const t of listed) {
      const told = t._meta?.[POLICY];
      expect(told?.decision, t.name).toBe(asks(t.name) ? "ask" : "allow");
      expect(told.reason.length, t.name).toBeGreaterThan(10);
    }
    expect(listed.find((t) => t.name === "delete_task")?._meta?.[POLICY].rule).toBe("connection rule 1: ask the person before destructive tools");
    expect(listed.find((t) => t.name === "save_context")?._meta?.[POLICY].rule).toBe("connection rule 2: ask the person before tools that reach connected apps");

    // delete_task waits as a pending action, with what it would touch.
    const task = (await agent.ok("create_task", { title: `Old launch draft (${era})` })).task;
    await agent.ok("decompose_task", { task_id: task.id, subtasks: [{ title: "Outline" }, { title: "Screenshots" }] });
    const asked = await agent.call("delete_task", { task_id: task.id });
    expect(asked.isError).toBe(true);
    expect(asked.meta[POLICY].decision).toBe("ask");
    const pending = asked.meta[PENDING] as { outcome: string; approval_id: string; decide_url: string };
    expect(pending.outcome).toBe("awaiting_approval");
    expect(asked.text).toContain(pending.approval_id);
    expect((await agent.ok("get_task", { task_id: task.id })).task.id).toBe(task.id);

    // The person approves it in the approvals view.
    const queue = await person.call("list_pending_approvals");
    const h = await host(person, queue, "light", `Ada's host (${person.protocol})`);
    try {
      const shown = card(h.frame, task.title);
      await shown.waitFor();
      const text = await shown.innerText();
      expect(text).toContain("Delete task");
      expect(text).toContain(`task ${task.title}, with 2 subtask(s)`);
      await screenshot(h.page, `pending-action-card-${era}`);
      await shown.getByRole("button", { name: "Approve and run" }).click();
      await h.frame.getByText(/^Approved: Delete task/).waitFor();
      expect(await h.problems()).toEqual([]);
    } finally {
      await h.close();
    }
    const inTrash = async () => ((await person.ok("list_trash", {})).items as { target_id: string }[]).filter((i) => i.target_id === task.id).length;
    expect(await inTrash()).toBe(1);
    const decided = (await agent.ok("get_approval", { approval_id: pending.approval_id })).approval;
    expect(decided).toMatchObject({ kind: "action", status: "approved", decided_by: "human", decided_by_person: { name } });
    expect(decided.action.result.is_error).toBe(false);
    const again = await person.ok("approve_task", { approval_id: pending.approval_id });
    expect(again.changed).toBe(false);
    expect(await inTrash()).toBe(1);

    // The person denies delete_label on the agent's policy page: the tool leaves the agent's list, and whoami says why.
    await page.goto(`${base}/agents/release-bot/policy`);
    await page.selectOption("#r-decision", "deny");
    await page.check("#r-tool-on");
    await page.selectOption("#r-tool", "delete_label");
    await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: "Add rule" }).click()]);
    // A new connection asks (a 2026-07-28 client keeps a list for the time the server allows).
    const listsDeleteLabel = async () => {
      const fresh = await connect(`${base}/mcp`, agentSecret, era);
      try {
        return (await fresh.listTools()).some((t) => t.name === "delete_label");
      } finally {
        await fresh.close();
      }
    };
    await expect.poll(listsDeleteLabel, { timeout: 15_000 }).toBe(false);
    const who = (await agent.ok("whoami")).policy;
    expect(who.deny).toEqual([{ tool: "delete_label", rule: "agent rule 1: deny delete_label" }]);
    expect(who.in_words).toContain("Denied (not listed): delete_label.");

    // A question with three choices, answered by a choice on the decide page; another, answered in words in the approvals view.
    const colour = (await agent.ok("create_task", { title: `Logo colour (${era})` })).task;
    const q1 = (await agent.ok("request_approval", { task_id: colour.id, question: "Which colour for the logo?", choices: ["Blue", "Green", "Orange"] })).approval;
    const subject = (await agent.ok("create_task", { title: `Newsletter subject (${era})` })).task;
    const q2 = (await agent.ok("request_approval", { task_id: subject.id, question: "What should the subject line say?", accepts_words: true })).approval;
    await page.goto(`${base}/tasks/${colour.id}`);
    await page.getByLabel("Green", { exact: true }).check();
    await Promise.all([page.waitForNavigation(), page.getByRole("button", { name: /^Send (the )?answer/ }).click()]);
    const words = "Launch week: what is new in Taskgate";
    const h2 = await host(person, await person.call("list_pending_approvals"), "dark", `Ada's host (${person.protocol})`);
    try {
      const shown = card(h2.frame, subject.title);
      await shown.waitFor();
      await shown.getByLabel("Your answer in words").fill(words);
      await shown.getByRole("button", { name: "Send answer" }).click();
      await h2.frame.getByText(/^Answered in words: /).waitFor();
    } finally {
      await h2.close();
    }
    const a1 = (await agent.ok("get_approval", { approval_id: q1.id })).approval;
    const a2 = (await agent.ok("get_approval", { approval_id: q2.id })).approval;
    expect(a1).toMatchObject({ status: "approved", answer: { choice: "Green", words: null }, decided_by_person: { name } });
    expect(a2).toMatchObject({ status: "approved", answer: { choice: null, words }, decided_by_person: { name } });
    expect((await agent.ok("get_task", { task_id: colour.id })).latest_answer).toMatchObject({ choice: "Green", decided_by_person: { name } });
  });
});
