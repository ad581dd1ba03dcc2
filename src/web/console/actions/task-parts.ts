/** The task page's parts: steps, labels, dependencies and calendar links. */
import { foldName } from "../../../db/labels.ts";
import { canonicalTimeZone, LOCAL_DATE_TIME, zonedTimeToMs } from "../../../domain/zoned-time.ts";
import { one, opt, quote, statusText, type ActionSpec, type FormFields, type Result } from "../action-spec.ts";
import { absolute, clip, plural, statusWord } from "../format.ts";

/** A text in a message: quoted, and cut so a long one keeps the message short. */
const short = (s: unknown) => quote(clip(String(s ?? ""), 80).text);

/** The lines of a text area, each trimmed, the empty ones left out. */
const lines = (f: FormFields, name: string) =>
  (f[name]?.[0] ?? "")
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "");

/** The form's time zone (the account's, as the page showed it), or UTC. */
const zoneOf = (f: FormFields) => canonicalTimeZone(one(f, "time_zone") ?? "") ?? "UTC";

/**
 * A datetime-local value ("2026-12-07T09:00", seconds optional) as an ISO time
 * with the zone's offset at that moment ("2026-12-07T09:00:00+01:00"); anything
 * else is passed as typed, for the tool to refuse in its words.
 */
export function zonedIso(local: string, timeZone: string): string {
  const full = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(local) ? `${local}:00` : local;
  const m = LOCAL_DATE_TIME.exec(full);
  if (!m) return local;
  const ms = zonedTimeToMs(timeZone, full);
  if (!Number.isFinite(ms)) return local;
  const offsetMin = Math.round((Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]) - ms) / 60_000);
  // The instant's own wall time (a skipped time moves on by the gap), with its offset.
  const wall = new Date(ms + offsetMin * 60_000).toISOString().slice(0, 19);
  const sign = offsetMin < 0 ? "-" : "+";
  const abs = Math.abs(offsetMin);
  return `${wall}${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}:${String(abs % 60).padStart(2, "0")}`;
}

/** "7 Dec 2026, 09:00 – 10:00" (the end's date too when it is another day), in the zone. */
export function spanWords(startsAt: string, endsAt: string, timeZone: string): string {
  const a = absolute(startsAt, timeZone);
  const b = absolute(endsAt, timeZone);
  const [dayA] = a.split(", ");
  const [dayB, timeB] = b.split(", ");
  return startsAt === endsAt ? a : dayA === dayB && timeB ? `${a} – ${timeB}` : `${a} – ${b}`;
}

/**
 * A short mark of a label name (FNV-1a of its folded name, in base 36): the
 * new label form carries the marks of the account's labels, so its message can
 * tell a label it made from one that was there, without the names themselves.
 */
