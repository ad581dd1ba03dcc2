/**
 * What a call becomes when the agent's policy does not simply allow it: a
 * refusal that names the rule (deny), or a pending action the person decides
 * (ask). src/catalog/policy.ts decides; this answers the agent.
 */
import type { CallToolResult } from "@modelcontextprotocol/server";
import type { ToolName } from "../catalog/effects.ts";
import { POLICY_KEY, verdictSentence, type PolicyVerdict } from "../catalog/policy.ts";
import type { CallScope } from "./engine.ts";

/** What would change a decision: only a person edits a policy. */
export function whatWouldChange(verdict: PolicyVerdict): string {
  if (verdict.source === "default") return "A person adding an ask or deny rule that covers it to the agent's policy (in the console, Agents).";
  const where = verdict.source === "agent" ? "the agent's policy" : "this connection's policy";
  return `A person changing ${where} in the console (Agents, or Connected apps for a connection's own rules): ${verdict.rule}.`;
}

/** The policy's decision as a call's `_meta` tells it. */
export function verdictMeta(verdict: PolicyVerdict): Record<string, unknown> {
  return { [POLICY_KEY]: { decision: verdict.decision, rule: verdict.rule, reason: verdict.reason } };
}

/** A call the policy denies: nothing ran, and the agent is told which rule and what would change it. */
export function deniedByPolicy(tool: ToolName, verdict: PolicyVerdict): CallToolResult {
  return {
    content: [{ type: "text", text: `${verdictSentence(tool, verdict)} ${verdict.reason} Nothing was run. What would change it: ${whatWouldChange(verdict)}` }],
    isError: true,
    _meta: verdictMeta(verdict),
  };
}

/** A call the policy asks about: it waits as a pending action the person decides. */
export async function askPerson(_scope: CallScope, tool: ToolName, _args: Record<string, unknown>, verdict: PolicyVerdict): Promise<CallToolResult> {
  return {
    content: [{ type: "text", text: `${verdictSentence(tool, verdict)} Nothing was run.` }],
    isError: true,
    _meta: verdictMeta(verdict),
  };
}
