import type { FC } from "hono/jsx";
import type { TasksPage as Data } from "../../../db/console.ts";
import type { TaskRow } from "../../../db/tasks.ts";
import type { SearchRow } from "../../../db/task-search.ts";
import { mentions, snippetOf, wordsOf } from "../../../domain/search-terms.ts";
import { PRIORITIES, TASK_STATUSES } from "../../../domain/vocabulary.ts";
import { actorWord, clip, statusWord } from "../format.ts";
import { Act, AskFirst, Badge, Button, Empty, Field, Shell, When, Written, type View } from "../ui.tsx";
import { autoOkSaid, ProjectForms } from "./project-forms.tsx";

export const DUE_CHOICES = { overdue: "Overdue", week: "Due within 7 days", month: "Due within 30 days" } as const;
export type DueChoice = keyof typeof DUE_CHOICES;

export interface TaskQuery {
  project: string;
  status: string;
  assignee: string;
  label: string;
  due: DueChoice | "";
  q: string;
}


const NAME_CLIP = 40;
/** Projects shown as tabs; all of them (up to 100) are in the Project filter. */
const TABS = 8;

/** One task: its title in at most two lines (whole on hover or focus, without a second copy in a title attribute), then its facts; on a phone, one compact row. */
const Row: FC<{ view: View; t: TaskRow; projects: Map<string, string>; snippet?: string }> = ({ view, t, projects, snippet }) => {
  const project = t.project_id ? projects.get(t.project_id) : undefined;
  return (
  <tr>
    <td data-label="Task">
      <a href={`/tasks/${t.id}`} class="clamp"><Written text={t.title} /></a>
      {snippet ? <div class="hint body clamp"><Written text={snippet} /></div> : null}
    </td>
    <td data-label="Status"><Badge status={t.status} /></td>
    <td data-label="Project" class="one">{project ? <span><Written text={clip(project, NAME_CLIP).text} /></span> : "—"}</td>
    <td data-label="Assignee">{t.assignee ? actorWord(t.assignee) : <span class="muted">nobody</span>}</td>
    <td data-label="Due">{t.due_at ? <When view={view} iso={t.due_at} /> : <span class="muted">—</span>}</td>
    <td data-label="Priority">{PRIORITIES[t.priority] ?? "normal"}</td>
  </tr>
  );
};

/** What a project tab's count counts: its tasks that are not done or cancelled. */
const open = (p: { n_total: number; n_done: number; n_cancelled: number }) => p.n_total - p.n_done - p.n_cancelled;

function hrefWith(q: TaskQuery, change: Partial<TaskQuery> & { cursor?: string }): string {
  const merged: Record<string, string | undefined> = { ...q, ...change };
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(merged)) if (v) params.set(k, v);
  const s = params.toString();
  return s ? `/tasks?${s}` : "/tasks";
}

type Project = Data["projects"][number];

/** One project's tab: its name and open count, marked when it is the one shown. */
const ProjectTab: FC<{ query: TaskQuery; p: Project }> = ({ query, p }) => (
  <li>
    <a href={hrefWith(query, { project: p.id })} aria-current={query.project === p.id ? "page" : undefined}>
      <Written text={p.name} max={NAME_CLIP} /> <span class="muted">{open(p)} open</span>
    </a>
  </li>
);

/** A tab a project (the first ones, and the current one) with its open count, and what the current project is. */
const ProjectTabs: FC<{ view: View; data: Data; query: TaskQuery; current: Project | undefined }> = ({ view, data, query, current }) => {
  const tabs = data.projects.slice(0, TABS);
  if (current && !current.archived_at && !tabs.includes(current)) tabs.push(current);
  return (
    <>
      <ul class="tabs" aria-label="Projects">
        <li><a href={hrefWith(query, { project: "" })} aria-current={query.project === "" ? "page" : undefined}>All projects</a></li>
        {tabs.map((p) => <ProjectTab query={query} p={p} />)}
      </ul>
      {data.archived.length ? (
        <details class="archived" open={Boolean(current?.archived_at)}>
          <summary>Archived projects ({data.archived.length})</summary>
          <ul class="tabs" aria-label="Archived projects">
            {data.archived.map((p) => <ProjectTab query={query} p={p} />)}
          </ul>
        </details>
      ) : null}
      {current ? <p class="hint">{current.description ? <><Written text={current.description} max={300} /> · </> : null}{autoOkSaid(current, view.accountAutoOk ? 1 : 0)}</p> : null}
      {current ? <ProjectActions view={view} current={current} /> : null}
    </>
  );
};

/**
 * The project shown: archive it (out of the tabs, its tasks as they are) or
 * unarchive it, and delete it, which first shows what goes to the trash.
 */
const ProjectActions: FC<{ view: View; current: Project }> = ({ view, current }) => (
  <>
    {current.archived_at ? (
      <p class="notice warn">
        <Written text={current.name} max={NAME_CLIP} /> is archived: it is out of the project tabs and lists; its tasks stay as they are, and no agent may add,
        move or rename anything in it. Unarchive brings it back among the tabs.
      </p>
    ) : null}
    <div class="actions">
      {current.archived_at ? (
        <Act view={view} action="unarchive_project" fields={{ project_id: current.id }} label="Unarchive the project">
          <Button kind="primary" label={`Unarchive ${clip(current.name, NAME_CLIP).text}`}>Unarchive</Button>
        </Act>
      ) : (
        <Act view={view} action="archive_project" fields={{ project_id: current.id }} label="Archive the project">
          <Button label={`Archive ${clip(current.name, NAME_CLIP).text}`}>Archive</Button>
        </Act>
      )}
      <AskFirst view={view} action="delete_project" fields={{ project_id: current.id }} label="Delete the project">
        <Button kind="danger" label={`Delete project ${clip(current.name, NAME_CLIP).text}`}>Delete project</Button>
      </AskFirst>
    </div>
  </>
);

