/**
 * What a call becomes when the agent's policy does not simply allow it: a
 * refusal that names the rule (deny), or a pending action the person decides
 * (ask). src/catalog/policy.ts decides; this answers the agent, and runs the
 * call once a person approved it (src/tools/approvals.ts decides).
 */
import { ASKED_ACTION } from "../db/summaries.ts";
import type { CallToolResult } from "@modelcontextprotocol/server";
import type { ToolName } from "../catalog/effects.ts";
import { POLICY_KEY, verdictSentence, type PolicyVerdict } from "../catalog/policy.ts";
import { PENDING_ACTION_KEY } from "../catalog/contract.ts";
import type { ApprovedAction, ApprovedResult } from "../catalog/tool.ts";
import { canonicalJson, requestHash } from "../domain/canonical.ts";
import { ID_PREFIX, newId } from "../domain/ids.ts";
import { actorName } from "../domain/principal.ts";
import type { TaskgateEvent } from "../domain/events.ts";
import { named } from "../catalog/tool.ts";
import { rowsReached } from "../db/policy.ts";
import { findToken } from "../db/tokens.ts";
import {
  ACTION_TTL_MS, actionApproval, actionRequested, expireSameCall, insertPendingAction, selectWaitingCall, toolTitle, type NewPendingAction, type PendingActionWithTask,
} from "../db/pending-actions.ts";
import { enqueueEvents } from "../webhooks/queue.ts";
import { makeContext, type CallScope } from "./engine.ts";

export { PENDING_ACTION_KEY };

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

/** The console page where a person decides a pending action. */
export const actionDecidePath = (approvalId: string) => `/approvals/${approvalId}`;

/** What the `_meta` of a waiting call says of its pending action (decide_url is filled where the origin is known). */
export interface PendingActionMeta {
  outcome: "awaiting_approval";
  approval_id: string;
  decide_url: string | null;
  expires_at: string;
}

/** The pending action of a waiting call, read from its `_meta`; null for any other answer. */
export function pendingActionOf(result: CallToolResult): PendingActionMeta | null {
  const m = result._meta?.[PENDING_ACTION_KEY] as PendingActionMeta | undefined;
  return result.isError && m && typeof m.approval_id === "string" ? m : null;
}

/** The agent's answer while its call waits: nothing ran; the approval, where a person decides it, until when, and how to read the outcome. */
function waitingAnswer(tool: ToolName, row: PendingActionWithTask, verdict: PolicyVerdict, again: boolean): CallToolResult {
  const text =
    `${verdict.reason} Nothing was run: this ${tool} call waits for the person's approval as pending action ${row.id}` +
    `${again ? " (the same call already waits; it was not asked twice)" : ""}. ` +
    `A person approves or rejects it until ${row.expires_at}; then it expires and nothing runs. ` +
    `get_approval with approval_id ${row.id} returns the decision and, once approved, this call's result (the server runs it once, as you asked it); ` +
    "calling again with other arguments is a new request.";
  return {
    content: [{ type: "text", text }],
    isError: true,
    _meta: {
      ...verdictMeta(verdict),
      [PENDING_ACTION_KEY]: { outcome: "awaiting_approval", approval_id: row.id, decide_url: null, expires_at: row.expires_at } satisfies PendingActionMeta,
    },
  };
}

/**
 * A call the policy asks about: it waits as a pending action the person
 * decides, nothing run. The identical call again (same connection, tool and
 * arguments) answers with the action that waits; other arguments are a new
 * request. Written through the engine, as the agent (C3 holds it).
 */
export async function askPerson(scope: CallScope, tool: ToolName, args: Record<string, unknown>, verdict: PolicyVerdict): Promise<CallToolResult> {
  const p = scope.principal;
  const db = scope.env.DB;
  const nowMs = Date.now();
  const now = new Date(nowMs).toISOString();
  const { idempotency_key: _key, ...asked } = args;
  const hash = await requestHash(asked);
  const same = { accountId: p.accountId, tokenId: p.tokenId, tool, argumentsHash: hash };
  const waiting = await selectWaitingCall(db, same).first<PendingActionWithTask>();
  if (waiting && waiting.expires_at > now) return waitingAnswer(tool, waiting, verdict, true);

  const preview = await rowsReached(db, p.accountId, asked);
  const task = preview.find((r) => r.kind === "task");
  const action: NewPendingAction = {
    ...same,
    id: newId(ID_PREFIX.approval),
    agentId: p.agentId as string,
    requestedBy: actorName(p),
    arguments: canonicalJson(asked),
    taskId: task?.id ?? null,
    projectId: preview.find((r) => r.project_id)?.project_id ?? (typeof asked.project_id === "string" ? asked.project_id : null),
    rule: verdict.rule,
    reason: verdict.reason,
    preview: JSON.stringify(preview),
    now,
    expiresAt: new Date(nowMs + ACTION_TTL_MS).toISOString(),
  };
  const committed: TaskgateEvent[] = [];
  const ctx = makeContext(scope, "request_approval", asked, null, committed);
  const row = await ctx.commit(
    {
      statements: [expireSameCall(db, action), insertPendingAction(db, action), named("action", selectWaitingCall(db, same))],
      activity: { target: action.taskId ?? action.id, summary: ASKED_ACTION.text({ title: toolTitle(tool), tool, action: action.id }) },
      events: (rows) => {
        const made = rows.action[0] as PendingActionWithTask | undefined;
        return made && made.id === action.id ? [actionRequested(p.accountId, now, made, actionApproval(made, now))] : [];
      },
    },
    (rows) => rows.action[0] as PendingActionWithTask,
  );
  if (committed.length) scope.waitUntil(enqueueEvents(scope.env, committed));
  return waitingAnswer(tool, row, verdict, row.id !== action.id);
}

/** The refusal recorded as the run's result when the agent can no longer act. */
function refusedRun(text: string): ApprovedResult {
  return { content: [{ type: "text", text }], isError: true };
}

/**
 * Runs an approved pending action as the agent: its connection resolved again
 * now (revoked, expired or paused: the run is refused, and that refusal is
 * its result), then the call exactly as asked through `call` (the registry's
 * callTool) with `approved` set, so the policy does not ask again and the
 * engine keys its write by the approval (a second run replays the first).
 */
export async function runApproved(
  scope: CallScope,
  action: ApprovedAction,
  call: (scope: CallScope, name: string, args: unknown) => Promise<CallToolResult>,
): Promise<ApprovedResult> {
  const found = await findToken(scope.env.DB, { id: action.tokenId });
  const agent = found?.principal;
  if (!found || !agent || agent.accountId !== action.accountId || agent.kind !== "agent") {
    return refusedRun(`Not run: the connection that asked for ${action.tool} no longer exists.`);
  }
  if (found.revoked) return refusedRun(`Not run: the connection that asked for ${action.tool} was revoked before the approval.`);
  if (agent.expiresAt && Date.parse(agent.expiresAt) <= Date.now()) return refusedRun(`Not run: the connection that asked for ${action.tool} has expired.`);
  if (agent.paused) return refusedRun(`Not run: agent ${agent.agentName} is paused; a person resumes it (resume_agent), then the agent asks again.`);
  const agentScope: CallScope = { env: scope.env, principal: agent, requestId: scope.requestId, waitUntil: scope.waitUntil, approved: { approvalId: action.id } };
  return (await call(agentScope, action.tool, action.arguments)) as ApprovedResult;
}

/** The idempotency key an approved action's run writes under: one per approval, so it never applies twice. */
export const approvedKey = (approvalId: string) => `approved:${approvalId}`;
