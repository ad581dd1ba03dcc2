/**
 * The confirmation step of what cannot wait, through real HTTP against the
 * Worker: deleting a task or a project, revoking a token or an app, purging a
 * trash item, emptying the trash. The start button is a GET form to
 * /confirm/:action, which reads in one batch and changes nothing; a POST to
 * /act/:action without `confirmed` is sent to that step and does nothing; the
 * step's own form acts. (Removing a push device: test/push.test.ts.) Also the
 * project's archive and unarchive on the tasks page.
 */
import { describe, expect, it } from "vitest";
import { ACTIONS } from "../src/web/console/actions.ts";
import { connect, createToken, snapshotDb } from "./helpers.ts";
import { act, flashOn, open, signedInPerson, unescape } from "./console.helpers.ts";
import { connectApp as connectByUrl, mcp, mcpStatus } from "./oauth-helpers.ts";
import { field } from "./web-helpers.ts";

/** The facts of a confirmation page, as text. */
function factsOf(html: string): string[] {
  const list = /<ul class="facts">([\s\S]*?)<\/ul>/.exec(html)?.[1] ?? "";
  return [...list.matchAll(/<li>([\s\S]*?)<\/li>/g)].map((m) => unescape(m[1].replace(/<[^>]+>/g, "")));
}

const headingOf = (html: string) => unescape((/<h1[^>]*>([\s\S]*?)<\/h1>/.exec(html)?.[1] ?? "").replace(/<[^>]+>/g, ""));

