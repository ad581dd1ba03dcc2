/**
 * Approvals where the person is, beyond URL elicitation and Tasks
 * (approval-wait.ts):
 *
 * - the approvals view (MCP Apps, SEP-1865): one `ui://` resource, served by
 *   resources/list and resources/read in both eras, linked from the tools
 *   whose results it shows (`_meta.ui.resourceUri`, plus the older flat key
 *   that ext-apps' registerAppTool also sets). It is a view over
 *   list_pending_approvals and decides through approve_task / reject_task,
 *   called through the host like any call: the server cannot tell a click in
 *   the view from the model's call, so the view adds reach, never authority.
 *   Which tools link to it is part of each tool's contract (src/catalog/contract.ts).
 * - the decide link: every answer that leaves an approval waiting carries the
 *   console's page for it (`decide_url`, and a sentence in its text), so a
 *   host with neither elicitation nor apps still gives the person one click.
 */
import { ProtocolError, ProtocolErrorCode, type CallToolResult } from "@modelcontextprotocol/server";
import { RESOURCE_MIME_TYPE } from "@modelcontextprotocol/ext-apps/server";
import { APPROVALS_VIEW_URI } from "../catalog/contract.ts";
import { APPROVALS_VIEW_HTML } from "./approvals-view.ts";
import { refuseUnknownCursor } from "./one-page.ts";
import { actionDecidePath, pendingActionOf, PENDING_ACTION_KEY } from "./pending-actions.ts";


/** The view asks for nothing beyond its own document: no other origin to connect to or load from. */
const VIEW_UI_META = { ui: { csp: { connectDomains: [], resourceDomains: [] }, prefersBorder: true } };

const VIEW_RESOURCE = {
  uri: APPROVALS_VIEW_URI,
  name: "approvals",
  title: "Taskgate approvals",
  description: "The account's pending questions and sign-offs; a person's connection decides them here, an agent's reads them.",
  mimeType: RESOURCE_MIME_TYPE,
  _meta: VIEW_UI_META,
};

const LIST = { resources: [VIEW_RESOURCE] };
const READ = { contents: [{ uri: APPROVALS_VIEW_URI, mimeType: RESOURCE_MIME_TYPE, text: APPROVALS_VIEW_HTML, _meta: VIEW_UI_META }] };

/** resources/list and resources/read of the view (the same for every caller, made once per isolate). */
export function serveAppView(server: {
  setRequestHandler(method: "resources/list" | "resources/read" | "resources/templates/list", handler: (request: any) => unknown): void;
}): void {
  server.setRequestHandler("resources/list", async (request: { params?: { cursor?: unknown } }) => {
    refuseUnknownCursor("resources/list", request.params);
    return LIST;
  });
  server.setRequestHandler("resources/templates/list", async (request: { params?: { cursor?: unknown } }) => {
    refuseUnknownCursor("resources/templates/list", request.params);
    return { resourceTemplates: [] };
  });
  server.setRequestHandler("resources/read", async (request: { params: { uri: string } }) => {
    if (request.params.uri !== APPROVALS_VIEW_URI) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown resource: ${request.params.uri}. resources/list names the one resource, ${APPROVALS_VIEW_URI}.`);
    }
    return READ;
  });
}

/** The console's page where a person decides the approvals of a task. */
export const decidePageOf = (origin: string, taskId: string) => `${origin}/tasks/${taskId}`;

interface PendingLike {
  id: string;
  kind?: string;
  task_id: string | null;
  status: string;
}

/** Where a person decides an approval: a pending action on its own page, a question or sign-off on its task's. */
const decidePageOfApproval = (origin: string, a: PendingLike) =>
  a.kind === "action" || a.task_id === null ? `${origin}${actionDecidePath(a.id)}` : decidePageOf(origin, a.task_id);

/** A call that waits as a pending action: its decide link in `_meta` and in a sentence of its text. */
function withActionLink(result: CallToolResult, origin: string): CallToolResult {
  const waiting = pendingActionOf(result);
  if (!waiting) return result;
  const url = `${origin}${actionDecidePath(waiting.approval_id)}`;
  return {
    ...result,
    content: [...result.content, { type: "text", text: `A person decides it in Taskgate: ${url}` }],
    _meta: { ...result._meta, [PENDING_ACTION_KEY]: { ...waiting, decide_url: url } },
  };
}

/**
 * The result with the decide link: `decide_url` on an answer that leaves an
 * approval waiting (complete_task, request_approval; null when nothing waits)
 * with a sentence saying where to decide, on get_approval, and on each item
 * of list_pending_approvals. Everything else unchanged.
 */
export function withDecideLink(name: string, result: CallToolResult, origin: string): CallToolResult {
  if (result.isError) return withActionLink(result, origin);
  const s = result.structuredContent as Record<string, unknown> | undefined;
  if (!s) return result;
  let structured: Record<string, unknown>;
  let said: string | null = null;
  if (name === "complete_task" || name === "request_approval") {
    const approval = s.approval as PendingLike | null | undefined;
    const url = approval?.status === "pending" ? decidePageOfApproval(origin, approval) : null;
    structured = { ...s, decide_url: url };
    if (url) said = `A person decides this approval in Taskgate: ${url}`;
  } else if (name === "get_approval") {
    structured = { ...s, decide_url: decidePageOfApproval(origin, s.approval as PendingLike) };
  } else if (name === "list_pending_approvals") {
    structured = { ...s, items: (s.items as PendingLike[]).map((item) => ({ ...item, decide_url: decidePageOfApproval(origin, item) })) };
  } else {
    return result;
  }
  // The JSON text becomes the new structured content's; any sentence the answer had stays.
  const before = JSON.stringify(s);
  const content: CallToolResult["content"] = result.content.map((c) => (c.type === "text" && c.text === before ? { type: "text", text: JSON.stringify(structured) } : c));
  if (said) content.push({ type: "text", text: said });
  return { ...result, content, structuredContent: structured };
}
