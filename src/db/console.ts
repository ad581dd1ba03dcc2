/**
 * What each page of the web console reads, as one batch (one D1 round trip)
 * per page, composed of the statements the tools use. Every page also gets
 * the count of pending approvals (for the navigation) and the account's
 * settings (its name and time zone). Long texts that a page only previews
 * come cut to `clip` characters plus one.
 */
import { ACTIVITY_RETENTION } from "../domain/retention.ts";
import { activityWhere, selectActivity, type ActivityFilter, type ActivityRow } from "./activity.ts";
import { selectAccountSettings, type AccountSettingsRow } from "./account.ts";
import { selectAgents, fleetStatements, type AgentRow, type AgentWithTokens, type FleetRunRow, type FleetTaskRow } from "./agents.ts";
import { selectPendingCount, toPendingRequest, type PendingRequest } from "./approvals.ts";
import { readBatch } from "./batch.ts";
import { connectorSql, type ConnectorSummaryRow } from "./connectors.ts";
import type { CursorKey } from "./cursor.ts";
import { selectLinks, type LinkRow } from "./calendar.ts";
import { selectLabelRows, type LabelRow } from "./labels.ts";
import { selectProjectRows, type CountedProjectRow } from "./projects.ts";
import type { RunEvent } from "./runs.ts";
import { selectSearchRows, withClient, type HistoryRow, type SearchQuery, type SearchRow } from "./task-search.ts";
import { selectTaskList, taskDetailStatements, type TaskListFilter } from "./task-views.ts";
import { TASK_COLUMNS, type TaskRow } from "./tasks.ts";
import { selectTrashRows, type TrashRow } from "./trash.ts";

export interface Frame {
  /** Everything that waits for the person: approvals of live tasks and pending actions. */
  pendingCount: number;
  /** Of those, the approvals (questions and sign-offs), which the inbox pages through. */
  approvalCount: number;
  settings: AccountSettingsRow;
}

export function frameStatements(db: D1Database, accountId: string) {
  return { count: selectPendingCount(db, accountId), settings: selectAccountSettings(db, accountId) };
}

export function frameOf(r: { count: unknown[]; settings: unknown[] }, accountId: string): Frame {
  const settings = (r.settings[0] as AccountSettingsRow | undefined) ?? {
    id: accountId, name: "", time_zone: "UTC", default_auto_ok: 0, trash_retention_days: 30, activity_retention_days: ACTIVITY_RETENTION.default, updated_at: "",
  };
  const count = r.count[0] as { n: number; actions: number };
  return { pendingCount: count.n + count.actions, approvalCount: count.n, settings };
}

/** Only the frame: for pages whose data comes from elsewhere. */
export async function readFrame(db: D1Database, accountId: string): Promise<Frame> {
  return frameOf(await readBatch(db, frameStatements(db, accountId)), accountId);
}

const PAGE_LISTS = 100;

export interface TasksPage extends Frame {
  projects: CountedProjectRow[];
  /** Archived projects (out of the tabs and lists), so one can be opened and unarchived. */
  archived: CountedProjectRow[];
  labels: LabelRow[];
  agents: { name: string }[];
  tasks: TaskRow[];
  search: SearchRow[] | null;
}

/** The task list (filtered, or searched when `search` is given) with what its filters offer. */
export async function readTasksPage(
  db: D1Database,
  accountId: string,
  q: { filter: TaskListFilter; search: Omit<SearchQuery, "accountId"> | null },
): Promise<TasksPage> {
  const r = await readBatch(db, {
    ...frameStatements(db, accountId),
    projects: selectProjectRows(db, accountId, { includeArchived: false, after: null, limit: PAGE_LISTS }),
    archived: selectProjectRows(db, accountId, { includeArchived: true, onlyArchived: true, after: null, limit: PAGE_LISTS }),
    labels: selectLabelRows(db, accountId, null, PAGE_LISTS),
    agents: db.prepare("SELECT name FROM agents WHERE account_id = ? ORDER BY name LIMIT ?").bind(accountId, PAGE_LISTS),
    list: q.search ? selectSearchRows(db, { ...q.search, accountId }) : selectTaskList(db, accountId, q.filter),
  });
  return {
    ...frameOf(r, accountId),
    projects: r.projects as CountedProjectRow[],
    archived: r.archived as CountedProjectRow[],
    labels: r.labels as LabelRow[],
    agents: r.agents as { name: string }[],
    tasks: q.search ? [] : (r.list as TaskRow[]),
    search: q.search ? (r.list as SearchRow[]) : null,
  };
}

