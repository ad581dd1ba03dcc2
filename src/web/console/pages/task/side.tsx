/** The task page's side column: auto-OK, labels, dependencies and subtasks, and the task's history. */
import type { FC } from "hono/jsx";
import type { TaskPage as Data } from "../../../../db/console.ts";
import type { TaskRow } from "../../../../db/tasks.ts";
import { clip, personWord, plural } from "../../format.ts";
import { WEB_TOKEN_PREFIX } from "../../respond.ts";
import { Summary, type Named } from "../../summary.tsx";
import { Act, Badge, Button, When, Written, type View } from "../../ui.tsx";
import { channelOf } from "../activity.tsx";
import { REF_CLIP, TASK_LIMITS } from "./parts.tsx";

const LABEL_CLIP = 40;

/** Tasks as links; one in the trash (a task waited on still counts there) says so and links its trash item. */
const Refs: FC<{ items: { id: string; title: string; status: string; trash_id?: string | null }[]; none: string }> = ({ items, none }) =>
  items.length ? (
    <ul>
      {items.map((d) =>
        d.trash_id ? (
          <li><Written text={clip(d.title, REF_CLIP).text} /> <Badge status={d.status} /> <span class="hint">in the trash (<a href={`/trash#${d.trash_id}`}>{d.trash_id}</a>), still unfinished</span></li>
        ) : (
          <li><a href={`/tasks/${d.id}`}><Written text={clip(d.title, REF_CLIP).text} /></a> <Badge status={d.status} /></li>
        ),
      )}
    </ul>
  ) : (
    <p class="hint">{none}</p>
  );

export const AutoOk: FC<{ view: View; data: Data; t: TaskRow }> = ({ view, data, t }) => {
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

export const Labels: FC<{ data: Data }> = ({ data }) => (
  <section class="card" aria-labelledby="h-labels">
    <h2 id="h-labels">Labels</h2>
    {data.labels.length ? <p class="row">{data.labels.map((l) => <a class="badge label" href={`/tasks?label=${encodeURIComponent(l.name)}`}><Written text={clip(l.name, LABEL_CLIP).text} /></a>)}</p> : <p class="hint">No labels.</p>}
  </section>
);

/** What the task waits on, what it blocks, and its subtasks. */
export const Dependencies: FC<{ data: Data }> = ({ data }) => (
  <section class="card" aria-labelledby="h-deps">
    <h2 id="h-deps">Dependencies</h2>
    <h3>Waits on</h3>
    <Refs items={data.waitsOn} none="Nothing." />
    <h3>Blocks</h3>
    <Refs items={data.blocks} none="Nothing." />
    {data.subtasks.length ? <><h3>Subtasks</h3><Refs items={data.subtasks} none="" /></> : null}
    {data.subtaskCount > data.subtasks.length ? <p class="hint">and {plural(data.subtaskCount - data.subtasks.length, "more subtask")}</p> : null}
  </section>
);

/** The task's latest activity, each entry's summary with the ids it names as links. */
export const History: FC<{ view: View; data: Data; t: TaskRow }> = ({ view, data, t }) => {
  // What the history's ids name: looked up for it, and the steps and comments the page shows anyway (an entry may name several).
  const named = new Map<string, Named>([
    ...data.steps.map((s): [string, Named] => [s.id, { id: s.id, kind: "step", text: s.text, trashed: null, task_id: t.id, pending: 0 }]),
    ...data.comments.map((c): [string, Named] => [c.id, { id: c.id, kind: "comment", text: c.body, trashed: null, task_id: t.id, pending: 0 }]),
    ...data.named.map((n): [string, Named] => [n.id, n]),
  ]);
  return (
    <section class="card" aria-labelledby="h-history">
      <h2 id="h-history">History</h2>
      <ol class="log">
        {data.history.map((h) => (
          <li>
            <When view={view} iso={h.created_at} /> <strong>{personWord(h.actor, h.person_id, h.person_name, view.session.personId)}</strong> <span class="badge">{clip(channelOf(h, WEB_TOKEN_PREFIX), 40).text}</span> <code>{h.tool}</code>
            <div class="body hint"><Summary text={clip(h.summary, TASK_LIMITS.lineClip).text} tool={h.tool} actor={h.actor} target={t.id} taskId={t.id} named={named} /></div>
          </li>
        ))}
      </ol>
      <p class="hint"><a href={`/activity?target=${t.id}`}>All activity of this task</a></p>
    </section>
  );
};
