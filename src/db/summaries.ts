import type { Condition } from "../catalog/tool.ts";

/**
 * The activity summaries, each written once as a template with named slots
 * ("approved{approval}; task done{note}{next}") and rendered two ways: as
 * text, for a write that read its rows first, and as an SQL expression, for
 * the one-batch form that computes it from the rows as they are. A slot of
 * the SQL form is either an SQL expression (a column, a subquery, a numbered
 * parameter) or a value, which is always bound, never inlined. The fixed text
 * becomes string literals, quotes doubled.
 */

/** An SQL expression and the values its `?` take, in order. */
export type SqlPart = { sql: string; binds?: readonly unknown[] };
export type SlotValue = string | number;

/** The slot names of a template: "a {x} b {y}" → "x" | "y". */
export type SlotsOf<T extends string> = T extends `${string}{${infer K}}${infer R}` ? K | SlotsOf<R> : never;

type Values<K extends string> = [K] extends [never] ? [values?: Record<string, never>] : [values: Record<K, SlotValue>];

export interface Summary<K extends string> {
  readonly template: string;
  readonly slots: readonly K[];
  /** The summary with every slot given as text. */
  text(...values: Values<K>): string;
  /** The summary as one SQL expression: `sqlSlots` as SQL, the rest of the slots as bound values. */
  sql<S extends K = never>(sqlSlots: { [P in S]: SqlPart }, ...values: Values<Exclude<K, S>>): Condition;
}

type Piece = { literal: string } | { slot: string };

const SLOT = /\{(\w+)\}/g;

function parse(template: string): Piece[] {
  const pieces: Piece[] = [];
  let at = 0;
  for (const m of template.matchAll(SLOT)) {
    if (m.index > at) pieces.push({ literal: template.slice(at, m.index) });
    pieces.push({ slot: m[1] });
    at = m.index + m[0].length;
  }
  if (at < template.length) pieces.push({ literal: template.slice(at) });
  return pieces;
}

/** A string as an SQL literal, single quotes doubled. */
export function sqlLiteral(s: string): SqlPart {
  return { sql: `'${s.replaceAll("'", "''")}'` };
}

/** An expression that needs no parentheses next to `||`: a name, a parameter, a literal, or one already in parentheses. */
function simple(sql: string): boolean {
  if (/^[\w.]+$|^\?\d*$|^'(?:[^']|'')*'$/.test(sql)) return true;
  if (!sql.startsWith("(") || !sql.endsWith(")")) return false;
  let depth = 0;
  for (let i = 0; i < sql.length; i++) {
    if (sql[i] === "(") depth++;
    else if (sql[i] === ")" && --depth === 0 && i < sql.length - 1) return false;
  }
  return true;
}

/** One template, rendered as text or as SQL. */
export function summary<const T extends string>(template: T): Summary<SlotsOf<T>> {
  type K = SlotsOf<T>;
  const pieces = parse(template);
  const slots = [...new Set(pieces.flatMap((p) => ("slot" in p ? [p.slot as K] : [])))];
  return {
    template,
    slots,
    text(values?: Record<string, SlotValue>) {
      const given = values ?? {};
      return pieces.map((p) => ("literal" in p ? p.literal : String(slotValue(template, given, p.slot)))).join("");
    },
    sql(sqlSlots: Record<string, SqlPart>, values?: Record<string, SlotValue>) {
      const given = values ?? {};
      const parts: string[] = [];
      const binds: unknown[] = [];
      for (const p of pieces) {
        if ("literal" in p) {
          parts.push(sqlLiteral(p.literal).sql);
        } else if (Object.hasOwn(sqlSlots, p.slot)) {
          const part = sqlSlots[p.slot];
          parts.push(simple(part.sql) ? part.sql : `(${part.sql})`);
          binds.push(...(part.binds ?? []));
        } else {
          // As text: D1 binds a JS number as a real, which would concatenate as "3.0".
          parts.push("?");
          binds.push(String(slotValue(template, given, p.slot)));
        }
      }
      return { sql: parts.length ? parts.join(" || ") : "''", binds };
    },
  } as unknown as Summary<K>;
}

function slotValue(template: string, values: Record<string, SlotValue>, slot: string): SlotValue {
  if (!Object.hasOwn(values, slot)) throw new Error(`summary "${template}": no value for {${slot}}`);
  return values[slot];
}

/** An optional piece: its text when `on`, else empty. */
export function optional<K extends string>(s: Summary<K>, on: boolean, ...values: Values<K>): string {
  return on ? s.text(...values) : "";
}

/** The plural's "s" of a count. */
export const plural = (n: number) => (n === 1 ? "" : "s");

