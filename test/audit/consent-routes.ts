import type { ToolName } from "../../src/catalog/effects.ts";
import { detailedInputSchema } from "../../src/mcp/registry.ts";
import type { Situation } from "./consent-situations.ts";
import { soon } from "./states.ts";

/**
 * The one table of relations: for each argument that names a record, the
 * records of a situation it can name, each a route to the held task X (the
 * task itself, its parent, an ancestor, its subtask, its dependency, its
 * project, its step, run, label, link, comment, trash item) or a record
 * beside it. Some routes reach what X shows rather than its rows: the task
 * it waits on (D: trashed, moved, completed, reopened, or the link removed),
 * the label it carries (L: renamed, deleted), a trash item holding X, its
 * step or another held task (restored, purged); the judge reads X as its
 * holder does to see them (consent-shows.ts). A tool's routes are every combination of what its schema's
 * arguments can name; an argument a situation has nothing for (a run where
 * nobody started one) prunes the routes that need it. A new tool joins the
 * audit through its schema; a new argument that names a record needs one
 * line here.
 */
export const RELATIONS: Record<string, (ids: Record<string, string>) => unknown[]> = {
  task_id: (i) => [i.X, i.T0, i.T00, i.XC, i.D],
  parent_id: (i) => [i.X, i.T0],
  project_id: (i) => [i.P, i.P2],
  depends_on_id: (i) => [i.X, i.D, i.F],
  step_id: (i) => [i.step1],
  step_ids: (i) => [[i.step2, i.step1]],
  run_id: (i) => [i.run],
  approval_id: (i) => [i.approval],
  label_id: (i) => [i.L],
  labels: () => [["audit"], ["audit", "fresh"]],
  link_id: (i) => [i.link],
  comment_id: (i) => [i.comment],
  // A trash item holding X, a part of X (its step) or another held task (Y, trashed by its holder); a task id names its item too.
  item_id: (i) => [i.item, i.stepItem, i.itemY, i.Y],
  item_ids: (i) => [i.item, i.stepItem, i.itemY].map((id) => (id ? [id] : undefined)),
  token_id: (i) => [i.token],
  // Who is given something: the paused agent (nobody may give it anything), and the other agent (from the holder: a
  // hand-off); an assignee of nobody releases the task.
  agent: () => ["idle", "rival"],
  assignee: () => ["idle", "rival", null],
};

/**
 * What every other argument is, by name: consent fields set (an agent
 * passing one must be refused), dates in the future, texts plain.
 */
const VALUES: Record<string, () => unknown> = {
  auto_ok: () => true,
  default_auto_ok: () => true,
  due_at: () => soon(3),
  until: () => soon(2),
  starts_at: () => soon(1),
  ends_at: () => soon(1.05),
  recurrence: () => "FREQ=WEEKLY",
  url: () => "https://example.com/audit",
  time_zone: () => "Europe/Berlin",
  trash_retention_days: () => 7,
  activity_retention_days: () => 90,
  lease_minutes: () => 30,
  estimate_minutes: () => 45,
  event_id: () => "evt_audit",
  status: () => "done",
  kind: () => "note",
  outcome: () => "succeeded",
  confirm: () => true,
  choices: () => ["Go ahead", "Wait for me"],
  scope: () => ["src/audit/**", "billing"],
};

/** Arguments left out: they choose another form of the same call (keys, versions, alternatives). */
const LEFT_OUT = new Set(["idempotency_key", "expected_version", "all", "withdraw", "target", "cursor", "limit", "choice", "answer"]);
// A decision names a task's request here; a pending action by its approval_id is the policy situations' (policy-run.ts).
const ALTERNATIVES: Partial<Record<ToolName, string[]>> = {
  unlink_calendar_event: ["provider", "event_id"], approve_task: ["approval_id"], reject_task: ["approval_id"],
};

type Schema = { type?: string | string[]; enum?: unknown[]; properties?: Record<string, Schema>; required?: string[]; items?: Schema; anyOf?: Schema[]; format?: string };

function valueOf(name: string, s: Schema): unknown {
  const byName = VALUES[name]?.();
  if (byName !== undefined) return byName;
  if (s.anyOf) return valueOf(name, s.anyOf.find((x) => x.type !== "null") ?? s.anyOf[0]);
  if (s.enum) return s.enum.find((v) => v !== null);
  if (name === "provider") return "google"; // a calendar's; a connected app's comes from its enum
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== "null") : s.type;
  switch (type) {
    case "boolean":
      return true;
    case "integer":
    case "number":
      return 2;
    case "array":
      return [valueOf(name, s.items ?? { type: "string" })];
    case "object":
      return objectOf(s, []);
    default:
      return s.format === "date-time" ? soon(1) : `Audit ${name.replace(/_/g, " ")}`;
  }
}

function objectOf(s: Schema, skip: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, p] of Object.entries(s.properties ?? {})) {
    if (LEFT_OUT.has(k) || skip.includes(k) || RELATIONS[k]) continue;
    out[k] = valueOf(k, p);
  }
  return out;
}

export interface Route {
  /** What each record-naming argument names, as the situation's entity names (X, T0, P …). */
  name: string;
  args: Record<string, unknown>;
}

/** Every route of a tool in a situation: its schema's record-naming arguments × what each can name there. */
export function routesOf(tool: ToolName, sit: Situation): Route[] {
  const schema = detailedInputSchema(tool) as Schema;
  const base = objectOf(schema, ALTERNATIVES[tool] ?? []);
  const naming = Object.keys(schema.properties ?? {}).filter((k) => RELATIONS[k] && !(ALTERNATIVES[tool] ?? []).includes(k));
  const entityName = (v: unknown) => {
    const found = Object.entries(sit.ids).find(([, id]) => id === v || (Array.isArray(v) && v.includes(id)));
    return found ? found[0] : JSON.stringify(v);
  };
  let routes: Route[] = [{ name: "", args: base }];
  for (const k of naming) {
    const options = RELATIONS[k](sit.ids).filter((v) => v !== undefined && !(Array.isArray(v) && v.includes(undefined)));
    const required = (schema.required ?? []).includes(k);
    if (options.length === 0) {
      if (required) return []; // the situation has nothing this tool can name
      continue;
    }
    routes = routes.flatMap((r) => options.map((v) => ({ name: `${r.name}${r.name ? " " : ""}${k}=${entityName(v)}`, args: { ...r.args, [k]: v } })));
  }
  return routes;
}
