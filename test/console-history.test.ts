/**
 * The task page's History and the Activity page, entry by entry, after real
 * activity through MCP tools (an agent's and a person's: questions, sign-offs
 * approved and rejected, comments, steps, labels, runs, claims, dependencies,
 * moves, the trash, projects, labels, tokens): every rendered entry names its
 * actor (the person's display name or the agent), says no quoted text twice,
 * shows no raw id, and links each id its stored summary holds.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { asServer, connect, createToken } from "./helpers.ts";
import { open, signedInPerson, unescape } from "./console.helpers.ts";
import { Summary } from "../src/web/console/summary.tsx";

const ID = /\b(apr|run|stp|cmt|tsk|prj|trs|tok)_[0-9a-z]{16}\b/g;
const text = (html: string) => unescape(html.replace(/<[^>]+>/g, ""));

interface Entry {
  who: string;
  summaryHtml: string;
  raw: string;
}

/** The hrefs a link to this id may have: what the id names, or the trash item it is in. */
function accepts(id: string, href: string, task: string | null): boolean {
  if (href.startsWith("/trash#trs_")) return ["tsk", "prj", "stp", "cmt", "trs"].includes(id.slice(0, 3)) && (id.startsWith("trs_") ? href === `/trash#${id}` : true);
  const onTask = (anchor: string) => href === anchor || (task !== null && href === `/tasks/${task}${anchor}`) || new RegExp(`^/tasks/tsk_[0-9a-z]{16}${anchor}$`).test(href);
  switch (id.slice(0, 3)) {
    case "tsk": return href === `/tasks/${id}`;
    case "prj": return href === `/tasks?project=${id}`;
    case "stp":
    case "cmt": return /^\/tasks\/tsk_[0-9a-z]{16}\/text\//.test(href) && href.endsWith(`/text/${id}`);
    case "apr": return onTask("#h-approval") || onTask("#h-history") || href === `/approvals/${id}`;
    case "run": return onTask("#h-runs");
    case "tok": return href === "/apps";
    default: return false;
  }
}

