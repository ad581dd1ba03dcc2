/**
 * The console as a new person meets it, through real HTTP with a signed-in
 * session: projects made and edited on the page, a recurring task's rule and
 * what comes after it, history that names what its ids are, held tasks and
 * lapsed claims, counts that say what they count, apps of one name told
 * apart, and consent counts that follow the chosen access.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { TOOLSETS } from "../src/catalog/toolsets.ts";
import { WRITE_TOOLS } from "../src/catalog/effects.ts";
import { asServer, connect } from "./helpers.ts";
import { act, flashOn, open, signedInPerson, unescape } from "./console.helpers.ts";
import { authorizePath, consent, exchange, pkce, registerClient } from "./oauth-helpers.ts";

const text = (html: string) => unescape(html.replace(/<[^>]+>/g, ""));

describe("the console for a new person", () => {
  it("creates a project with its auto-OK as the person's choice, edits it, and keeps what was typed when refused", async () => {
    const p = await signedInPerson("Projects on the page");
    const human = await connect(p.acc.human);
    const tasks = await open(p.b, "/tasks");
    expect(tasks.html).toContain("<summary>New project</summary>");
    expect(tasks.html).toContain("The account&#39;s default (now off)");

    const made = await act(p.b, "/tasks", "create_project", { name: "Website relaunch", description: "The new site", default_auto_ok: "on", form: "new-project" });
    expect(made.status).toBe(303);
    const at = made.headers.get("location") as string;
    expect(at).toMatch(/^\/tasks\?project=prj_[0-9a-z]{16}$/);
    const projectId = at.split("=")[1];
    const page = await open(p.b, at);
    expect(unescape(page.html)).toContain("Created the project “Website relaunch”; its new tasks start with auto-OK on.");
    expect(text(page.html)).toContain("New tasks start with auto-OK on: your choice for this project.");
    expect((await human.ok("get_project", { project_id: projectId })).project).toMatchObject({ name: "Website relaunch", description: "The new site", default_auto_ok: true });
    const [row] = (await env.DB.prepare("SELECT token_id FROM activity WHERE target_id = ? AND tool = 'create_project'").bind(projectId).all<{ token_id: string }>()).results;
    expect(row.token_id).toBe(`web_${p.personId}`);

    // Refused: the person's words, the field named, and the typed values back in the form.
    const refused = await act(p.b, at, "update_project", { project_id: projectId, name: "   ", description: "Kept text", default_auto_ok: "off" });
    expect(refused.status).toBe(303);
    const again = await open(p.b, at);
    expect(text(again.html)).toContain("Name: must not be empty. Nothing was saved; correct it and send again.");
    expect(again.html).toMatch(/<details class="card" open="">\s*<summary>Edit the project/);
    expect(again.html).toContain(">Kept text</textarea>");
    expect(again.html).toMatch(/<option value="off" selected="">Off for this project<\/option>/);
    expect(again.html).toMatch(/id="e-name" name="name" required="" maxlength="200" value="   " aria-invalid="true"/);

    await act(p.b, at, "update_project", { project_id: projectId, name: "Website relaunch 2", description: "", default_auto_ok: "account" });
    expect(await flashOn(p.b, at)).toBe("ok: Saved the project “Website relaunch 2”; its new tasks follow the account's auto-OK default.");
    expect((await human.ok("get_project", { project_id: projectId })).project).toMatchObject({ name: "Website relaunch 2", default_auto_ok: null });
    expect(text((await open(p.b, at)).html)).toContain("New tasks follow the account's default (Settings): auto-OK off.");

    // Without the session's CSRF token nothing is made.
    const forged = await p.b.post("/act/create_project", { back: "/tasks", name: "Forged" });
    expect(forged.status).toBe(403);
    expect((await human.ok("list_projects", {})).items.map((x: { name: string }) => x.name)).not.toContain("Forged");
    await human.close();
  });

  it("project tabs say what they count", async () => {
    const p = await signedInPerson("Tab counts");
    const human = await connect(p.acc.human);
    const { project } = await human.ok("create_project", { name: "Counted" });
    for (let i = 0; i < 3; i++) await human.ok("create_task", { project_id: project.id, title: `Open ${i}` });
    const { task } = await human.ok("create_task", { project_id: project.id, title: "Finished" });
    await human.ok("complete_task", { task_id: task.id });
    const { html } = await open(p.b, "/tasks");
    expect(html).toMatch(/Counted<\/bdi> <span class="muted">3 open<\/span>/);
    await human.close();
  });

  it("shows a recurring task's rule and next occurrence, and completing it says and shows what comes next", async () => {
    const p = await signedInPerson("Recurring");
    const human = await connect(p.acc.human);
    const due = new Date(Date.now() + 2 * 86_400_000);
    const { task } = await human.ok("create_task", { title: "Water the plants", due_at: due.toISOString(), recurrence: "FREQ=WEEKLY;INTERVAL=2;COUNT=5" });
    const page = text((await open(p.b, `/tasks/${task.id}`)).html);
    expect(page).toContain("Repeats every 2 weeks, 5 times in all (occurrence 1, FREQ=WEEKLY;INTERVAL=2;COUNT=5).");
    expect(page).toMatch(/Completing it creates the next occurrence, due (in|\d)/);

    const done = await act(p.b, `/tasks/${task.id}`, "complete", { task_id: task.id });
    const next = done.headers.get("location") as string;
    expect(next).toMatch(/^\/tasks\/tsk_[0-9a-z]{16}$/);
    expect(next).not.toBe(`/tasks/${task.id}`);
    const shown = await open(p.b, next);
    expect(unescape(shown.html)).toMatch(/Completed “Water the plants”\. It repeats: this is its next occurrence, open and due \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC\./);
    expect(text(shown.html)).toContain("(occurrence 2, FREQ=WEEKLY;INTERVAL=2;COUNT=5)");
    await human.close();
  });

  it("history names what its ids are: the question, the run, the step's text, linked", async () => {
    const p = await signedInPerson("History names");
    const agent = await connect(p.acc.agent);
    const { task } = await agent.ok("create_task", { title: "Renew the domain" });
    const { steps } = await agent.ok("add_steps", { task_id: task.id, steps: ["Compare the prices"] });
    await agent.ok("set_step_status", { step_id: steps[0].id, status: "done" });
    await agent.ok("claim_task", { task_id: task.id });
    const { run } = await agent.ok("start_run", { task_id: task.id });
    await agent.ok("request_approval", { task_id: task.id, question: "One year or three?" });
    const { html } = await open(p.b, `/tasks/${task.id}`);
    const history = html.slice(html.indexOf('id="h-history"'));
    expect(history).toContain('<a href="#h-approval">“<bdi class="u">One year or three?</bdi>”</a>');
    expect(history).toContain(`<a href="/tasks/${task.id}/text/${steps[0].id}">“<bdi class="u">Compare the prices</bdi>”</a>`);
    // The run links to the task's runs; its agent is the entry's actor, named beside it, not again.
    expect(history).toContain(`started <a href="#h-runs">run</a>`);
    expect(history).not.toMatch(/(apr|stp)_[0-9a-z]{16}<|code>run_/);
    expect(history).not.toContain(`<code>${run.id}</code>`);
    await agent.close();
  });

  it("a done task is not 'held by'; the Agents page marks a lapsed claim and links to every task an agent holds", async () => {
    const p = await signedInPerson("Held tasks");
    const agent = await connect(p.acc.agent);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const { task } = await agent.ok("create_task", { title: `Held ${i}` });
      await agent.ok("claim_task", { task_id: task.id });
      ids.push(task.id);
    }
    await asServer(env.DB, env.DB.prepare("UPDATE tasks SET claim_expires_at = ? WHERE id = ?").bind(new Date(Date.now() - 60_000).toISOString(), ids[5]));
    const agents = await open(p.b, "/agents");
    expect(agents.html).toContain('<span class="badge s-expired">claim lapsed</span>');
    const all = `/tasks?assignee=${p.acc.agentName}&amp;status=unfinished`;
    expect(agents.html).toContain(`(4 of <a href="${all}">6</a>)`);
    expect(agents.html).toContain(`<a href="${all}">All 6 tasks ${p.acc.agentName} holds</a>`);
    const listed = await open(p.b, unescape(all));
    for (let i = 0; i < 6; i++) expect(listed.html).toContain(`Held ${i}</bdi>`);

    expect(text((await open(p.b, `/tasks/${ids[5]}`)).html)).toContain(`held by ${p.acc.agentName} (claim lapsed)`);
    const human = await connect(p.acc.human);
    await human.ok("complete_task", { task_id: ids[0] });
    const done = text((await open(p.b, `/tasks/${ids[0]}`)).html);
    expect(done).not.toContain("held by");
    await human.close();
    await agent.close();
  });

  it("apps of one name are told apart by where they send access, their client and the agent each acts as", async () => {
    const p = await signedInPerson("Twin apps");
    for (const [host, agentName] of [["127.0.0.1:33418", "host-a"], ["127.0.0.1:40222", "host-b"]]) {
      const { clientId, redirectUri } = await registerClient("Agent A Host", `http://${host}/callback`);
      const { verifier, challenge } = await pkce();
      const q = await consent(p.b, { clientId, redirectUri, challenge, scope: "tasks:read tasks:write" }, { actAs: "agent", agentName, access: "write" });
      await exchange(clientId, q.get("code") as string, verifier, redirectUri);
    }
    const { html } = await open(p.b, "/apps");
    const rows = html.split("<tr>").filter((r) => r.includes("Agent A Host"));
    expect(rows).toHaveLength(2);
    expect(rows.some((r) => r.includes("sends access to <bdi class=\"u\">127.0.0.1:33418</bdi>") && r.includes("agent <strong>host-a</strong>"))).toBe(true);
    expect(rows.some((r) => r.includes("sends access to <bdi class=\"u\">127.0.0.1:40222</bdi>") && r.includes("agent <strong>host-b</strong>"))).toBe(true);
    const clients = rows.map((r) => /client <code title="([^"]+)"/.exec(r)?.[1]);
    expect(new Set(clients).size).toBe(2);
  });

  it("the consent page shows each toolset's count with read and write and with read only, without script", async () => {
    const p = await signedInPerson("Consent counts");
    const { clientId, redirectUri } = await registerClient("Counting app");
    const { challenge } = await pkce();
    const { html } = await open(p.b, authorizePath({ clientId, redirectUri, challenge, scope: "tasks:read tasks:write" }));
    expect(html).not.toContain("<script");
    for (const t of TOOLSETS) {
      const read = t.tools.filter((x) => !WRITE_TOOLS.has(x)).length;
      expect(html, t.name).toContain(`${t.title} <span class="muted">(${t.tools.length} tools with read and write; ${read} with read only)</span>`);
    }
  });
});
