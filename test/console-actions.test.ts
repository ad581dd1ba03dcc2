/**
 * The web console's actions through real HTTP requests against the Worker,
 * with a real session (signed in through the sign-in form): every action is
 * the tool's call through the registry, marked as coming from the web, with
 * post/redirect/get and the tool's own message when it refuses.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { connect, createToken, MCP_URL, snapshotDb, workerFetch } from "./helpers.ts";
import { connectApp } from "./connectors-fakes.ts";
import { field } from "./web-helpers.ts";
import { act, flashOn, open, signedInPerson, unescape } from "./console.helpers.ts";
import { expectLocal, OFF_SITE } from "./return-to-cases.ts";
import { connectApp as connectByUrl, mcp, mcpStatus } from "./oauth-helpers.ts";

async function activity(accountId: string, tool: string) {
  return (
    await env.DB.prepare("SELECT token_id, actor, tool, target_id, summary FROM activity WHERE account_id = ? AND tool = ? ORDER BY created_at DESC, id DESC")
      .bind(accountId, tool)
      .all<{ token_id: string; actor: string; tool: string; target_id: string | null; summary: string }>()
  ).results;
}

/** An agent's finished task that waits for the person's approval. */
async function awaiting(agentSecret: string, title: string) {
  const agent = await connect(agentSecret);
  const { task } = await agent.ok("create_task", { title });
  await agent.ok("claim_task", { task_id: task.id });
  const { run } = await agent.ok("start_run", { task_id: task.id });
  await agent.ok("log_run_event", { run_id: run.id, kind: "progress", message: "Wrote the draft" });
  await agent.ok("complete_task", { task_id: task.id, note: "Ready to send?" });
  return { agent, taskId: task.id as string };
}

