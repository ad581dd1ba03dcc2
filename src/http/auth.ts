/**
 * The edge's part of authentication. The OAuth provider checks the bearer
 * token of /mcp requests: its own access tokens, and `tg_` tokens through
 * `resolveExternalToken` (a resolving `tg_` token's call without Origin takes
 * serveTokenCall's lane, with the same resolution and props). This module
 * refuses what must never reach either, and builds the same challenge the
 * provider sends, for a grant that D1 refuses.
 */
import type { MiddlewareHandler } from "hono";
import { READ_SCOPE } from "../domain/grants.ts";
import type { AppEnv } from "./app-env.ts";

/** RFC 9728: where a client finds out how to get a token for this origin's /mcp. */
export function resourceMetadataUrl(request: Request): string {
  return `${new URL(request.url).origin}/.well-known/oauth-protected-resource/mcp`;
}

/** 401 with the provider's challenge: the resource metadata, the required scope, and why. */
export function invalidToken(request: Request, description: string): Response {
  const challenge = `Bearer realm="OAuth", resource_metadata="${resourceMetadataUrl(request)}", error="invalid_token", scope="${READ_SCOPE}", error_description="${description}"`;
  return new Response(JSON.stringify({ error: "invalid_token", error_description: description }), {
    status: 401,
    headers: { "content-type": "application/json", "cache-control": "no-store", "www-authenticate": challenge },
  });
}

/** A token in the URL ends up in logs and histories: refused, even a valid one, before anything looks it up. */
export function refuseQueryTokens(): MiddlewareHandler<AppEnv> {
  return async function refuseQueryTokens(c, next) {
    // Most calls have no query at all: nothing to parse then.
    if (!c.req.url.includes("?")) return next();
    const url = new URL(c.req.url);
    for (const name of ["token", "access_token", "api_key", "key"]) {
      if (url.searchParams.has(name)) {
        return new Response(
          JSON.stringify({ error: "invalid_request", error_description: "Tokens are not accepted in the query string; send them as an Authorization: Bearer header." }),
          {
            status: 401,
            headers: {
              "content-type": "application/json",
              "www-authenticate": `Bearer realm="OAuth", resource_metadata="${resourceMetadataUrl(c.req.raw)}", error="invalid_request"`,
            },
          },
        );
      }
    }
    await next();
  };
}
