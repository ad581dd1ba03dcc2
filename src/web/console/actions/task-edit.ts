/**
 * The task page's edits of the task itself: its fields, who holds it, snooze,
 * block, project. Each is one tool call (update_task, assign_task, claim_task,
 * snooze_task, block_task, unblock_task, move_task) with the person's
 * principal; the tool decides and refuses. What the web adds is the form's
 * own reading: a local date and time in the account's zone becomes an ISO
 * time with its offset, and a field left as the page showed it is not sent.
 */
import { parseIsoTime } from "../../../domain/dates.ts";
import { canonicalTimeZone, localDateTime, zonedTimeToMs } from "../../../domain/zoned-time.ts";
import { ruleWords } from "../format.ts";
import { one, quote, utcWords, type ActionSpec, type FormFields, type Result } from "../action-spec.ts";

/** A `<input type="datetime-local">` value: `YYYY-MM-DDTHH:MM`, seconds optional. */
const LOCAL_INPUT = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})(:\d{2})?$/;

/** The local date and time (minutes) an instant shows in a zone, as a datetime-local input holds it; "" for none. */
export function localInput(iso: string | null, timeZone: string): string {
  const ms = iso ? Date.parse(iso) : NaN;
  if (Number.isNaN(ms)) return "";
  try {
    return localDateTime(timeZone, ms).slice(0, 16);
  } catch {
    return localDateTime("UTC", ms).slice(0, 16);
  }
}

/**
 * A local date and time typed in zone `timeZone`, as an ISO time with that
 * zone's offset then (`2026-12-24T18:00:00+01:00`). A time the clocks skip
 * moves on by the gap, a repeated one is its first instant (zonedTimeToMs).
 * Anything else (not such a value, no such date, no such zone) is passed on
 * as typed, for the tool to refuse in its words.
 */
