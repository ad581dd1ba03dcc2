import { z } from "zod";
import {
  createMcpHandler, isJsonContentType, isLegacyRequest, MissingRequiredClientCapabilityError, ProtocolErrorCode, Server, UnsupportedProtocolVersionError,
  WebStandardStreamableHTTPServerTransport, type CallToolResult, type McpHandlerRequestOptions, type McpRequestContext, type RequestId,
} from "@modelcontextprotocol/server";
import { callTool, listResultFor, outputSchemaOf, type CallScope } from "./registry.ts";
import { acceptsJson, cachedList, listRequestKey } from "./list-cache.ts";
import { isToolName, type ToolName } from "../catalog/effects.ts";
import { lacksOnlyWriteScope, refusal } from "../catalog/permissions.ts";
import { ALL_TOOLS_SELECTED, PRESETS, TOOLSETS, type ToolSelection } from "../catalog/toolsets.ts";
import { notListed } from "../catalog/not-listed.ts";
import type { Principal } from "../domain/principal.ts";
import { serveAppView, withDecideLink } from "./app-view.ts";
import { refuseUnknownCursor } from "./one-page.ts";
import { authInfoFor, callScopeOf, setAsideOf, type SetAside } from "./auth-info.ts";
import { fastCall, fastCallEra, SERVER_INFO } from "./fast-call.ts";
import { codecsFor, firstAnswer, retryAnswer, TASKS_EXTENSION, taskState, verifiedHandle, type Codecs, type Wait } from "./approval-wait.ts";

export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * What a host reads before any tool: the loop of an agent, what holds for
 * every tool (said once here rather than in each schema of tools/list), then
 * the toolsets one line each (for hosts that search tools instead of loading
 * them all, and for people choosing a narrower URL).
 */
export const INSTRUCTIONS = [
  "Taskgate: tasks for people and their AI agents. Agents: list_my_tasks, claim_task, start_run, log_run_event, " +
    "then complete_task (it may wait for a person's approval). Every tool says in its hints whether it only reads. " +
    "Ids are the ones results return (tsk_…, prj_…). Lists return items and next_cursor: pass it as cursor for the next page; " +
    "limit is 1–100 (default 25) unless a tool says otherwise. Lengths: titles 500 characters, project names 200, label names 100, " +
    "steps, reasons, questions and the notes of complete_task and approve_task 2,000, run messages and summaries 4,000, " +
    "task notes, descriptions and comments 20,000; a batch is at most 50 items. Unknown fields are refused. " +
    "idempotency_key: a retry with the same key and arguments returns the first result and writes nothing new.",
  "Toolsets (narrow a connection with /mcp/x/<names>, ?toolsets=<names> or X-MCP-Toolsets; /mcp/readonly for reads only):",
  ...[...TOOLSETS, ...PRESETS].map((t) => `- ${t.name}: ${t.description}`),
].join("\n");

/**
 * The instructions a connection gets: INSTRUCTIONS, then, when its list
 * leaves tools out, the one line that says which and why (whoami returns the
 * same line). Made from the kept answer of notListed, so a request pays a lookup.
 */
export function instructionsFor(p: Principal, selection: ToolSelection = ALL_TOOLS_SELECTED): string {
  const missing = notListed(p, selection);
  return missing.groups.length ? `${INSTRUCTIONS}\n${missing.line}` : INSTRUCTIONS;
}

function scopeOf(ctx: McpRequestContext): CallScope {
  return callScopeOf(ctx.authInfo);
}

/**
 * The SDK refuses a tools/call whose `arguments` is not an object (an array,
 * a string) with a dump of its schema issues before any tool code runs. So
 * `arguments` of that kind are set aside here and the SDK sees `{}`; the
 * registry then gets the original and answers like any other argument error.
 * `null` is left to mean "no arguments".
 */
function setAsideNonObjectArguments(message: unknown): SetAside {
  const setAside: SetAside = new Map();
  if (!message || typeof message !== "object" || (message as { method?: unknown }).method !== "tools/call") return setAside;
  const { id, params } = message as { id?: RequestId; params?: Record<string, unknown> };
  if (id === undefined || !params || typeof params !== "object" || !("arguments" in params)) return setAside;
  const args = params.arguments;
  if (args === null) delete params.arguments;
  else if (typeof args !== "object" || Array.isArray(args)) {
    setAside.set(id, args);
    params.arguments = {};
  }
  return setAside;
}

/**
 * A JSON-RPC batch (an array body): refused in every era with one error.
 * 2026-07-28 has no batches and 2025-06-18 removed them; answering some of
 * them (or one) would leave a client guessing which of its calls ran. None did.
 */
function batchRefused(): Response {
  const error = { code: ProtocolErrorCode.InvalidRequest, message: "JSON-RPC batches are not supported: send each request in its own POST." };
  return new Response(JSON.stringify({ jsonrpc: "2.0", id: null, error }), { status: 400, headers: { "content-type": "application/json" } });
}

