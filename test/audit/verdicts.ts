import { annotationsFor, HUMAN_TOOLS, type ToolName } from "../../src/catalog/effects.ts";
import type { CallObservation, PathObservation } from "./harness.ts";
import { describeChange, DESTRUCTIVE_EFFECTS, substantive, type Change, type Effect } from "./observe.ts";

/**
 * Fields of an answer that report what this one call did rather than the
 * state it leaves: a repeat that finds the work done says `changed: false`,
 * lists nothing added, counts nothing restored, and is otherwise the same
 * answer. Presence times (a token's last use, an agent's last sighting) move
 * on every call, and a lease's end moves when the holder's lease restarts.
 */
export const CALL_REPORT_KEYS: ReadonlySet<string> = new Set([
  "changed", "created", "added", "removed", "moved", "revoked", "restored", "already_in_trash", "purged", "not_in_trash",
  "removed_from_tasks", "item_count", "closed_approval", "taken_over_from", "released", "runs_ended",
]);
const PRESENCE_KEYS: ReadonlySet<string> = new Set(["last_used_at", "last_seen_at"]);
const LEASE_KEYS: ReadonlySet<string> = new Set(["claim_expires_at"]);

/**
 * Where a repeat's answer differs from the first's, field by field. Besides
 * the call's own report, a repeat of a call that removed a record may leave
 * null what described that record: it is gone, and nothing can describe it.
 */
export function answerDiff(first: unknown, repeat: unknown, o: { removed: boolean; renewed: boolean }, at = "", depth = 0): string[] {
  if (JSON.stringify(first) === JSON.stringify(repeat)) return [];
  const key = at.slice(at.lastIndexOf(".") + 1);
  if ((depth === 1 && CALL_REPORT_KEYS.has(key)) || PRESENCE_KEYS.has(key) || (o.renewed && LEASE_KEYS.has(key))) return [];
  if (o.removed && repeat === null) return [];
  if (first && repeat && typeof first === "object" && typeof repeat === "object" && Array.isArray(first) === Array.isArray(repeat)) {
    const keys = new Set([...Object.keys(first), ...Object.keys(repeat)]);
    return [...keys].flatMap((k) => answerDiff((first as Record<string, unknown>)[k], (repeat as Record<string, unknown>)[k], o, `${at}.${k}`, depth + 1));
  }
  return [`${at || "answer"}: ${JSON.stringify(repeat)?.slice(0, 120)} (first: ${JSON.stringify(first)?.slice(0, 120)})`];
}

/** The changes a repeat of a convergent call may make: none but presence and the caller's own lease restarting. */
const repeatChanges = (c: CallObservation) => substantive(c.changes).filter((x) => x.effect !== "renewed");
const destructive = (changes: Change[]) => changes.filter((c) => DESTRUCTIVE_EFFECTS.has(c.effect));
const list = (changes: Change[]) => changes.slice(0, 4).map(describeChange).join("; ") + (changes.length > 4 ? ` (+${changes.length - 4})` : "");

export interface Verdict {
  tool: ToolName;
  hints: string;
  observed: string;
  calls: number;
  mismatches: string[];
}

export function hintsOf(tool: ToolName): string {
  const a = annotationsFor(tool);
  return [a.readOnlyHint ? "R" : "W", a.destructiveHint ? "D" : "-", a.idempotentHint ? "I" : "-", a.openWorldHint ? "O" : "-", HUMAN_TOOLS.has(tool) ? "H" : "-"].join("");
}

/**
 * One path against the hints. A read changes nothing (its answer may differ:
 * it shows the state at its time, a digest's window moves). A write that is
 * not destructive removes, replaces and clears nothing. An idempotent write's
 * repeat changes nothing and answers the same, no error. A closed tool sends
 * no request out. Refusals (by an agent for a people-only tool, by a read
 * token for a write) change nothing.
 */
