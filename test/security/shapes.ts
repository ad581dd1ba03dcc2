import { connect, createToken, type SeededAccount, type TestClient } from "../helpers.ts";

/**
 * Every shape of data an account can hold, built through the tools: projects
 * (one archived), tasks with a subtask and a dependency, steps, comments by
 * the person and by an agent, labels, a calendar link, a running run with
 * events, a finished run, pending approvals, blocked, snoozed, done and
 * assigned tasks, and trash items (a task with its subtask, a step, a comment).
 *
 * Returns the ids by prefix and every distinctive text used, so that a leak
 * test can look for them. Each call stamps its texts with a fresh marker.
 * `tok` holds only tokens made here (their secrets in `secrets`), never the
 * account's four seeded tokens, so a caller drawing ids from the pool cannot
 * revoke its own credentials.
 */
export interface Shapes {
  ids: Record<string, string[]>;
  titles: string[];
  /** Secrets of the tokens made here. */
  secrets: string[];
}

function marker(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return Array.from(bytes, (b) => "abcdefghijklmnopqrstuvwxyz0123456789"[b % 36]).join("");
}

const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();

export async function seedShapes(acc: SeededAccount): Promise<Shapes> {
  const m = marker();
  const ids: Record<string, string[]> = {};
  const titles: string[] = [];
  const add = (id: string | null | undefined) => {
    if (!id) return;
    const list = (ids[id.slice(0, 3)] ??= []);
    if (!list.includes(id)) list.push(id);
  };
  const text = (s: string) => {
    titles.push(s);
    return s;
  };

  const helperName = text(`helper-${m}`);
  const helper = await createToken({ accountId: acc.accountId, kind: "agent", scope: "write", agent: helperName });
  const spare = await createToken({ accountId: acc.accountId, kind: "human", scope: "read", expiresAt: inDays(30) });
  add(helper.id);
  add(spare.id);

  const human = await connect(acc.human);
  const agent = await connect(acc.agent);
  const clients: TestClient[] = [human, agent];
  try {
    const task = async (client: TestClient, args: Record<string, unknown>) => {
      const { task: t } = await client.ok("create_task", args);
      add(t.id);
      return t.id as string;
    };

    const { project } = await human.ok("create_project", { name: text(`Roadmap ${m}`), description: text(`Plans for the year ${m}`) });
    add(project.id);
    const { project: old } = await human.ok("create_project", { name: text(`Old archive ${m}`), default_auto_ok: true });
    add(old.id);
    await task(human, { title: text(`Archived project task ${m}`), project_id: old.id });
    await human.ok("archive_project", { project_id: old.id });

    const parent = await task(human, {
      title: text(`Parent task ${m}`),
      project_id: project.id,
      notes: text(`Secret notes ${m}`),
      priority: "high",
      due_at: inDays(2),
      estimate_minutes: 90,
    });
    await task(human, { title: text(`Subtask ${m}`), parent_id: parent });
    const blocker = await task(human, { title: text(`Blocker ${m}`), project_id: project.id, due_at: inDays(1) });
    await human.ok("add_dependency", { task_id: parent, depends_on_id: blocker });

    const { steps } = await human.ok("add_steps", { task_id: parent, steps: [text(`Step one ${m}`), text(`Step two ${m}`), text(`Step three ${m}`)] });
    for (const s of steps) add(s.id);
    await human.ok("set_step_status", { step_id: steps[0].id, status: "done" });
    const deletedStep = await human.ok("delete_step", { step_id: steps[2].id });
    add(deletedStep.trash_id);

    add((await human.ok("comment_on_task", { task_id: parent, body: text(`Human comment ${m}`) })).comment.id);
    add((await agent.ok("comment_on_task", { task_id: parent, body: text(`Agent comment ${m}`) })).comment.id);
    const doomed = await human.ok("comment_on_task", { task_id: parent, body: text(`Doomed comment ${m}`) });
    add(doomed.comment.id);
    add((await human.ok("delete_comment", { comment_id: doomed.comment.id })).trash_id);

    const labelled = await human.ok("label_task", { task_id: parent, labels: [text(`urgent-${m}`), text(`client-${m}`)] });
    for (const l of labelled.labels) add(l.id);
    add((await human.ok("create_label", { name: text(`unused-${m}`), color: "#1f6feb" })).label.id);

    const { link } = await human.ok("link_calendar_event", {
      task_id: parent,
      provider: "google",
      event_id: text(`event-${m}`),
      title: text(`Kickoff meeting ${m}`),
      starts_at: inDays(1),
      ends_at: inDays(1.05),
      url: `https://calendar.example.com/${m}`,
    });
    add(link.id);

    const working = await task(human, { title: text(`Agent work ${m}`), project_id: project.id });
    await agent.ok("claim_task", { task_id: working });
    const { run: running } = await agent.ok("start_run", { task_id: working });
    add(running.id);
    add((await agent.ok("log_run_event", { run_id: running.id, kind: "progress", message: text(`Halfway there ${m}`) })).event.id);
    add(
      (await agent.ok("log_run_event", { run_id: running.id, kind: "artifact", message: text(`Draft report ${m}`), url: `https://files.example.com/${m}` }))
        .event.id,
    );

    const finished = await task(agent, { title: text(`Finished work ${m}`), project_id: project.id });
    const { run: done } = await agent.ok("start_run", { task_id: finished });
    add(done.id);
    add((await agent.ok("log_run_event", { run_id: done.id, kind: "note", message: text(`All checks green ${m}`) })).event.id);
    await agent.ok("finish_run", { run_id: done.id, outcome: "succeeded", summary: text(`Shipped it ${m}`) });
    const completed = await agent.ok("complete_task", { task_id: finished, note: text(`Please approve ${m}`) });
    add(completed.approval?.id);

    const asked = await task(human, { title: text(`Needs sign-off ${m}`) });
    add((await human.ok("request_approval", { task_id: asked, question: text(`Is this fine ${m}`) })).approval.id);

    const blocked = await task(human, { title: text(`Blocked task ${m}`), assignee: helperName });
    await human.ok("block_task", { task_id: blocked, reason: text(`Waiting for vendor ${m}`) });
    const snoozed = await task(human, { title: text(`Snoozed task ${m}`), due_at: inDays(3) });
    await human.ok("snooze_task", { task_id: snoozed, until: inDays(5) });
    const closed = await task(human, { title: text(`Done task ${m}`) });
    await human.ok("complete_task", { task_id: closed });

    const trashed = await task(human, { title: text(`Trashed task ${m}`), project_id: project.id });
    await task(human, { title: text(`Trashed subtask ${m}`), parent_id: trashed });
    for (const s of (await human.ok("add_steps", { task_id: trashed, steps: [text(`Trashed step ${m}`)] })).steps) add(s.id);
    add((await human.ok("delete_task", { task_id: trashed })).trash_id);

    for (const g of (await human.ok("list_agents", { limit: 100 })).items) add(g.id);
    return { ids, titles, secrets: [helper.secret, spare.secret] };
  } finally {
    await Promise.all(clients.map((c) => c.close()));
  }
}