type Ref = { id: string; title: string; status: string; trash_id?: string | null };

export interface TaskPage extends Frame {
  task: TaskRow | null;
  project: { id: string; name: string; default_auto_ok: number | null } | null;
  parent: { id: string; title: string } | null;
  steps: { id: string; position: number; text: string; status: string }[];
  stepCount: number;
  labels: { id: string; name: string }[];
  waitsOn: Ref[];
  blocks: Ref[];
  subtasks: Ref[];
  subtaskCount: number;
  comments: { id: string; author: string; body: string; created_at: string }[];
  commentCount: number;
  runs: { id: string; agent: string; status: string; started_at: string; finished_at: string | null }[];
  events: RunEvent[];
  eventCount: number;
  approval: PendingRequest | null;
  history: HistoryRow[];
  /** What the ids in the history name. */
  named: NamedRow[];
  /** The account's label names, by name (`labels` + 1 at most: one more means there are more). */
  accountLabels: string[];
  /** The task's calendar links by start (`links` + 1 at most). */
  links: LinkRow[];
  /** Tasks found for a new dependency (`refs` + 1 at most), when the page was asked to search (`depWords`). */
  depFound: SearchRow[] | null;
  /** Who the task may be assigned to: the account's agents by name (`paused`: 1 while paused). */
  agents: { name: string; paused: number }[];
}

/** What an id in an activity summary names, looked up for the page that shows the entry. */
export interface NamedRow {
  id: string;
  kind: "approval" | "action" | "run" | "step" | "comment" | "task" | "project";
  /** A question's text, a pending action's tool, a run's agent, a step's or comment's text, a task's title, a project's name. */
  text: string;
  /** The trash item it is in, when deleted. */
  trashed: string | null;
  /** The task it belongs to (a task: itself), when any. */
  task_id: string | null;
  /** 1 while a question, sign-off or pending action waits for a person. */
  pending: number;
}

const NAMED_PREFIXES = JSON.stringify(["apr_", "run_", "stp_", "cmt_", "tsk_", "prj_"]);

/**
 * The approvals, pending actions, runs, steps, comments, tasks and projects
 * that the summaries of `h` (a query of activity rows, its parameters from
 * ?3 on) name by id (the first two ids of each kind in an entry), in account
 * `?1`, their texts cut to `?2` characters: looked up by key, never scanned.
 */
function namedIn(h: string): string {
  const first = `SELECT summary, k.value AS k, instr(summary, k.value) AS at FROM h, json_each('${NAMED_PREFIXES}') k WHERE instr(summary, k.value) > 0`;
  return `WITH h AS (${h}),
  f AS (${first}),
  ids AS (SELECT substr(summary, at, 20) AS id FROM f
    UNION SELECT substr(summary, at + 20 + instr(substr(summary, at + 20), k) - 1, 20) FROM f WHERE instr(substr(summary, at + 20), k) > 0),
  n AS (SELECT ids.id,
      CASE WHEN a.id IS NOT NULL THEN 'approval' WHEN x.id IS NOT NULL THEN 'action' WHEN r.id IS NOT NULL THEN 'run' WHEN s.id IS NOT NULL THEN 'step'
        WHEN c.id IS NOT NULL THEN 'comment' WHEN t.id IS NOT NULL THEN 'task' WHEN p.id IS NOT NULL THEN 'project' END AS kind,
      coalesce(substr(a.question, 1, ?2), x.tool, g.name, substr(s.text, 1, ?2), substr(c.body, 1, ?2), substr(t.title, 1, ?2), substr(p.name, 1, ?2)) AS text,
      coalesce(s.trash_id, c.trash_id, t.trash_id, p.trash_id) AS trashed,
      coalesce(a.task_id, x.task_id, r.task_id, s.task_id, c.task_id, t.id) AS task_id,
      coalesce(a.status = 'pending', x.status = 'pending', 0) AS pending
    FROM ids
    LEFT JOIN approvals a ON a.id = ids.id AND a.account_id = ?1
    LEFT JOIN pending_actions x ON x.id = ids.id AND x.account_id = ?1
    LEFT JOIN runs r ON r.id = ids.id AND r.account_id = ?1
    LEFT JOIN agents g ON g.id = r.agent_id AND g.account_id = r.account_id
    LEFT JOIN steps s ON s.id = ids.id AND s.account_id = ?1
    LEFT JOIN comments c ON c.id = ids.id AND c.account_id = ?1
    LEFT JOIN tasks t ON t.id = ids.id AND t.account_id = ?1
    LEFT JOIN projects p ON p.id = ids.id AND p.account_id = ?1)
  SELECT * FROM n WHERE kind IS NOT NULL`;
}