export function labelMark(name: string): string {
  let h = 0x811c9dc5;
  for (const ch of foldName(name)) {
    h ^= ch.codePointAt(0) as number;
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(36);
}

/** What a label form did; the new label form's name is one of the account's labels (`known`, every one when `known_all`), or a new one. */
function labelled(r: Result, f: FormFields): string {
  const added = (r.added ?? []) as string[];
  const typedName = one(f, "labels") ?? "";
  if (!added.length) return `The task already carries the label ${short(typedName)}; nothing changed.`;
  const names = added.map(short).join(", ");
  if (one(f, "new") !== "1") return `Added the label${added.length > 1 ? "s" : ""} ${names}.`;
  const known = new Set((one(f, "known") ?? "").split(" "));
  if (known.has(labelMark(added[0]))) return `Added the label ${names}; a label of that name was there already.`;
  return one(f, "known_all") === "1" ? `Made the new label ${names} and added it.` : `Added the label ${names} (made new if no label had that name).`;
}

export const TASK_PART_ACTIONS: Record<string, ActionSpec> = {
  add_steps: {
    tool: "add_steps",
    args: (f) => ({ task_id: one(f, "task_id"), steps: lines(f, "steps"), ...opt(f, "idempotency_key") }),
    done: (r) => {
      const n = (r.steps ?? []).length;
      return n === 1 ? `Added the step ${short(r.steps[0].text)}.` : `Added ${plural(n, "step")}.`;
    },
    labels: { steps: "New steps" },
  },
  step_status: {
    tool: "set_step_status",
    args: (f) => ({ step_id: one(f, "step_id"), status: one(f, "status") ?? "" }),
    done: (r) => {
      const what = short(r.step?.text);
      const status = statusWord(String(r.step?.status ?? ""));
      return r.changed ? `Marked the step ${what} ${status}.` : `The step ${what} was already ${status}.`;
    },
    labels: { status: "Status" },
  },
  rename_step: {
    tool: "update_step",
    args: (f) => ({ step_id: one(f, "step_id"), text: f.text?.[0] ?? "" }),
    done: (r) => (r.changed ? `Renamed the step to ${short(r.step?.text)}.` : "The step already read so; nothing changed."),
    labels: { text: "Step text" },
  },
  move_step: {
    tool: "reorder_steps",
    args: (f) => ({ task_id: one(f, "task_id"), step_ids: f.step_ids ?? [] }),
    done: (r, f) => {
      const moved = (r.steps ?? []).find((s: { id: string }) => s.id === one(f, "moved"));
      if (!r.changed) return "The steps were already in that order; nothing changed.";
      return moved ? `Moved the step ${short(moved.text)} ${one(f, "dir") === "down" ? "down" : "up"}; it is step ${moved.position} now.` : "Reordered the steps.";
    },
  },
  delete_step: {
    tool: "delete_step",
    args: (f) => ({ step_id: one(f, "step_id") }),
    done: (r, f) =>
      r.already_in_trash
        ? "The step was already in the trash; Trash restores it."
        : `Moved the step ${short(f.step_text?.[0])} to the trash; Trash restores it.`,
  },
  label_task: {
    tool: "label_task",
    args: (f) => ({ task_id: one(f, "task_id"), labels: one(f, "labels") ? [one(f, "labels")] : [] }),
    done: labelled,
    labels: { labels: "Label" },
  },
  unlabel_task: {
    tool: "unlabel_task",
    args: (f) => ({ task_id: one(f, "task_id"), labels: one(f, "labels") ? [one(f, "labels")] : [] }),
    done: (r, f) => ((r.removed ?? []).length ? `Removed the label ${short(r.removed[0])}.` : `The task did not carry the label ${short(one(f, "labels"))}; nothing changed.`),
  },
  add_dependency: {
    tool: "add_dependency",
    args: (f) => ({ task_id: one(f, "task_id"), depends_on_id: one(f, "depends_on_id") }),
    done: (r) =>
      r.changed
        ? `${short(r.task?.title)} now waits on ${short(r.depends_on?.title)} (${statusText(r.depends_on?.status)}).`
        : `${short(r.task?.title)} already waited on ${short(r.depends_on?.title)}; nothing changed.`,
  },
  remove_dependency: {
    tool: "remove_dependency",
    args: (f) => ({ task_id: one(f, "task_id"), depends_on_id: one(f, "depends_on_id") }),
    done: (r) =>
      r.changed
        ? `${short(r.task?.title)} no longer waits on ${short(r.depends_on?.title)}.`
        : `${short(r.task?.title)} did not wait on ${short(r.depends_on?.title)}; nothing changed.`,
  },
  link_event: {
    tool: "link_calendar_event",
    args: (f) => {
      const tz = zoneOf(f);
      return {
        task_id: one(f, "task_id"),
        provider: one(f, "provider") ?? "",
        event_id: one(f, "event_id") ?? "",
        title: f.title?.[0] ?? "",
        starts_at: zonedIso(one(f, "starts_at") ?? "", tz),
        ends_at: zonedIso(one(f, "ends_at") ?? "", tz),
        ...opt(f, "url"),
      };
    },
    done: (r, f) => {
      const l = r.link ?? {};
      const when = typeof l.starts_at === "string" && typeof l.ends_at === "string" ? spanWords(l.starts_at, l.ends_at, zoneOf(f)) : "";
      return r.created ? `Linked the event ${short(l.title)}, ${when}.` : `The event ${short(l.title)} was already linked, ${when}; nothing changed.`;
    },
    labels: { provider: "Calendar", event_id: "Event id", title: "Title", starts_at: "Starts", ends_at: "Ends", url: "Link (optional)" },
  },
  unlink_event: {
    tool: "unlink_calendar_event",
    args: (f) => ({ task_id: one(f, "task_id"), link_id: one(f, "link_id") }),
    done: (r) => (r.removed ? `Removed the calendar link ${short(r.link?.title)}.` : "That calendar link was already removed; nothing changed."),
  },
};
