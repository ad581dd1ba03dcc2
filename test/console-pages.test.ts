/**
 * Every page of the web console, signed in through the form: what it shows,
 * its security headers, at most 3 D1 round trips (x-d1-calls) and under 60 KB
 * before compression (a task's page, which carries the forms that edit it and
 * its parts, under 72 KB), for an ordinary busy account and for one where every
 * list is longer than a page and every text is as long as the tools allow.
 */
import { describe, expect, it } from "vitest";
import { connect, createToken, type TestClient } from "./helpers.ts";
import { expectPageSecurity } from "./web-helpers.ts";
import { STYLESHEET_PATH } from "../src/web/style.ts";
import { open, signedInPerson, type Person } from "./console.helpers.ts";

const MAX_BYTES = 60_000;
/** A task's page: its text and lists as the others, and the forms that edit the task, its steps, labels, dependencies and calendar links. */
const MAX_TASK_BYTES = 72_000;
const MAX_D1 = 3;

/** Runs the calls a few at a time (the account's data is independent). */
async function inChunks<T>(items: T[], size: number, f: (item: T, i: number) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map((x, j) => f(x, i + j)));
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);
const long = (n: number, word: string) => (word + " ").repeat(Math.ceil(n / (word.length + 1))).slice(0, n).trim().padEnd(n, "x");

async function pageFigures(p: Person, paths: string[]) {
  const figures: Record<string, { d1: number; bytes: number }> = {};
  for (const path of paths) {
    const r = await open(p.b, path);
    expect(r.res.status, path).toBe(200);
    expectPageSecurity(r.res, expect, path);
    expect(r.res.headers.get("cache-control"), path).toBe("no-store");
    figures[path] = { d1: r.d1, bytes: r.bytes };
  }
  return figures;
}

function expectWithinBudget(figures: Record<string, { d1: number; bytes: number }>) {
  for (const [path, f] of Object.entries(figures)) {
    expect(f.d1, `${path} D1 round trips`).toBeGreaterThanOrEqual(1);
    expect(f.d1, `${path} D1 round trips`).toBeLessThanOrEqual(MAX_D1);
    expect(f.bytes, `${path} bytes`).toBeLessThan(/^\/tasks\/tsk_[0-9a-z]+$/.test(path) ? MAX_TASK_BYTES : MAX_BYTES);
  }
}

