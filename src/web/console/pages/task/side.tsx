/** The task page's side column: auto-OK, labels, dependencies and subtasks, and the task's history. */
import type { Child, FC } from "hono/jsx";
import type { TaskPage as Data } from "../../../../db/console.ts";
import type { TaskRow } from "../../../../db/tasks.ts";
import { clip, personWord, plural } from "../../format.ts";
import { WEB_TOKEN_PREFIX } from "../../respond.ts";
import { Summary, type Named } from "../../summary.tsx";
import type { DepSearch } from "../../queries.ts";
import { Act, Badge, Button, invalidField, typed, When, Written, type View } from "../../ui.tsx";
import { channelOf } from "../activity.tsx";
import { REF_CLIP, TASK_LIMITS } from "./parts.tsx";

const LABEL_CLIP = 40;

/** Tasks as links; one in the trash (a task waited on still counts there) says so and links its trash item. */
type RefItem = { id: string; title: string; status: string; trash_id?: string | null };
const Refs: FC<{ items: RefItem[]; none: string; action?: (d: RefItem) => Child }> = ({ items, none, action }) =>
  items.length ? (
    <ul>
      {items.map((d) =>
        d.trash_id ? (
          <li><Written text={clip(d.title, REF_CLIP).text} /> <Badge status={d.status} /> <span class="hint">in the trash (<a href={`/trash#${d.trash_id}`}>{d.trash_id}</a>), still unfinished</span></li>
        ) : (
          <li><a href={`/tasks/${d.id}`}><Written text={clip(d.title, REF_CLIP).text} /></a> <Badge status={d.status} />{action ? <> {action(d)}</> : null}</li>
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

/** The task's labels, each with its remove button; the account's other labels to add, and a new one made inline. */
export const Labels: FC<{ view: View; data: Data; t: TaskRow }> = ({ view, data, t }) => {
  const on = new Set(data.labels.map((l) => l.name.toLowerCase()));
  const knownAll = data.accountLabels.length <= TASK_LIMITS.accountLabels;
  const known = data.accountLabels.slice(0, TASK_LIMITS.accountLabels);
  const offered = known.filter((n) => !on.has(n.toLowerCase()));
  const newTyped = typed(view, "new") === "1" ? typed(view, "labels") : undefined;
  return (
    <section class="card parts" aria-labelledby="h-labels">
      <h2 id="h-labels">Labels</h2>
      {data.labels.length ? (
        <ul class="plain labels">
          {data.labels.map((l) => {
            const name = clip(l.name, LABEL_CLIP).text;
            return (
              <li>
                <a class="badge label" href={`/tasks?label=${encodeURIComponent(l.name)}`}><Written text={name} /></a>{" "}
                <Act view={view} action="unlabel_task" class="inline" fields={{ task_id: t.id, labels: l.name }}>
                  <Button kind="link" label={`Remove label ${name}`}>Remove</Button>
                </Act>
              </li>
            );
          })}
        </ul>
      ) : <p class="hint">No labels.</p>}
      <details open={newTyped !== undefined ? true : undefined}>
        <summary>Add a label</summary>
        {offered.length ? (
          <Act view={view} action="label_task" fields={{ task_id: t.id }} label="Add an existing label">
            <label for="l-pick">Existing label</label>
            <div class="pick">
              <select id="l-pick" name="labels">
                {offered.map((n) => <option value={n}>{clip(n, LABEL_CLIP).text}</option>)}
              </select>
              <Button>Add</Button>
            </div>
          </Act>
        ) : null}
        <Act view={view} action="label_task" fields={{ task_id: t.id, new: "1", ...(knownAll ? { known_all: "1" } : {}) }} label="Add a new label">
          {known.map((n) => <input type="hidden" name="known" value={n} />)}
          <label for="l-new">New label</label>
          <div class="pick">
            <input type="text" id="l-new" name="labels" required maxlength={100} value={newTyped} aria-invalid={newTyped !== undefined ? invalidField(view, "labels") : undefined} />
            <Button>Create and add</Button>
          </div>
        </Act>
      </details>
    </section>
  );
};

/** What the task waits on (each with its remove button, and a search for another), what it blocks, and its subtasks. */
export const Dependencies: FC<{ view: View; data: Data; t: TaskRow; dep: DepSearch }> = ({ view, data, t, dep }) => {
  const here = `/tasks/${t.id}`;
  const waited = new Set(data.waitsOn.map((d) => d.id));
  const found = (data.depFound ?? []).filter((f) => f.id !== t.id).slice(0, TASK_LIMITS.refs);
  const remove = (d: { id: string; title: string; trash_id?: string | null }, taskId: string, dependsOn: string) =>
    d.trash_id ? null : (
      <Act view={view} action="remove_dependency" class="inline" back={here} fields={{ task_id: taskId, depends_on_id: dependsOn }}>
        <Button kind="link" label={`Remove dependency ${clip(d.title, LABEL_CLIP).text}`}>Remove</Button>
      </Act>
    );
  return (
    <section class="card parts" aria-labelledby="h-deps">
      <h2 id="h-deps">Dependencies</h2>
      <h3>Waits on</h3>
      <Refs items={data.waitsOn} none="Nothing." action={(d) => remove(d, t.id, d.id)} />
      <details open={dep.text ? true : undefined}>
        <summary>Add a dependency</summary>
        <form method="get" action={`${here}#h-deps`} role="search" aria-label="Find a task to wait on">
          <label for="dep-q">Find a task by title</label>
          <div class="pick">
            <input type="search" id="dep-q" name="dep" maxlength={500} required value={dep.text} aria-describedby={dep.problem ? "dep-q-hint" : undefined} aria-invalid={dep.problem ? "true" : undefined} />
            <Button>Search</Button>
          </div>
          {dep.problem ? <p class="hint" id="dep-q-hint">{dep.problem}</p> : null}
        </form>
        {dep.words ? (
          found.length ? (
            <ul class="plain found" aria-label="Tasks found">
              {found.map((f) => (
                <li>
                  <Written text={clip(f.title, REF_CLIP).text} /> <Badge status={f.status} />{" "}
                  {waited.has(f.id) ? <span class="hint">waited on already</span> : (
                    <Act view={view} action="add_dependency" class="inline" back={here} fields={{ task_id: t.id, depends_on_id: f.id }}>
                      <Button label={`Add ${clip(f.title, LABEL_CLIP).text}`}>Add</Button>
                    </Act>
                  )}
                </li>
              ))}
            </ul>
          ) : <p class="hint" role="status">No other task matches “{clip(dep.text, LABEL_CLIP).text}”.</p>
        ) : null}
      </details>
      <h3>Blocks</h3>
      <Refs items={data.blocks} none="Nothing." action={(d) => remove(d, d.id, t.id)} />
      {data.subtasks.length ? <><h3>Subtasks</h3><Refs items={data.subtasks} none="" /></> : null}
      {data.subtaskCount > data.subtasks.length ? <p class="hint">and {plural(data.subtaskCount - data.subtasks.length, "more subtask")}</p> : null}
    </section>
  );
};

/** The task's latest activity, each entry's summary with the ids it names as links. */
export const History: FC<{ view: View; data: Data; t: TaskRow }> = ({ view, data, t }) => {
  // What the history's ids name: looked up for it, and the steps and comments the page shows anyway (an entry may name several).
  const named = new Map<string, Named>([
    ...data.steps.map((s): [string, Named] => [s.id, { id: s.id, kind: "step", text: s.text, trashed: null }]),
    ...data.comments.map((c): [string, Named] => [c.id, { id: c.id, kind: "comment", text: c.body, trashed: null }]),
    ...data.named.map((n): [string, Named] => [n.id, n]),
  ]);
  return (
    <section class="card" aria-labelledby="h-history">
      <h2 id="h-history">History</h2>
      <ol class="log">
        {data.history.map((h) => (
          <li>
            <When view={view} iso={h.created_at} /> <strong>{personWord(h.actor, h.person_id, h.person_name, view.session.personId)}</strong> <span class="badge">{clip(channelOf(h, WEB_TOKEN_PREFIX), 40).text}</span> <code>{h.tool}</code>
            <div class="body hint"><Summary text={clip(h.summary, TASK_LIMITS.lineClip).text} taskId={t.id} named={named} pending={data.approval?.id ?? null} /></div>
          </li>
        ))}
      </ol>
      <p class="hint"><a href={`/activity?target=${t.id}`}>All activity of this task</a></p>
    </section>
  );
};
