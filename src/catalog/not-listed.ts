/**
 * What a connection's tools/list leaves out, and why, in one line: for a
 * client that never sees a tool (an Inspector's tool_not_found, a model
 * looking for approve_task) and cannot otherwise tell a tool the server lacks
 * from one kept from this connection. The server's instructions carry the
 * line and whoami returns it. It is derived from the rules that filter the
 * list, in the order tools/call refuses by them (refusalRule, then the
 * connection's toolsets, then its read-only view), never written per tool.
 */
import type { Principal } from "../domain/principal.ts";
import { TOOL_NAMES, type ToolName } from "./effects.ts";
import { principalClass, refusalRule, type RefusalRule } from "./permissions.ts";
import { listsWithout, type ToolSelection } from "./toolsets.ts";
import { deniedEverywhere, policyOf } from "./policy.ts";

/** Why a group of tools is not listed: a rule of the principal's, or the connection's own choice. */
export type NotListedReason = RefusalRule | "toolsets" | "readonly_connection" | "policy";

export interface NotListedGroup {
  reason: NotListedReason;
  /** In catalog order. */
  tools: ToolName[];
}

export interface NotListed {
  /** Every tool of the catalog this connection does not list, once, under the first reason that keeps it out; in the order of REASONS. */
  groups: NotListedGroup[];
  /** The groups in one line of words. */
  line: string;
}

/** A group this small names its tools; a larger one is counted, and its reason says which tools they are. */
export const NAMED_UP_TO = 10;

const REASONS: readonly NotListedReason[] = ["human_only", "read_scope", "paused", "toolsets", "readonly_connection", "policy"];

/** The first reason that keeps this tool from this connection's list, or null when it is listed. */
function reasonOf(p: Principal, selection: ToolSelection, name: ToolName): NotListedReason | null {
  const rule = refusalRule(p, name);
  if (rule) return rule;
  if (!selection.tools.has(name)) return listsWithout(selection, name).length ? "toolsets" : "readonly_connection";
  return p.kind === "agent" && deniedEverywhere(policyOf(p), name) ? "policy" : null;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** A group in words: how many, what kind, and why (with the names when there are few). */
function phrase(group: NotListedGroup, selection: ToolSelection): string {
  const n = group.tools.length;
  const names = n <= NAMED_UP_TO ? `: ${group.tools.join(", ")}` : "";
  switch (group.reason) {
    case "human_only":
      return `${plural(n, "people-only tool")} (only a person's token may call ${n === 1 ? "it" : "them"}${names})`;
    case "read_scope":
      return `${plural(n, "write tool")} (this token has scope read${names})`;
    case "paused":
      return `${plural(n, "write tool")} (a person paused this agent: its tokens only read until a person's resume_agent${names})`;
    case "toolsets":
      return `${plural(n, "tool")} outside this connection's toolsets (${(selection.toolsets ?? []).map((l) => l.join(",")).join("; ")}${names})`;
    case "readonly_connection":
      return `${plural(n, "write tool")} (this connection is read-only${names})`;
    case "policy":
      return `${plural(n, "tool")} the agent's policy denies (a person sets it in the console; whoami's policy says which rule${names})`;
  }
}

const kept = new Map<string, NotListed>();

/**
 * What this principal's connection does not list, and why. One answer per
 * principal class and selection, kept per isolate (safe to lose), as
 * tools/list's is: a request only looks it up.
 */
export function notListed(p: Principal, selection: ToolSelection): NotListed {
  const key = `${principalClass(p)}|${selection.key}`;
  let answer = kept.get(key);
  if (!answer) {
    const by = new Map<NotListedReason, ToolName[]>();
    for (const name of TOOL_NAMES) {
      const reason = reasonOf(p, selection, name);
      if (reason) by.set(reason, [...(by.get(reason) ?? []), name]);
    }
    const groups = REASONS.filter((r) => by.has(r)).map((reason) => ({ reason, tools: by.get(reason) as ToolName[] }));
    const line = groups.length
      ? `Not listed for this connection: ${groups.map((g) => phrase(g, selection)).join("; ")}. Calling one of them is refused for the same reason.`
      : `Not listed for this connection: nothing; all ${TOOL_NAMES.length} tools are listed.`;
    answer = { groups, line };
    if (kept.size >= 1024) kept.clear();
    kept.set(key, answer);
  }
  return answer;
}
