/**
 * Every action a console page offers, as data: which tool it calls, how the
 * form's fields become the tool's arguments, and what the person is told when
 * it worked. The tool itself validates, decides and records (through the
 * registry, exactly as for an MCP call); a refusal shows the tool's message.
 */
import { bool, one, opt, quote, statusText, trashKeeps, utcWords, written, type ActionSpec, type Said, type FormFields, type Result } from "./action-spec.ts";
import { plural } from "./format.ts";
import { PROJECT_ACTIONS } from "./actions/projects.ts";
import { TASK_EDIT_ACTIONS } from "./actions/task-edit.ts";
import { TASK_PART_ACTIONS } from "./actions/task-parts.ts";

export { one, type ActionSpec, type FormFields };

/** A project form's auto-OK choice: `account` (the account's default; on an edit, null), `on` or `off`. */
function autoOkChoice(f: FormFields, edit: boolean): Record<string, boolean | null> {
  const v = one(f, "default_auto_ok");
  if (v === "on" || v === "off") return { default_auto_ok: v === "on" };
  return edit ? { default_auto_ok: null } : {};
}

const autoOkWords = (v: unknown) =>
  v === null || v === undefined ? "its new tasks follow the account's auto-OK default" : v ? "its new tasks start with auto-OK on" : "its new tasks start with auto-OK off";

/** How many trash items empty_trash with all: true purges in one call. */
const EMPTY_AT_ONCE = 500;

const ARGUMENT_ERROR = /^Invalid arguments for [a-z_]+\. ([\s\S]*)\. Fix (?:this field|these fields) and call again \(tools\/list has the input schema\)\.$/;

/**
 * A tool's refusal as a person reads it: an argument error names the form's
 * fields by their labels (and says which field to look at) instead of the
 * tool's arguments and schema; any other refusal is already in plain words.
 */
export function personRefusal(text: string, spec: ActionSpec): { text: string; field?: string } {
  const m = ARGUMENT_ERROR.exec(text);
  if (!m) return { text };
  const lines = m[1].split(/; (?=[a-z_][a-z0-9_.]*: )/).map((line) => {
    const at = line.indexOf(": ");
    const field = line.slice(0, at).split(".")[0];
    const message = line.slice(at + 2).replace(/; send .*$/, "");
    return { field, said: `${spec.labels?.[field] ?? field.replaceAll("_", " ")}: ${message}` };
  });
  const said = lines.map((l) => l.said).join(". ");
  return { text: `${said}${/[.?!]$/.test(said) ? "" : "."} Nothing was saved; correct ${lines.length === 1 ? "it" : "them"} and send again.`, field: lines[0]?.field };
}

/** What a person is told of an answer to an agent's question: the task stays where it was. */
function answered(r: Result, answer: "yes" | "no"): string {
  const q = quote(r.approval?.question);
  // A yes given by choice or in words is told as what was given.
  const given = answer === "yes" && r.approval?.answer ? r.approval.answer : null;
  const said = given ? [given.choice != null ? quote(given.choice) : null, given.words != null ? "in words" : null].filter(Boolean).join(" and ") : answer;
  if (!r.changed) {
    // Answered before, perhaps by another person of the account: the answer names who.
    const by = r.approval?.decided_by_person?.name;
    return by ? `${by} had already answered ${said} to ${q}.` : `You had already answered ${said} to ${q}.`;
  }
  const stays = `${quote(r.task?.title)} stays ${statusText(r.task?.status)}`;
  if (given) return `Answered ${said} to ${q}: the agent reads your answer, and ${stays}.`;
  return answer === "yes" ? `Answered yes to ${q}: the agent goes on, and ${stays}.` : `Answered no to ${q}: the agent reads your reason, and ${stays}.`;
}

/** A question's answer from its form: the choice picked and the words written, each only when given (words keep their lines). */
const answerFields = (f: FormFields) => {
  const words = f.answer?.[0];
  return { ...opt(f, "choice"), ...(words !== undefined && words.trim() !== "" ? { answer: words } : {}) };
};

