import type { TestClient } from "../helpers.ts";
import type { Snapshot } from "./observe.ts";
import type { Caller } from "./consent-judge.ts";

/**
 * What a held task shows, as its holder reads it: get_task through the
 * holder's own MCP client (the task, its steps, labels by name, what it
 * waits on and blocks, runs, requests, answer, last block, recurrence and
 * series) and list_calendar_links (get_task carries no links). The rows
 * judge (consent-judge.ts) sees a held task's own rows; this sees what other
 * rows make it show: a label renamed, a gate opened through the task it
 * waits on, a part brought back from the trash.
 */

type Row = Record<string, unknown>;

/** One held task as its holder reads it, by section of get_task's answer (plus `links`); `missing` when get_task refuses it (in the trash, gone). */
export type Shown = Record<string, unknown>;

/** A held task and who holds it (an agent's name, or `human`), read from the rows as the view `holds` of schema.sql defines held. */
export interface HeldTask {
  id: string;
  holder: string;
}

const HELD_STATUSES = new Set(["blocked", "awaiting_approval"]);

/** The account's held tasks, live or in the trash (a task in the trash keeps its hold): assigned, and blocked, awaiting sign-off, or in progress with a claim that has not lapsed. */
export function heldTasks(snap: Snapshot, now = new Date().toISOString()): HeldTask[] {
  const out: HeldTask[] = [];
  for (const t of snap.get("tasks")?.values() ?? []) {
    if (t.assignee == null) continue;
    const inProgress = t.status === "in_progress" && (t.claim_expires_at == null || String(t.claim_expires_at) > now);
    if (HELD_STATUSES.has(String(t.status)) || inProgress) out.push({ id: String(t.id), holder: String(t.assignee) });
  }
  return out;
}

/** Values that move with every write (bookkeeping) and say nothing the holder reads as changed. */
const TASK_BOOKKEEPING = ["version", "updated_at"];

/**
 * Reads what `taskId` shows through `client`: one get_task, and its calendar
 * links (list_calendar_links) unless `links` are given: what no changed
 * calendar_links row can have changed is taken as read before.
 */
export async function readShown(client: TestClient, taskId: string, links?: unknown): Promise<Shown> {
  const got = await client.call("get_task", { task_id: taskId });
  if (got.isError) return { missing: true };
  const shown: Shown = { ...got.structured };
  const task = { ...(shown.task as Row) };
  for (const k of TASK_BOOKKEEPING) delete task[k];
  shown.task = task;
  if (links !== undefined) shown.links = links;
  else {
    const listed = await client.call("list_calendar_links", { task_id: taskId });
    shown.links = listed.isError ? null : listed.structured.items;
  }
  return shown;
}

/**
 * Sections a non-holder may change by the normal course of other work: a
 * comment (comments stay open to everyone), and what waits on the held task
 * (`blocks`: that is the other task's gate, held by its own holder). What the
 * held task waits on (`waits_on`) is judged entry by entry below; every other
 * section (the task, steps, labels and their names, runs, requests, answer,
 * last block, subtask count, recurrence, series, calendar links, whether it
 * can be read at all) is its holder's and a person's to change.
 */
const OPEN_SECTIONS = new Set(["latest_comments", "blocks", "waits_on"]);

const UNFINISHED = (status: unknown) => status !== "done" && status !== "cancelled";

type WaitsOn = { id: string; status?: string }[];

const brief = (v: unknown) => {
  const s = JSON.stringify(v) ?? "undefined";
  return s.length > 160 ? `${s.slice(0, 157)}...` : s;
};

/**
 * The changes to what `held` shows that the rules forbid a caller: none for
 * its holder or a person; for any other agent, every change but a comment,
 * what waits on it, and, of what it waits on, anything that leaves the gate
 * no more open than the work it waits on is finished: an unfinished entry
 * may only turn finished (done or cancelled) when that task's own row is now
 * finished, by whoever may finish it, and is never dropped (its task trashed,
 * moved out of sight, the link removed): dropping it opens the gate with the
 * work undone. Entries added, renamed, shown in the trash, or finished ones
 * dropped keep the gate as closed as the work is.
 */
export function judgeShown(caller: Caller, held: HeldTask, before: Shown, after: Shown, rowsAfter: Snapshot): string[] {
  if (caller.kind !== "agent" || caller.name === held.holder) return [];
  const breaches: string[] = [];
  const say = (what: string) => breaches.push(`shows: ${caller.name} changed what task ${held.id} held by ${held.holder} shows: ${what}`);
  if (before.missing !== after.missing) {
    say(before.missing ? `it was brought back where its holder reads it (${brief(after.task)})` : "its holder can no longer read it");
    return breaches;
  }
  for (const section of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (OPEN_SECTIONS.has(section)) continue;
    const [was, now] = [brief(before[section]), brief(after[section])];
    if (was !== now) say(`${section} ${was} → ${now}`);
  }
  // The gate: every unfinished task it waited on still shown, or finished now by its own row.
  const tasksAfter = new Map([...(rowsAfter.get("tasks")?.values() ?? [])].map((t) => [String(t.id), t]));
  const entriesAfter = new Map(((after.waits_on ?? []) as WaitsOn).map((e) => [e.id, e]));
  for (const e of (before.waits_on ?? []) as WaitsOn) {
    if (!UNFINISHED(e.status)) continue;
    const now = entriesAfter.get(e.id);
    const finished = !UNFINISHED(tasksAfter.get(e.id)?.status);
    if (now && UNFINISHED(now.status)) continue;
    if (now && finished) continue; // the work it waits on was finished: the normal course of that task's work
    say(now ? `waits_on shows ${e.id} ${String(now.status)} though its row is ${String(tasksAfter.get(e.id)?.status)}` : `its gate opened: waits_on dropped ${e.id} (${String(e.status)}) with that work unfinished`);
  }
  return breaches;
}
