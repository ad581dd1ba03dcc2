/**
 * What each column of schema.sql holds, for the effect audit that holds every
 * tool's hints against what it does to the rows (test/effect-audit.test.ts).
 *
 * - `written`: a value someone wrote or chose (a title, notes, a body, a name,
 *   an assignee, a date or setting a person set, an order). Replacing or
 *   clearing one is destructive, even when the old value can be brought back.
 *   A value that belongs to a state ends with it (see ENDS_WITH): a block's
 *   reason cleared as the block ends is lifecycle; replaced while the task
 *   stays blocked, it is overwritten.
 * - `lifecycle`: where a record is along its life (status, claim and lease,
 *   snooze, archive, pause, revocation, the trash). Moving along it is not
 *   destructive.
 * - `bookkeeping`: what the server keeps for itself (ids, versions,
 *   timestamps, counters, activity, idempotency, notices, sessions).
 *
 * Every column of every table has exactly one class; a test reads the schema
 * of the real database and fails on a column missing here or named here but
 * absent there. Full-text tables are left out: their rows are derived from
 * tasks and comments by triggers.
 */

export type ColumnClass = "written" | "lifecycle" | "bookkeeping";

const W = "written" as const;
const L = "lifecycle" as const;
const B = "bookkeeping" as const;

export const COLUMN_CLASSES: Readonly<Record<string, Readonly<Record<string, ColumnClass>>>> = {
  accounts: {
    id: B, name: W, time_zone: W, default_auto_ok: W, trash_retention_days: W, activity_retention_days: W, created_at: B, updated_at: B,
    moving_to: B,
  },
  agents: { id: B, account_id: B, name: W, paused_at: L, paused_by: L, last_seen_at: B, created_at: B, policy: W },
  tokens: {
    id: B, account_id: B, kind: W, scope: W, agent_id: W, label: W, hash: B, prefix: B, created_at: B,
    expires_at: W, revoked_at: L, last_used_at: B,
    person_id: B, client_id: B, client_name: W, redirect_uri: W, grant_id: B, policy: W,
  },
  projects: {
    id: B, account_id: B, name: W, description: W, default_auto_ok: W, archived_at: L, archived_by: L,
    version: B, created_at: B, updated_at: B, trash_id: L,
  },
  tasks: {
    rid: B, id: B, account_id: B, project_id: W, parent_id: W, title: W, notes: W, status: L, priority: W,
    due_at: W, estimate_minutes: W, assignee: W, auto_ok: W, blocked_reason: W, status_before_block: L,
    snoozed_until: W, version: B, created_by: B, created_at: B, updated_at: B, completed_at: L, trash_id: L,
    recurrence: W, series_id: B, claim_expires_at: L, claim_lease_minutes: L, closed_by: L,
    last_block_reason: B, last_block_by: B, last_block_at: B, assignee_person_id: B, scope: W,
  },
  task_dependencies: { account_id: B, task_id: W, depends_on_id: W, created_at: B, added_by: B },
  steps: { id: B, account_id: B, task_id: W, position: W, text: W, status: L, created_at: B, updated_at: B, trash_id: L },
  comments: { id: B, account_id: B, task_id: W, author_token_id: B, author: B, body: W, created_at: B, updated_at: B, trash_id: L },
  labels: { id: B, account_id: B, name: W, color: W, created_at: B },
  task_labels: { account_id: B, task_id: W, label_id: W, created_at: B },
  runs: { id: B, account_id: B, task_id: B, agent_id: B, status: L, summary: W, started_at: B, finished_at: L, last_event_at: B },
  run_events: { id: B, account_id: B, run_id: B, kind: W, message: W, url: W, created_at: B },
  approvals: {
    id: B, account_id: B, task_id: B, kind: L, status: L, question: W, requested_by: B, requested_by_token: B,
    decided_by: L, reason: W, created_at: B, decided_at: L, choices: W, accepts_words: W, answer_choice: W, answer_words: W, decided_by_person_id: B,
  },
  pending_actions: {
    id: B, account_id: B, agent_id: B, token_id: B, requested_by: B, tool: B, arguments: B, arguments_hash: B, task_id: B, project_id: B,
    rule: B, reason: B, preview: B, status: L, decided_by: L, decided_by_token: L, decided_by_person_id: L, decided_at: L, note: W, result: B, ran_at: B,
    created_at: B, expires_at: B,
  },
  calendar_links: {
    id: B, account_id: B, task_id: W, provider: W, event_id: W, title: W, starts_at: W, ends_at: W, url: W, created_at: B,
  },
  connectors: { id: B, account_id: B, provider: W, credentials: W, status: L, last_error: B, created_at: B, updated_at: B },
  trash: {
    id: B, account_id: B, kind: B, target_id: B, title: B, item_count: B, deleted_by: B, deleted_by_token: B,
    deleted_at: B, purge_after: B,
  },
  activity: { id: B, account_id: B, token_id: B, actor: B, tool: B, target_id: B, summary: B, created_at: B, person_id: B },
  idempotency_keys: { account_id: B, token_id: B, tool: B, key: B, result: B, created_at: B, request_hash: B },
  read_bookmarks: { account_id: B, holder: B, bookmark: B, updated_at: B },
  webhooks: { id: B, account_id: B, url: W, events: W, secret: B, secret_prefix: B, created_at: B },
  webhook_deliveries: {
    id: B, account_id: B, webhook_id: B, event_id: B, event_type: B, status: L, attempts: B, last_status: B,
    last_error: B, created_at: B, updated_at: B, delivered_at: B,
  },
  stale_run_notices: { run_id: B, account_id: B, last_event_at: B, event_id: B, notified_at: B },
  claim_lapse_notices: { task_id: B, account_id: B, expired_at: B, event_id: B, notified_at: B },
  guard: { failed: B },
  call_actor: { batch: B, kind: B, name: B, now: B },
  named_task: { task_id: B },
  move_permit: { held: B },
  people: { id: B, account_id: B, email: W, password_hash: W, created_at: B, updated_at: B, display_name: W },
  setup_links: { hash: B, person_id: B, account_id: B, created_at: B, expires_at: B, used_at: L },
  sessions: { hash: B, person_id: B, account_id: B, created_at: B, expires_at: B },
  push_subscriptions: {
    id: B, account_id: B, person_id: B, endpoint: B, p256dh: B, auth: B, origin: B, label: B, events: W, created_at: B,
    last_delivered_at: B, last_failure_at: B, last_error: B,
  },
  push_deliveries: { subscription_id: B, event_id: B, account_id: B, delivered_at: B },
  signin_failures: { key: B, failed_at: B },
  directory_accounts: { account_id: B, shard: B, updated_at: B },
  directory_keys: { kind: B, key: B, account_id: B },
  spent_refresh_tokens: { user_id: B, grant_id: B, hash: B, spent_at: B, grant_expires_at: B },
  d1_migrations: { id: B, name: B, applied_at: B },
};

