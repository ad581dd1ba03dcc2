import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./app-env.ts";
import { canonicalOrigin } from "./url-text.ts";

function allowedOrigins(raw: string | undefined): Set<string> {
  return new Set((raw ?? "").split(",").map((o) => o.trim()).filter(Boolean));
}

/**
 * Browsers send Origin; a page on a foreign origin must not drive a user's
 * MCP session (DNS rebinding, drive-by calls). Requests without Origin
 * (desktop hosts, CLIs, servers) pass, and so do pages of the server's own
 * origin: the request's, when it may be an OAuth origin (https, which only
 * reaches the Worker on its own hosts, or loopback http). A rebound name
 * (http://evil.example:8787 pointing at a local server) is neither, so it is
 * refused like any foreign origin. Listed origins also get CORS headers.
 */
export function originCheck(): MiddlewareHandler<AppEnv> {
  return async function originCheck(c, next) {
    const origin = c.req.header("origin");
    if (!origin || origin === canonicalOrigin(c.req.url)) return next();
    if (!allowedOrigins(c.env.ALLOWED_ORIGINS).has(origin)) {
      return c.json({ error: "forbidden_origin", error_description: `Origin ${origin} may not call this server; add it to ALLOWED_ORIGINS.` }, 403);
    }
    const cors = {
      "access-control-allow-origin": origin,
      "access-control-allow-headers": "authorization, content-type, mcp-protocol-version, mcp-method, mcp-name, mcp-session-id, last-event-id",
      "access-control-allow-methods": "POST, OPTIONS",
      "access-control-expose-headers": "mcp-session-id, mcp-protocol-version, www-authenticate, server-timing, x-request-id",
      vary: "Origin",
    };
    if (c.req.method === "OPTIONS") return new Response(null, { status: 204, headers: cors });
    await next();
    for (const [k, v] of Object.entries(cors)) c.res.headers.set(k, v);
  };
}