export function zonedIso(local: string, timeZone: string): string {
  const m = LOCAL_INPUT.exec(local);
  const zone = canonicalTimeZone(timeZone);
  if (!m || !zone) return local;
  const wall = `${m[1]}T${m[2]}${m[3] ?? ":00"}`;
  if (!parseIsoTime(`${wall}Z`).ok) return local;
  const ms = zonedTimeToMs(zone, wall);
  if (!Number.isFinite(ms)) return local;
  const shown = localDateTime(zone, ms);
  const offset = Math.round((Date.parse(`${shown}Z`) - Math.floor(ms / 1000) * 1000) / 60_000);
  const abs = Math.abs(offset);
  return `${shown}${offset < 0 ? "-" : "+"}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
}

/** A text as a form sends it back: a browser sends CRLF line ends, and the page's textarea starts with a newline the parser drops. */
export const asSubmitted = (text: string) => text.replace(/\r\n?/g, "\n");

/** A short sum of a text (FNV-1a), to tell whether a long field came back as the page showed it without sending it twice. */
export function textSum(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16);
}

/** The repeat rules the edit form offers by name (canonical, as update_task stores them); `custom` is a rule written out. */
export const REPEATS: { rule: string; words: string }[] = [
  { rule: "FREQ=DAILY", words: "Every day" },
  { rule: "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", words: "Every weekday" },
  { rule: "FREQ=WEEKLY", words: "Every week" },
  { rule: "FREQ=WEEKLY;INTERVAL=2", words: "Every 2 weeks" },
  { rule: "FREQ=MONTHLY", words: "Every month" },
  { rule: "FREQ=YEARLY", words: "Every year" },
];
export const CUSTOM_REPEAT = "custom";

/** A whole number as typed, else the text itself for the tool to refuse. */
function numberOr(v: string): number | string {
  return /^-?\d{1,12}$/.test(v) ? Number(v) : v;
}

/** The rule the edit form asks for: "" stops repeating; a named one, or the one written out. */
function chosenRule(f: FormFields): string {
  const repeat = one(f, "repeat") ?? "";
  if (repeat === CUSTOM_REPEAT) return f.rule?.[0]?.trim() ?? "";
  return repeat;
}

/**
 * update_task's arguments from an edit form (the task page's, or the notes page's with the notes alone): each
 * field the form has, except those that came back as the page showed them (notes, due, repeat).
 */
function editArgs(f: FormFields): Record<string, unknown> {
  const args: Record<string, unknown> = { task_id: one(f, "task_id") };
  const version = one(f, "expected_version");
  if (version !== undefined) args.expected_version = numberOr(version);
  if (f.title !== undefined) args.title = f.title[0] ?? "";
  const priority = one(f, "priority");
  if (priority !== undefined) args.priority = priority;
  const notes = f.notes?.[0];
  if (notes !== undefined) {
    const sent = asSubmitted(notes);
    if (textSum(sent) !== one(f, "notes_sum")) args.notes = sent;
  }
  if (f.due !== undefined) {
    const due = one(f, "due") ?? "";
    if (due !== (one(f, "due_was") ?? "")) args.due_at = due === "" ? null : zonedIso(due, one(f, "time_zone") ?? "UTC");
  }
  if (f.estimate_minutes !== undefined) {
    const estimate = one(f, "estimate_minutes");
    args.estimate_minutes = estimate === undefined ? null : numberOr(estimate);
  }
  if (f.scope !== undefined) {
    // One area a line; sent only when the list changed.
    const areas = (f.scope[0] ?? "").split(/\r?\n/).map((a) => a.trim()).filter((a) => a !== "");
    if (areas.join("\n") !== (f.scope_was?.[0] ?? "")) args.scope = areas;
  }
  if (f.repeat !== undefined) {
    const rule = chosenRule(f);
    const repeatChosen = one(f, "repeat") === CUSTOM_REPEAT || rule !== "";
    if (rule !== (one(f, "recurrence_was") ?? "")) args.recurrence = repeatChosen ? rule : null;
  }
  return args;
}

/** What the saved task now holds, in words, of the fields the person changed on the form. */
function savedWords(r: Result, f: FormFields): string {
  const t = r.task ?? {};
  const sent = editArgs(f);
  const said: string[] = [];
  if (sent.due_at !== undefined) said.push(t.due_at ? `due ${localWords(t.due_at, one(f, "time_zone"))}` : "no due time");
  if (sent.priority !== undefined && one(f, "priority") !== one(f, "priority_was")) said.push(`priority ${t.priority}`);
  if (sent.estimate_minutes !== undefined && (one(f, "estimate_minutes") ?? "") !== (one(f, "estimate_was") ?? "")) said.push(t.estimate_minutes ? `estimate ${t.estimate_minutes} min` : "no estimate");
  if (sent.recurrence !== undefined) said.push(t.recurrence ? `repeats ${ruleWords(t.recurrence)}` : "does not repeat");
  if (sent.notes !== undefined) said.push(t.notes ? "notes saved" : "notes cleared");
  if (Array.isArray(sent.scope)) said.push(sent.scope.length ? `scope ${sent.scope.join(", ")}` : "no scope");
  return said.length ? `: ${said.join(", ")}` : "";
}

/** A stored time in the zone the form was filled in ("2026-12-24 18:00 Europe/Berlin"), else in UTC. */
function localWords(iso: string, timeZone: string | undefined): string {
  const zone = timeZone ? canonicalTimeZone(timeZone) : null;
  if (!zone) return utcWords(iso);
  return `${localInput(iso, zone).replace("T", " ")} ${zone}`;
}

/** A tool's words for the fields of its arguments, as the form's labels name them. */
const fieldWords = (text: string, labels: Record<string, string>) =>
  text.replace(/^([a-z_]+): /, (all, field: string) => (labels[field] ? `${labels[field]}: ` : all));

const EDIT_LABELS = {
  title: "Title",
  scope: "Scope",
  notes: "Notes",
  priority: "Priority",
  due_at: "Due",
  estimate_minutes: "Estimate (minutes)",
  recurrence: "Repeats",
  expected_version: "Version",
};

const STALE = /^task \S+ has changed since version \d+/;

const whoWords = (assignee: unknown) => (assignee === "human" ? "you" : assignee ? String(assignee) : "nobody");

export const TASK_EDIT_ACTIONS: Record<string, ActionSpec> = {
  edit_task: {
    tool: "update_task",
    args: editArgs,
    done: (r, f) => (r.changed ? `Saved ${quote(r.task?.title)}${savedWords(r, f)}.` : `Nothing to change in ${quote(r.task?.title)}.`),
    labels: EDIT_LABELS,
    refused(text) {
      if (STALE.test(text)) {
        return {
          text:
            "Not saved: the task was changed by someone else since this page was opened. The page now shows its current values, and the form keeps what you typed; " +
            "compare them, then Save again to put yours over theirs.",
        };
      }
      const field = /^([a-z_]+): /.exec(text)?.[1];
      return field && field in EDIT_LABELS ? { text: fieldWords(text, EDIT_LABELS), field } : null;
    },
  },
  assign_task: {
    tool: "assign_task",
    args: (f) => ({ task_id: one(f, "task_id"), assignee: one(f, "assignee") ?? null }),
    done: (r) =>
      r.changed
        ? r.task?.assignee
          ? `Assigned ${quote(r.task?.title)} to ${whoWords(r.task.assignee)}.`
          : `${quote(r.task?.title)} is unassigned now.`
        : `${quote(r.task?.title)} was already assigned to ${whoWords(r.task?.assignee)}.`,
    labels: { assignee: "Assignee" },
  },
  take_task: {
    tool: "claim_task",
    args: (f) => ({ task_id: one(f, "task_id") }),
    // An agent's live claim refuses a person's claim_task; assign_task is the person's way to take it over.
    refused(text) {
      const holder = /^task \S+ is claimed by ([a-z0-9][a-z0-9_.-]*)\./.exec(text)?.[1];
      return holder
        ? { text: `Not taken: agent ${holder} holds this task with a live claim, and a claim is not taken from an agent that way. To take it over, choose Me under Assignee and Assign (${holder}'s running runs end).` }
        : null;
    },
    done: (r) => (r.changed ? `You took ${quote(r.task?.title)}: it is yours and in progress.` : `${quote(r.task?.title)} was already yours.`),
  },
  release_task: {
    tool: "assign_task",
    args: (f) => ({ task_id: one(f, "task_id"), assignee: null }),
    done: (r) => (r.changed ? `You let ${quote(r.task?.title)} go: nobody holds it now.` : `Nobody held ${quote(r.task?.title)}.`),
  },
  snooze_task: {
    tool: "snooze_task",
    args: (f) => {
      const until = one(f, "until");
      return { task_id: one(f, "task_id"), until: until === undefined ? "" : zonedIso(until, one(f, "time_zone") ?? "UTC") };
    },
    done: (r, f) =>
      r.changed
        ? `Snoozed ${quote(r.task?.title)} until ${localWords(r.task?.snoozed_until, one(f, "time_zone"))}: open lists leave it out until then.`
        : `${quote(r.task?.title)} was already snoozed until then.`,
    labels: { until: "Snooze until" },
    refused: (text) => (/^until: /.test(text) ? { text: fieldWords(text, { until: "Snooze until" }), field: "until" } : null),
  },
  wake_task: {
    tool: "snooze_task",
    args: (f) => ({ task_id: one(f, "task_id"), until: null }),
    done: (r) => (r.changed ? `Woke ${quote(r.task?.title)}: open lists show it again.` : `${quote(r.task?.title)} was not snoozed.`),
  },
  block_task: {
    tool: "block_task",
    args: (f) => ({ task_id: one(f, "task_id"), reason: f.reason?.[0] ?? "" }),
    done: (r) => (r.changed ? `Blocked ${quote(r.task?.title)}: it waits for ${quote(r.task?.blocked_reason)}.` : `${quote(r.task?.title)} was already blocked for that.`),
    labels: { reason: "Waiting for" },
  },
  unblock_task: {
    tool: "unblock_task",
    args: (f) => ({ task_id: one(f, "task_id") }),
    done: (r) => (r.changed ? `Unblocked ${quote(r.task?.title)}: it is ${r.task?.status === "in_progress" ? "in progress" : r.task?.status} again.` : `${quote(r.task?.title)} was not blocked.`),
  },
  move_task: {
    tool: "move_task",
    // The choice carries the project's id and, after a space, its name (for the message).
    args: (f) => ({ task_id: one(f, "task_id"), project_id: one(f, "project_id")?.split(" ")[0] ?? null }),
    done: (r, f) => {
      const name = one(f, "project_id")?.split(" ").slice(1).join(" ");
      if (!r.changed) return `${quote(r.task?.title)} was already there.`;
      const where = r.task?.project_id ? (name ? `to the project ${quote(name)}` : "to its new project") : "out of any project";
      return `Moved ${quote(r.task?.title)} ${where}${r.moved > 1 ? `, with ${r.moved - 1} subtask(s)` : ""}.`;
    },
    after: (r) => (r.task?.id ? `/tasks/${r.task.id}` : null),
    labels: { project_id: "Project" },
  },
};