/** Whether this body is one tools/call that only the caller's missing write scope refuses. */
function wantsWriteScope(body: unknown, scope: CallScope): boolean {
  if (!body || typeof body !== "object" || Array.isArray(body)) return false;
  const { method, params } = body as { method?: unknown; params?: { name?: unknown } };
  const name = method === "tools/call" && params && typeof params === "object" ? params.name : undefined;
  if (typeof name !== "string" || !isToolName(name) || !(scope.toolsets ?? ALL_TOOLS_SELECTED).tools.has(name)) return false;
  return lacksOnlyWriteScope(scope.principal, name);
}

export interface ServeOptions {
  /** Serve every request through the SDK, the usual tools/call included (tests compare the two paths). */
  sdkOnly?: boolean;
  /**
   * The answer to a tools/call that only the missing write scope refuses, for
   * a caller that can get it by asking again (an OAuth grant: the edge's
   * step-up challenge). Without it, such a call gets the registry's refusal.
   */
  onWriteScopeMissing?: () => Response;
}

/**
 * POST /mcp for an authenticated caller: reads a JSON body once (the SDK is
 * given the parsed body) and serves it with the request's scope.
 */
export async function serveMcp(request: Request, scope: CallScope, options: ServeOptions = {}): Promise<Response> {
  const authInfo = (setAsideArguments?: SetAside) => authInfoFor(scope, setAsideArguments);
  if (!isJsonContentType(request.headers.get("content-type"))) return mcpHandler.fetch(request, { authInfo: authInfo() });
  const text = await request.text();
  // The body is read: what the SDK gets is either the parsed message (it reads nothing more) or a request with the same text.
  const again = (body: string) => {
    const headers = new Headers(request.headers);
    headers.delete("content-length");
    return new Request(request.url, { method: request.method, headers, body, signal: request.signal });
  };
  let parsedBody: unknown;
  try {
    parsedBody = text.length ? JSON.parse(text) : undefined;
  } catch {
    return mcpHandler.fetch(again(text), { authInfo: authInfo() });
  }
  if (parsedBody === undefined) return mcpHandler.fetch(again(text), { authInfo: authInfo() });
  if (Array.isArray(parsedBody)) return batchRefused();
  if (options.onWriteScopeMissing && wantsWriteScope(parsedBody, scope)) return options.onWriteScopeMissing();
  // The usual tools/call skips the SDK's per-request server and transport: the same answer (fast-call.ts).
  const era = options.sdkOnly || text.length > MAX_BODY_BYTES / 3 ? null : fastCallEra(request, parsedBody);
  if (era) return fastCall(request, parsedBody as Record<string, unknown>, era, scope);
  const list = listRequestKey(request, parsedBody, scope.principal, scope.toolsets);
  const json = acceptsJson(request.headers.get("accept")) && (await isLegacyRequest(request, parsedBody, { maxRequestBodySize: MAX_BODY_BYTES }));
  const handle = json ? legacyAsJson : mcpHandler.fetch;
  if (list) {
    return cachedList(list.key, list.id, parsedBody as Record<string, unknown>, acceptsJson(request.headers.get("accept")), (body) =>
      handle(request, { authInfo: authInfo(), parsedBody: body }),
    );
  }
  const setAside = setAsideNonObjectArguments(parsedBody);
  return handle(request, { authInfo: authInfo(setAside), parsedBody });
}

/**
 * A 2025-era request from a client that accepts JSON: served like the SDK's
 * stateless legacy leg (a fresh server from the same factory on a stateless
 * streamable HTTP transport), with the transport's JSON responses, so its one
 * answer needs no event framing. Nothing in the 2025 era sends a message
 * before its result here (waiting for approval is 2026-07-28 only).
 */
async function legacyAsJson(request: Request, options: McpHandlerRequestOptions): Promise<Response> {
  const server = await serverFor({ era: "legacy", authInfo: options.authInfo, requestInfo: request });
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true, maxRequestBodySize: MAX_BODY_BYTES });
  await server.connect(transport);
  try {
    return await transport.handleRequest(request, options);
  } finally {
    transport.close().catch(() => {});
    server.close().catch(() => {});
  }
}

/**
 * How long a 2026-07-28 client may keep a token's tools/list: private, since
 * the list depends on the token (its scope, its kind, whether its agent is
 * paused). Five minutes spares a host the list on every new conversation,
 * and bounds how stale it gets when it changes without a notification (an
 * agent paused or resumed, a deploy); every call is checked again anyway, so
 * a stale list at worst offers a tool the server then refuses with a reason.
 */
export const TOOLS_LIST_CACHE = { ttlMs: 5 * 60_000, cacheScope: "private" } as const;

/**
 * A low-level Server for one request, bound to its authenticated caller. A
 * 2026-07-28 request on a Worker with CONNECTOR_KEY may also wait for a
 * person inside its host (approval-wait.ts): signed requestState, the Tasks
 * extension and tasks/get. 2025-era requests get none of it.
 */