/**
 * A counted piece ("with {n} subtask{s}"): empty at zero, the plural's "s"
 * when not one. `text` for a number, `sql` for an expression without binds.
 */
export function counted(s: Summary<"n" | "s">) {
  return {
    summary: s,
    text: (n: number) => (n ? s.text({ n, s: plural(n) }) : ""),
    sql: (n: string): string =>
      `CASE WHEN ${n} = 0 THEN '' ELSE ${s.sql({ n: { sql: n }, s: { sql: `CASE WHEN ${n} = 1 THEN '' ELSE 's' END` } }).sql} END`,
  };
}

/** A list's items, each rendered by `item`, joined with ", " (the form group_concat(…, ', ') gives in SQL). */
export const LIST_SEPARATOR = ", ";
export function listSql(item: Condition): string {
  return `group_concat(${item.sql}, ${sqlLiteral(LIST_SEPARATOR).sql})`;
}

/**
 * The items of a fixed list whose condition holds over the row, in order,
 * joined with ", " ('' when none): one SQL expression, binds in text order.
 */
export function listWhereSql(items: { when: Condition; item: SqlPart }[]): Condition {
  if (items.length === 0) return { sql: "''", binds: [] };
  const sep = sqlLiteral(LIST_SEPARATOR).sql;
  return {
    sql: `substr(${items.map((i) => `CASE WHEN ${i.when.sql} THEN ${sep} || (${i.item.sql}) ELSE '' END`).join(" || ")}, ${LIST_SEPARATOR.length + 1})`,
    binds: items.flatMap((i) => [...i.when.binds, ...(i.item.binds ?? [])]),
  };
}

/** What a task's move names when there is no project. */
export const NO_PROJECT = "no project";

// The templates, by tool. A piece that is there or not (a reason, an approval) is its own template.

/** " apr_1": the approval a decision or completion names, when there is one. */
export const APPROVAL_ID = summary(" {approval}");
/** ": the reason", after a summary, when one was given. */
export const REASON = summary(": {reason}");
export const reasonText = (reason: string | null | undefined) => optional(REASON, Boolean(reason), { reason: reason ?? "" });

// complete_task
export const COMPLETED = summary("completed");
export const COMPLETED_AUTO_OK = summary("completed (auto-OK)");
export const COMPLETED_AWAITING = summary("completed; awaiting a person's approval ({approval})");
export const APPROVAL_DECIDED = summary("; approval {approval} {status}");
// reopen_task
export const REOPENED = summary("reopened from {status}{closed}{reason}");
export const REOPEN_CLOSED = summary("; approval {approval} closed");
// approve_task, reject_task
export const APPROVED = summary("approved{approval}; task done{note}{next}");
export const REJECTED = summary("rejected{approval}; back to {status} (comment {comment}): {reason}");
// block_task, unblock_task
export const BLOCKED_TASK = summary("blocked (was {status}): {reason}");
export const UNBLOCKED_TASK = summary("unblocked (back to {status})");
// delete_task, move_task
export const DELETED_TASK = summary('deleted task "{title}"{subtasks} (trash item {trash})');
export const DELETED_SUBTASKS = counted(summary(" with {n} subtask{s}"));
export const MOVED_TASK = summary("moved to {project} (from {from}){subtasks}");
export const MOVED_SUBTASKS = counted(summary(", with {n} subtask{s}"));
// add_dependency, remove_dependency
export const WAITS_ON = summary('now waits on {task} "{title}"');
export const NO_LONGER_WAITS_ON = summary('no longer waits on {task} "{title}"');
// update_project, archive_project, unarchive_project, delete_project
export const UPDATED_PROJECT = summary('updated {fields} of project "{name}"');
export const ARCHIVED_PROJECT = summary('archived project "{name}"');
export const UNARCHIVED_PROJECT = summary('unarchived project "{name}"');
export const DELETED_PROJECT = summary('moved project "{name}" and {count} task(s) to the trash ({trash})');
// rename_label, delete_label, label_task, unlabel_task
export const RENAMED_LABEL = summary('renamed label "{old}" to "{name}"');
export const DELETED_LABEL = summary('deleted label "{name}" (on {count} task(s))');
export const QUOTED_NAME = summary('"{name}"');
export const LABELLED = summary("labelled {names}{new}");
export const LABELLED_NEW = summary(" (new: {names})");
export const UNLABELLED = summary("unlabelled {names}");
// restore_from_trash, empty_trash
export const RESTORED = summary('restored {kind} {id} "{title}" ({count} row(s)){detached}');
export const RESTORED_DETACHED = summary("; detached from purged project/parent: {ids}");
export const PURGED = summary("purged {count} trash item(s) for good: {items}");
export const PURGED_SCHEDULED = summary("purged {count} trash item(s) past the retention: {ids}");
export const PURGED_ITEM = summary('{id} ({kind} "{title}")');
// revoke_token
export const REVOKED = summary('revoked {what} {id} "{label}" ({kind}{agent}, {scope})');
export const TOKEN_AGENT = summary(" {agent}");
// start_run
export const STARTED_RUN = summary("started run {run}{progress}");
export const STARTED_RUN_PROGRESS = summary("; task in progress");
// unlink_calendar_event
export const UNLINKED_EVENT = summary('unlinked {provider} event {event} "{title}" ({id}; {starts} – {ends}; {url}; linked {created})');
// set_step_status
export const STEP_STATUS = summary("step {step}: {from} → {to}");

