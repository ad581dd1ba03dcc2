import { createMcpHandler, Server, type McpRequestContext } from "@modelcontextprotocol/server";
import { VERSION } from "../env.ts";
import { callTool, listToolsFor, outputSchemaOf, type CallScope } from "./registry.ts";

export const MAX_BODY_BYTES = 1024 * 1024;

const INSTRUCTIONS =
  "Taskgate: tasks for people and their AI agents. Agents: list_my_tasks, claim_task, start_run, log_run_event, " +
  "then complete_task (it may wait for a person's approval). Every tool says in its hints whether it only reads.";

function scopeOf(ctx: McpRequestContext): CallScope {
  const scope = ctx.authInfo?.extra?.scope as CallScope | undefined;
  if (!scope) throw new Error("MCP request without an authenticated principal");
  return scope;
}

/** A low-level Server for one request, bound to its authenticated caller. */
function serverFor(ctx: McpRequestContext): Server {
  const scope = scopeOf(ctx);
  const server = new Server(
    { name: "taskgate", title: "Taskgate", version: VERSION },
    { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS },
  );
  server.setRequestHandler("tools/list", async () => ({ tools: listToolsFor(scope.principal) }));
  server.setRequestHandler("tools/call", async (request) => {
    const { name, arguments: args } = request.params;
    const result = await callTool(scope, name, args);
    return server.projectCallToolResult(result, result.isError ? undefined : outputSchemaOf(name));
  });
  return server;
}

/** Made once per isolate: serves MCP 2026-07-28 and legacy (initialize) clients, statelessly, as JSON. */
export const mcpHandler = createMcpHandler(serverFor, {
  legacy: "stateless",
  responseMode: "json",
  maxRequestBodySize: MAX_BODY_BYTES,
  onerror: (error) => {
    // A request the SDK refused (bad JSON-RPC, wrong protocol headers) is the client's mistake, not ours.
    const level = error.message.startsWith("Rejected inbound request") ? "warn" : "error";
    console[level](JSON.stringify({ level, where: "mcp", error: error.message }));
  },
});
