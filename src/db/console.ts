/**
 * What each page of the web console reads, as one batch (one D1 round trip)
 * per page, composed of the statements the tools use. Every page also gets
 * the count of pending approvals (for the navigation) and the account's
 * settings (its name and time zone). Long texts that a page only previews
 * come cut to `clip` characters plus one.
 */
import { selectActivity, type ActivityFilter, type ActivityRow } from "./activity.ts";
import { selectAccountSettings, type AccountSettingsRow } from "./account.ts";
import { selectAgents, fleetStatements, type AgentRow, type AgentWithTokens, type FleetRunRow, type FleetTaskRow } from "./agents.ts";
import { selectPendingCount } from "./approvals.ts";
import { readBatch } from "./batch.ts";
import { connectorSql, type ConnectorSummaryRow } from "./connectors.ts";
import type { CursorKey } from "./cursor.ts";
import { selectLabelRows, type LabelRow } from "./labels.ts";
import { selectProjectRows, type CountedProjectRow } from "./projects.ts";
import type { RunEvent } from "./runs.ts";
import { selectSearchRows, selectTaskHistory, type HistoryRow, type SearchQuery, type SearchRow } from "./task-search.ts";
import { selectTaskList, taskDetailStatements, type TaskListFilter } from "./task-views.ts";
import type { TaskRow } from "./tasks.ts";
import { selectTrashRows, type TrashRow } from "./trash.ts";

export interface Frame {
  pendingCount: number;
  settings: AccountSettingsRow;
}

export function frameStatements(db: D1Database, accountId: string) {
  return { count: selectPendingCount(db, accountId), settings: selectAccountSettings(db, accountId) };
}

export function frameOf(r: { count: unknown[]; settings: unknown[] }, accountId: string): Frame {
  const settings = (r.settings[0] as AccountSettingsRow | undefined) ?? {
    id: accountId, name: "", time_zone: "UTC", default_auto_ok: 0, trash_retention_days: 30, updated_at: "",
  };
  return { pendingCount: (r.count[0] as { n: number }).n, settings };
}

/** Only the frame: for pages whose data comes from elsewhere. */
export async function readFrame(db: D1Database, accountId: string): Promise<Frame> {
  return frameOf(await readBatch(db, frameStatements(db, accountId)), accountId);
}

const PAGE_LISTS = 100;

export interface TasksPage extends Frame {
  projects: CountedProjectRow[];
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
    labels: selectLabelRows(db, accountId, null, PAGE_LISTS),
    agents: db.prepare("SELECT name FROM agents WHERE account_id = ? ORDER BY name LIMIT ?").bind(accountId, PAGE_LISTS),
    list: q.search ? selectSearchRows(db, { ...q.search, accountId }) : selectTaskList(db, accountId, q.filter),
  });
  return {
    ...frameOf(r, accountId),
    projects: r.projects as CountedProjectRow[],
    labels: r.labels as LabelRow[],
    agents: r.agents as { name: string }[],
    tasks: q.search ? [] : (r.list as TaskRow[]),
    search: q.search ? (r.list as SearchRow[]) : null,
  };
}

export interface TaskPage extends Frame {
  task: TaskRow | null;
  project: { id: string; name: string; default_auto_ok: number | null } | null;
  parent: { id: string; title: string } | null;
  steps: { id: string; position: number; text: string; status: string }[];
  labels: { id: string; name: string }[];
  waitsOn: { id: string; title: string; status: string }[];
  blocks: { id: string; title: string; status: string }[];
  subtasks: { id: string; title: string; status: string }[];
  comments: { id: string; author: string; body: string; created_at: string }[];
  commentCount: number;
  runs: { id: string; agent: string; status: string; started_at: string; finished_at: string | null }[];
  events: RunEvent[];
  approval: { id: string; question: string; requested_by: string; created_at: string } | null;
  history: HistoryRow[];
}