// The summaries both paths of a tool write from values they already have.
// pause_agent, resume_agent
export const PAUSED_AGENT = summary("paused agent {agent}: its tokens may only read{reason}");
export const RESUMED_AGENT = summary("resumed agent {agent}{reason}");
export const AGENT_REASON = summary("; {reason}");
// claim_task
export const CLAIMED = summary("claimed by {claimant} and started{takeover}");
export const CLAIM_TAKEOVER = summary(", taking it over from {holder} whose claim lapsed at {expired}{run}");
export const CLAIM_STALE_RUN = summary(" (run {run} ended as stale)");
// set_auto_ok
export const AUTO_OK_ON = summary("auto-OK on: agents may complete it alone");
export const AUTO_OK_OFF = summary("auto-OK off: an agent's completion needs approval");
// edit_comment, delete_comment
export const EDITED_COMMENT = summary("edited comment {comment}");
export const DELETED_COMMENT = summary("deleted comment {comment} (trash {trash})");
// create_label
export const CREATED_LABEL = summary('created label "{name}"');
// log_run_event, finish_run, cancel_run
export const RUN_EVENT = summary("run {run} {kind}: {message}");
export const RUN_ENDED = summary("run {run} {status}{summary}");
// add_steps, delete_step, reorder_steps
export const ADDED_STEPS = summary("added {count} step{s} ({ids})");
export const DELETED_STEP = summary("deleted step {step} (trash {trash})");
export const REORDERED_STEPS = summary("reordered {count} steps: {ids}");
// add_subtasks
export const ADDED_SUBTASKS = summary("added {count} subtask{s}: {items}");
export const SUBTASK_ITEM = summary('{id} "{title}"');
// create_task, update_task, update_settings
export const CREATED_TASK = summary('created task "{title}"{repeats}');
export const UPDATED_TASK = summary("updated {fields}{repeats}");
export const CREATED_REPEATING = summary(", repeating {rule} (series {series})");
export const UPDATED_REPEATING = summary(" (repeating {rule})");
export const UPDATED_SETTINGS = summary("updated account settings: {changes}");
export const SETTING_CHANGE = summary("{field} = {value}");
// assign_task, snooze_task
export const ASSIGNED = summary("assigned to {assignee}");
export const UNASSIGNED = summary("cleared the assignee");
// assign_task: the holder's or a person's release, and the holder's hand-off
export const RELEASED = summary("released by {by} (held by {holder}); now {status} and unassigned");
export const HANDED_OFF = summary("handed off by {from} to {to}, who holds it now (lease until {until})");
export const SNOOZED = summary("snoozed until {until}");
export const UNSNOOZED = summary("ended the snooze");
// create_project, comment_on_task, edit_step, link_calendar_event
export const CREATED_PROJECT = summary('created project "{name}"');
export const COMMENTED = summary("commented {comment}");
export const EDITED_STEP = summary("edited step {step}");
export const LINKED_EVENT = summary('linked {provider} event {event} "{title}" ({starts} – {ends})');
// withdraw_approval, request_approval, ask_question, answer_question
export const WITHDREW = summary("withdrew {what} {approval}");
export const ASKED_QUESTION = summary("asked question {approval}: {question}");
export const REQUESTED_SIGNOFF = summary("requested sign-off {approval}: {question}");
export const ANSWERED_QUESTION = summary("answered question {approval}: {answer}{reason}; task stays {status}");
export const ANSWER_REASON = summary(" ({reason})");
// a question's answer by choice or in words (approve_task)
export const ANSWER_CHOICE = summary('chose "{choice}"');
export const ANSWER_WORDS = summary('in words "{words}"');
// the app connection a refresh token's reuse ends (the token endpoint)
export const ENDED_APP_CONNECTION = summary('ended the app connection {token} "{label}": {why}');
// a recurring task's next occurrence (complete_task, approve_task)
export const SERIES_ENDS = summary("; series {series} ends with it ({rule})");
export const NEXT_OCCURRENCE = summary("; next occurrence {task} due {due}");
export const CREATED_OCCURRENCE = summary('created "{title}" as occurrence {index} of series {series} ({rule}), after {after}, due {due}');
// save_to_connector, disconnect_connector
export const SAVED_TO_CONNECTOR = summary('saved "{title}" to {provider} as {ref}');
export const DISCONNECTED = summary("disconnected {provider}; its stored credentials are deleted");
// a token made in the web console
export const CREATED_TOKEN_IN_CONSOLE = summary('created token {token} "{label}" ({kind}{agent}, {scope}) in the web console');
export const SET_DISPLAY_NAME = summary('set the name shown for them to "{name}" in the web console');
// the console's policy pages (src/web/console/policy.ts)
export const SET_AGENT_POLICY = summary("set the policy of agent {agent} in the web console: {policy}");
export const SET_CONNECTION_POLICY = summary('set the own policy of connection {token} "{label}" (agent {agent}) in the web console: {policy}');
// pending actions: a call an agent's policy asks about (src/mcp/pending-actions.ts, src/tools/pending-actions.ts)
export const ASKED_ACTION = summary("asked the person to approve {title} ({tool}): {action}");
export const ACTION_EXPIRED = summary("pending action {action} ({tool}) expired before a person decided it; nothing ran");
export const APPROVED_ACTION = summary("approved {title} ({tool}) asked by {agent}: {action}{note}");
export const REJECTED_ACTION = summary("rejected {title} ({tool}) asked by {agent}: {action}: {reason}");