async function serverFor(ctx: McpRequestContext): Promise<Server> {
  const scope = scopeOf(ctx);
  const codecs = ctx.era === "modern" ? await codecsFor(scope.env.CONNECTOR_KEY) : null;
  const server = new Server(
    { ...SERVER_INFO },
    {
      capabilities: { tools: { listChanged: false }, resources: { listChanged: false }, ...(codecs && { extensions: { [TASKS_EXTENSION]: {} } }) },
      instructions: instructionsFor(scope.principal, scope.toolsets),
      cacheHints: { "tools/list": TOOLS_LIST_CACHE },
      ...(codecs && { requestState: { verify: codecs.state.verify } }),
    },
  );
  server.setRequestHandler("tools/list", async (request) => {
    refuseUnknownCursor("tools/list", request.params);
    return listResultFor(scope.principal, scope.toolsets);
  });
  serveAppView(server);
  const origin = originOf(ctx);
  const setAside = setAsideOf(ctx.authInfo);
  const project = (name: string, result: CallToolResult) => server.projectCallToolResult(result, result.isError ? undefined : outputSchemaOf(name));
  server.setRequestHandler("tools/call", async (request, call) => {
    const { name, arguments: args } = request.params;
    const id = call.mcpReq.id;
    if (codecs) {
      const waited = call.mcpReq.requestState<Wait>();
      if (waited) {
        const why = refusal(scope.principal, waited.tool as ToolName);
        if (why) return { content: [{ type: "text", text: why }], isError: true };
        const answer = await retryAnswer(codecs, call, scope, origin, waited, { name, args });
        return "resultType" in answer ? answer : project(name, withDecideLink(name, answer, origin));
      }
    }
    const result = withDecideLink(name, await callTool(scope, name, setAside?.has(id) ? setAside.get(id) : args), origin);
    if (!codecs) return project(name, result);
    const answer = await firstAnswer(codecs, call, origin, name, result);
    return answer === result ? project(name, result) : (answer as CallToolResult);
  });
  if (codecs) serveTasks(server, codecs, scope, origin);
  return server;
}

/** The origin the request reached: the console pages a URL request opens are on it. */
function originOf(ctx: McpRequestContext): string {
  return new URL(ctx.requestInfo?.url ?? "https://localhost").origin;
}

const TaskParams = z.looseObject({ taskId: z.string().min(1).max(4096) });

/**
 * tasks/get and tasks/cancel of the Tasks extension (SEP-2663), for the task
 * handles of waiting calls. The SDK routes these two names to a handler
 * registered with explicit schemas on the 2026-07-28 era. Cancelling is
 * acknowledged and changes nothing: the approval stays for the person.
 */
function serveTasks(server: Server, codecs: Codecs, scope: CallScope, origin: string): void {
  server.setRequestHandler("tasks/get", { params: TaskParams }, async ({ taskId }, ctx) => taskState(codecs, ctx, scope, origin, taskId));
  server.setRequestHandler("tasks/cancel", { params: TaskParams }, async ({ taskId }, ctx) => {
    await verifiedHandle(codecs, ctx, taskId);
    return {};
  });
}

/**
 * What the SDK reports when it refused a request the client got wrong (a 4xx:
 * wrong Content-Type or Accept, bad JSON-RPC, unsupported protocol version or
 * headers, a body too large): a warning, like the edge's other 4xx. Anything
 * else it reports is ours to fix and logged as an error.
 */
const CLIENT_MISTAKE =
  /^(Rejected inbound request|Rejected 2025-era request|Unsupported Media Type|Not Acceptable|Parse error|Invalid Request|Bad Request|Invalid (Host|Origin) header|Method not allowed|Payload Too Large)/;

export function isClientMistake(error: Error): boolean {
  if (error instanceof UnsupportedProtocolVersionError || error instanceof MissingRequiredClientCapabilityError || error instanceof SyntaxError) return true;
  return CLIENT_MISTAKE.test(error.message);
}

/**
 * The SDK warns, once per isolate, that JSON responses drop notifications sent
 * before a call's result. Taskgate sends none (a call's progress is its result,
 * and a wait for a person is a task handle or an elicitation), so that one line
 * is not printed; every other warning is.
 */
function withoutJsonModeWarning<T>(make: () => T): T {
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (!(typeof args[0] === "string" && args[0].startsWith("responseMode: 'json' drops mid-call notifications"))) warn(...args);
  };
  try {
    return make();
  } finally {
    console.warn = warn;
  }
}

/** Made once per isolate: serves MCP 2026-07-28 and legacy (initialize) clients, statelessly, as JSON. */
export const mcpHandler = withoutJsonModeWarning(() => createMcpHandler(serverFor, {
  legacy: "stateless",
  responseMode: "json",
  maxRequestBodySize: MAX_BODY_BYTES,
  onerror: (error) => {
    const level = isClientMistake(error) ? "warn" : "error";
    console[level](JSON.stringify({ level, where: "mcp", error: error.message }));
  },
}));