describe("what cannot wait is confirmed first", () => {
  it("every action with a confirmation step: a POST without `confirmed` goes to the step and changes nothing", async () => {
    const p = await signedInPerson("Unconfirmed posts");
    const human = await connect(p.acc.human);
    const { task } = await human.ok("create_task", { title: "Keep me" });
    const { project } = await human.ok("create_project", { name: "Keep this project" });
    const gone = (await human.ok("create_task", { title: "In the trash" })).task.id as string;
    await human.ok("delete_task", { task_id: gone });
    const item = (await human.ok("list_trash")).items[0].id as string;
    const extra = await createToken({ accountId: p.acc.accountId, kind: "agent", scope: "read", agent: "reader", label: "reader laptop" });
    const fields: Record<string, Record<string, string>> = {
      delete: { task_id: task.id },
      delete_project: { project_id: project.id },
      revoke: { token_id: extra.id },
      purge: { item_id: item },
      empty: {},
    };
    const confirming = Object.entries(ACTIONS).filter(([, s]) => s.confirm).map(([n]) => n).sort();
    expect(confirming).toEqual(Object.keys(fields).sort());
    const before = await snapshotDb();
    for (const [name, f] of Object.entries(fields)) {
      const res = await act(p.b, "/trash", name, { ...f, confirmed: "no" });
      expect(res.status, name).toBe(303);
      const to = new URL(res.headers.get("location") as string, "https://x.invalid");
      expect(to.pathname, name).toBe(`/confirm/${name}`);
      expect(Object.fromEntries(to.searchParams), name).toEqual({ ...f, back: "/trash" });
      expect(await flashOn(p.b, "/trash"), name).toBeNull();
    }
    expect(await snapshotDb()).toBe(before);
    await human.close();
  });

  it("delete a task: the step names it and its subtasks, says the trash keeps them and for how long; Cancel goes back; confirmed, it is done", async () => {
    const p = await signedInPerson("Confirm a task");
    const human = await connect(p.acc.human);
    await human.ok("update_account_settings", { trash_retention_days: 12 });
    const hostile = `Release \u202eevil\u202c ${"x".repeat(300)}`;
    const { task } = await human.ok("create_task", { title: hostile });
    for (const title of ["Draft", "Review"]) await human.ok("create_task", { title, parent_id: task.id });
    const page = `/tasks/${task.id}`;
    const taskPage = await open(p.b, page);
    expect(taskPage.html).toContain(`<form method="get" action="/confirm/delete"><input type="hidden" name="task_id" value="${task.id}"/><input type="hidden" name="back" value="${page}"/>`);

    const before = await snapshotDb();
    const step = await open(p.b, `/confirm/delete?task_id=${task.id}&back=${encodeURIComponent(page)}`);
    expect(step.res.status).toBe(200);
    expect(step.d1, "the session, then one batch").toBe(2);
    expect(step.html).toContain(`<bdi class="u"`);
    expect(headingOf(step.html)).toBe(`Delete “${hostile.slice(0, 200)}…”?`);
    expect(factsOf(step.html)).toEqual([
      `The task “${hostile.slice(0, 200)}…” and its 2 subtasks go to the trash together, as one item.`,
      "Agents no longer see them, and a run on them that is still going ends.",
      "The trash keeps them for 12 days (Settings); until then, Restore on the Trash page brings them back exactly as before. After that they are purged for good.",
    ]);
    expect(step.html).toContain('<button type="submit" class="danger">Delete the task and its 2 subtasks</button>');
    expect(step.html).toContain(`<a class="button" href="${page}">Cancel</a>`);
    expect(step.html).toContain('<input type="hidden" name="confirmed" value="yes"/>');
    expect(step.html).toMatch(/<form method="post" action="\/act\/delete"/);
    // Showing the step, and leaving it, changed nothing.
    expect(await snapshotDb()).toBe(before);

    const done = await p.b.post("/act/delete", { csrf: field(step.html, "csrf"), back: page, task_id: task.id, confirmed: "yes" });
    expect(done.headers.get("location")).toBe("/tasks");
    expect(await flashOn(p.b, "/tasks")).toMatch(/^ok: Moved the task and 2 subtask\(s\) to the trash/);
    expect((await human.ok("list_trash")).items[0]).toMatchObject({ kind: "task", target_id: task.id, item_count: 3 });
    // The step of a task no longer there says so, and offers only the way back.
    const again = await open(p.b, `/confirm/delete?task_id=${task.id}&back=${encodeURIComponent(page)}`);
    expect(again.res.status).toBe(404);
    expect(again.html).toContain("There is no such task here any more");
    expect(again.html).not.toContain('name="confirmed"');
    await human.close();
  });

  it("archive, unarchive and delete a project on the tasks page: archived ones are listed apart and open with Unarchive; delete says how many tasks go", async () => {
    const p = await signedInPerson("Projects");
    const human = await connect(p.acc.human);
    const { project } = await human.ok("create_project", { name: "Website" });
    const ids: string[] = [];
    for (const title of ["Hero", "Footer", "Pricing"]) ids.push((await human.ok("create_task", { title, project_id: project.id })).task.id);
    await human.ok("complete_task", { task_id: ids[2] });
    const page = `/tasks?project=${project.id}`;
    expect((await open(p.b, page)).html).toContain('action="/act/archive_project"');

    await act(p.b, page, "archive_project", { project_id: project.id });
    expect(await flashOn(p.b, page)).toBe(
      "ok: Archived “Website”: its 2 unfinished tasks stay as they are (agents still see and work on them), but no agent may add a task to it, move one in or out, rename it or unarchive it. It leaves the project tabs; Archived, under them, lists it.",
    );
    expect((await human.ok("get_project", { project_id: project.id })).project.archived_at).not.toBeNull();
    const list = await open(p.b, "/tasks");
    expect(list.html).toMatch(/<summary>Archived projects \(1\)<\/summary><ul class="tabs" aria-label="Archived projects"><li><a href="\/tasks\?project=prj_[0-9a-z]{16}"><bdi class="u">Website<\/bdi>/);
    const archived = await open(p.b, page);
    expect(archived.html).toContain("is archived: it is out of the project tabs");
    expect(archived.html).toContain('action="/act/unarchive_project"');
    expect(archived.html).toContain("(archived)</option>");
    await act(p.b, page, "unarchive_project", { project_id: project.id });
    expect(await flashOn(p.b, page)).toBe("ok: Unarchived “Website”: it is back among the project tabs.");
    expect((await human.ok("get_project", { project_id: project.id })).project.archived_at).toBeNull();

    const before = await snapshotDb();
    const step = await open(p.b, `/confirm/delete_project?project_id=${project.id}&back=${encodeURIComponent(page)}`);
    expect(step.d1).toBe(2);
    expect(headingOf(step.html)).toBe("Delete the project “Website”?");
    expect(factsOf(step.html)).toEqual([
      "The project “Website” and its 3 tasks (2 of them unfinished) go to the trash together, as one item.",
      "Agents no longer see its tasks, and runs on them that are still going end.",
      "The trash keeps them for 30 days (Settings); until then, Restore on the Trash page brings them back exactly as before. After that they are purged for good.",
    ]);
    expect(step.html).toContain(">Delete the project and its 3 tasks</button>");
    expect(await snapshotDb()).toBe(before);
    const done = await p.b.post("/act/delete_project", { csrf: field(step.html, "csrf"), back: page, project_id: project.id, confirmed: "yes" });
    expect(done.headers.get("location")).toBe("/tasks");
    expect(await flashOn(p.b, "/tasks")).toMatch(/^ok: Moved the project and its 3 tasks to the trash; Trash restores them until \d{4}-\d\d-\d\d \d\d:\d\d UTC\.$/);
    expect((await human.ok("list_trash")).items[0]).toMatchObject({ kind: "project", target_id: project.id, item_count: 4 });
    await human.close();
  });

  it("revoke a token and an app: the step says what it is, that its next request is refused and that nothing brings it back", async () => {
    const p = await signedInPerson("Revoke");
    const extra = await createToken({ accountId: p.acc.accountId, kind: "agent", scope: "read", agent: "reader", label: "reader laptop" });
    const step = await open(p.b, `/confirm/revoke?token_id=${extra.id}&back=%2Fapps`);
    expect(headingOf(step.html)).toBe("Revoke “reader laptop”?");
    const [what, ...rest] = factsOf(step.html);
    expect(what).toMatch(/^A tg_ token \(tg_[A-Za-z0-9_-]+…\); it acts as the agent “reader” and may only read\.$/);
    expect(rest).toEqual([
      "Its next request is refused, at once: whatever it is doing stops there.",
      "This cannot be undone, and the trash does not keep tokens: to let it in again, create a new token here.",
    ]);
    expect(step.html).toContain(">Revoke the token</button>");
    expect(await mcpStatus(extra.secret)).toBe(200);

    const app = await connectByUrl({ actAs: "agent", agentName: "helper", access: "write" }, { clientName: "Notes App" });
    const client = await mcp(app.tokens.access_token);
    const apps = await open(app.browser, "/apps");
    const grantId = /name="token_id" value="([^"]+)"\/><input type="hidden" name="back" value="\/apps"\/><button type="submit" class="danger" aria-label="Revoke Notes App"/.exec(apps.html)?.[1] as string;
    expect(grantId).toBeDefined();
    const unconfirmed = await app.browser.post("/act/revoke", { csrf: field(apps.html, "csrf"), back: "/apps", token_id: grantId });
    expect(unconfirmed.headers.get("location")).toBe(`/confirm/revoke?token_id=${grantId}&back=%2Fapps`);
    const appStep = await open(app.browser, unconfirmed.headers.get("location") as string);
    expect(headingOf(appStep.html)).toBe("Revoke “Notes App”?");
    expect(factsOf(appStep.html)).toEqual([
      "An app connected by URL; it acts as the agent “helper” and may read and write.",
      "Its next request is refused, at once: whatever it is doing stops there.",
      "This cannot be undone, and the trash does not keep connections: to let the app in again, connect it again by URL.",
    ]);
    expect(await mcpStatus(app.tokens.access_token)).toBe(200);
    await app.browser.post("/act/revoke", { csrf: field(appStep.html, "csrf"), back: "/apps", token_id: grantId, confirmed: "yes" });
    expect(await flashOn(app.browser, "/apps")).toBe("ok: Revoked “Notes App”: its next request is refused.");
    expect(await mcpStatus(app.tokens.access_token)).toBe(401);
    await client.close().catch(() => {});
    expect(await mcpStatus(extra.secret), "the token whose step was only shown still works").toBe(200);
  });

  it("purge one item and empty the trash: the step counts what goes for good", async () => {
    const p = await signedInPerson("Trash");
    const human = await connect(p.acc.human);
    const { task } = await human.ok("create_task", { title: "Old plan" });
    await human.ok("create_task", { title: "Its part", parent_id: task.id });
    await human.ok("delete_task", { task_id: task.id });
    const lone = (await human.ok("create_task", { title: "Lone" })).task.id;
    await human.ok("delete_task", { task_id: lone });
    const item = (await human.ok("list_trash")).items.find((i: { target_id: string }) => i.target_id === task.id).id;

    const purge = await open(p.b, `/confirm/purge?item_id=${item}&back=%2Ftrash`);
    expect(headingOf(purge.html)).toBe("Delete “Old plan” forever?");
    expect(factsOf(purge.html)).toEqual([
      "The task “Old plan” and its 1 subtask are purged for good.",
      "Steps and comments deleted from its tasks on their own go with it.",
      "This cannot be undone: Restore can no longer bring it back.",
    ]);
    const empty = await open(p.b, "/confirm/empty?back=%2Ftrash");
    expect(headingOf(empty.html)).toBe("Empty the trash?");
    expect(factsOf(empty.html)).toEqual([
      "All 2 items in the trash (3 rows deleted in all: tasks, projects, steps, comments) are purged for good.",
      "This cannot be undone: Restore can no longer bring any of them back.",
    ]);
    expect(empty.html).toContain(">Empty the trash: purge 2 items</button>");
    expect((await human.ok("list_trash")).items).toHaveLength(2);
    await p.b.post("/act/purge", { csrf: field(purge.html, "csrf"), back: "/trash", item_id: item, confirmed: "yes" });
    expect(await flashOn(p.b, "/trash")).toBe("ok: Purged “Old plan” for good.");
    await p.b.post("/act/empty", { csrf: field(empty.html, "csrf"), back: "/trash", confirmed: "yes" });
    expect(await flashOn(p.b, "/trash")).toBe("ok: Purged 1 item(s) for good.");
    expect((await human.ok("list_trash")).items).toEqual([]);
    await human.close();
  });

  it("another account's task, a malformed id, an unknown action, a foreign way back: nothing shown, nothing changed", async () => {
    const a = await signedInPerson("Account A");
    const b = await signedInPerson("Account B");
    const other = await connect(b.acc.human);
    const { task } = await other.ok("create_task", { title: "B's secret plan" });
    const before = await snapshotDb();
    const theirs = await open(a.b, `/confirm/delete?task_id=${task.id}&back=%2Ftasks`);
    expect(theirs.res.status).toBe(404);
    expect(theirs.html).not.toContain("secret plan");
    for (const path of ["/confirm/delete?task_id=%27%20OR%201%3D1", "/confirm/revoke", "/confirm/purge?item_id=trs_x"]) {
      const r = await open(a.b, path);
      expect(r.res.status, path).toBe(404);
      expect(r.html, path).toContain("Nothing to confirm");
    }
    expect((await open(a.b, "/confirm/approve?task_id=x")).res.status).toBe(404);
    const offsite = await open(a.b, `/confirm/empty?back=${encodeURIComponent("https://evil.example/")}`);
    expect(offsite.html).toContain('<a class="button" href="/">Cancel</a>');
    expect(offsite.html).toContain('<input type="hidden" name="back" value="/"/>');
    expect(await snapshotDb()).toBe(before);
    await other.close();
  });
});