/** Search and the filters, a GET form of /tasks. */
const Filters: FC<{ data: Data; query: TaskQuery; filtered: boolean }> = ({ data, query, filtered }) => (
  <form method="get" action="/tasks" class="filters" role="search" aria-label="Filter tasks">
    <div class="row">
      <Field id="f-q" label="Search" class="grow">
        <input type="search" id="f-q" name="q" value={query.q} maxlength={500} placeholder="Words in titles, notes, comments" />
      </Field>
    </div>
    <div class="row">
      <Field id="f-project" label="Project">
        <select id="f-project" name="project">
          <option value="">All projects</option>
          {data.projects.map((p) => <option value={p.id} selected={query.project === p.id}>{clip(p.name, NAME_CLIP).text}</option>)}
          {data.archived.filter((p) => p.id === query.project).map((p) => <option value={p.id} selected>{clip(p.name, NAME_CLIP).text} (archived)</option>)}
        </select>
      </Field>
      <Field id="f-status" label="Status">
        <select id="f-status" name="status">
          <option value="">Any</option>
          <option value="unfinished" selected={query.status === "unfinished"}>Not finished</option>
          {TASK_STATUSES.map((s) => <option value={s} selected={query.status === s}>{statusWord(s)}</option>)}
        </select>
      </Field>
      <Field id="f-assignee" label="Assignee">
        <select id="f-assignee" name="assignee">
          <option value="">Anyone</option>
          <option value="human" selected={query.assignee === "human"}>You</option>
          <option value="none" selected={query.assignee === "none"}>Nobody</option>
          {data.agents.map((g) => <option value={g.name} selected={query.assignee === g.name}>{g.name}</option>)}
        </select>
      </Field>
      <Field id="f-label" label="Label">
        <select id="f-label" name="label">
          <option value="">Any</option>
          {data.labels.map((l) => <option value={l.name} selected={query.label === l.name}>{clip(l.name, NAME_CLIP).text}</option>)}
        </select>
      </Field>
      <Field id="f-due" label="Due">
        <select id="f-due" name="due">
          <option value="">Any time</option>
          {Object.entries(DUE_CHOICES).map(([k, v]) => <option value={k} selected={query.due === k}>{v}</option>)}
        </select>
      </Field>
      <div class="buttons">
        <button type="submit" class="primary">Show</button>
        {filtered || query.project ? <a class="button" href="/tasks">Clear</a> : null}
      </div>
    </div>
    {query.q ? <p class="hint">Search ranks matches by relevance; the status filter applies, the others do not.</p> : null}
  </form>
);

/** The matching tasks (search matches with their snippet), and the way to the next page. */
const TaskTable: FC<{ view: View; data: Data; query: TaskQuery; filtered: boolean; nextCursor: string | null }> = ({ view, data, query, filtered, nextCursor }) => {
  const projects = new Map(data.projects.map((p) => [p.id, p.name]));
  const words = wordsOf(query.q);
  const rows = data.search ? data.search.map((s) => ({ t: s as TaskRow, snippet: matchSnippet(s, words) })) : data.tasks.map((t) => ({ t, snippet: undefined }));
  return (
    <>
      {rows.length === 0 ? (
        <Empty>{filtered ? "No task matches these filters." : "No tasks yet."}</Empty>
      ) : (
        <div class="table">
          <table class="stack tasks">
            <thead>
              <tr><th scope="col">Task</th><th scope="col">Status</th><th scope="col">Project</th><th scope="col">Assignee</th><th scope="col">Due</th><th scope="col">Priority</th></tr>
            </thead>
            <tbody>
              {rows.map((r) => <Row view={view} t={r.t} projects={projects} snippet={r.snippet} />)}
            </tbody>
          </table>
        </div>
      )}
      {nextCursor ? (
        <nav class="pager" aria-label="More tasks">
          <a class="button" href={hrefWith(query, { cursor: nextCursor })}>More</a>
        </nav>
      ) : null}
    </>
  );
};

/** The form that creates a task (in the current project, if one is chosen). */
const NewTask: FC<{ view: View; current: Project | undefined }> = ({ view, current }) => (
  <details class="card">
    <summary>New task{current ? <> in <Written text={current.name} max={NAME_CLIP} /></> : ""}</summary>
    <Act view={view} action="create_task" once label="New task" fields={current ? { project_id: current.id } : {}}>
      <div class="row">
        <Field id="n-title" label="Title" class="grow">
          <input type="text" id="n-title" name="title" required maxlength={500} />
        </Field>
        <div><Button kind="primary">Create</Button></div>
      </div>
    </Act>
  </details>
);

export const TasksPage: FC<{ view: View; data: Data; query: TaskQuery; nextCursor: string | null }> = ({ view, data, query, nextCursor }) => {
  const filtered = Boolean(query.status || query.assignee || query.label || query.due || query.q);
  const current = data.projects.find((p) => p.id === query.project) ?? data.archived.find((p) => p.id === query.project);
  return (
    <Shell view={view} section="tasks" title="Tasks">
      <h1>Tasks</h1>
      <ProjectTabs view={view} data={data} query={query} current={current} />
      <Filters data={data} query={query} filtered={filtered} />
      <TaskTable view={view} data={data} query={query} filtered={filtered} nextCursor={nextCursor} />
      <NewTask view={view} current={current} />
      <ProjectForms view={view} current={current} />
    </Shell>
  );
};

function matchSnippet(s: SearchRow, words: string[]): string | undefined {
  const text = [s.notes, s.comment_body ?? ""].find((t) => mentions(t, words));
  return text ? snippetOf(text, words, "") : undefined;
}
