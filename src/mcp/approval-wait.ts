/**
 * Approvals that reach the person inside their host (protocol 2026-07-28).
 *
 * A `complete_task` or `request_approval` call that leaves an approval pending
 * is answered, for a client that says it can take it, with something better
 * than "awaiting approval, poll me":
 *
 * - a client that declares URL elicitation (`elicitation.url`) gets an
 *   `input_required` result whose URL opens the task's console page (sign-in
 *   on the way if needed) and a signed `requestState`; its retry answers with
 *   the decision once a person made it, or asks again until then;
 * - a client that declares the Tasks extension (`io.modelcontextprotocol/tasks`)
 *   gets a task handle; `tasks/get` reports it working until a person decides,
 *   then completed with the call's result.
 *
 * Both sit over the call's result, never inside a tool: the tool wrote the
 * approval; this layer only reads it back from D1. Clients that declare
 * neither, and every 2025-era request, get the tool's own answer unchanged.
 * The state and the task handle are HMAC-signed (keys derived from
 * CONNECTOR_KEY) and bound to the caller's account and token.
 */
import {
  CLIENT_CAPABILITIES_META_KEY, createRequestStateCodec, inputRequired, inputResponse, ProtocolError, ProtocolErrorCode,
  type CallToolResult, type ClientCapabilities, type InputRequiredResult, type RequestStateCodec, type ServerContext,
} from "@modelcontextprotocol/server";
import { requireApproval, type Approval, type ApprovalWithTask } from "../db/approvals.ts";
import { findTask, toTask, type TaskRow } from "../db/tasks.ts";
import { ToolError } from "../domain/errors.ts";
import type { CallScope } from "./registry.ts";
import { callScopeOf } from "./auth-info.ts";
import { withDecideLink } from "./app-view.ts";
import { actionDecidePath, pendingActionOf } from "./pending-actions.ts";
import { effectiveStatus, findPendingAction, type PendingActionWithTask } from "../db/pending-actions.ts";

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/** The tools whose call may leave an approval waiting for a person. */
const WAITING_TOOLS = ["complete_task", "request_approval"] as const;
type WaitingTool = (typeof WAITING_TOOLS)[number];

/** What a call left waiting: the signed payload of a requestState or a task handle. */
export interface Wait {
  /** The tool called: complete_task or request_approval, or for a pending action the tool its policy held. */
  tool: string;
  approval: string;
  /** The task whose approval waits ("" for a pending action). */
  task: string;
  /** A pending action (a call the agent's policy asks about), decided on its own page. */
  action?: true;
}

/** How long a requestState stays good (the client retries well within it; each round signs a fresh one). */
const STATE_TTL_SECONDS = 24 * 3600;
/** How long a task handle stays good: a person may take days to decide. */
export const HANDLE_TTL_SECONDS = 30 * 86_400;
/** How often a host should ask tasks/get: people decide in minutes, not milliseconds. */
export const POLL_INTERVAL_MS = 5_000;

export interface Codecs {
  state: RequestStateCodec<Wait>;
  handle: RequestStateCodec<Wait>;
}

