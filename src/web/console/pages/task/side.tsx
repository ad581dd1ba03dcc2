/** The task page's side column: auto-OK, labels, dependencies and subtasks, and the task's history. */
import type { Child, FC } from "hono/jsx";
import type { TaskPage as Data } from "../../../../db/console.ts";
import type { TaskRow } from "../../../../db/tasks.ts";
import { clip, personWord, plural } from "../../format.ts";
import { WEB_TOKEN_PREFIX } from "../../respond.ts";
import { Summary, type Named } from "../../summary.tsx";
import { foldName } from "../../../../db/labels.ts";
import { labelMark } from "../../actions/task-parts.ts";
import type { DepSearch } from "../../queries.ts";
import { Act, Badge, Button, invalidField, typed, When, Written, type View } from "../../ui.tsx";
import { channelOf } from "../activity.tsx";
import { REF_CLIP, TASK_LIMITS } from "./parts.tsx";

const LABEL_CLIP = 40;
/** How many of the account's other labels the add choice offers (any other is added by its name). */
const LABELS_OFFERED = 30;

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

/**
 * The task's labels. Changing them (`?edit=labels`) shows a remove button on
 * each, a choice of the account's other labels, and a field that makes a new one.
 */
export const Labels: FC<{ view: View; data: Data; t: TaskRow; edit: string | null }> = ({ view, data, t, edit }) => {
  const here = `/tasks/${t.id}`;
  const newTyped = typed(view, "new") === "1" ? typed(view, "labels") : undefined;
  const editing = edit === "labels" || newTyped !== undefined;
  const on = new Set(data.labels.map((l) => foldName(l.name)));
  const offered = data.accountLabels.filter((n) => !on.has(foldName(n))).slice(0, LABELS_OFFERED);
  const knownAll = data.accountLabels.length <= TASK_LIMITS.accountLabels;
  const badge = (name: string) => <a class="badge label" href={`/tasks?label=${encodeURIComponent(name)}`}><Written text={clip(name, LABEL_CLIP).text} /></a>;
  return (
    <section class="card parts" aria-labelledby="h-labels">
      <h2 id="h-labels">Labels</h2>
      {!data.labels.length ? <p class="hint">No labels.</p> : editing ? (
        // One form for every remove button: the button pressed sends its label's name.
        <Act view={view} action="unlabel_task" fields={{ task_id: t.id }}>
          <ul class="plain labels">
            {data.labels.map((l) => (
              <li>
                {badge(l.name)}{" "}
                <button type="submit" class="link" name="labels" value={l.name} aria-label={`Remove label ${clip(l.name, LABEL_CLIP).text}`}>Remove</button>
              </li>
            ))}
          </ul>
        </Act>
      ) : <p class="row">{data.labels.map((l) => badge(l.name))}</p>}
      {editing ? (
        <div role="group" aria-label="Change labels">
          {offered.length ? (
            <Act view={view} action="label_task" fields={{ task_id: t.id }} label="Add an existing label">
              <label for="l-pick">Existing label</label>
              <div class="pick">
                <select id="l-pick" name="labels">{offered.map((n) => <option>{n}</option>)}</select>
                <Button>Add</Button>
              </div>
            </Act>
          ) : null}
          <Act view={view} action="label_task" fields={{ task_id: t.id, new: "1", known: data.accountLabels.slice(0, TASK_LIMITS.accountLabels).map(labelMark).join(" "), ...(knownAll ? { known_all: "1" } : {}) }} label="Add a new label">
            <label for="l-new">New label</label>
            <div class="pick">
              <input type="text" id="l-new" name="labels" required maxlength={100} value={newTyped} aria-invalid={newTyped !== undefined ? invalidField(view, "labels") : undefined} />
              <Button>Create and add</Button>
            </div>
          </Act>
          <p class="hint"><a href={`${here}#h-labels`}>Done changing labels</a></p>
        </div>
      ) : <p class="hint"><a href="?edit=labels#h-labels">Change labels</a></p>}
    </section>
  );
};

/**
 * What the task waits on, what it blocks, and its subtasks. Changing them
 * (`?edit=deps`, or a search `?dep=words`) shows a remove button on each link
 * and a search by title for a task to wait on, each found task with its Add button.
 */
export const Dependencies: FC<{ view: View; data: Data; t: TaskRow; dep: DepSearch; edit: string | null }> = ({ view, data, t, dep, edit }) => {
  const here = `/tasks/${t.id}`;
  const editing = edit === "deps" || dep.text !== "";
  const back = `${here}?edit=deps#h-deps`;
  const waited = new Set(data.waitsOn.map((d) => d.id));
  const found = (data.depFound ?? []).filter((f) => f.id !== t.id).slice(0, TASK_LIMITS.refs);
  // One form a list: the remove button pressed sends the other task's id.
  const removable = (items: RefItem[], action: string, fields: Record<string, string>, name: string) =>
    editing && items.some((d) => !d.trash_id) ? (
      <Act view={view} action={action} back={back} fields={fields}>
        <Refs items={items} none="Nothing." action={(d) => <button type="submit" class="link" name={name} value={d.id} aria-label={`Remove dependency ${clip(d.title, LABEL_CLIP).text}`}>Remove</button>} />
      </Act>
    ) : <Refs items={items} none="Nothing." />;
  return (
    <section class="card parts" aria-labelledby="h-deps">
      <h2 id="h-deps">Dependencies</h2>
      <h3>Waits on</h3>
      {removable(data.waitsOn, "remove_dependency", { task_id: t.id }, "depends_on_id")}
      {editing ? (
        <div role="group" aria-label="Add a dependency">
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
              <Act view={view} action="add_dependency" back={back} fields={{ task_id: t.id }}>
                <ul class="plain found" aria-label="Tasks found">
                  {found.map((f) => (
                    <li>
                      <Written text={clip(f.title, REF_CLIP).text} /> <Badge status={f.status} />{" "}
                      {waited.has(f.id) ? <span class="hint">waited on already</span> : (
                        <button type="submit" name="depends_on_id" value={f.id} aria-label={`Add ${clip(f.title, LABEL_CLIP).text}`}>Add</button>
                      )}
                    </li>
                  ))}
                </ul>
              </Act>
            ) : <p class="hint" role="status">No other task matches “<Written text={clip(dep.text, LABEL_CLIP).text} />”.</p>
          ) : null}
        </div>
      ) : null}
      <h3>Blocks</h3>
      {removable(data.blocks, "remove_dependency", { depends_on_id: t.id }, "task_id")}
      {data.subtasks.length ? <><h3>Subtasks</h3><Refs items={data.subtasks} none="" /></> : null}
      {data.subtaskCount > data.subtasks.length ? <p class="hint">and {plural(data.subtaskCount - data.subtasks.length, "more subtask")}</p> : null}
      <p class="hint">{editing ? <a href={`${here}#h-deps`}>Done changing dependencies</a> : <a href="?edit=deps#h-deps">Change dependencies</a>}</p>
    </section>
  );
};

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
