/** The task page's main column: the task's notes, its steps, its runs and their log, and its comments. */
import type { FC } from "hono/jsx";
import type { TaskPage as Data } from "../../../../db/console.ts";
import type { TaskRow } from "../../../../db/tasks.ts";
import { actorWord, plural, statusWord } from "../../format.ts";
import { Act, Badge, Button, When, type View } from "../../ui.tsx";
import { TASK_LIMITS, Text } from "./parts.tsx";

export const Notes: FC<{ t: TaskRow }> = ({ t }) => (
  <section class="card" aria-labelledby="h-notes">
    <h2 id="h-notes">Notes</h2>
    {t.notes ? <div><Text text={t.notes} max={TASK_LIMITS.notesClip} href={`/tasks/${t.id}/text/notes`} /></div> : <p class="hint">No notes.</p>}
  </section>
);

export const Steps: FC<{ data: Data; t: TaskRow }> = ({ data, t }) => (
  <section class="card" aria-labelledby="h-steps">
    <h2 id="h-steps">Steps</h2>
    {data.steps.length ? (
      <ol class="steps">
        {data.steps.map((s) => (
          <li class={s.status === "done" || s.status === "skipped" ? "done" : undefined}>
            <Text text={s.text} max={TASK_LIMITS.lineClip} href={`/tasks/${t.id}/text/${s.id}`} /> <Badge status={`step_${s.status}`} text={statusWord(s.status)} />
          </li>
        ))}
      </ol>
    ) : <p class="hint">No steps.</p>}
    {data.stepCount > data.steps.length ? <p class="hint">and {plural(data.stepCount - data.steps.length, "more step")}</p> : null}
  </section>
);

/** The latest run with its log (the latest events), and the earlier runs in one line. */
export const Runs: FC<{ view: View; data: Data; t: TaskRow }> = ({ view, data, t }) => {
  const latestRun = data.runs[0];
  return (
    <section class="card" aria-labelledby="h-runs">
      <h2 id="h-runs">Runs</h2>
      {latestRun ? (
        <>
          <p class="meta"><span>latest by <strong>{latestRun.agent}</strong></span> <Badge status={latestRun.status} /> <span>started <When view={view} iso={latestRun.started_at} /></span></p>
          {data.events.length ? (
            <ol class="log" aria-label="Latest run log">
              {data.eventCount > data.events.length ? <li class="muted">{plural(data.eventCount - data.events.length, "earlier event")}</li> : null}
              {data.events.map((e) => (
                <li>
                  <When view={view} iso={e.created_at} /> <span class="badge">{e.kind}</span> <Text text={e.message} max={TASK_LIMITS.lineClip} href={`/tasks/${t.id}/text/${e.id}`} />
                  {e.url ? <> · <a href={e.url} rel="noreferrer noopener">link</a></> : null}
                </li>
              ))}
            </ol>
          ) : <p class="hint">No events logged.</p>}
          {data.runs.length > 1 ? (
            <p class="hint">Earlier: {data.runs.slice(1).map((r) => `${r.agent} (${r.status})`).join(", ")}</p>
          ) : null}
        </>
      ) : <p class="hint">No agent has run this task.</p>}
    </section>
  );
};

/** The latest comments, and the form that adds one. */
export const Comments: FC<{ view: View; data: Data; t: TaskRow }> = ({ view, data, t }) => {
  const earlierComments = data.commentCount - data.comments.length;
  return (
    <section class="card" aria-labelledby="h-comments">
      <h2 id="h-comments">Comments</h2>
      {earlierComments > 0 ? <p class="hint">{plural(earlierComments, "earlier comment")} not shown.</p> : null}
      {data.comments.length ? (
        <ul class="comments">
          {data.comments.map((c) => (
            <li>
              <strong>{actorWord(c.author)}</strong> <When view={view} iso={c.created_at} />
              <div><Text text={c.body} max={TASK_LIMITS.textClip} href={`/tasks/${t.id}/text/${c.id}`} /></div>
            </li>
          ))}
        </ul>
      ) : <p class="hint">No comments yet.</p>}
      <Act view={view} action="comment" once fields={{ task_id: t.id }} label="Add a comment">
        <label for="c-body">Add a comment</label>
        <textarea id="c-body" name="body" required maxlength={20000}></textarea>
        <div class="actions"><Button kind="primary">Comment</Button></div>
      </Act>
    </section>
  );
};