function fromBase64(text: string): Uint8Array<ArrayBuffer> | null {
  try {
    const bin = atob(text);
    return Uint8Array.from(bin, (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

/** One key per purpose: HMAC-SHA256(CONNECTOR_KEY, label), so a requestState is never a task handle. */
async function derive(secret: Uint8Array<ArrayBuffer>, label: string): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey("raw", secret, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(label)));
}

/** Account and token of the caller: a state or handle minted for one token is refused for any other. */
function callerOf(ctx: ServerContext): string {
  const scope = callScopeOf(ctx.http?.authInfo);
  return `${scope.principal.accountId}\0${scope.principal.tokenId}`;
}

const codecs = new Map<string, Promise<Codecs | null>>();

/** The codecs for this CONNECTOR_KEY (made once per isolate), or null when the Worker has no usable key. */
export function codecsFor(raw: string | undefined): Promise<Codecs | null> {
  const text = (raw ?? "").trim();
  let found = codecs.get(text);
  if (!found) {
    const secret = text ? fromBase64(text) : null;
    found = !secret || secret.length !== 32
      ? Promise.resolve(null)
      : Promise.all([derive(secret, "taskgate/approval-wait/state/v1"), derive(secret, "taskgate/approval-wait/handle/v1")]).then(([s, h]) => ({
          state: createRequestStateCodec<Wait>({ key: s, ttlSeconds: STATE_TTL_SECONDS, bind: callerOf }),
          handle: createRequestStateCodec<Wait>({ key: h, ttlSeconds: HANDLE_TTL_SECONDS, bind: callerOf }),
        }));
    if (codecs.size >= 8) codecs.clear();
    codecs.set(text, found);
  }
  return found;
}

/** What the request's client declared it can do with a wait (2026-07-28 carries it on every request). */
export function waitModeOf(ctx: ServerContext): "task" | "url" | null {
  const caps = ctx.mcpReq.envelope?.[CLIENT_CAPABILITIES_META_KEY as keyof typeof ctx.mcpReq.envelope] as ClientCapabilities | undefined;
  if (caps?.extensions?.[TASKS_EXTENSION]) return "task";
  if (caps?.elicitation?.url) return "url";
  return null;
}

/** The approval a successful call left pending, read from its result; null when nothing waits. */
export function waitOf(name: string, result: CallToolResult): Wait | null {
  const held = pendingActionOf(result);
  if (held) return { tool: name, approval: held.approval_id, task: "", action: true };
  if (result.isError || !(WAITING_TOOLS as readonly string[]).includes(name)) return null;
  const approval = (result.structuredContent as { approval?: Approval | null } | undefined)?.approval;
  if (!approval || approval.status !== "pending") return null;
  return { tool: name as WaitingTool, approval: approval.id, task: approval.task_id };
}

/** The page where a person decides what this call waits on. */
const pageOf = (origin: string, w: Wait) => (w.action ? `${origin}${actionDecidePath(w.approval)}` : `${origin}/tasks/${w.task}`);

/**
 * A pending action's call as of now: the approved call's own result once it
 * ran (the tool's result shape), an error result when it was rejected, expired
 * or withdrawn (nothing ran), null while it waits.
 */
function actionAnswer(row: PendingActionWithTask, now: string): { result: CallToolResult | null; decidedAt: string | null } {
  const status = effectiveStatus(row, now);
  if (status === "pending" || (status === "approved" && row.result === null)) return { result: null, decidedAt: null };
  if (status === "approved") return { result: JSON.parse(row.result as string) as CallToolResult, decidedAt: row.ran_at ?? row.decided_at };
  const why =
    status === "rejected"
      ? `rejected by ${row.decided_by ?? "a person"}${row.note ? `: ${row.note}` : ""}`
      : status === "expired"
        ? `expired at ${row.expires_at} before a person decided it`
        : "withdrawn";
  return {
    result: { content: [{ type: "text" as const, text: `Not run: pending action ${row.id} (${row.tool}) was ${why}. get_approval shows it; calling again asks anew.` }], isError: true },
    decidedAt: row.decided_at ?? row.expires_at,
  };
}

async function readAction(scope: CallScope, w: Wait): Promise<PendingActionWithTask | null> {
  return findPendingAction(scope.env.DB, scope.principal.accountId, w.approval);
}

/** The approval and its task as they are now; null when the task is gone (deleted). */
async function readWait(scope: CallScope, w: Wait): Promise<{ approval: ApprovalWithTask; task: TaskRow } | null> {
  const a = scope.principal.accountId;
  try {
    const [approval, task] = await Promise.all([requireApproval(scope.env.DB, a, w.approval), findTask(scope.env.DB, a, w.task)]);
    return task ? { approval, task } : null;
  } catch (e) {
    if (e instanceof ToolError) return null;
    throw e;
  }
}

/** The call's answer as of now, in the tool's own result shape (so a host reads it as it reads the tool's first answer). */
function answerNow(w: Wait, approval: ApprovalWithTask, row: TaskRow): CallToolResult {
  const { task_status: _s, task_assignee: _a, task_auto_ok: _o, ...shown } = approval;
  const task = toTask(row);
  const decided = shown.status !== "pending";
  const result =
    w.tool === "complete_task"
      ? { task, outcome: !decided ? "awaiting_approval" : task.status === "done" ? "completed" : "rejected", approval: shown, next_occurrence: null, changed: true }
      : { approval: shown, changed: true };
  const said = decided
    ? `A person decided approval ${shown.id}: ${shown.status}${shown.decided_by ? ` by ${shown.decided_by}` : ""}. Task ${task.id} is ${task.status}.`
    : `Approval ${shown.id} still waits for a person. Task ${task.id} is ${task.status}.`;
  return { content: [{ type: "text", text: said }, { type: "text", text: JSON.stringify(result) }], structuredContent: result };
}

const goneMessage = (w: Wait) =>
  w.action ? `Pending action ${w.approval} is no longer there.` : `Task ${w.task} was deleted before a person decided approval ${w.approval}.`;

function gone(w: Wait): CallToolResult {
  return { content: [{ type: "text", text: goneMessage(w) }], isError: true };
}

const elicitationKey = (w: Wait) => `approval_${w.approval}`;

/** Ask the host to open the console's page for the approval; the signed state brings the retry back here. */
async function askPerson(codecs: Codecs, ctx: ServerContext, origin: string, w: Wait): Promise<InputRequiredResult> {
  return inputRequired({
    inputRequests: {
      [elicitationKey(w)]: inputRequired.elicitUrl({
        message: w.action
          ? `A person must approve ${w.tool} (pending action ${w.approval}) before it runs. Open Taskgate to read what it would do and approve or reject it.`
          : `A person must decide approval ${w.approval} of task ${w.task} before this call can finish. Open Taskgate to read it and approve or reject it.`,
        url: pageOf(origin, w),
      }),
    },
    requestState: await codecs.state.mint(w, ctx),
  });
}

/** A task handle (Tasks extension) for a call that waits: working now, completed once a person decides. */
async function taskHandle(codecs: Codecs, ctx: ServerContext, origin: string, w: Wait, createdAt: string) {
  return {
    resultType: "task",
    taskId: await codecs.handle.mint(w, ctx),
    status: "working",
    statusMessage: waitingMessage(origin, w),
    createdAt,
    lastUpdatedAt: createdAt,
    ttlMs: HANDLE_TTL_SECONDS * 1000,
    pollIntervalMs: POLL_INTERVAL_MS,
  };
}

const waitingMessage = (origin: string, w: Wait) =>
  w.action
    ? `Waiting for a person to approve ${w.tool} (pending action ${w.approval}): ${pageOf(origin, w)}`
    : `Waiting for a person to decide approval ${w.approval} of task ${w.task}: ${pageOf(origin, w)}`;

/**
 * The first answer of a call: a wait becomes an input_required URL request or
 * a task handle when the client declared one of them; otherwise (or when
 * nothing waits) the tool's own result.
 */
export async function firstAnswer(
  codecs: Codecs,
  ctx: ServerContext,
  origin: string,
  name: string,
  result: CallToolResult,
): Promise<CallToolResult | InputRequiredResult | Record<string, unknown>> {
  const w = waitOf(name, result);
  const mode = w ? waitModeOf(ctx) : null;
  if (!w || !mode) return result;
  if (mode === "url") return askPerson(codecs, ctx, origin, w);
  const createdAt = w.action ? new Date().toISOString() : (result.structuredContent as { approval: Approval }).approval.created_at;
  return taskHandle(codecs, ctx, origin, w, createdAt);
}

/**
 * A retry with a verified requestState: the decision when a person made it,
 * the same URL request again until then. The tool does not run again (a
 * second complete_task after a rejection would ask anew). A host whose person
 * declined to open the page gets the call's answer as of now.
 */
export async function retryAnswer(
  codecs: Codecs,
  ctx: ServerContext,
  scope: CallScope,
  origin: string,
  w: Wait,
  call: { name: string; args: unknown },
): Promise<CallToolResult | InputRequiredResult> {
  if (w.action) return retryAction(codecs, ctx, scope, origin, w, call);
  const taskArg = (call.args as { task_id?: unknown } | undefined)?.task_id;
  if (call.name !== w.tool || taskArg !== w.task) {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `This requestState belongs to ${w.tool} on task ${w.task}; retry that call with it, or call again without it.`);
  }
  const now = await readWait(scope, w);
  if (!now) return gone(w);
  // Another question than the one this state waits on: refused as the plain call would be, never answered for the old one.
  const question = (call.args as { question?: unknown } | undefined)?.question;
  if (w.tool === "request_approval" && typeof question === "string" && question !== now.approval.question) {
    return {
      content: [
        {
          type: "text",
          text:
            `task ${w.task} already has a request from ${now.approval.requested_by} (${now.approval.id}): "${now.approval.question}", and this requestState waits on it, not on another question. ` +
            "One request waits at a time: call request_approval again without the requestState once it is answered (get_task shows the answer) or withdrawn.",
        },
      ],
      isError: true,
    };
  }
  if (now.approval.status !== "pending") return answerNow(w, now.approval, now.task);
  if (declined(ctx, w)) return answerNow(w, now.approval, now.task);
  return askPerson(codecs, ctx, origin, w);
}

/** Whether the host's person declined to open the page this state asked for. */
function declined(ctx: ServerContext, w: Wait): boolean {
  const response = inputResponse(ctx.mcpReq.inputResponses, elicitationKey(w));
  return response.kind === "elicit" && response.action !== "accept";
}

/** What every tasks/get answer of a handle carries. */
const handleBase = (taskId: string) => ({ taskId, ttlMs: HANDLE_TTL_SECONDS * 1000, pollIntervalMs: POLL_INTERVAL_MS });

/**
 * A retry of a call held as a pending action: the approved call's own result
 * once it ran, an error result once rejected or expired, the same URL request
 * until then (the call itself is not made again: the server runs it once).
 */
async function retryAction(
  codecs: Codecs,
  ctx: ServerContext,
  scope: CallScope,
  origin: string,
  w: Wait,
  call: { name: string; args: unknown },
): Promise<CallToolResult | InputRequiredResult> {
  if (call.name !== w.tool) {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `This requestState belongs to ${w.tool} (pending action ${w.approval}); retry that call with it, or call again without it.`);
  }
  const row = await readAction(scope, w);
  if (!row) return gone(w);
  const { result } = actionAnswer(row, new Date().toISOString());
  if (result) return result;
  if (declined(ctx, w)) {
    return { content: [{ type: "text" as const, text: `Not run yet: ${w.tool} waits for a person's approval (pending action ${w.approval}); get_approval shows the decision.` }], isError: true };
  }
  return askPerson(codecs, ctx, origin, w);
}

