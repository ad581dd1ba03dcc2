import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/server";

/**
 * Taskgate's lists over MCP (tools/list, resources/list,
 * resources/templates/list) are one page each: no answer carries nextCursor,
 * so any cursor a request brings is one the server never gave out. The
 * specification answers an invalid cursor with invalid params (-32602),
 * rather than the first page again, which a client paging on would take for
 * more of the list.
 */
export function refuseUnknownCursor(method: string, params: { cursor?: unknown } | undefined): void {
  if (params?.cursor === undefined) return;
  throw new ProtocolError(
    ProtocolErrorCode.InvalidParams,
    `Unknown cursor for ${method}: the server gives out none, since its answer is the whole list in one page. Call ${method} without cursor.`,
  );
}
