import { pathAndQuery } from "./url-text.ts";
import { selectTools, TOOLSET_NAMES, UnknownToolsetError, type ToolSelection } from "../catalog/toolsets.ts";

const PATH = /^\/mcp(?:\/x\/([^/]+))?(\/readonly)?\/?$/;

function fail(status: 400 | 404, error: string, description: string, extra: Record<string, unknown> = {}): Response {
  return new Response(JSON.stringify({ error, error_description: description, ...extra }), {
    status,
    headers: { "content-type": "application/json" },
  });
}

function flag(value: string | null): boolean | null {
  if (value === null) return false;
  const v = value.trim().toLowerCase();
  if (v === "true" || v === "1" || v === "yes") return true;
  if (v === "false" || v === "0" || v === "no" || v === "") return false;
  return null;
}

/**
 * The tools a request narrows its connection to: `/mcp/x/tasks,runs`,
 * `?toolsets=tasks,runs` or `X-MCP-Toolsets: tasks,runs` (several of them
 * narrow each other), and read-only by `/mcp/readonly`, `…/readonly` or
 * `X-MCP-Readonly: true`. `alsoLists` narrow further (a grant's own toolsets).
 * An unknown toolset name → 400 listing the valid ones.
 */
export function readToolSelection(req: Request, alsoLists: readonly string[] = []): ToolSelection | Response {
  const url = pathAndQuery(req.url);
  const m = PATH.exec(url.pathname);
  if (!m) return fail(404, "not_found", "MCP is served at /mcp, /mcp/readonly, /mcp/x/<toolsets> and /mcp/x/<toolsets>/readonly.");
  const lists: string[] = [];
  if (m[1] !== undefined) {
    try {
      lists.push(decodeURIComponent(m[1]));
    } catch {
      return fail(400, "invalid_toolsets", "The toolsets in the path are not valid URL encoding; give names like /mcp/x/tasks,runs.");
    }
  }
  if (url.search) lists.push(...new URLSearchParams(url.search).getAll("toolsets"));
  const header = req.headers.get("x-mcp-toolsets");
  if (header !== null) lists.push(header);
  lists.push(...alsoLists);
  const readonly = flag(req.headers.get("x-mcp-readonly"));
  if (readonly === null) return fail(400, "invalid_readonly", "X-MCP-Readonly must be true or false.");
  try {
    return selectTools(lists, readonly || m[2] !== undefined);
  } catch (e) {
    if (e instanceof UnknownToolsetError) return fail(400, "unknown_toolset", e.message, { valid_toolsets: TOOLSET_NAMES });
    throw e;
  }
}
