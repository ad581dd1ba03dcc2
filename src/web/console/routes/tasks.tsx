/** Tasks: the list with its filters and search, one task, and one whole text of a task. */
import { Hono } from "hono";
import { readFrame, readTaskMove, readTaskPage, readTasksPage, readTaskText } from "../../../db/console.ts";
import { page as pageOf } from "../../../db/cursor.ts";
import { envOf, type WebEnv } from "../../context.ts";
import { requireSession } from "../../session.ts";
import { depSearch, taskQuery, tasksRead, TASKS_PAGE } from "../queries.ts";
import { MessagePage } from "../pages/message.tsx";
import { TasksPage } from "../pages/tasks.tsx";
import { TaskPage, TaskTextPage, TASK_LIMITS } from "../pages/task.tsx";
import { MOVE_CLIP, MovePage } from "../pages/task/edit.tsx";
import { render, sessionOf } from "./shared.tsx";

export const tasksRoutes = new Hono<WebEnv>();

tasksRoutes.get("/", requireSession(), async (c) => {
  const s = await sessionOf(c);
  const query = taskQuery(c.req.query());
  const { problem, ...read } = tasksRead(query, c.req.query("cursor"), new Date().toISOString());
  const data = await readTasksPage(envOf(c).DB, s.accountId, read);
  let next: string | null = null;
  if (data.search) data.search = data.search.slice(0, TASKS_PAGE);
  else ({ items: data.tasks, next_cursor: next } = pageOf(data.tasks, TASKS_PAGE, (r) => ({ k: r.created_at, id: r.id })));
  const notice = problem ? { kind: "error" as const, text: problem } : undefined;
  return render(c, s, data, (v) => <TasksPage view={v} data={data} query={query} nextCursor={next} />, problem ? 400 : 200, [], { notice });
});

tasksRoutes.get("/:id", requireSession(), async (c) => {
  const s = await sessionOf(c);
  const id = c.req.param("id");
  const dep = depSearch(c.req.query("dep"));
  const data = /^tsk_[0-9a-z]{16}$/.test(id) ? await readTaskPage(envOf(c).DB, s.accountId, id, TASK_LIMITS, dep.words) : null;
  if (!data?.task) {
    const frame = data ?? (await readFrame(envOf(c).DB, s.accountId));
    return render(c, s, frame, (v) => (
      <MessagePage view={v} title="Task not found" section="tasks">
        There is no task {id} in this account. It may have been deleted (the Trash page lists what was); Tasks lists the others.
      </MessagePage>
    ), 404);
  }
  // A choice picked from a push notification's button (?approval=…&choice=N): shown picked on this question only, for the person to send.
  const choice = c.req.query("choice");
  const picked = data.approval && c.req.query("approval") === data.approval.id && /^[0-7]$/.test(choice ?? "") ? Number(choice) : null;
  // Which part shows its changes: labels, dependencies, calendar links, or one step (`?edit=`).
  const edit = /^(labels|deps|calendar|stp_[0-9a-z]{16})$/.test(c.req.query("edit") ?? "") ? (c.req.query("edit") as string) : null;
  return render(c, s, data, (v) => <TaskPage view={v} data={data} picked={picked} dep={dep} edit={edit} />);
});

tasksRoutes.get("/:id/move", requireSession(), async (c) => {
  const s = await sessionOf(c);
  const id = c.req.param("id");
  const data = /^tsk_[0-9a-z]{16}$/.test(id) ? await readTaskMove(envOf(c).DB, s.accountId, id, MOVE_CLIP) : null;
  if (!data?.task) {
    const frame = data ?? (await readFrame(envOf(c).DB, s.accountId));
    return render(c, s, frame, (v) => (
      <MessagePage view={v} title="Task not found" section="tasks">There is no task {id} in this account; Tasks lists them.</MessagePage>
    ), 404);
  }
  return render(c, s, data, (v) => <MovePage view={v} data={data} />);
});

tasksRoutes.get("/:id/text/:part", requireSession(), async (c) => {
  const s = await sessionOf(c);
  const id = c.req.param("id");
  const part = c.req.param("part");
  const ok = /^tsk_[0-9a-z]{16}$/.test(id) && /^(notes|(cmt|stp|evt)_[0-9a-z]{16})$/.test(part);
  const data = ok ? await readTaskText(envOf(c).DB, s.accountId, id, part) : null;
  if (!data?.task || !data.text) {
    const frame = data ?? (await readFrame(envOf(c).DB, s.accountId));
    return render(c, s, frame, (v) => (
      <MessagePage view={v} title="Not found" section="tasks">There is no such text of a task {id} in this account.</MessagePage>
    ), 404);
  }
  const { task, text } = data;
  return render(c, s, data, (v) => <TaskTextPage view={v} task={task} text={text} />);
});