/** Every template above, by name, for the test that renders each both ways. */
export const SUMMARIES: Record<string, Summary<string>> = {
  APPROVAL_ID, REASON, COMPLETED, COMPLETED_AUTO_OK, COMPLETED_AWAITING, APPROVAL_DECIDED, REOPENED, REOPEN_CLOSED, APPROVED, REJECTED,
  BLOCKED_TASK, UNBLOCKED_TASK, DELETED_TASK, MOVED_TASK, WAITS_ON, NO_LONGER_WAITS_ON, UPDATED_PROJECT, ARCHIVED_PROJECT, UNARCHIVED_PROJECT,
  DELETED_PROJECT, RENAMED_LABEL, DELETED_LABEL, QUOTED_NAME, LABELLED, LABELLED_NEW, UNLABELLED, RESTORED, RESTORED_DETACHED, PURGED,
  PURGED_ITEM, REVOKED, TOKEN_AGENT, STARTED_RUN, STARTED_RUN_PROGRESS, UNLINKED_EVENT, STEP_STATUS,
  PAUSED_AGENT, RESUMED_AGENT, AGENT_REASON, CLAIMED, CLAIM_TAKEOVER, CLAIM_STALE_RUN, AUTO_OK_ON, AUTO_OK_OFF, EDITED_COMMENT,
  DELETED_COMMENT, CREATED_LABEL, RUN_EVENT, RUN_ENDED, ADDED_STEPS, DELETED_STEP, REORDERED_STEPS, ADDED_SUBTASKS, SUBTASK_ITEM,
  CREATED_TASK, UPDATED_TASK, UPDATED_SETTINGS, SETTING_CHANGE, ASSIGNED, UNASSIGNED, SNOOZED, UNSNOOZED, CREATED_PROJECT, COMMENTED,
  EDITED_STEP, LINKED_EVENT, WITHDREW, ASKED_QUESTION, REQUESTED_SIGNOFF, ANSWERED_QUESTION, ANSWER_REASON, ANSWER_CHOICE, ANSWER_WORDS,
  ENDED_APP_CONNECTION, PURGED_SCHEDULED, CREATED_REPEATING, UPDATED_REPEATING, SERIES_ENDS, NEXT_OCCURRENCE, CREATED_OCCURRENCE, SAVED_TO_CONNECTOR, DISCONNECTED, CREATED_TOKEN_IN_CONSOLE,
  RELEASED, HANDED_OFF, SET_DISPLAY_NAME, SET_AGENT_POLICY, SET_CONNECTION_POLICY, ASKED_ACTION, ACTION_EXPIRED, APPROVED_ACTION, REJECTED_ACTION,
  DELETED_SUBTASKS: DELETED_SUBTASKS.summary, MOVED_SUBTASKS: MOVED_SUBTASKS.summary,
} as unknown as Record<string, Summary<string>>;