/** What the latest `?4` history entries of task `?3` name. */
const NAMED_IN_HISTORY = namedIn("SELECT summary FROM activity WHERE target_id = ?3 AND account_id = ?1 ORDER BY created_at DESC, id DESC LIMIT ?4");

export interface TaskPageLimits {
  /** How many of each list the page shows at most. */
  steps: number;
  refs: number;
  labels: number;
  comments: number;
  events: number;
  history: number;
  /** The calendar links shown, and the account's labels offered to add. */
  links: number;
  accountLabels: number;
  /** Characters shown of each kind of text (one more is read, to know it was cut). */
  notesClip: number;
  textClip: number;
  lineClip: number;
}

/**
 * One task with everything its page shows (get_task's reads, the latest
 * comments, the latest run's log, the history), each list capped and each
 * long text cut, so the page stays small whatever the task holds.
 */
export async function readTaskPage(
  db: D1Database,
  accountId: string,
  taskId: string,
  l: TaskPageLimits,
  /** Search words for a task to wait on (the dependency search), or null. */
  depWords: readonly string[] | null = null,
): Promise<TaskPage> {
  const a = accountId;
  const d = taskDetailStatements(db, a, taskId, 5);
  const title = (col: string) => `substr(${col}, 1, ${l.lineClip + 1}) AS title`;
  // What it waits on, those in the trash with their item (still unfinished); what waits on it, live ones.
  const refs = (join: string, where: string, live: string) =>
    db
      .prepare(
        `SELECT t.id, ${title("t.title")}, t.status, t.trash_id FROM task_dependencies d JOIN tasks t ON ${join}
          WHERE ${where} AND d.account_id = ?2 AND t.account_id = ?2${live} ORDER BY t.created_at, t.rid LIMIT ?3`,
      )
      .bind(taskId, a, l.refs);
  const latestRun = "(SELECT id FROM runs WHERE task_id = ?1 AND account_id = ?2 ORDER BY started_at DESC, id DESC LIMIT 1)";
  const r = await readBatch(db, {
    ...frameStatements(db, a),
    task: db
      .prepare(`SELECT ${TASK_COLUMNS.replace("t.notes", `substr(t.notes, 1, ${l.notesClip + 1}) AS notes`)} FROM tasks t WHERE t.id = ? AND t.account_id = ? AND t.trash_id IS NULL`)
      .bind(taskId, a),
    steps: db
      .prepare(
        `SELECT id, position, substr(text, 1, ?3) AS text, status FROM steps WHERE task_id = ?1 AND account_id = ?2 AND trash_id IS NULL
          ORDER BY position, created_at, id LIMIT ?4`,
      )
      .bind(taskId, a, l.lineClip + 1, l.steps),
    stepCount: db.prepare("SELECT count(*) AS n FROM steps WHERE task_id = ? AND account_id = ? AND trash_id IS NULL").bind(taskId, a),
    labels: db
      .prepare(
        `SELECT l.id, l.name FROM task_labels tl JOIN labels l ON l.id = tl.label_id AND l.account_id = tl.account_id
          WHERE tl.task_id = ? AND tl.account_id = ? ORDER BY l.name LIMIT ?`,
      )
      .bind(taskId, a, l.labels),
    waitsOn: refs("t.id = d.depends_on_id", "d.task_id = ?1", ""),
    blocks: refs("t.id = d.task_id", "d.depends_on_id = ?1", " AND t.trash_id IS NULL"),
    runs: d.runs,
    approval: d.approval,
    project: db
      .prepare(
        `SELECT p.id, substr(p.name, 1, ?3) AS name, p.default_auto_ok FROM tasks t JOIN projects p ON p.id = t.project_id AND p.account_id = t.account_id
          WHERE t.id = ?1 AND t.account_id = ?2 AND p.trash_id IS NULL`,
      )
      .bind(taskId, a, l.lineClip + 1),
    parent: db
      .prepare(
        `SELECT p.id, ${title("p.title")} FROM tasks t JOIN tasks p ON p.id = t.parent_id AND p.account_id = t.account_id
          WHERE t.id = ?1 AND t.account_id = ?2 AND p.trash_id IS NULL`,
      )
      .bind(taskId, a),
    subtasks: db
      .prepare(`SELECT id, ${title("title")}, status FROM tasks WHERE parent_id = ?1 AND account_id = ?2 AND trash_id IS NULL ORDER BY created_at, id LIMIT ?3`)
      .bind(taskId, a, l.refs),
    subtaskCount: d.subtasks,
    comments: db
      .prepare(
        `SELECT * FROM (SELECT id, author, substr(body, 1, ?3) AS body, created_at FROM comments
            WHERE task_id = ?1 AND account_id = ?2 AND trash_id IS NULL ORDER BY created_at DESC, id DESC LIMIT ?4)
          ORDER BY created_at, id`,
      )
      .bind(taskId, a, l.textClip + 1, l.comments),
    commentCount: db.prepare("SELECT count(*) AS n FROM comments WHERE task_id = ? AND account_id = ? AND trash_id IS NULL").bind(taskId, a),
    events: db
      .prepare(
        `SELECT * FROM (SELECT id, kind, substr(message, 1, ?3) AS message, url, created_at FROM run_events
            WHERE account_id = ?2 AND run_id = ${latestRun} ORDER BY created_at DESC, id DESC LIMIT ?4)
          ORDER BY created_at, id`,
      )
      .bind(taskId, a, l.lineClip + 1, l.events),
    eventCount: db.prepare(`SELECT count(*) AS n FROM run_events WHERE account_id = ?2 AND run_id = ${latestRun}`).bind(taskId, a),
    history: db
      .prepare(
        withClient(`SELECT id, actor, token_id, tool, substr(summary, 1, ?3) AS summary, created_at, person_id FROM activity
          WHERE target_id = ?1 AND account_id = ?2 ORDER BY created_at DESC, id DESC LIMIT ?4`),
      )
      .bind(taskId, a, l.lineClip + 1, l.history, a),
    named: db.prepare(NAMED_IN_HISTORY).bind(a, l.lineClip + 1, taskId, l.history),
    accountLabels: db.prepare("SELECT name FROM labels WHERE account_id = ? ORDER BY name LIMIT ?").bind(a, l.accountLabels + 1),
    links: selectLinks(db, a, { taskId }, null, l.links),
    // Asked only when the page searches; absent from the batch (and its answer) otherwise.
    ...((depWords ? { depFound: selectSearchRows(db, { accountId: a, words: depWords, offset: 0, limit: l.refs }) } : {}) as { depFound: D1PreparedStatement }),
    agents: db.prepare("SELECT name, paused_at IS NOT NULL AS paused FROM agents WHERE account_id = ? ORDER BY name LIMIT ?").bind(a, PAGE_LISTS),
  });
  type P = TaskPage;
  const n = (rows: unknown[]) => (rows[0] as { n: number }).n;
  return {
    ...frameOf(r, a),
    task: (r.task[0] as TaskRow | undefined) ?? null,
    project: (r.project[0] as P["project"] | undefined) ?? null,
    parent: (r.parent[0] as P["parent"] | undefined) ?? null,
    steps: r.steps as P["steps"],
    stepCount: n(r.stepCount),
    labels: r.labels as P["labels"],
    waitsOn: r.waitsOn as Ref[],
    blocks: r.blocks as Ref[],
    subtasks: r.subtasks as Ref[],
    subtaskCount: n(r.subtaskCount),
    comments: r.comments as P["comments"],
    commentCount: n(r.commentCount),
    runs: r.runs as P["runs"],
    events: r.events as RunEvent[],
    eventCount: n(r.eventCount),
    approval: r.approval[0] ? toPendingRequest(r.approval[0] as Parameters<typeof toPendingRequest>[0]) : null,
    history: r.history as HistoryRow[],
    named: r.named as NamedRow[],
    accountLabels: (r.accountLabels as { name: string }[]).map((x) => x.name),
    links: r.links as LinkRow[],
    depFound: depWords ? (r.depFound as SearchRow[]) : null,
    agents: r.agents as P["agents"],
  };
}