function judgePath(tool: ToolName, o: PathObservation): string[] {
  const a = annotationsFor(tool);
  const out: string[] = [];
  const at = (what: string) => out.push(`${o.path} (${o.by}): ${what}`);
  for (const { who, call } of o.refusedTo) {
    if (!call.isError) at(`${who}'s call was not refused`);
    if (substantive(call.changes).length) at(`${who}'s refused call changed ${list(substantive(call.changes))}`);
  }
  if (o.refusal) {
    for (const [n, c] of [["first", o.first], ["repeat", o.repeat]] as const) {
      if (!c.isError || !o.refusal.test(c.text)) at(`the ${n} call should be refused (${o.refusal}) but answered ${c.text.slice(0, 160)}`);
      if (substantive(c.changes).length) at(`the refused ${n} call changed ${list(substantive(c.changes))}`);
    }
    return out;
  }
  if (o.first.isError) return [...out, `${o.path} (${o.by}): the call was refused: ${o.first.text.slice(0, 200)}`];
  for (const [n, c] of [["call", o.first], ["repeat", o.repeat]] as const) {
    if (a.readOnlyHint && substantive(c.changes).length) at(`read, but the ${n} changed ${list(substantive(c.changes))}`);
    if (!a.readOnlyHint && !a.destructiveHint && destructive(c.changes).length) at(`not destructive, but the ${n} did: ${list(destructive(c.changes))}`);
    if (!a.openWorldHint && c.fetches > 0) at(`closed world, but the ${n} sent ${c.fetches} outbound request(s)`);
  }
  if (a.idempotentHint) {
    if (o.repeat.isError) at(`convergent, but the repeat was an error: ${o.repeat.text.slice(0, 200)}`);
    else if (!a.readOnlyHint) {
      const removed = o.first.changes.some((c) => c.effect === "removed" || c.op === "delete");
      const renewed = o.repeat.changes.some((c) => c.effect === "renewed");
      const differs = answerDiff(o.first.structured, o.repeat.structured, { removed, renewed });
      if (differs.length) at(`convergent, but the repeat answered differently: ${differs.slice(0, 4).join("; ")}`);
    }
    if (repeatChanges(o.repeat).length) at(`convergent, but the repeat changed ${list(repeatChanges(o.repeat))}`);
  }
  return out;
}

const effectsOf = (c: CallObservation) => new Set<Effect | "outbound">([...substantive(c.changes).map((x) => x.effect), ...(c.fetches ? ["outbound" as const] : [])]);

/** The verdict over every path of one tool: each path judged, then what the hints claim of the tool as a whole. */
export function judge(tool: ToolName, paths: PathObservation[]): Verdict {
  const a = annotationsFor(tool);
  const mismatches = paths.flatMap((p) => judgePath(tool, p));
  const taken = paths.filter((p) => !p.refusal && !p.first.isError);
  const firstEffects = new Set(taken.flatMap((p) => [...effectsOf(p.first)]));
  const repeatEffects = new Set(taken.flatMap((p) => [...effectsOf(p.repeat)]));
  if (!paths.length) mismatches.push("no scenario");
  if (!a.readOnlyHint && taken.length && !taken.some((p) => substantive(p.first.changes).length || p.first.fetches)) mismatches.push("a write, but no path changed anything");
  if (a.destructiveHint && taken.length && !taken.some((p) => destructive(p.first.changes).length)) mismatches.push("destructive, but no path removed, replaced or cleared anything");
  if (!a.readOnlyHint && !a.idempotentHint && taken.length && !taken.some((p) => repeatChanges(p.repeat).length || p.repeat.fetches)) {
    mismatches.push("not convergent, but every repeat left the state of the first call");
  }
  if (a.openWorldHint && taken.length && !taken.some((p) => p.first.fetches > 0)) mismatches.push("open world, but no path reached a connected app");
  const show = (s: Set<string>) => [...s].filter((e) => e !== "bookkeeping").sort().join("+") || (s.size ? "bookkeeping" : "nothing");
  const refusals = paths.filter((p) => p.refusal).length;
  const observed = `${show(firstEffects)}; repeat: ${show(repeatEffects)}${refusals ? `; ${refusals} refused path(s)` : ""}`;
  const calls = paths.reduce((n, p) => n + 2 + p.refusedTo.length, 0);
  return { tool, hints: hintsOf(tool), observed, calls, mismatches };
}
