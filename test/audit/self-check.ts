import type { ToolName } from "../../src/catalog/effects.ts";
import type { CallObservation, PathObservation } from "./harness.ts";
import type { Change, Effect, Snapshot } from "./observe.ts";

/** A call as the audit would observe it, for checking the verdicts themselves. */
export function call(o: Partial<CallObservation> = {}): CallObservation {
  return { isError: false, text: "", structured: { task: { id: "tsk_1" }, changed: true }, changes: [], fetches: 0, ...o };
}

export function change(effect: Effect, table = "tasks", column?: string, op: Change["op"] = column ? "update" : "insert"): Change {
  return { table, key: "k", op, effect, column };
}

/** One path: a first call with `first`, a repeat that changed nothing and answered the same, refusals as the tool's sets require. */
export function observed(tool: ToolName, first: Partial<CallObservation>, rest: Partial<PathObservation> = {}): PathObservation {
  const repeat = call({ structured: { ...(first.structured ?? call().structured), changed: false } });
  return { path: "p", by: "person", args: {}, first: call(first), repeat, refusedTo: [], ...rest };
}

export function snapshot(tables: Record<string, Record<string, unknown>[]>, key = "id"): Snapshot {
  return new Map(Object.entries(tables).map(([t, rows]) => [t, new Map(rows.map((r) => [String(r[key]), r]))]));
}