export interface TaskMovePage extends Frame {
  task: { id: string; title: string; project_id: string | null; parent_id: string | null } | null;
  /** Where it may move: the account's live, unarchived projects by name (and the task's own), names cut to `clip` + 1. */
  projects: { id: string; name: string }[];
}

/** A task's move to another project: the task, and the projects it may move to. */
export async function readTaskMove(db: D1Database, accountId: string, taskId: string, clip: number): Promise<TaskMovePage> {
  const r = await readBatch(db, {
    ...frameStatements(db, accountId),
    task: db.prepare("SELECT id, substr(title, 1, ?3) AS title, project_id, parent_id FROM tasks WHERE id = ?1 AND account_id = ?2 AND trash_id IS NULL").bind(taskId, accountId, clip + 1),
    projects: db
      .prepare(
        `SELECT id, substr(name, 1, ?3) AS name FROM projects WHERE account_id = ?2 AND trash_id IS NULL
          AND (archived_at IS NULL OR id = (SELECT project_id FROM tasks WHERE id = ?1 AND account_id = ?2)) ORDER BY name, id LIMIT ?4`,
      )
      .bind(taskId, accountId, clip + 1, PAGE_LISTS),
  });
  return { ...frameOf(r, accountId), task: (r.task[0] as TaskMovePage["task"] | undefined) ?? null, projects: r.projects as TaskMovePage["projects"] };
}