/** Each entry's checks; `known` are texts the test wrote (titles, questions, bodies), each to be said at most once. */
function check(entries: Entry[], who: string[], known: string[], where: string, task: string | null): void {
  expect(entries.length, where).toBeGreaterThan(0);
  for (const e of entries) {
    const at = `${where}: ${e.raw}`;
    expect(who, at).toContain(e.who);
    const shown = text(e.summaryHtml);
    // No id shown as text: each is a link named by what it names.
    expect(shown.match(ID), at).toBeNull();
    const quoted = [...shown.matchAll(/[“"]([^”"]+)[”"]/g)].map((m) => m[1]);
    expect(new Set(quoted).size, `${at}\nshown: ${shown}`).toBe(quoted.length);
    for (const k of known) expect(shown.split(k).length - 1, `${at}\nshown: ${shown}\n"${k}" twice`).toBeLessThanOrEqual(1);
    const links = [...e.summaryHtml.matchAll(/<a href="([^"]+)"/g)].map((m) => unescape(m[1]));
    for (const id of new Set(e.raw.match(ID) ?? [])) {
      const i = links.findIndex((href) => accepts(id, href, task));
      expect(i, `${at}\nno link for ${id} among ${links.join(" ")}`).toBeGreaterThanOrEqual(0);
      links.splice(i, 1);
    }
  }
}

/** The History's entries of a task page, with their stored summaries (newest first, as the page lists them). */
async function historyOf(html: string, accountId: string, taskId: string): Promise<Entry[]> {
  const section = html.slice(html.indexOf('id="h-history"'), html.indexOf("All activity of this task"));
  const items = [...section.matchAll(/<li>([\s\S]*?)<\/li>/g)].map((m) => m[1]);
  const { results } = await env.DB.prepare("SELECT summary FROM activity WHERE target_id = ? AND account_id = ? ORDER BY created_at DESC, id DESC LIMIT ?")
    .bind(taskId, accountId, items.length)
    .all<{ summary: string }>();
  expect(results.length).toBe(items.length);
  return items.map((li, i) => ({
    who: text(/<strong>([\s\S]*?)<\/strong>/.exec(li)![1]),
    summaryHtml: /<bdi class="sum">([\s\S]*?)<\/bdi><\/div>/.exec(li)![1],
    raw: results[i].summary,
  }));
}

/** Every entry of the Activity page, page after page, with their stored summaries. */
async function activityOf(b: Parameters<typeof open>[0], accountId: string): Promise<Entry[]> {
  const rows: string[] = [];
  let path: string | null = "/activity";
  while (path) {
    const { html } = await open(b, path);
    const body = html.slice(html.indexOf("<tbody>"), html.indexOf("</tbody>"));
    rows.push(...[...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((m) => m[1]));
    const older = /<a class="button" href="([^"]+)">Older<\/a>/.exec(html);
    path = older ? unescape(older[1]) : null;
  }
  const { results } = await env.DB.prepare("SELECT summary FROM activity WHERE account_id = ? ORDER BY created_at DESC, id DESC").bind(accountId).all<{ summary: string }>();
  expect(results.length).toBe(rows.length);
  return rows.map((tr, i) => ({
    who: text(/<td data-label="Who">([\s\S]*?) <span class="badge">/.exec(tr)![1]),
    summaryHtml: /<td data-label="What" class="body">([\s\S]*?)<\/td>/.exec(tr)![1].replace(/ · <a href="\/tasks\/tsk_[0-9a-z]{16}">task<\/a>$/, ""),
    raw: results[i].summary,
  }));
}

describe("history and activity entries", () => {
  it("say each thing once, name who, and link every id they hold", async () => {
    const p = await signedInPerson("History says it once");
    const a = p.acc.accountId;
    await asServer(env.DB, env.DB.prepare("UPDATE people SET display_name = ? WHERE id = ?").bind("Ada Lovelace", p.personId));
    const who = ["Ada Lovelace (you)", p.acc.agentName];
    const agent = await connect(p.acc.agent);
    const person = await connect((await createToken({ accountId: a, kind: "human", scope: "write", personId: p.personId })).secret);
    const known = [
      "Renew the domain", "Update the DNS records", "Compare the prices", "Pay the invoice", "Tell the team",
      "FAQ: 5 questions enough?", "One year or three?", "Found a cheaper registrar", "Registrar found, cheaper by far",
      "Needs the invoice attached", "renewals-2026", "money-matters", "Infrastructure", "Old stuff", "Scratch notes",
    ];
    const pages: string[] = [];
    const seeTask = async (taskId: string, where: string) => {
      const { res, html } = await open(p.b, `/tasks/${taskId}`);
      expect(res.status).toBe(200);
      check(await historyOf(html, a, taskId), who, known, where, taskId);
      pages.push(html);
    };

    const { task } = await agent.ok("create_task", { title: "Renew the domain" });
    const dns = (await agent.ok("create_task", { title: "Update the DNS records" })).task;
    const { steps } = await agent.ok("add_steps", { task_id: task.id, steps: ["Compare the prices", "Pay the invoice", "Tell the team"] });
    await agent.ok("set_step_status", { step_id: steps[0].id, status: "done" });
    await agent.ok("delete_step", { step_id: steps[2].id });
    await agent.ok("claim_task", { task_id: task.id });
    const { run } = await agent.ok("start_run", { task_id: task.id });
    await agent.ok("log_run_event", { run_id: run.id, kind: "progress", message: "Prices compared at three registrars" });
    await seeTask(task.id, "steps, claim, run");

    // A question, answered: its text said once, in a link to it.
    await agent.ok("request_approval", { task_id: task.id, question: "FAQ: 5 questions enough?" });
    await seeTask(task.id, "a question asked, pending");
    await person.ok("approve_task", { task_id: task.id });
    await agent.ok("request_approval", { task_id: task.id, question: "One year or three?", choices: ["One year", "Three years"] });
    await person.ok("approve_task", { task_id: task.id, choice: "Three years" });
    await seeTask(task.id, "questions answered");

    const { comment } = await agent.ok("comment_on_task", { task_id: task.id, body: "Found a cheaper registrar" });
    await agent.ok("edit_comment", { comment_id: comment.id, body: "Registrar found, cheaper by far" });
    const scratch = (await agent.ok("comment_on_task", { task_id: task.id, body: "Scratch notes" })).comment;
    await agent.ok("delete_comment", { comment_id: scratch.id });
    await agent.ok("label_task", { task_id: task.id, labels: ["renewals-2026", "money-matters"] });
    await agent.ok("unlabel_task", { task_id: task.id, labels: ["money-matters"] });
    await agent.ok("add_dependency", { task_id: task.id, depends_on_id: dns.id });
    await agent.ok("remove_dependency", { task_id: task.id, depends_on_id: dns.id });
    await seeTask(task.id, "comments, labels, dependencies");

    const { project } = await person.ok("create_project", { name: "Infrastructure" });
    await person.ok("move_task", { task_id: task.id, project_id: project.id });
    await person.ok("assign_task", { task_id: dns.id, assignee: p.acc.agentName });
    await person.ok("block_task", { task_id: dns.id, reason: "Waiting for the registrar" });
    await person.ok("unblock_task", { task_id: dns.id });
    await person.ok("set_auto_ok", { task_id: dns.id, auto_ok: true });
    await person.ok("set_auto_ok", { task_id: dns.id, auto_ok: false });
    await seeTask(dns.id, "assign, block, auto-OK");

    // A sign-off rejected (its reason in a comment said once), then approved.
    await agent.ok("complete_task", { task_id: task.id, note: "Renewed for three years" });
    await seeTask(task.id, "a sign-off requested");
    await person.ok("reject_task", { task_id: task.id, reason: "Needs the invoice attached" });
    await seeTask(task.id, "a sign-off rejected");
    await agent.ok("finish_run", { run_id: run.id, outcome: "succeeded", summary: "Renewed and invoiced" });
    await agent.ok("complete_task", { task_id: task.id });
    await person.ok("approve_task", { task_id: task.id, note: "Thanks" });
    await person.ok("reopen_task", { task_id: task.id, reason: "One more check" });
    await seeTask(task.id, "approved, reopened");

    // The trash: a task deleted and restored, a project deleted, labels made, renamed and deleted, a token revoked.
    const deleted = await person.ok("delete_task", { task_id: dns.id });
    await person.ok("restore_from_trash", { item_id: deleted.trash_id });
    await seeTask(dns.id, "deleted and restored");
    const old = (await person.ok("create_project", { name: "Old stuff" })).project;
    await person.ok("delete_project", { project_id: old.id });
    const label = (await person.ok("create_label", { name: "later-maybe" })).label;
    await person.ok("rename_label", { label_id: label.id, name: "someday" });
    await person.ok("delete_label", { label_id: label.id });
    const spare = await createToken({ accountId: a, kind: "agent", scope: "read", agent: p.acc.agentName, label: "spare reader" });
    await person.ok("revoke_token", { token_id: spare.id });

    const all = await activityOf(p.b, a);
    const tools = new Set((await env.DB.prepare("SELECT DISTINCT tool FROM activity WHERE account_id = ?").bind(a).all<{ tool: string }>()).results.map((r) => r.tool));
    expect(tools.size).toBeGreaterThanOrEqual(30);
    check(all, who, known, "the Activity page", null);

    // What the summaries said twice before: a question, and a rejection's reason; a run's agent beside the agent who acted.
    const history = pages.join("\n");
    expect(history).not.toMatch(/asked question <a[^>]*>“<bdi class="u">FAQ: 5 questions enough\?<\/bdi>”<\/a>: FAQ/);
    expect(history).toContain(`asked question <a href="#h-history">“<bdi class="u">FAQ: 5 questions enough?</bdi>”</a>`);
    expect(history).toMatch(/\(<a href="\/tasks\/tsk_[0-9a-z]{16}\/text\/cmt_[0-9a-z]{16}">comment<\/a>\): Needs the invoice attached/);
    expect(history).toContain(`started <a href="#h-runs">run</a>`);
    const activity = text(all.map((e) => e.summaryHtml).join("\n"));
    expect(activity).toContain('labelled "renewals-2026" (new), "money-matters" (new)');
    expect(activity).toContain("claimed and started");
    expect(activity).not.toContain(`claimed by ${p.acc.agentName}`);
    await agent.close();
    await person.close();
  });
});

describe("a summary as rendered", () => {
  const render = async (props: Parameters<typeof Summary>[0]) => text(String(await (Summary(props) as unknown as Promise<string> | string)));
  const apr = "apr_0123456789abcdef";
  const named = new Map([[apr, { id: apr, kind: "approval" as const, text: 'Use "fast" mode?', trashed: null, task_id: "tsk_0123456789abcdef", pending: 1 }]]);

  it("a question with quotes in it is said once", async () => {
    expect(await render({ text: `asked question ${apr}: Use "fast" mode?`, tool: "request_approval", taskId: "tsk_0123456789abcdef", named })).toBe("asked question “Use \"fast\" mode?”");
  });

  it("without a lookup (a question since purged) the id is a word, the question said once", async () => {
    expect(await render({ text: `asked question ${apr}: Ship it?`, tool: "request_approval", target: "tsk_0123456789abcdef" })).toBe("asked question: Ship it?");
  });

  it("new labels not found among those listed are said as stored", async () => {
    expect(await render({ text: 'labelled "a, b", "c" (new: a, b, x)', tool: "label_task" })).toBe('labelled "a, b" (new), "c" (new: x)');
    expect(await render({ text: 'labelled "\u202Eevil" (new: \u202Eevil)', tool: "label_task" })).toBe('labelled "\u202Eevil" (new)');
  });
});
