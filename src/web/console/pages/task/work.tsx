/** The task page's main column: the task's notes, its steps, its runs and their log, and its comments. */
import type { FC } from "hono/jsx";
import type { TaskPage as Data } from "../../../../db/console.ts";
import type { TaskRow } from "../../../../db/tasks.ts";
import { STEP_STATUSES } from "../../../../domain/vocabulary.ts";
import { actorWord, clip, plural, statusWord } from "../../format.ts";
import { Act, Badge, Button, invalidField, typed, When, type View } from "../../ui.tsx";
import { TASK_LIMITS, Text } from "./parts.tsx";

export const Notes: FC<{ t: TaskRow }> = ({ t }) => (
  <section class="card" aria-labelledby="h-notes">
    <h2 id="h-notes">Notes</h2>
    {t.notes ? <div><Text text={t.notes} max={TASK_LIMITS.notesClip} href={`/tasks/${t.id}/text/notes`} /></div> : <p class="hint">No notes.</p>}
  </section>
);

/**
 * The checklist. Each step has a link that opens its changes in place
 * (`?edit=<step id>`): done or pending, up, down, delete, its text and its
 * status; one step at a time, so the page stays small however many it shows.
 * And the form that adds steps.
 */
export const Steps: FC<{ view: View; data: Data; t: TaskRow; edit: string | null }> = ({ view, data, t, edit }) => {
  // Moving needs every live step's id: offered when the page shows them all.
  const all = data.stepCount === data.steps.length;
  const ids = data.steps.map((s) => s.id);
  const here = `/tasks/${t.id}`;
  const swapped = (i: number, j: number) => {
    const order = [...ids];
    [order[i], order[j]] = [order[j], order[i]];
    return order;
  };
  const addTyped = typed(view, "steps");
  const renameTyped = view.flash?.kind === "error" && typed(view, "step_id") === edit ? typed(view, "text") : undefined;
  return (
    <section class="card parts" aria-labelledby="h-steps">
      <h2 id="h-steps">Steps</h2>
      {data.steps.length ? (
        <ol class="steps">
          {data.steps.map((s, i) => {
            const n = i + 1;
            const done = s.status === "done";
            return (
              <li id={s.id} class={s.status === "done" || s.status === "skipped" ? "done" : undefined}>
                <Text text={s.text} max={TASK_LIMITS.lineClip} href={`/tasks/${t.id}/text/${s.id}`} /> <Badge status={`step_${s.status}`} text={statusWord(s.status)} />{" "}
                {edit !== s.id ? (
                  <a class="change" href={`?edit=${s.id}#${s.id}`}>Change<span class="sr"> step {n}</span></a>
                ) : (
                  <div class="step-edit" role="group" aria-label={`Change step ${n}`}>
                    <div class="part-acts">
                      <Act view={view} action="step_status" fields={{ step_id: s.id, status: done ? "pending" : "done" }}>
                        <Button label={`${done ? "Mark pending" : "Mark done"} step ${n}`}>{done ? "Mark pending" : "Mark done"}</Button>
                      </Act>
                      {all && i > 0 ? (
                        <Act view={view} action="move_step" fields={{ task_id: t.id, moved: s.id, dir: "up" }}>
                          {swapped(i, i - 1).map((id) => <input type="hidden" name="step_ids" value={id} />)}
                          <Button label={`Move up step ${n}`}>Move up</Button>
                        </Act>
                      ) : null}
                      {all && i < ids.length - 1 ? (
                        <Act view={view} action="move_step" fields={{ task_id: t.id, moved: s.id, dir: "down" }}>
                          {swapped(i, i + 1).map((id) => <input type="hidden" name="step_ids" value={id} />)}
                          <Button label={`Move down step ${n}`}>Move down</Button>
                        </Act>
                      ) : null}
                      <Act view={view} action="delete_step" back={here} fields={{ step_id: s.id, step_text: clip(s.text, 80).text }}>
                        <Button kind="danger" label={`Delete step ${n}`}>Delete</Button>
                      </Act>
                    </div>
                    <Act view={view} action="rename_step" fields={{ step_id: s.id }} label={`Rename step ${n}`}>
                      <label for="step-text">Step text</label>
                      <div class="pick">
                        <input type="text" id="step-text" name="text" required maxlength={2000} value={renameTyped ?? s.text} aria-invalid={renameTyped !== undefined ? invalidField(view, "text") : undefined} />
                        <Button>Rename</Button>
                      </div>
                    </Act>
                    <Act view={view} action="step_status" fields={{ step_id: s.id }} label={`Status of step ${n}`}>
                      <label for="step-status">Status</label>
                      <div class="pick">
                        <select id="step-status" name="status">
                          {STEP_STATUSES.map((st) => <option value={st} selected={st === s.status}>{statusWord(st)}</option>)}
                        </select>
                        <Button>Set status</Button>
                      </div>
                    </Act>
                    <p class="hint"><a href={`${here}#${s.id}`}>Done changing step {n}</a>{all ? null : " · moving is offered when the page shows every step"}</p>
                  </div>
                )}
              </li>
            );
          })}
        </ol>
      ) : <p class="hint">No steps.</p>}
      {data.stepCount > data.steps.length ? <p class="hint">and {plural(data.stepCount - data.steps.length, "more step")}</p> : null}
      <details open={addTyped !== undefined ? true : undefined}>
        <summary>Add steps</summary>
        <Act view={view} action="add_steps" once fields={{ task_id: t.id }} label="Add steps">
          <label for="new-steps">New steps</label>
          <textarea id="new-steps" name="steps" required maxlength={20000} aria-describedby="new-steps-hint" aria-invalid={invalidField(view, "steps")}>{addTyped ?? ""}</textarea>
          <p class="hint" id="new-steps-hint">One step a line; they go at the end, pending.</p>
          <div class="actions"><Button kind="primary">Add steps</Button></div>
        </Act>
      </details>
    </section>
  );
};

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
