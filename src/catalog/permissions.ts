import type { Principal } from "../domain/principal.ts";
import { HUMAN_TOOLS, WRITE_TOOLS, type ToolName } from "./effects.ts";

/**
 * For each human-only tool: what the call decides, and what happens instead
 * when an agent needs it (what the person does, or what the agent can do).
 * Every tool of HUMAN_TOOLS has an entry (test/permissions.test.ts).
 */
export const HUMAN_ONLY: Partial<Record<ToolName, { decides: string; instead: string }>> = {
  approve_task: {
    decides: "answers an agent's question or signs off on its work",
    instead: "A person decides it from their queue (list_pending_approvals); an agent's part is request_approval (a question) or complete_task (a sign-off), and get_task shows the answer.",
  },
  reject_task: {
    decides: "answers an agent's question no, or turns down work that waits for sign-off",
    instead: "A person rejects it from their queue (list_pending_approvals) with a reason; to raise a concern yourself, use comment_on_task.",
  },
  set_auto_ok: {
    decides: "decides whether agents may complete a task without a person's approval",
    instead: "Without auto-OK, complete_task still works: the task waits as awaiting_approval until a person signs off. Ask a person to turn auto-OK on if it should not need that.",
  },
  pause_agent: {
    decides: "takes away an agent's right to write",
    instead: "To stop your own work, use cancel_run or finish_run; if another agent misbehaves, tell a person (comment_on_task on the task concerned) and they can pause it.",
  },
  resume_agent: {
    decides: "gives a paused agent back its right to write",
    instead: "Only a person lifts a pause; ask the person who paused it (fleet_status shows which agents are paused).",
  },
  empty_trash: {
    decides: "deletes for good what can still be restored",
    instead: "Nothing needs purging by hand: trash items are purged after the account's retention (list_trash shows when), and restore_from_trash brings one back until then.",
  },
  disconnect_connector: {
    decides: "removes a connected app and its stored credentials",
    instead: "Ask a person to disconnect it; list_connectors shows each app's state, and a failing app's errors say how to reconnect.",
  },
  update_account_settings: {
    decides: "changes the account's settings (time zone, default auto-OK, trash retention)",
    instead: "get_account_settings reads them; ask a person to change them.",
  },
  revoke_token: {
    decides: "takes away a token's access",
    instead: "list_tokens shows your own token; ask a person to revoke a token that should stop working (a person sees all of them).",
  },
};

/** Whether write scope is all this principal lacks for this tool (a person's read grant, or an agent's on an agent's tool). */
export function lacksOnlyWriteScope(p: Principal, name: ToolName): boolean {
  return WRITE_TOOLS.has(name) && p.scope !== "write" && (p.kind === "human" || !HUMAN_TOOLS.has(name));
}

/** While the account moves to another database its reads go on and its writes wait (src/db/move-account.ts). */
export function movingRefusal(p: Principal, name: ToolName): string | null {
  return p.moving && WRITE_TOOLS.has(name) ? movingMessage(name) : null;
}

/** The refusal of a write of a moving account: by the principal's mark, or by the databases' fence when the mark came later. */
export function movingMessage(name: string): string {
  return `${name} changes data, but this account is moving to another database; try again shortly (within a minute or two).`;
}

/**
 * What decides which tools a principal may call and what it is told of them:
 * its kind, scope and pause (see refusalRule) and an agent's policy as stored
 * (src/catalog/policy.ts). Equal classes may call the same tools.
 */
export const principalClass = (p: Principal): string =>
  `${p.kind}/${p.scope}${p.paused ? "/paused" : ""}${p.kind === "agent" && p.policy ? `|${p.policy.agent ?? ""}|${p.policy.connection ?? ""}` : ""}`;

/** The rule that keeps a principal from a tool: only a person may call it, the token reads only, or its agent is paused. */
export type RefusalRule = "human_only" | "read_scope" | "paused";

/**
 * Which rule refuses this principal this tool, or null when it may call it.
 * The one permission rule: refusal() words it for a call, tools/list filters
 * with it, and the line of what a connection does not list groups by it.
 */
export function refusalRule(p: Principal, name: ToolName): RefusalRule | null {
  if (HUMAN_TOOLS.has(name) && p.kind !== "human") return "human_only";
  if (WRITE_TOOLS.has(name)) {
    if (p.scope !== "write") return "read_scope";
    if (p.paused) return "paused";
  }
  return null;
}

/** Why this principal may not call this tool, or null when it may (refusalRule, in the words a call is refused with). */
export function refusal(p: Principal, name: ToolName): string | null {
  switch (refusalRule(p, name)) {
    case "human_only": {
      const h = HUMAN_ONLY[name] ?? { decides: "gives or takes away consent", instead: "Ask a person." };
      return `${name} ${h.decides}, so a person must do it with a human token; an agent's token can never call it. ${h.instead}`;
    }
    case "read_scope":
      return `${name} changes data and needs a token with scope write; this token has scope read and may only call read tools.`;
    case "paused":
      return `${name} changes data, but agent ${p.agentName} is paused by a person: its tokens may only read until resume_agent.`;
    case null:
      return null;
  }
}