export const ACTIONS: Record<string, ActionSpec> = {
  ...TASK_EDIT_ACTIONS,
  ...TASK_PART_ACTIONS,
  ...PROJECT_ACTIONS,
  approve: {
    tool: "approve_task",
    args: (f) => ({ task_id: one(f, "task_id"), ...opt(f, "note") }),
    done: (r) =>
      r.approval?.kind === "question" ? answered(r, "yes") : r.changed ? `Approved ${quote(r.task?.title)}: it is done.` : `${quote(r.task?.title)} was already done.`,
  },
  reject: {
    tool: "reject_task",
    args: (f) => ({ task_id: one(f, "task_id"), reason: one(f, "reason") ?? "" }),
    done: (r) =>
      r.approval?.kind === "question"
        ? answered(r, "no")
        : `Rejected ${quote(r.task?.title)}: it is back ${statusText(r.task?.status)}, and your reason is a comment the agent reads.`,
    labels: { reason: "Reason" },
  },
  approve_action: {
    tool: "approve_task",
    args: (f) => ({ approval_id: one(f, "approval_id") }),
    done: (r) => {
      const what = quote(r.approval?.action?.title);
      const result = r.approval?.action?.result as { is_error: boolean; text: string } | null | undefined;
      if (!r.changed) return `${what} was already approved; it ran once.`;
      return result?.is_error ? `Approved ${what}, but it was refused when it ran: ${result.text}` : `Approved ${what}: it ran once, as ${r.approval?.requested_by}.`;
    },
  },
  reject_action: {
    tool: "reject_task",
    args: (f) => ({ approval_id: one(f, "approval_id"), reason: one(f, "reason") ?? "" }),
    done: (r) => (r.changed ? `Rejected ${quote(r.approval?.action?.title)}: nothing ran, and the agent reads your reason.` : `${quote(r.approval?.action?.title)} was already rejected.`),
    labels: { reason: "Reason" },
  },
  answer_yes: {
    tool: "approve_task",
    args: (f) => ({ task_id: one(f, "task_id"), ...answerFields(f) }),
    done: (r) => answered(r, "yes"),
    labels: { choice: "Choice", answer: "Your answer" },
  },
  answer_no: { tool: "reject_task", args: (f) => ({ task_id: one(f, "task_id"), reason: one(f, "reason") ?? "" }), done: (r) => answered(r, "no"), labels: { reason: "Reason" } },
  comment: {
    tool: "comment_on_task",
    args: (f) => ({ task_id: one(f, "task_id"), body: f.body?.[0] ?? "", ...opt(f, "idempotency_key") }),
    done: () => "Comment added.",
    labels: { body: "Comment" },
  },
  complete: {
    tool: "complete_task",
    args: (f) => ({ task_id: one(f, "task_id"), ...opt(f, "note") }),
    done: (r) => {
      if (!r.changed) return `${quote(r.task?.title)} was already done.`;
      if (r.outcome === "awaiting_approval" || r.task?.status === "awaiting_approval") return `${quote(r.task?.title)} waits for a sign-off.`;
      const next = r.next_occurrence;
      return next
        ? `Completed ${quote(r.task?.title)}. It repeats: this is its next occurrence, open and due ${utcWords(next.due_at)}.`
        : `Completed ${quote(r.task?.title)}.`;
    },
    after: (r) => (r.next_occurrence?.id ? `/tasks/${r.next_occurrence.id}` : null),
  },
  reopen: {
    tool: "reopen_task",
    args: (f) => ({ task_id: one(f, "task_id"), ...opt(f, "reason") }),
    done: (r) => (r.changed ? `Reopened ${quote(r.task?.title)}.` : `${quote(r.task?.title)} was already open.`),
  },
  delete: {
    tool: "delete_task",
    args: (f) => ({ task_id: one(f, "task_id") }),
    done: (r) =>
      r.already_in_trash
        ? "The task was already in the trash; Trash restores it."
        : `Moved the task${r.item_count > 1 ? ` and ${r.item_count - 1} subtask(s)` : ""} to the trash; Trash restores it.`,
    after: () => "/tasks",
    confirm: {
      subject: "task",
      field: "task_id",
      say: (f, days) => {
        if (f.subject !== "task" || !f.task) return null;
        const t = f.task;
        const n = t.subtasks;
        const them = n ? "them" : "it";
        return {
          heading: ["Delete ", ...written(t.title), "?"],
          facts: [
            n
              ? ["The task ", ...written(t.title), ` and its ${plural(n, "subtask")} go to the trash together, as one item.`]
              : ["The task ", ...written(t.title), " goes to the trash. It has no subtasks."],
            [`Agents no longer see ${them}, and a run on ${them} that is still going ends.`],
            trashKeeps(days, them),
          ],
          button: n ? `Delete the task and its ${plural(n, "subtask")}` : "Delete the task",
        };
      },
    },
  },
  auto_ok: {
    tool: "set_auto_ok",
    args: (f) => ({ task_id: one(f, "task_id"), auto_ok: bool(one(f, "auto_ok")) }),
    done: (r) => `Auto-OK is ${r.task?.auto_ok ? "on" : "off"} for ${quote(r.task?.title)}.`,
  },
  project_auto_ok: {
    tool: "update_project",
    args: (f) => {
      const v = one(f, "default_auto_ok");
      return { project_id: one(f, "project_id"), default_auto_ok: v === "account" ? null : bool(v) };
    },
    done: (r) => {
      const v = r.project?.default_auto_ok;
      const what = v === null ? "follow the account's default" : v ? "start with auto-OK on" : "start with auto-OK off";
      return r.changed ? `New tasks in ${quote(r.project?.name)} now ${what}.` : `New tasks in ${quote(r.project?.name)} already ${what}.`;
    },
  },
  create_task: {
    tool: "create_task",
    args: (f) => ({ title: f.title?.[0] ?? "", ...opt(f, "project_id"), ...opt(f, "idempotency_key") }),
    done: (r) => `Created ${quote(r.task?.title)}.`,
    after: (r) => (r.task?.id ? `/tasks/${r.task.id}` : null),
    labels: { title: "Title" },
  },
  create_project: {
    tool: "create_project",
    args: (f) => ({
      name: f.name?.[0] ?? "",
      ...opt(f, "description"),
      ...autoOkChoice(f, false),
      ...opt(f, "idempotency_key"),
    }),
    done: (r) => `Created the project ${quote(r.project?.name)}; ${autoOkWords(r.project?.default_auto_ok)}.`,
    after: (r) => (r.project?.id ? `/tasks?project=${r.project.id}` : null),
    labels: { name: "Name", description: "Description", default_auto_ok: "Auto-OK for new tasks" },
  },
  update_project: {
    tool: "update_project",
    args: (f) => ({
      project_id: one(f, "project_id"),
      name: f.name?.[0] ?? "",
      description: f.description?.[0] ?? "",
      ...autoOkChoice(f, true),
    }),
    done: (r) => (r.changed ? `Saved the project ${quote(r.project?.name)}; ${autoOkWords(r.project?.default_auto_ok)}.` : "Nothing to change."),
    labels: { name: "Name", description: "Description", default_auto_ok: "Auto-OK for new tasks" },
  },
  pause: {
    tool: "pause_agent",
    args: (f) => ({ agent: one(f, "agent"), ...opt(f, "reason") }),
    done: (r) => (r.changed ? `Paused ${r.agent?.name}: its tokens may only read until you resume it.` : `${r.agent?.name} was already paused.`),
  },
  resume: {
    tool: "resume_agent",
    args: (f) => ({ agent: one(f, "agent"), ...opt(f, "reason") }),
    done: (r) => (r.changed ? `Resumed ${r.agent?.name}: its write tokens may write again.` : `${r.agent?.name} was not paused.`),
  },
  revoke: {
    tool: "revoke_token",
    args: (f) => ({ token_id: one(f, "token_id") }),
    done: (r) => {
      const name = quote(r.token?.client?.name ?? r.token?.label);
      return r.revoked === false ? `${name} was already revoked.` : `Revoked ${name}: its next request is refused.`;
    },
    confirm: {
      subject: "token",
      field: "token_id",
      say: (f) => {
        if (f.subject !== "token" || !f.token) return null;
        const t = f.token;
        const app = t.client_id !== null;
        const actsAs: Said = t.kind === "agent" ? ["the agent ", ...written(t.agent)] : ["you"];
        const may = t.scope === "write" ? "may read and write" : "may only read";
        return {
          heading: ["Revoke ", ...written(t.client_name ?? t.label), "?"],
          facts: [
            app
              ? ["An app connected by URL; it acts as ", ...actsAs, ` and ${may}.`]
              : [`A tg_ token (${t.prefix}); it acts as `, ...actsAs, ` and ${may}.`],
            t.revoked_at
              ? ["It is already revoked: its requests are refused already."]
              : [`Its next request is refused, at once: whatever it is doing stops there.`],
            app
              ? ["This cannot be undone, and the trash does not keep connections: to let the app in again, connect it again by URL."]
              : ["This cannot be undone, and the trash does not keep tokens: to let it in again, create a new token here."],
          ],
          button: app ? "Revoke the app" : "Revoke the token",
        };
      },
    },
  },
  disconnect: {
    tool: "disconnect_connector",
    args: (f) => ({ provider: one(f, "provider") }),
    done: (r) => (r.removed ? "Disconnected; its stored credentials are deleted." : "It was not connected."),
  },
  restore: {
    tool: "restore_from_trash",
    args: (f) => ({ item_id: one(f, "item_id") }),
    done: (r) =>
      r.restored
        ? `Restored the ${r.kind}${r.detached?.length ? ` (${r.detached.length} task(s) came back without their purged project or parent)` : ""}.`
        : "It was already restored.",
  },
  purge: {
    tool: "empty_trash",
    args: (f) => ({ item_ids: [one(f, "item_id")] }),
    done: (r) => (r.purged?.length ? `Purged ${quote(r.purged[0].title)} for good.` : "It was no longer in the trash."),
    confirm: {
      subject: "trash_item",
      field: "item_id",
      say: (f) => {
        if (f.subject !== "trash_item" || !f.item) return null;
        const i = f.item;
        const more = i.item_count - 1;
        const along = more > 0 ? (i.kind === "project" ? ` and its ${plural(more, "task")}` : ` and its ${plural(more, "subtask")}`) : "";
        return {
          heading: ["Delete ", ...written(i.title), " forever?"],
          facts: [
            [`The ${i.kind} `, ...written(i.title), `${along} ${more > 0 ? "are" : "is"} purged for good.`],
            ...(i.kind === "task" || i.kind === "project" ? [["Steps and comments deleted from its tasks on their own go with it."] as Said] : []),
            ["This cannot be undone: Restore can no longer bring it back."],
          ],
          button: "Delete forever",
        };
      },
    },
  },
  empty: {
    tool: "empty_trash",
    args: () => ({ all: true }),
    done: (r) => `Purged ${r.purged?.length ?? 0} item(s) for good${r.remaining ? `; ${r.remaining} remain (empty again for the rest)` : ""}.`,
    confirm: {
      subject: "trash_all",
      say: (f) => {
        if (f.subject !== "trash_all") return null;
        const { items, rows } = f.trash;
        if (items === 0) return { heading: ["Empty the trash?"], facts: [["The trash is empty: there is nothing to purge."]], button: "Empty the trash" };
        return {
          heading: ["Empty the trash?"],
          facts: [
            [`${items === 1 ? "The 1 item" : `All ${items} items`} in the trash (${plural(rows, "row")} deleted in all: tasks, projects, steps, comments) ${items === 1 ? "is" : "are"} purged for good.`],
            ...(items > EMPTY_AT_ONCE ? [[`The oldest ${EMPTY_AT_ONCE} go now; empty it again for the rest.`] as Said] : []),
            ["This cannot be undone: Restore can no longer bring any of them back."],
          ],
          button: `Empty the trash: purge ${plural(items, "item")}`,
        };
      },
    },
  },
  settings: {
    tool: "update_account_settings",
    args: (f) => {
      const days = (name: string) => {
        const v = one(f, name);
        const n = v === undefined ? undefined : Number(v);
        return v === undefined ? {} : { [name]: Number.isFinite(n) ? n : v };
      };
      return {
        ...opt(f, "time_zone"),
        ...days("trash_retention_days"),
        ...days("activity_retention_days"),
        ...(one(f, "default_auto_ok_shown") ? { default_auto_ok: one(f, "default_auto_ok") === "true" } : {}),
      };
    },
    done: (r) => (r.changed ? "Settings saved." : "Nothing to change."),
    labels: { time_zone: "Time zone", trash_retention_days: "Trash retention (days)", activity_retention_days: "Activity kept (days)" },
  },
};