describe("console actions are tool calls with the person's principal", () => {
  it("approve: the task is done, the activity row names the web session's person, the flash says so once", async () => {
    const p = await signedInPerson();
    const { agent, taskId } = await awaiting(p.acc.agent, "Send the newsletter");
    const inbox = await open(p.b, "/");
    expect(inbox.html).toContain("Send the newsletter");
    expect(inbox.html).toContain("Wrote the draft");
    expect(inbox.html).toContain("<title>(1) Inbox · Taskgate</title>");

    const res = await act(p.b, "/", "approve", { task_id: taskId });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/");
    expect(await flashOn(p.b, "/")).toBe("ok: Approved “Send the newsletter”: it is done.");
    expect(await flashOn(p.b, "/")).toBeNull();

    expect((await agent.ok("get_task", { task_id: taskId })).task.status).toBe("done");
    const [row] = await activity(p.acc.accountId, "approve_task");
    expect(row).toMatchObject({ token_id: `web_${p.personId}`, actor: "human", target_id: taskId });
    const feed = await agent.ok("list_activity", { tool: "approve_task" });
    expect(feed.items).toHaveLength(1);
    expect(feed.items[0].token_id).toBe(`web_${p.personId}`);
    await agent.close();
  });

  it("reject needs a reason: without one the tool's own message is shown and nothing changes; with one the agent reads it", async () => {
    const p = await signedInPerson();
    const { agent, taskId } = await awaiting(p.acc.agent, "Book the venue");
    const before = await snapshotDb();
    const refused = await act(p.b, "/", "reject", { task_id: taskId, reason: "   " });
    expect(refused.status).toBe(303);
    const message = await flashOn(p.b, "/");
    expect(message).toBe("error: Reason: must not be empty. Nothing was saved; correct it and send again.");
    expect(await snapshotDb()).toBe(before);

    await act(p.b, `/tasks/${taskId}`, "reject", { task_id: taskId, reason: "Ask for two quotes first." });
    expect(await flashOn(p.b, `/tasks/${taskId}`)).toMatch(/^ok: Rejected “Book the venue”: it is back in progress/);
    const seen = await agent.ok("get_task", { task_id: taskId });
    expect(seen.task.status).toBe("in_progress");
    expect(seen.latest_comments[0]).toMatchObject({ author: "human", body: "Rejected: Ask for two quotes first." });
    await agent.close();
  });

  it("comment, complete, reopen, auto-OK on the task and its project, delete and restore, purge", async () => {
    const p = await signedInPerson();
    const human = await connect(p.acc.human);
    const { project } = await human.ok("create_project", { name: "Garden" });
    const { task } = await human.ok("create_task", { title: "Plant tulips", project_id: project.id });
    const page = `/tasks/${task.id}`;

    await act(p.b, page, "comment", { task_id: task.id, body: "Bulbs arrive Friday." });
    expect(await flashOn(p.b, page)).toBe("ok: Comment added.");
    expect((await open(p.b, page)).html).toContain("Bulbs arrive Friday.");

    await act(p.b, page, "auto_ok", { task_id: task.id, auto_ok: "true" });
    expect(await flashOn(p.b, page)).toBe("ok: Auto-OK is on for “Plant tulips”.");
    expect((await human.ok("get_task", { task_id: task.id })).task.auto_ok).toBe(true);

    await act(p.b, page, "project_auto_ok", { project_id: project.id, default_auto_ok: "on" });
    expect(await flashOn(p.b, page)).toBe("ok: New tasks in “Garden” now start with auto-OK on.");
    expect((await human.ok("get_project", { project_id: project.id })).project.default_auto_ok).toBe(true);
    await act(p.b, page, "project_auto_ok", { project_id: project.id, default_auto_ok: "account" });
    expect((await human.ok("get_project", { project_id: project.id })).project.default_auto_ok).toBeNull();

    await act(p.b, page, "complete", { task_id: task.id });
    expect(await flashOn(p.b, page)).toBe("ok: Completed “Plant tulips”.");
    await act(p.b, page, "reopen", { task_id: task.id });
    expect(await flashOn(p.b, page)).toBe("ok: Reopened “Plant tulips”.");
    expect((await human.ok("get_task", { task_id: task.id })).task.status).toBe("open");

    const del = await act(p.b, page, "delete", { task_id: task.id, confirmed: "yes" });
    expect(del.headers.get("location")).toBe("/tasks");
    expect(await flashOn(p.b, "/tasks")).toMatch(/^ok: Moved the task to the trash/);
    await act(p.b, page, "delete", { task_id: task.id, confirmed: "yes" });
    expect(await flashOn(p.b, "/tasks")).toBe("ok: The task was already in the trash; Trash restores it.");
    const trash = await open(p.b, "/trash");
    expect(trash.html).toContain("Plant tulips");
    const item = (await human.ok("list_trash")).items[0];
    await act(p.b, "/trash", "restore", { item_id: item.id });
    expect(await flashOn(p.b, "/trash")).toBe("ok: Restored the task.");
    expect((await human.ok("get_task", { task_id: task.id })).task.title).toBe("Plant tulips");

    await human.ok("delete_task", { task_id: task.id });
    const again = (await human.ok("list_trash")).items[0];
    await act(p.b, "/trash", "purge", { item_id: again.id, confirmed: "yes" });
    expect(await flashOn(p.b, "/trash")).toBe("ok: Purged “Plant tulips” for good.");
    expect((await human.ok("list_trash")).items).toEqual([]);
    const tools = (await human.ok("list_activity", { limit: 100 })).items.filter((e: { token_id: string }) => e.token_id === `web_${p.personId}`).map((e: { tool: string }) => e.tool);
    expect(tools.sort()).toEqual(
      ["comment_on_task", "set_auto_ok", "update_project", "update_project", "complete_task", "reopen_task", "delete_task", "restore_from_trash", "empty_trash"].sort(),
    );
    await human.close();
  });

  it("empty the trash, pause and resume an agent, disconnect an app, account settings", async () => {
    const p = await signedInPerson();
    const human = await connect(p.acc.human);
    for (const title of ["Old 1", "Old 2"]) {
      const { task } = await human.ok("create_task", { title });
      await human.ok("delete_task", { task_id: task.id });
    }
    await act(p.b, "/trash", "empty", { confirmed: "yes" });
    expect(await flashOn(p.b, "/trash")).toBe("ok: Purged 2 item(s) for good.");

    await act(p.b, "/agents", "pause", { agent: p.acc.agentName });
    expect(await flashOn(p.b, "/agents")).toBe("ok: Paused bot: its tokens may only read until you resume it.");
    const agent = await connect(p.acc.agent);
    expect(await agent.fails("create_task", { title: "Nope" })).toMatch(/agent bot is paused by a person/);
    expect((await open(p.b, "/agents")).html).toMatch(/<span class="badge s-paused">paused<\/span>/);
    await act(p.b, "/agents", "resume", { agent: p.acc.agentName });
    expect(await flashOn(p.b, "/agents")).toBe("ok: Resumed bot: its write tokens may write again.");
    await agent.ok("create_task", { title: "Yes" });

    await connectApp(p.acc.accountId, "slack");
    expect((await open(p.b, "/apps")).html).toMatch(/Slack <span class="badge s-connected">connected<\/span>/);
    await act(p.b, "/apps", "disconnect", { provider: "slack" });
    expect(await flashOn(p.b, "/apps")).toBe("ok: Disconnected; its stored credentials are deleted.");
    expect((await human.ok("list_connectors")).connectors.find((c: { provider: string }) => c.provider === "slack").status).toBe("not_connected");

    await act(p.b, "/settings", "settings", { time_zone: "Mars/Olympus", trash_retention_days: "30", default_auto_ok_shown: "1" });
    const refused = await open(p.b, "/settings");
    // The person's words, the field it names, and what was typed, kept.
    expect(unescape(refused.html)).toContain('Time zone: "Mars/Olympus" is not an IANA time zone; use a name like Europe/Berlin, America/New_York or UTC. Nothing was saved; correct it and send again.');
    expect(refused.html).not.toMatch(/Invalid arguments|tools\/list|update_account_settings/);
    expect(refused.html).toMatch(/name="time_zone" value="Mars\/Olympus"[^>]*aria-invalid="true"/);
    expect((await open(p.b, "/settings")).html).toMatch(/name="time_zone" value="UTC"/);
    await act(p.b, "/settings", "settings", { time_zone: "Europe/Berlin", trash_retention_days: "14", default_auto_ok_shown: "1", default_auto_ok: "true" });
    expect(await flashOn(p.b, "/settings")).toBe("ok: Settings saved.");
    expect((await human.ok("get_account_settings")).settings).toMatchObject({ time_zone: "Europe/Berlin", trash_retention_days: 14, default_auto_ok: true });
    await act(p.b, "/settings", "settings", { time_zone: "Europe/Berlin", trash_retention_days: "14", default_auto_ok_shown: "1" });
    expect((await human.ok("get_account_settings")).settings.default_auto_ok).toBe(false);
    expect((await open(p.b, "/settings")).html).toMatch(/name="activity_retention_days" value="180"/);
    await act(p.b, "/settings", "settings", { time_zone: "Europe/Berlin", trash_retention_days: "14", activity_retention_days: "3", default_auto_ok_shown: "1" });
    expect(await flashOn(p.b, "/settings")).toMatch(/^error: Activity kept \(days\): /);
    await act(p.b, "/settings", "settings", { time_zone: "Europe/Berlin", trash_retention_days: "14", activity_retention_days: "90", default_auto_ok_shown: "1" });
    expect(await flashOn(p.b, "/settings")).toBe("ok: Settings saved.");
    expect((await human.ok("get_account_settings")).settings.activity_retention_days).toBe(90);
    expect((await open(p.b, "/settings")).html).toMatch(/name="activity_retention_days" value="90"/);
    await Promise.all([human.close(), agent.close()]);
  });

  it("revoke a token: its next MCP call is refused with 401; a token created on the page is shown once and works", async () => {
    const p = await signedInPerson();
    const extra = await createToken({ accountId: p.acc.accountId, kind: "agent", scope: "read", agent: "reader", label: "reader laptop" });
    await act(p.b, "/apps", "revoke", { token_id: extra.id, confirmed: "yes" });
    expect(await flashOn(p.b, "/apps")).toBe("ok: Revoked “reader laptop”: its next request is refused.");
    const refused = await workerFetch(MCP_URL, {
      method: "POST",
      headers: { authorization: `Bearer ${extra.secret}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });
    expect(refused.status).toBe(401);

    const { html } = await open(p.b, "/apps");
    const tokenForm = { csrf: field(html, "csrf"), form_id: field(html, "form_id"), kind: "agent", agent: "scribe", scope: "write", label: "scribe <b>CI</b>" };
    const made = await p.b.post("/apps/tokens", tokenForm);
    expect(made.status, "post/redirect/get: a reload of the next page sends nothing").toBe(303);
    expect(made.headers.get("location")).toBe("/apps");
    const { res: next, html: page } = await open(p.b, "/apps");
    expect(next.headers.get("cache-control")).toBe("no-store");
    const secret = /<pre class="secret" aria-label="Token">(tg_[A-Za-z0-9_-]{43})<\/pre>/.exec(page)?.[1] as string;
    expect(secret).toBeDefined();
    expect(page).toContain(`&quot;Authorization&quot;: &quot;Bearer ${secret}&quot;`);
    expect(page).toContain("scribe &lt;b&gt;CI&lt;/b&gt;");
    const scribe = await connect(secret);
    expect((await scribe.ok("whoami")).token).toMatchObject({ kind: "agent", agent: "scribe", scope: "write", label: "scribe <b>CI</b>" });
    expect((await open(p.b, "/apps")).html, "a reload shows the page without the secret").not.toContain(secret);
    expect(made.headers.getSetCookie().join(";"), "the secret travels sealed to this session").not.toContain(secret);
    expect(await snapshotDb()).not.toContain(secret);
    const [row] = await activity(p.acc.accountId, "create_token");
    expect(row).toMatchObject({ token_id: `web_${p.personId}`, actor: "human" });
    expect(row.summary).not.toContain(secret);

    // The same form again (a reload of the answer, a second click): nothing more is created, and the secret is not shown again.
    const tokensBefore = (await env.DB.prepare("SELECT count(*) AS n FROM tokens WHERE account_id = ?").bind(p.acc.accountId).first<{ n: number }>())!.n;
    const again = await p.b.post("/apps/tokens", tokenForm);
    expect(again.status).toBe(303);
    expect(await flashOn(p.b, "/apps")).toMatch(/^error: This form already created its token/);
    expect((await env.DB.prepare("SELECT count(*) AS n FROM tokens WHERE account_id = ?").bind(p.acc.accountId).first<{ n: number }>())!.n).toBe(tokensBefore);
    const withoutId = await p.b.post("/apps/tokens", { ...tokenForm, form_id: undefined });
    expect(withoutId.status).toBe(303);
    expect(await flashOn(p.b, "/apps")).toMatch(/^error: This token form is from an older page/);

    const bad = await p.b.post("/apps/tokens", { csrf: field(html, "csrf"), form_id: crypto.randomUUID(), kind: "agent", agent: "Not A Name", scope: "write" });
    expect(bad.status).toBe(303);
    expect(await flashOn(p.b, "/apps")).toMatch(/^error: Agent name: use lowercase letters/);
    await scribe.close();
  });

  it("an app connected by URL is listed by its name, named in the activity feed, and revoked on the page", async () => {
    const app = await connectByUrl({ actAs: "agent", agentName: "helper", access: "write" }, { clientName: "Notes & \"Co\" App" });
    const client = await mcp(app.tokens.access_token);
    const { task } = await client.ok("create_task", { title: "Made by the app" });
    const apps = await open(app.browser, "/apps");
    expect(apps.html).toContain("Notes &amp; &quot;Co&quot; App");
    expect(apps.html).toContain("app connected by URL");
    expect(apps.html).toMatch(/agent <strong>helper<\/strong>/);
    const feed = await open(app.browser, "/activity?tool=create_task");
    expect(feed.html).toContain("via Notes &amp; &quot;Co&quot; App");
    expect((await open(app.browser, `/tasks/${task.id}`)).html).toContain("via Notes &amp; &quot;Co&quot; App");
    const grantId = /name="token_id" value="([^"]+)"\/><input type="hidden" name="back" value="[^"]*"\/><button type="submit" class="danger" aria-label="Revoke Notes &amp; &quot;Co&quot; App"/.exec(apps.html)?.[1];
    expect(grantId).toBeDefined();
    await act(app.browser, "/apps", "revoke", { token_id: grantId as string, confirmed: "yes" });
    expect(await flashOn(app.browser, "/apps")).toBe("ok: Revoked “Notes & \"Co\" App”: its next request is refused.");
    expect(await mcpStatus(app.tokens.access_token)).toBe(401);
    await client.close().catch(() => {});
  });

  it("creating a task from the tasks page lands on its page", async () => {
    const p = await signedInPerson();
    const res = await act(p.b, "/tasks", "create_task", { title: "Water the plants" });
    expect(res.headers.get("location")).toMatch(/^\/tasks\/tsk_[0-9a-z]{16}$/);
    const page = await open(p.b, res.headers.get("location") as string);
    expect(page.html).toContain("<h1 class=\"body\"><bdi class=\"u\">Water the plants</bdi></h1>");
    expect(page.html).toContain("Created “Water the plants”.");
  });
});

describe("refusals", () => {
  it("signed out, every page leads to sign-in and a form post changes nothing", async () => {
    const p = await signedInPerson();
    const { taskId } = await awaiting(p.acc.agent, "Signed-out approval");
    const { html } = await open(p.b, "/");
    const csrf = field(html, "csrf") as string;
    const out = await p.b.post("/signout", { csrf });
    expect(out.status).toBe(303);
    for (const path of ["/", "/tasks", `/tasks/${taskId}`, "/agents", "/apps", "/trash", "/activity?tool=approve_task", "/settings"]) {
      const res = await p.b.get(path);
      expect(res.status, path).toBe(302);
      const location = res.headers.get("location") as string;
      expect(location, path).toBe(path === "/" ? "/signin" : `/signin?return_to=${encodeURIComponent(path)}`);
    }
    const before = await snapshotDb();
    const post = await p.b.post("/act/approve", { csrf, back: "/", task_id: taskId });
    expect(post.status).toBe(303);
    expect(post.headers.get("location")).toBe("/signin");
    expect(await snapshotDb()).toBe(before);
  });

  it("a POST without the CSRF token, with a wrong one, with another session's, or from another origin is refused and changes nothing", async () => {
    const p = await signedInPerson();
    const other = await signedInPerson("Other account");
    const { taskId } = await awaiting(p.acc.agent, "Guarded approval");
    const { html } = await open(p.b, "/");
    const good = field(html, "csrf") as string;
    const othersToken = field((await open(other.b, "/")).html, "csrf") as string;
    const before = await snapshotDb();
    const attempts: [string, Record<string, string | undefined>, Record<string, string>][] = [
      ["no token", { task_id: taskId, back: "/" }, {}],
      ["wrong token", { csrf: "x".repeat(43), task_id: taskId, back: "/" }, {}],
      ["another session's token", { csrf: othersToken, task_id: taskId, back: "/" }, {}],
      ["another origin", { csrf: good, task_id: taskId, back: "/" }, { origin: "https://evil.example" }],
    ];
    for (const [what, form, headers] of attempts) {
      const res = await p.b.post("/act/approve", form, headers);
      expect(res.status, what).toBe(403);
      const page = await res.text();
      expect(page, what).toContain("Nothing was changed");
      expect(res.headers.get("content-security-policy"), what).toContain("frame-ancestors 'none'");
      expect(await snapshotDb(), what).toBe(before);
    }
    const token = await p.b.post("/apps/tokens", { kind: "human", scope: "write" });
    expect(token.status).toBe(403);
    expect(await snapshotDb()).toBe(before);
  });

  it("a form for another account's task: not found, and nothing changed in either account", async () => {
    const a = await signedInPerson("Account A");
    const b = await signedInPerson("Account B");
    const { agent, taskId } = await awaiting(b.acc.agent, "B's secret plan");
    const before = await snapshotDb();
    for (const action of ["approve", "complete", "delete", "comment", "auto_ok", "reopen"]) {
      await act(a.b, "/", action, { task_id: taskId, body: "hi", auto_ok: "true", reason: "x", confirmed: "yes" });
      const message = await flashOn(a.b, "/");
      expect(message, action).toBe(`error: No task ${taskId} in this account; list_tasks or search_tasks finds task ids.`);
    }
    await act(a.b, "/", "reject", { task_id: taskId, reason: "no" });
    expect(await flashOn(a.b, "/")).toMatch(new RegExp(`^error: No task ${taskId} in this account`));
    expect(await snapshotDb()).toBe(before);
    const page = await a.b.get(`/tasks/${taskId}`);
    expect(page.status).toBe(404);
    const html = await page.text();
    expect(html).not.toContain("B&#39;s secret plan");
    expect(html).not.toContain("secret plan");
    expect((await open(a.b, "/")).html).not.toContain("secret plan");
    expect((await open(a.b, "/tasks")).html).not.toContain("secret plan");
    expect((await agent.ok("get_task", { task_id: taskId })).task.status).toBe("awaiting_approval");
    await agent.close();
  });

  it("a task titled <script> and agent-written markup show as text on every page", async () => {
    const p = await signedInPerson();
    const evil = `<script>alert("x")</script><img src=x onerror=alert(1)>`;
    const agent = await connect(p.acc.agent);
    const { project } = await agent.ok("create_project", { name: `${evil} project` });
    const { task } = await agent.ok("create_task", { title: evil, notes: evil, project_id: project.id });
    await agent.ok("label_task", { task_id: task.id, labels: [`<i>label</i>`] });
    await agent.ok("add_steps", { task_id: task.id, steps: [evil] });
    await agent.ok("comment_on_task", { task_id: task.id, body: evil });
    await agent.ok("claim_task", { task_id: task.id });
    const { run } = await agent.ok("start_run", { task_id: task.id });
    await agent.ok("log_run_event", { run_id: run.id, kind: "artifact", message: evil, url: "https://example.com/?q=\"><script>" });
    await agent.ok("complete_task", { task_id: task.id, note: evil });
    const { task: gone } = await agent.ok("create_task", { title: `${evil} (deleted)` });
    await agent.ok("delete_task", { task_id: gone.id });
    for (const path of ["/", "/tasks", `/tasks/${task.id}`, "/agents", "/trash", "/activity", `/tasks?q=alert`, `/tasks/${task.id}/text/notes`]) {
      const { html, res } = await open(p.b, path);
      expect(res.status, path).toBe(200);
      expect(html, path).not.toMatch(/<script|<img|<i>label/i);
      expect(html, path).toContain("&lt;script&gt;");
    }
    expect(unescape((await open(p.b, `/tasks/${task.id}`)).html)).toContain(evil);
    await agent.close();
  });

  it("an unknown action or a foreign 'back' address cannot redirect off the site", async () => {
    const p = await signedInPerson();
    const { html } = await open(p.b, "/");
    const csrf = field(html, "csrf") as string;
    for (const back of Object.values(OFF_SITE).flat()) {
      const res = await p.b.post("/act/nope", { csrf, back });
      expect(res.status).toBe(303);
      expectLocal(res.headers.get("location"), back);
      expect(res.headers.get("location"), JSON.stringify(back)).toBe("/");
    }
    expect(await flashOn(p.b, "/")).toBe("error: There is no action “nope”; nothing was changed.");
    // A known action the tool refuses goes back the same checked way.
    for (const back of ["/.//evil.example/x", "/%2E%2E//evil.example", "/a/%2e%2e/%2f%2fevil.example", "/%5cevil.example"]) {
      const res = await p.b.post("/act/approve", { csrf, back, task_id: "tsk_nope" });
      expect(res.status).toBe(303);
      expect(res.headers.get("location"), back).toBe("/");
    }
    expect(await flashOn(p.b, "/")).toMatch(/^error: /);
  });
});