/** One whole text of a task (its notes, or one of its comments, steps or run events), for the page that shows it in full. */
export async function readTaskText(
  db: D1Database,
  accountId: string,
  taskId: string,
  part: string,
): Promise<Frame & { task: { id: string; title: string; version: number } | null; text: { what: string; author: string | null; body: string; created_at: string | null } | null }> {
  const a = accountId;
  const text =
    part === "notes"
      ? db.prepare("SELECT 'notes' AS what, NULL AS author, notes AS body, NULL AS created_at FROM tasks WHERE id = ? AND account_id = ? AND trash_id IS NULL").bind(taskId, a)
      : part.startsWith("cmt_")
        ? db.prepare("SELECT 'comment' AS what, author, body, created_at FROM comments WHERE id = ?3 AND task_id = ?1 AND account_id = ?2 AND trash_id IS NULL").bind(taskId, a, part)
        : part.startsWith("stp_")
          ? db.prepare("SELECT 'step' AS what, NULL AS author, text AS body, created_at FROM steps WHERE id = ?3 AND task_id = ?1 AND account_id = ?2 AND trash_id IS NULL").bind(taskId, a, part)
          : db
              .prepare(
                `SELECT 'run event' AS what, g.name AS author, e.message AS body, e.created_at FROM run_events e
                   JOIN runs r ON r.id = e.run_id AND r.account_id = e.account_id JOIN agents g ON g.id = r.agent_id
                  WHERE e.id = ?3 AND r.task_id = ?1 AND e.account_id = ?2`,
              )
              .bind(taskId, a, part);
  const r = await readBatch(db, {
    ...frameStatements(db, a),
    task: db.prepare("SELECT id, title, version FROM tasks WHERE id = ? AND account_id = ? AND trash_id IS NULL").bind(taskId, a),
    text,
  });
  return {
    ...frameOf(r, a),
    task: (r.task[0] as { id: string; title: string; version: number } | undefined) ?? null,
    text: (r.text[0] as { what: string; author: string | null; body: string; created_at: string | null } | undefined) ?? null,
  };
}

export interface AgentsPage extends Frame {
  agents: AgentRow[];
  runs: FleetRunRow[];
  held: FleetTaskRow[];
  tokens: AgentWithTokens[];
  /** Each agent's rules as stored (src/catalog/policy.ts), by name. */
  policies: { name: string; policy: string | null }[];
}

/**
 * What fleet_status reads, for one page of agents by name (`limit` + 1 rows,
 * so the page knows whether more follow), plus each agent's working token count (list_agents).
 */
export async function readAgentsPage(
  db: D1Database,
  accountId: string,
  q: { now: string; staleBefore: string; perAgent: number; afterName: string; limit: number },
): Promise<AgentsPage> {
  const [agents, runs, held] = fleetStatements(db, accountId, q.staleBefore, q.perAgent, { afterName: q.afterName, limit: q.limit });
  const r = await readBatch(db, {
    ...frameStatements(db, accountId),
    agents,
    runs,
    held,
    tokens: selectAgents(db, accountId, q.now, q.afterName ? { k: q.afterName, id: "" } : null, q.limit),
    policies: db.prepare("SELECT name, policy FROM agents WHERE account_id = ? AND name > ? AND policy IS NOT NULL ORDER BY name LIMIT ?").bind(accountId, q.afterName, q.limit + 1),
  });
  return {
    ...frameOf(r, accountId),
    agents: r.agents as AgentRow[],
    runs: r.runs as FleetRunRow[],
    held: r.held as FleetTaskRow[],
    tokens: r.tokens as AgentWithTokens[],
    policies: r.policies as AgentsPage["policies"],
  };
}