/**
 * Lifecycle columns that take a record out of use when set: a row whose marker
 * goes from NULL to a value is removed (trashed, revoked) as surely as a
 * deleted one. Clearing the marker brings it back.
 */
export const REMOVAL_MARKERS: Readonly<Record<string, string>> = {
  tasks: "trash_id",
  projects: "trash_id",
  steps: "trash_id",
  comments: "trash_id",
  tokens: "revoked_at",
};

/** Bookkeeping a read may write: when a token was last used, when an agent was last seen. */
export const PRESENCE_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  tokens: ["last_used_at"],
  agents: ["last_seen_at"],
};

/**
 * Tables of such bookkeeping alone, whose rows any call may add or move:
 * where a caller's next reads start (src/db/read-sessions.ts), stored after
 * the response of any request whose writes ran, a repeat's included.
 */
export const PRESENCE_TABLES: ReadonlySet<string> = new Set(["read_bookmarks"]);

/**
 * A claim is an agent's assignee held under a lease: while the row has a
 * lease (claim_expires_at set), its assignee is the claim, lifecycle state
 * that lapses and is taken over, not a value someone wrote.
 */
export const CLAIM = { table: "tasks", holder: "assignee", lease: "claim_expires_at" } as const;

/**
 * Written values that belong to a state and end with it: cleared as the state
 * (the named column) changes, they move along the lifecycle. A block's reason
 * ends with the block.
 */
export const ENDS_WITH: Readonly<Record<string, Readonly<Record<string, string>>>> = { tasks: { blocked_reason: "status" } };

/**
 * A series' rule lives on its one live occurrence: completing that occurrence
 * hands the rule on to the next one (a new row of the same series). The rule
 * moves along the series' life; it is not cleared.
 */
export const SERIES = { table: "tasks", rule: "recurrence", series: "series_id" } as const;

/** The class of one column, or undefined when the column is not classified. */
export function classOf(table: string, column: string): ColumnClass | undefined {
  return Object.hasOwn(COLUMN_CLASSES, table) && Object.hasOwn(COLUMN_CLASSES[table], column) ? COLUMN_CLASSES[table][column] : undefined;
}

/** Does a table hold values someone wrote (so removing its rows removes them)? */
export function holdsWrittenValues(table: string): boolean {
  return Object.values(COLUMN_CLASSES[table] ?? {}).includes("written");
}

/**
 * Tables of the database that are not the schema's own: SQLite's and
 * Cloudflare's internals, and full-text tables (a virtual table and its
 * shadow tables, named after it) whose rows triggers derive from others.
 */
export function isDerivedTable(name: string, virtualTables: readonly string[]): boolean {
  if (name.startsWith("sqlite_") || name.startsWith("_cf_")) return true;
  return virtualTables.some((v) => name === v || name.startsWith(`${v}_`));
}