describe("every console page, for a busy account", () => {
  it("shows its data within 3 D1 round trips and 60 KB", async () => {
    const p = await signedInPerson("Busy account");
    const human = await connect(p.acc.human);
    const agent = await connect(p.acc.agent);
    const { project } = await human.ok("create_project", { name: "Launch" });
    const ids: string[] = [];
    await inChunks(range(24), 6, async (i) => {
      const { task } = await human.ok("create_task", { title: `Launch task ${i}`, project_id: project.id, notes: "Some notes about it.", due_at: new Date(Date.now() + i * 86_400_000).toISOString() });
      ids[i] = task.id;
    });
    await human.ok("label_task", { task_id: ids[0], labels: ["urgent", "marketing"] });
    await human.ok("add_steps", { task_id: ids[0], steps: ["One", "Two", "Three"] });
    await inChunks(range(5), 5, async (i) => {
      await agent.ok("claim_task", { task_id: ids[i] });
      const { run } = await agent.ok("start_run", { task_id: ids[i] });
      for (const step of ["Read the brief", "Drafted", "Checked"]) await agent.ok("log_run_event", { run_id: run.id, kind: "progress", message: step });
      await human.ok("comment_on_task", { task_id: ids[i], body: "Keep it short." });
      await agent.ok("complete_task", { task_id: ids[i], note: `Task ${i} is ready; approve?` });
    });
    // After the agent's completions: an agent completes no task that waits on unfinished work.
    await human.ok("add_dependency", { task_id: ids[1], depends_on_id: ids[0] });
    await human.ok("delete_task", { task_id: ids[23] });
    await agent.ok("claim_task", { task_id: ids[10] });
    await agent.ok("start_run", { task_id: ids[10] });

    const figures = await pageFigures(p, ["/", "/tasks", `/tasks/${ids[0]}`, "/agents", "/apps", "/webhooks", "/trash", "/activity", "/settings"]);
    console.log("busy account:", JSON.stringify(figures));
    expectWithinBudget(figures);

    const inbox = await open(p.b, "/");
    expect(inbox.html).toContain("<title>(5) Inbox · Taskgate</title>");
    expect(inbox.html).toMatch(/<span class="count" aria-label="5 pending">5<\/span>/);
    expect(inbox.html.match(/<article class="card"/g)).toHaveLength(5);
    expect(inbox.html).toContain("Task 4 is ready; approve?");
    expect(inbox.html).toContain("Read the brief");
    expect(inbox.html).toContain("Keep it short.");
    expect(inbox.html.indexOf("Launch task 4")).toBeLessThan(inbox.html.indexOf("Launch task 0"));

    const tasks = await open(p.b, `/tasks?project=${project.id}&status=awaiting_approval`);
    expect(tasks.html.match(/<tr>/g)?.length).toBe(1 + 5);
    const labelled = await open(p.b, "/tasks?label=urgent");
    expect(labelled.html).toContain("Launch task 0");
    expect(labelled.html).not.toContain("Launch task 1<");
    const mine = await open(p.b, "/tasks?assignee=bot&status=in_progress");
    expect(mine.html).toContain("Launch task 10");
    const overdue = await open(p.b, "/tasks?due=week");
    expect(overdue.html).toContain("Launch task 6");
    expect(overdue.html).not.toContain("Launch task 9<");
    const search = await open(p.b, "/tasks?q=launch+task+7");
    expect(search.html).toContain("Launch task 7");
    expect(search.res.headers.get("x-d1-calls")).toBe("2");

    const task = await open(p.b, `/tasks/${ids[0]}`);
    for (const text of ["Launch task 0", "Some notes about it.", "Three", "urgent", "Launch task 1", "Read the brief", "Keep it short.", "Waiting for your sign-off", "claim_task"]) {
      expect(task.html, text).toContain(text);
    }
    const agents = await open(p.b, "/agents");
    expect(agents.html).toContain("Launch task 10");
    expect(agents.html).toMatch(/<span class="badge s-active">active<\/span>/);
    const apps = await open(p.b, "/apps");
    expect(apps.html).toContain("http://taskgate.test/mcp".replace("http:", "https:"));
    expect(apps.html.match(/Revoke /g)?.length).toBe(4);
    const trash = await open(p.b, "/trash");
    expect(trash.html).toContain("Launch task 23");
    const feed = await open(p.b, "/activity?actor=bot&tool=complete_task");
    expect(feed.html.match(/<code>complete_task<\/code>/g)).toHaveLength(5);
    await Promise.all([human.close(), agent.close()]);
  });

  it("serves one stylesheet with a year of cache lifetime", async () => {
    const p = await signedInPerson();
    const { html } = await open(p.b, "/");
    expect(html).toContain(`<link rel="stylesheet" href="${STYLESHEET_PATH}"/>`);
    const css = await p.b.get(STYLESHEET_PATH);
    expect(css.status).toBe(200);
    expect(css.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(css.headers.get("content-type")).toMatch(/^text\/css/);
    const text = await css.text();
    expect(text).toContain("body.console header.top");
    // One header bar on every page: the sign-in, setup and consent pages share the console's.
    expect(text).toMatch(/^header\.top \{[^}]*#1c2430/m);
    expect(html).not.toMatch(/<script|style="/);
  });
});

describe("every console page, for an account with more than a page of everything at full length", () => {
  it("stays within 3 D1 round trips and 60 KB", { timeout: 600_000 }, async () => {
    const p = await signedInPerson("Full account");
    const human = await connect(p.acc.human);
    const agent = await connect(p.acc.agent);
    const title = (i: number) => long(500, `Title${i}`);

    // Inbox: more approvals than a page, each with the longest question, notes, run log and comments.
    const approvals: string[] = [];
    await inChunks(range(9), 3, async (i) => {
      const { task } = await human.ok("create_task", { title: title(i), notes: long(20_000, "notes") });
      approvals[i] = task.id;
      await agent.ok("claim_task", { task_id: task.id });
      const { run } = await agent.ok("start_run", { task_id: task.id });
      for (const j of range(7)) await agent.ok("log_run_event", { run_id: run.id, kind: "note", message: long(4000, `event${j}`) });
      for (const j of range(3)) await human.ok("comment_on_task", { task_id: task.id, body: long(20_000, `comment${j}`) });
      await agent.ok("complete_task", { task_id: task.id, note: long(2000, "question") });
    });

    // One task with more of everything than its page shows.
    const big = approvals[0];
    await human.ok("add_steps", { task_id: big, steps: range(45).map((j) => long(2000, `step${j}`)) });
    await human.ok("label_task", { task_id: big, labels: range(40).map((j) => long(100, `label${j}`)) });
    await human.ok("decompose_task", { task_id: big, subtasks: range(20).map((j) => ({ title: long(500, `sub${j}`) })) });
    await inChunks(range(9), 3, (j) => human.ok("comment_on_task", { task_id: big, body: long(20_000, `more${j}`) }));
    const deps: string[] = [];
    await inChunks(range(32), 8, async (j) => {
      const { task } = await human.ok("create_task", { title: long(500, `dep${j}`) });
      deps[j] = task.id;
    });
    await inChunks(range(16), 4, (j) => human.ok("add_dependency", { task_id: big, depends_on_id: deps[j] }));
    await inChunks(range(16), 4, (j) => human.ok("add_dependency", { task_id: deps[16 + j], depends_on_id: big }));

    // Projects, labels, agents and tokens beyond what a filter or a page lists.
    await inChunks(range(100), 10, (j) => human.ok("create_project", { name: long(200, `project${j}`) }));
    await human.ok("label_task", { task_id: deps[0], labels: range(50).map((j) => long(100, `tag${j}`)) });
    await human.ok("label_task", { task_id: deps[1], labels: range(50).map((j) => long(100, `mark${j}`)) });
    const agents: TestClient[] = [];
    await inChunks(range(11), 4, async (j) => {
      const name = `agent-${String(j).padStart(2, "0")}-${"x".repeat(50)}`;
      const t = await createToken({ accountId: p.acc.accountId, kind: "agent", scope: "write", agent: name, label: long(100, `token${j}`) });
      const a = await connect(t.secret);
      agents.push(a);
      for (const k of range(5)) {
        const { task } = await human.ok("create_task", { title: long(500, `held${j}-${k}`) });
        await a.ok("claim_task", { task_id: task.id });
        await a.ok("start_run", { task_id: task.id });
      }
    });
    await inChunks(range(45), 9, (j) => createToken({ accountId: p.acc.accountId, kind: "human", scope: "read", label: long(100, `laptop${j}`) }));

    // More in the trash than a page, with the longest titles.
    await inChunks(range(35), 7, async (j) => {
      const { task } = await human.ok("create_task", { title: long(500, `trashed${j}`) });
      await human.ok("delete_task", { task_id: task.id });
    });

    const figures = await pageFigures(p, [
      "/", "/?page=2", "/tasks", `/tasks?q=${encodeURIComponent("held1")}`, `/tasks/${big}`, `/tasks/${big}/text/notes`,
      "/agents", "/apps", "/apps?tokens=all", "/trash", "/activity", "/settings",
    ]);
    console.log("full account:", JSON.stringify(figures));
    expectWithinBudget(figures);

    const inbox = await open(p.b, "/");
    expect(inbox.html.match(/<article class="card"/g)).toHaveLength(8);
    expect(inbox.html).toContain('href="/?page=2"');
    expect((await open(p.b, "/?page=2")).html.match(/<article class="card"/g)).toHaveLength(1);
    const task = await open(p.b, `/tasks/${big}`);
    expect(task.html).toContain("and 20 more steps");
    expect(task.html).toContain("and 10 more subtasks");
    expect(task.html).toContain(`/tasks/${big}/text/notes`);
    const notes = await open(p.b, `/tasks/${big}/text/notes`);
    expect(notes.html).toContain(long(20_000, "notes"));
    const agentsPage = await open(p.b, "/agents");
    expect(agentsPage.html.match(/<article class="card stretch"/g)).toHaveLength(10);
    expect(agentsPage.html).toContain("More agents");
    const next = /href="(\/agents\?after=[^"]+)"/.exec(agentsPage.html)?.[1] as string;
    expect((await open(p.b, next.replace(/&amp;/g, "&"))).html.match(/<article class="card stretch"/g)).toHaveLength(2);
    await Promise.all([human.close(), agent.close(), ...agents.map((a) => a.close())]);
  });
});
