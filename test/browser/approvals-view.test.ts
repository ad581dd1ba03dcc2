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
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { card, closeApps, host, mcp, openApps, saveShot, type Result } from "./apps-view-host.ts";
import { seriousViolations } from "./axe.ts";
import { adminCli, taskgate } from "./context.ts";

let tokens: { person: string; agent: string };

beforeAll(async () => {
  await openApps();
  const account = await adminCli(["create-account", "--name", "Approvals view"]);
  const person = await adminCli(["create-token", "--account", account.id, "--kind", "human", "--scope", "write", "--label", "person in a host"]);
  const agent = await adminCli(["create-token", "--account", account.id, "--kind", "agent", "--scope", "write", "--agent", "release-bot", "--label", "bot in a host"]);
  tokens = { person: person.token, agent: agent.token };
}, 180_000);

afterAll(closeApps);

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

/** A fresh account with a person's and an agent's token, so what waits there is only what a case makes. */
async function freshAccount(name: string): Promise<{ person: string; agent: string }> {
  const account = await adminCli(["create-account", "--name", name]);
  const person = await adminCli(["create-token", "--account", account.id, "--kind", "human", "--scope", "write", "--label", "person, view alone"]);
  const agent = await adminCli(["create-token", "--account", account.id, "--kind", "agent", "--scope", "write", "--agent", "alone-bot", "--label", "bot, view alone"]);
  return { person: person.token, agent: agent.token };
}

describe.each(["modern", "legacy"] as const)("the approvals view opened on its own, with no tool result (%s)", (era) => {
  it("asks for the pending approvals itself, lists them, and lists them anew after a decision", async () => {
    const t = await freshAccount(`View alone (${era})`);
    const bot = await mcp(t.agent, era);
    const person = await mcp(t.person, era);
    const backup = (await bot.ok("create_task", { title: `Check the backups (${era})` })).task;
    await bot.ok("request_approval", { task_id: backup.id, question: "Restore a test copy tonight?" });
    const invoice = (await bot.ok("create_task", { title: `Send the invoices (${era})` })).task;
    await bot.ok("complete_task", { task_id: invoice.id, note: "All twelve sent." });
    const h = await host(person, null, "light", `shown on its own (${person.protocol})`);
    try {
      await card(h.frame, backup.title).waitFor();
      await card(h.frame, invoice.title).waitFor();
      expect(h.calls[0]).toBe("list_pending_approvals");
      expect(await h.frame.locator("#count").innerText()).toBe("2 waiting");
      expect(await h.frame.getByText("Loading…").count()).toBe(0);
      expect(await seriousViolations(h.frame)).toEqual([]);

      await card(h.frame, invoice.title).getByRole("button", { name: "Approve" }).click();
      await h.frame.getByText(`Approved: ${invoice.title}`).waitFor();
      await card(h.frame, invoice.title).waitFor({ state: "detached" });
      expect(await h.frame.locator("#count").innerText()).toBe("1 waiting");
      expect(h.calls).toEqual(["list_pending_approvals", "approve_task", "list_pending_approvals"]);

      // The agent asks again meanwhile; the next decision's refresh shows it.
      const dns = (await bot.ok("create_task", { title: `Move the DNS (${era})` })).task;
      await bot.ok("request_approval", { task_id: dns.id, question: "Switch on Sunday?" });
      await card(h.frame, backup.title).getByRole("button", { name: "Answer yes" }).click();
      await h.frame.getByText(`Answered yes: ${backup.title}`).waitFor();
      await card(h.frame, dns.title).waitFor();
      await card(h.frame, backup.title).waitFor({ state: "detached" });
      expect(await h.problems()).toEqual([]);
    } finally {
      await h.close();
    }
    expect((await person.ok("get_task", { task_id: invoice.id })).task.status).toBe("done");
    await bot.close();
    await person.close();
  });

  it("with nothing pending says nothing waits for the person", async () => {
    const t = await freshAccount(`View alone, empty (${era})`);
    const person = await mcp(t.person, era);
    const h = await host(person, null, "dark", `shown on its own, nothing pending (${person.protocol})`, "main p");
    try {
      await h.frame.getByText("Nothing waits for you: no question, sign-off or action is pending.").waitFor();
      expect(h.calls).toEqual(["list_pending_approvals"]);
      expect(await h.frame.locator("article.card").count()).toBe(0);
      expect(await h.frame.locator("#count").innerText()).toBe("");
      expect(await seriousViolations(h.frame)).toEqual([]);
      expect(await h.problems()).toEqual([]);
    } finally {
      await h.close();
    }
    await person.close();
  });
});
