import type { FC } from "hono/jsx";
import type { TaskPage as Data } from "../../../db/console.ts";
import type { TaskRow } from "../../../db/tasks.ts";
import { PRIORITIES } from "../../../domain/vocabulary.ts";
import { describeRecurrence } from "../../../tools/series.ts";
import { actorWord, clip, plural, ruleWords, statusWord } from "../format.ts";
import { Act, Badge, Button, Shell, When, Written, type View } from "../ui.tsx";
import { Summary, type Named } from "../summary.tsx";
import { Decide, requestHeading } from "./decide.tsx";
import { WEB_TOKEN_PREFIX } from "../respond.ts";
import { channelOf } from "./activity.tsx";

export const TASK_LIMITS = { steps: 25, refs: 10, labels: 20, comments: 10, events: 10, history: 10, notesClip: 4000, textClip: 800, lineClip: 200 };
const REF_CLIP = 120;
const LABEL_CLIP = 40;

/** A shortened text, and the way to the whole of it. */
const Text: FC<{ text: string; max: number; href: string }> = ({ text, max, href }) => {
  const c = clip(text, max);
  return (
    <span class="body">
      <Written text={c.text} />
      {c.cut ? <> <a href={href}>Read all</a></> : null}
    </span>
  );
};

const Refs: FC<{ items: { id: string; title: string; status: string }[]; none: string }> = ({ items, none }) =>
  items.length ? (
    <ul>
      {items.map((d) => (
        <li><a href={`/tasks/${d.id}`}><Written text={clip(d.title, REF_CLIP).text} /></a> <Badge status={d.status} /></li>
      ))}
    </ul>
  ) : (
    <p class="hint">{none}</p>
  );

const finished = (t: TaskRow) => t.status === "done" || t.status === "cancelled";
const lapsed = (t: TaskRow, view: View) => t.claim_expires_at !== null && Date.parse(t.claim_expires_at) <= view.nowMs;

/** A recurring task's rule in words, and when its next occurrence falls due if this one is completed now. */
const Repeats: FC<{ view: View; t: TaskRow }> = ({ view, t }) => {
  const r = describeRecurrence(t, view.timeZone, view.nowMs);
  if (!r) return null;
  return (
    <p class="repeats">
      Repeats {ruleWords(r.rule)} (occurrence {r.occurrence}, <code>{r.rule}</code>).{" "}
      {r.next_due_at ? <>Completing it creates the next occurrence, due <When view={view} iso={r.next_due_at} />.</> : "The series ends with this occurrence."}
    </p>
  );
};

const Lifecycle: FC<{ view: View; t: TaskRow }> = ({ view, t }) => {
  const finished = t.status === "done" || t.status === "cancelled";
  return (
    <div class="actions">
      {!finished ? (
        <Act view={view} action="complete" fields={{ task_id: t.id }}><Button kind="primary">Complete</Button></Act>
      ) : null}
      {finished || t.status === "awaiting_approval" ? (
        <Act view={view} action="reopen" fields={{ task_id: t.id }}><Button>Reopen</Button></Act>
      ) : null}
      <Act view={view} action="delete" fields={{ task_id: t.id }}><Button kind="danger">Delete</Button></Act>
    </div>
  );
};

const AutoOk: FC<{ view: View; data: Data; t: TaskRow }> = ({ view, data, t }) => {
  const p = data.project;
  const projectSetting = p ? (p.default_auto_ok === null ? "account" : p.default_auto_ok === 1 ? "on" : "off") : null;
  return (
    <section class="card" aria-labelledby="h-auto">
      <h2 id="h-auto">Auto-OK</h2>
      <p class="hint">With auto-OK an agent may complete the task alone; without it, an agent's completion waits for your approval.</p>
      <p>
        This task: <strong>{t.auto_ok === 1 ? "on" : "off"}</strong>
      </p>
      <Act view={view} action="auto_ok" fields={{ task_id: t.id, auto_ok: t.auto_ok === 1 ? "false" : "true" }}>
        <Button>{t.auto_ok === 1 ? "Turn off for this task" : "Turn on for this task"}</Button>
      </Act>
      {p ? (
        <Act view={view} action="project_auto_ok" fields={{ project_id: p.id }} label="Project auto-OK">
          <label for="p-auto">New tasks in <Written text={p.name} max={REF_CLIP} /></label>
          <div class="row">
            <select id="p-auto" name="default_auto_ok">
              <option value="account" selected={projectSetting === "account"}>Use the account's default</option>
              <option value="on" selected={projectSetting === "on"}>Auto-OK on</option>
              <option value="off" selected={projectSetting === "off"}>Auto-OK off</option>
            </select>
            <Button>Save</Button>
          </div>
        </Act>
      ) : null}
    </section>
  );
};