/** tasks/get for a call held as a pending action: working until it ran (or was refused), then completed with its result. */
async function actionTaskState(scope: CallScope, origin: string, w: Wait, taskId: string) {
  const base = handleBase(taskId);
  const row = await readAction(scope, w);
  const nowIso = new Date().toISOString();
  if (!row) return { ...base, status: "cancelled", statusMessage: goneMessage(w), createdAt: nowIso, lastUpdatedAt: nowIso };
  const { result, decidedAt } = actionAnswer(row, nowIso);
  if (!result) return { ...base, status: "working", statusMessage: waitingMessage(origin, w), createdAt: row.created_at, lastUpdatedAt: row.decided_at ?? row.created_at };
  const said = result.isError ? (result.content[0] as { text: string }).text : `A person approved pending action ${row.id}; ${w.tool} ran once, as asked.`;
  return { ...base, status: "completed", statusMessage: said, createdAt: row.created_at, lastUpdatedAt: decidedAt ?? row.created_at, result };
}

/** tasks/get: the task of a waiting call, as SEP-2663 shapes it (completed with the call's result once decided). */
export async function taskState(codecs: Codecs, ctx: ServerContext, scope: CallScope, origin: string, taskId: string) {
  const w = await verifiedHandle(codecs, ctx, taskId);
  if (w.action) return actionTaskState(scope, origin, w, taskId);
  const now = await readWait(scope, w);
  const base = handleBase(taskId);
  if (!now) {
    return { ...base, status: "cancelled", statusMessage: goneMessage(w), createdAt: new Date().toISOString(), lastUpdatedAt: new Date().toISOString() };
  }
  const { approval } = now;
  if (approval.status === "pending") {
    return { ...base, status: "working", statusMessage: waitingMessage(origin, w), createdAt: approval.created_at, lastUpdatedAt: approval.created_at };
  }
  const result = withDecideLink(w.tool, answerNow(w, approval, now.task), origin);
  return {
    ...base,
    status: "completed",
    statusMessage: (result.content[0] as { text: string }).text,
    createdAt: approval.created_at,
    lastUpdatedAt: approval.decided_at ?? approval.created_at,
    result,
  };
}

/** A task handle this server signed for this caller, or the JSON-RPC error for an unknown task. */
export async function verifiedHandle(codecs: Codecs, ctx: ServerContext, taskId: string): Promise<Wait> {
  try {
    return await codecs.handle.verify(taskId, ctx);
  } catch {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, "Unknown task: this server did not issue that taskId to this token, or it has expired.");
  }
}