/** One task with everything its page shows: get_task's reads, the latest comments, the latest run's log and the history. */
export async function readTaskPage(
  db: D1Database,
  accountId: string,
  taskId: string,
  l: { comments: number; events: number; history: number; clip: number },
): Promise<TaskPage> {
  const a = accountId;
  const d = taskDetailStatements(db, a, taskId, 5);
  const r = await readBatch(db, {
    ...frameStatements(db, a),
    task: d.task,
    steps: d.steps,
    labels: d.labels,
    waitsOn: d.waitsOn,
    blocks: d.blocks,
    runs: d.runs,
    approval: d.approval,
    project: db
      .prepare(
        `SELECT p.id, p.name, p.default_auto_ok FROM tasks t JOIN projects p ON p.id = t.project_id AND p.account_id = t.account_id
          WHERE t.id = ? AND t.account_id = ? AND p.trash_id IS NULL`,
      )
      .bind(taskId, a),
    parent: db
      .prepare(
        `SELECT p.id, p.title FROM tasks t JOIN tasks p ON p.id = t.parent_id AND p.account_id = t.account_id
          WHERE t.id = ? AND t.account_id = ? AND p.trash_id IS NULL`,
      )
      .bind(taskId, a),
    subtasks: db
      .prepare("SELECT id, title, status FROM tasks WHERE parent_id = ? AND account_id = ? AND trash_id IS NULL ORDER BY created_at, id LIMIT ?")
      .bind(taskId, a, PAGE_LISTS),
    comments: db
      .prepare(
        `SELECT * FROM (SELECT id, author, substr(body, 1, ?3) AS body, created_at FROM comments
            WHERE task_id = ?1 AND account_id = ?2 AND trash_id IS NULL ORDER BY created_at DESC, id DESC LIMIT ?4)
          ORDER BY created_at, id`,
      )
      .bind(taskId, a, l.clip + 1, l.comments),
    commentCount: db.prepare("SELECT count(*) AS n FROM comments WHERE task_id = ? AND account_id = ? AND trash_id IS NULL").bind(taskId, a),
    events: db
      .prepare(
        `SELECT * FROM (SELECT id, kind, substr(message, 1, ?3) AS message, url, created_at FROM run_events
            WHERE account_id = ?2 AND run_id = (SELECT id FROM runs WHERE task_id = ?1 AND account_id = ?2 ORDER BY started_at DESC, id DESC LIMIT 1)
            ORDER BY created_at DESC, id DESC LIMIT ?4)
          ORDER BY created_at, id`,
      )
      .bind(taskId, a, l.clip + 1, l.events),
    history: selectTaskHistory(db, a, taskId, null, l.history),
  });
  type P = TaskPage;
  return {
    ...frameOf(r, a),
    task: (r.task[0] as TaskRow | undefined) ?? null,
    project: (r.project[0] as P["project"] | undefined) ?? null,
    parent: (r.parent[0] as P["parent"] | undefined) ?? null,
    steps: r.steps as P["steps"],
    labels: r.labels as P["labels"],
    waitsOn: r.waitsOn as P["waitsOn"],
    blocks: r.blocks as P["blocks"],
    subtasks: r.subtasks as P["subtasks"],
    comments: r.comments as P["comments"],
    commentCount: (r.commentCount[0] as { n: number }).n,
    runs: r.runs as P["runs"],
    events: r.events as RunEvent[],
    approval: (r.approval[0] as P["approval"] | undefined) ?? null,
    history: (r.history as HistoryRow[]).slice(0, l.history),
  };
}

export interface AgentsPage extends Frame {
  agents: AgentRow[];
  runs: FleetRunRow[];
  held: FleetTaskRow[];
  tokens: AgentWithTokens[];
}

/** What fleet_status reads, plus each agent's working token count (list_agents). */
export async function readAgentsPage(db: D1Database, accountId: string, now: string, staleBefore: string, perAgent: number): Promise<AgentsPage> {
  const [agents, runs, held] = fleetStatements(db, accountId, staleBefore, perAgent);
  const r = await readBatch(db, {
    ...frameStatements(db, accountId),
    agents,
    runs,
    held,
    tokens: selectAgents(db, accountId, now, null, 1000),
  });
  return {
    ...frameOf(r, accountId),
    agents: r.agents as AgentRow[],
    runs: r.runs as FleetRunRow[],
    held: r.held as FleetTaskRow[],
    tokens: r.tokens as AgentWithTokens[],
  };
}

export interface AppsPage extends Frame {
  connectors: ConnectorSummaryRow[];
  agents: { name: string; paused_at: string | null }[];
}

/** The connected apps (never their credentials) and the agents a new token may name. */
export async function readAppsPage(db: D1Database, accountId: string): Promise<AppsPage> {
  const c = connectorSql.summaries(accountId);
  const r = await readBatch(db, {
    ...frameStatements(db, accountId),
    connectors: db.prepare(c.sql).bind(...c.params),
    agents: db.prepare("SELECT name, paused_at FROM agents WHERE account_id = ? ORDER BY name LIMIT ?").bind(accountId, PAGE_LISTS),
  });
  return {
    ...frameOf(r, accountId),
    connectors: r.connectors as ConnectorSummaryRow[],
    agents: r.agents as AppsPage["agents"],
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
}

/** The audit feed, filtered, with the names the actor filter offers (the person and every agent). */
export async function readActivityPage(db: D1Database, accountId: string, f: ActivityFilter): Promise<ActivityPage> {
  const r = await readBatch(db, {
    ...frameStatements(db, accountId),
    items: selectActivity(db, accountId, f),
    agents: db.prepare("SELECT name FROM agents WHERE account_id = ? ORDER BY name LIMIT ?").bind(accountId, PAGE_LISTS),
  });
  return {
    ...frameOf(r, accountId),
    items: r.items as ActivityRow[],
    actors: ["human", ...(r.agents as { name: string }[]).map((g) => g.name)],
  };
}
