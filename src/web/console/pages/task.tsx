/**
 * One task's page, in sections (src/web/console/pages/task/): its heading,
 * recurrence, lifecycle and waiting request on top; notes, steps, runs and
 * comments in the main column; auto-OK, labels, dependencies and history at
 * the side; the edit form of its fields under the top, and who holds it, its
 * snooze, block and project at the top of the side. And one whole text of a
 * task on a page of its own (the notes with their edit form).
 */
import type { FC } from "hono/jsx";
import type { TaskPage as Data } from "../../../db/console.ts";
import type { TaskRow } from "../../../db/tasks.ts";
import { actorWord, clip } from "../format.ts";
import { Shell, When, Written, type View } from "../ui.tsx";
import type { DepSearch } from "../queries.ts";
import { CalendarLinks } from "./task/calendar.tsx";
import { EditNotes, EditTask, Handling } from "./task/edit.tsx";
import { Approval, Heading, Lifecycle, Repeats } from "./task/heading.tsx";
import { AutoOk, Dependencies, History, Labels } from "./task/side.tsx";
import { Comments, Notes, Runs, Steps } from "./task/work.tsx";

export { TASK_LIMITS } from "./task/parts.tsx";

const NO_DEP_SEARCH: DepSearch = { text: "", words: null, problem: null };

/** `picked`: the place of a choice to show picked in the waiting question's answer (from a notification's button). */
export const TaskPage: FC<{ view: View; data: Data; picked?: number | null; dep?: DepSearch; edit?: string | null }> = ({
  view, data, picked = null, dep = NO_DEP_SEARCH, edit = null,
}) => {
  const t = data.task as TaskRow;
  return (
    <Shell view={view} section="tasks" title={clip(t.title, 80).text}>
      <Heading view={view} data={data} t={t} />
      <Repeats view={view} t={t} />
      <Lifecycle view={view} t={t} />
      <Approval view={view} data={data} t={t} picked={picked} />
      <EditTask view={view} data={data} t={t} />
      <div class="split">
        <div>
          <Notes t={t} />
          <Steps view={view} data={data} t={t} edit={edit} />
          <CalendarLinks view={view} data={data} t={t} edit={edit} />
          <Runs view={view} data={data} t={t} />
          <Comments view={view} data={data} t={t} />
        </div>
        <div>
          <Handling view={view} data={data} t={t} />
          <AutoOk view={view} data={data} t={t} />
          <Labels view={view} data={data} t={t} edit={edit} />
          <Dependencies view={view} data={data} t={t} dep={dep} edit={edit} />
          <History view={view} data={data} t={t} />
        </div>
      </div>
    </Shell>
  );
};

/** One whole text of a task: its notes, a comment, a step or a run event. */
export const TaskTextPage: FC<{ view: View; task: { id: string; title: string; version: number }; text: { what: string; author: string | null; body: string; created_at: string | null } }> = ({
  view, task, text,
}) => (
  <Shell view={view} section="tasks" title={`${text.what} · ${clip(task.title, 60).text}`}>
    <p class="hint"><a href={`/tasks/${task.id}`}>Back to <Written text={task.title} max={80} /></a></p>
    <h1>{text.what === "notes" ? "Notes" : text.what === "comment" ? "Comment" : text.what === "step" ? "Step" : "Run event"}</h1>
    <section class="card">
      {text.author || text.created_at ? (
        <p class="meta">
          {text.author ? <span>by <strong>{actorWord(text.author)}</strong></span> : null}
          {text.created_at ? <span><When view={view} iso={text.created_at} /></span> : null}
        </p>
      ) : null}
      <div class="body"><Written text={text.body} /></div>
    </section>
    {text.what === "notes" ? <EditNotes view={view} task={task} notes={text.body} /> : null}
  </Shell>
);