export const TaskPage: FC<{ view: View; data: Data }> = ({ view, data }) => {
  const t = data.task as TaskRow;
  const approval = data.approval;
  const latestRun = data.runs[0];
  const earlierComments = data.commentCount - data.comments.length;
  // What the history's ids name: looked up for it, and the steps and comments the page shows anyway (an entry may name several).
  const named = new Map<string, Named>([
    ...data.steps.map((s): [string, Named] => [s.id, { id: s.id, kind: "step", text: s.text, trashed: null }]),
    ...data.comments.map((c): [string, Named] => [c.id, { id: c.id, kind: "comment", text: c.body, trashed: null }]),
    ...data.named.map((n): [string, Named] => [n.id, n]),
  ]);
  return (
    <Shell view={view} section="tasks" title={clip(t.title, 80).text}>
      <p class="hint"><a href="/tasks">Tasks</a>{data.project ? <> › <a href={`/tasks?project=${data.project.id}`}><Written text={data.project.name} max={REF_CLIP} /></a></> : null}{data.parent ? <> › <a href={`/tasks/${data.parent.id}`}><Written text={data.parent.title} max={60} /></a></> : null}</p>
      <h1 class="body"><Written text={t.title} /></h1>
      <p class="meta">
        <span><Badge status={t.status} /></span>
        <span>priority {PRIORITIES[t.priority] ?? "normal"}</span>
        {finished(t) ? null : <span>{t.assignee ? <>held by <strong>{actorWord(t.assignee)}</strong>{lapsed(t, view) ? " (claim lapsed)" : null}</> : "unassigned"}</span>}
        {t.due_at ? <span>due <When view={view} iso={t.due_at} /></span> : null}
        <span>created by {actorWord(t.created_by)} <When view={view} iso={t.created_at} /></span>
        {t.blocked_reason && t.status === "blocked" ? <span>blocked: <Written text={t.blocked_reason} max={TASK_LIMITS.lineClip} /></span> : null}
      </p>
      <Repeats view={view} t={t} />
      <Lifecycle view={view} t={t} />
      {approval ? (
        <section class="card" aria-labelledby="h-approval">
          <h2 id="h-approval">{requestHeading(approval.kind)}</h2>
          <p class="meta"><span>asked by <strong>{actorWord(approval.requested_by)}</strong> <When view={view} iso={approval.created_at} /></span></p>
          <p class="q"><Written text={approval.question} /></p>
          <Decide view={view} kind={approval.kind} taskId={t.id} id={approval.id} />
        </section>
      ) : null}
      <div class="split">
        <div>
          <section class="card" aria-labelledby="h-notes">
            <h2 id="h-notes">Notes</h2>
            {t.notes ? <div><Text text={t.notes} max={TASK_LIMITS.notesClip} href={`/tasks/${t.id}/text/notes`} /></div> : <p class="hint">No notes.</p>}
          </section>
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
        </div>
        <div>
          <AutoOk view={view} data={data} t={t} />
          <section class="card" aria-labelledby="h-labels">
            <h2 id="h-labels">Labels</h2>
            {data.labels.length ? <p class="row">{data.labels.map((l) => <a class="badge label" href={`/tasks?label=${encodeURIComponent(l.name)}`}><Written text={clip(l.name, LABEL_CLIP).text} /></a>)}</p> : <p class="hint">No labels.</p>}
          </section>
          <section class="card" aria-labelledby="h-deps">
            <h2 id="h-deps">Dependencies</h2>
            <h3>Waits on</h3>
            <Refs items={data.waitsOn} none="Nothing." />
            <h3>Blocks</h3>
            <Refs items={data.blocks} none="Nothing." />
            {data.subtasks.length ? <><h3>Subtasks</h3><Refs items={data.subtasks} none="" /></> : null}
            {data.subtaskCount > data.subtasks.length ? <p class="hint">and {plural(data.subtaskCount - data.subtasks.length, "more subtask")}</p> : null}
          </section>
          <section class="card" aria-labelledby="h-history">
            <h2 id="h-history">History</h2>
            <ol class="log">
              {data.history.map((h) => (
                <li>
                  <When view={view} iso={h.created_at} /> <strong>{actorWord(h.actor)}</strong> <span class="badge">{clip(channelOf(h, WEB_TOKEN_PREFIX), 40).text}</span> <code>{h.tool}</code>
                  <div class="body hint"><Summary text={clip(h.summary, TASK_LIMITS.lineClip).text} taskId={t.id} named={named} pending={approval?.id ?? null} /></div>
                </li>
              ))}
            </ol>
            <p class="hint"><a href={`/activity?target=${t.id}`}>All activity of this task</a></p>
          </section>
        </div>
      </div>
    </Shell>
  );
};

/** One whole text of a task: its notes, a comment, a step or a run event. */
export const TaskTextPage: FC<{ view: View; task: { id: string; title: string }; text: { what: string; author: string | null; body: string; created_at: string | null } }> = ({
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
  </Shell>
);