export interface AppsPage extends Frame {
  connectors: ConnectorSummaryRow[];
  agents: { name: string; paused_at: string | null }[];
  /** Where each app connected by URL sends its access, by token id: what tells two apps of one name apart. */
  redirects: { id: string; client_id: string; redirect_uri: string }[];
  /** The live agent tokens with rules of their own (src/catalog/policy.ts), by token id. */
  policies: { id: string; policy: string }[];
}

const REDIRECTS_SHOWN = 500;

/** The connected apps (never their credentials), the agents a new token may name, and where apps connected by URL send their access. */
export async function readAppsPage(db: D1Database, accountId: string): Promise<AppsPage> {
  const c = connectorSql.summaries(accountId);
  const r = await readBatch(db, {
    ...frameStatements(db, accountId),
    connectors: db.prepare(c.sql).bind(...c.params),
    agents: db.prepare("SELECT name, paused_at FROM agents WHERE account_id = ? ORDER BY name LIMIT ?").bind(accountId, PAGE_LISTS),
    redirects: db
      .prepare("SELECT id, client_id, redirect_uri FROM tokens WHERE account_id = ? AND client_id IS NOT NULL AND redirect_uri IS NOT NULL ORDER BY created_at DESC LIMIT ?")
      .bind(accountId, REDIRECTS_SHOWN),
    policies: db
      .prepare("SELECT id, policy FROM tokens WHERE account_id = ? AND kind = 'agent' AND policy IS NOT NULL AND revoked_at IS NULL ORDER BY created_at DESC LIMIT ?")
      .bind(accountId, REDIRECTS_SHOWN),
  });
  return {
    ...frameOf(r, accountId),
    connectors: r.connectors as ConnectorSummaryRow[],
    agents: r.agents as AppsPage["agents"],
    redirects: r.redirects as AppsPage["redirects"],
    policies: r.policies as AppsPage["policies"],
  };
}

export interface TrashPage extends Frame {
  items: TrashRow[];
}

export async function readTrashPage(db: D1Database, accountId: string, after: CursorKey | null, limit: number): Promise<TrashPage> {
  const r = await readBatch(db, { ...frameStatements(db, accountId), items: selectTrashRows(db, accountId, { after, limit }) });
  return { ...frameOf(r, accountId), items: r.items as TrashRow[] };
}

export interface ActivityPage extends Frame {
  items: ActivityRow[];
  actors: string[];
  /** What the ids in the listed entries name. */
  named: NamedRow[];
}

/** Characters of a named thing's text the Activity page reads. */
const ACTIVITY_NAME_CLIP = 200;

/** What the entries of the feed's page name (the same rows selectActivity reads). */
function namedInActivity(db: D1Database, accountId: string, f: ActivityFilter): D1PreparedStatement {
  const w = activityWhere(accountId, f);
  let n = 2;
  const where = w.sql.replace(/\?/g, () => `?${++n}`);
  return db
    .prepare(namedIn(`SELECT summary FROM activity WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT ?${++n}`))
    .bind(accountId, ACTIVITY_NAME_CLIP, ...w.binds, f.limit + 1);
}

/** The audit feed, filtered, with the names the actor filter offers (the person and every agent). */
export async function readActivityPage(db: D1Database, accountId: string, f: ActivityFilter): Promise<ActivityPage> {
  const r = await readBatch(db, {
    ...frameStatements(db, accountId),
    items: selectActivity(db, accountId, f),
    agents: db.prepare("SELECT name FROM agents WHERE account_id = ? ORDER BY name LIMIT ?").bind(accountId, PAGE_LISTS),
    named: namedInActivity(db, accountId, f),
  });
  return {
    ...frameOf(r, accountId),
    items: r.items as ActivityRow[],
    named: r.named as NamedRow[],
    actors: ["human", ...(r.agents as { name: string }[]).map((g) => g.name)],
  };
}
