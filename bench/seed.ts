/**
 * Bulk data for the benchmark, as SQL text for `wrangler d1 execute --file`:
 * tasks in multi-row INSERTs with their search-index rows (as the app writes them), and
 * extra accounts and tokens planned by the same code as the admin CLI.
 */
import { planAccount, planToken, type Sql, type TokenRequest } from "../src/db/provisioning.ts";
import { render } from "../scripts/lib/d1.ts";
import { SERVER_WRITERS, serverSql } from "../src/db/server-caller.ts";
import { indexText } from "../src/domain/search-terms.ts";

/** Rows per INSERT: well under D1's 100 KB per statement. */
const ROWS_PER_INSERT = 200;

const VERBS = ["Review", "Draft", "Fix", "Plan", "Update", "Check", "Write", "Test", "Migrate", "Clean up", "Prepare", "Email"];
const NOUNS = [
  "invoice", "release notes", "landing page", "backlog", "budget", "onboarding", "API docs", "dashboard",
  "test suite", "roadmap", "contract", "newsletter", "database", "slides", "hiring plan", "support queue",
];
const NOTES = [
  "Follow up with the team before Friday.",
  "See the shared folder for the latest draft.",
  "Waiting on feedback from finance since last week.",
  "Small change, should take under an hour.",
  "Needs a second pair of eyes before it ships.",
];
/** A word in one task of every hundred: the search term, so matches grow with the account as real ones do. */
export const SEARCH_WORD = "quarterly";
const SEARCH_EVERY = 100;

const STATUSES = ["open", "open", "open", "in_progress", "blocked", "done", "done", "cancelled"];

export interface TaskSeed {
  accountId: string;
  /** Index of the first generated task, so a second call continues the sequence. */
  from: number;
  count: number;
  /** Every nth task is assigned to this agent; the others alternate between `human` and nobody. */
  agentName: string;
  agentEvery: number;
  projectIds: string[];
  /** Task i is created at baseMs + i seconds: later tasks are newer. */
  baseMs: number;
  /** One task in this many holds SEARCH_WORD (default SEARCH_EVERY). */
  searchEvery?: number;
}

const ID_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";

/** A task id in the server's format (tsk_ + 16 base-36), unique per account and index. */
export function taskIdAt(accountId: string, i: number): string {
  let n = i;
  let tail = "";
  for (let k = 0; k < 8; k++) {
    tail = ID_ALPHABET[n % 36] + tail;
    n = Math.floor(n / 36);
  }
  return `tsk_${accountId.slice(4, 12)}${tail}`;
}

function q(s: string | null): string {
  return s === null ? "NULL" : `'${s.replace(/'/g, "''")}'`;
}

function titleAt(i: number, every = SEARCH_EVERY): string {
  return `${VERBS[i % VERBS.length]} ${NOUNS[(i * 7) % NOUNS.length]}${i % every === 7 % every ? ` ${SEARCH_WORD}` : ""} #${i}`;
}

function taskRow(s: TaskSeed, i: number): string {
  const created = new Date(s.baseMs + i * 1000).toISOString();
  const title = titleAt(i, s.searchEvery);
  const status = STATUSES[(i * 3) % STATUSES.length];
  const assignee = i % s.agentEvery === 0 ? s.agentName : i % 2 === 0 ? "human" : null;
  const project = s.projectIds.length ? s.projectIds[i % s.projectIds.length] : null;
  const due = i % 5 === 0 ? new Date(s.baseMs + i * 1000 + ((i % 60) - 20) * 86_400_000).toISOString() : null;
  const completed = status === "done" ? created : null;
  return `(${q(taskIdAt(s.accountId, i))}, ${q(s.accountId)}, ${q(project)}, ${q(title)}, ${q(NOTES[i % NOTES.length])}, ${q(status)}, ${i % 4}, ${q(due)}, ${q(assignee)}, 0, 1, 'human', ${q(created)}, ${q(created)}, ${q(completed)})`;
}

/** INSERT statements for tasks [from, from + count) of one account, each batch followed by its search-index rows. */
export function taskInserts(s: TaskSeed): string[] {
  const out: string[] = [];
  const end = s.from + s.count;
  for (let start = s.from; start < end; start += ROWS_PER_INSERT) {
    const rows: string[] = [];
    const terms: string[] = [];
    for (let i = start; i < Math.min(start + ROWS_PER_INSERT, end); i++) {
      rows.push(taskRow(s, i));
      terms.push(`(${q(taskIdAt(s.accountId, i))}, ${q(indexText(s.accountId, titleAt(i, s.searchEvery)))}, ${q(indexText(s.accountId, NOTES[i % NOTES.length]))})`);
    }
    out.push(
      "INSERT INTO tasks (id, account_id, project_id, title, notes, status, priority, due_at, assignee, auto_ok, version, created_by, created_at, updated_at, completed_at) VALUES\n" +
        rows.join(",\n") +
        ";",
      `INSERT INTO task_search (rowid, title, notes) SELECT t.rid, v.column2, v.column3 FROM (VALUES\n${terms.join(",\n")}) v JOIN tasks t ON t.id = v.column1;`,
    );
  }
  return out;
}

export function projectInserts(accountId: string, ids: string[], nowIso: string): string[] {
  return ids.map(
    (id, k) =>
      `INSERT INTO projects (id, account_id, name, created_at, updated_at) VALUES (${q(id)}, ${q(accountId)}, ${q(`Project ${k + 1}`)}, ${q(nowIso)}, ${q(nowIso)});`,
  );
}

/** Runs of the agent on some tasks, some still running, so fleet_status has something to report. */
export function runInserts(accountId: string, agentName: string, taskIds: string[], nowMs: number): string[] {
  return taskIds.map((taskId, k) => {
    const started = new Date(nowMs - (k + 1) * 3_600_000).toISOString();
    const status = k % 3 === 0 ? "running" : "succeeded";
    const finished = status === "running" ? null : new Date(nowMs - k * 3_600_000).toISOString();
    const id = `run_bench${String(k).padStart(11, "0")}`;
    return `INSERT INTO runs (id, account_id, task_id, agent_id, status, started_at, finished_at, last_event_at)
      SELECT ${q(id)}, ${q(accountId)}, ${q(taskId)}, id, ${q(status)}, ${q(started)}, ${q(finished)}, ${q(finished ?? started)}
        FROM agents WHERE account_id = ${q(accountId)} AND name = ${q(agentName)};`;
  });
}

export interface PlannedAccount {
  id: string;
  sql: string[];
}

/** An account planned exactly as `npm run admin -- create-account` plans it. */
export function accountSql(name: string, nowIso: string): PlannedAccount {
  const plan = planAccount(name, nowIso);
  return { id: plan.id, sql: [...plan.directory, ...plan.statements].map((s: Sql) => render(s) + ";") };
}

export interface PlannedSecret {
  id: string;
  secret: string;
  sql: string[];
}

/** A token planned exactly as `npm run admin -- create-token` plans it. */
export async function tokenSql(req: TokenRequest, nowIso: string): Promise<PlannedSecret> {
  const plan = await planToken(req, nowIso);
  return { id: plan.id, secret: plan.secret, sql: plan.statements.map((s: Sql) => render(s) + ";") };
}

/**
 * A seeding file's statements as the server's writer `server:bench`: the
 * consent rules refuse rows written with no caller, so the file records its
 * caller first and removes it last (`wrangler d1 execute --file` runs it in one go).
 */
export function asBenchSeed(statements: string[]): string[] {
  const caller = serverSql(SERVER_WRITERS.bench);
  return [`${render(caller.in)};`, ...statements, `${render(caller.out)};`];
}
