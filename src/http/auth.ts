/**
 * The edge's part of authentication. The OAuth provider checks the bearer
 * token of /mcp requests: its own access tokens, and `tg_` tokens through
 * `resolveExternalToken` (a resolving `tg_` token's call without Origin takes
 * the lane of src/http/token-lane.ts, with the same resolution and props). This module
 * refuses what must never reach either, and builds the same challenge the
 * provider sends, for a grant that D1 refuses.
 */
import type { MiddlewareHandler } from "hono";
import { OAUTH_SCOPES } from "../domain/grants.ts";
import type { AppEnv } from "./app-env.ts";

/** RFC 9728: where a client finds out how to get a token for this origin's /mcp. */
export function resourceMetadataUrl(request: Request): string {
  return `${new URL(request.url).origin}/.well-known/oauth-protected-resource/mcp`;
}

/** Every scope the server supports, as its challenges and metadata name them. */
export const ALL_SCOPES = OAUTH_SCOPES.join(" ");

/** 401 with the provider's challenge: the resource metadata, the scopes, and why. */
export function invalidToken(request: Request, description: string): Response {
  const challenge = `Bearer realm="OAuth", resource_metadata="${resourceMetadataUrl(request)}", error="invalid_token", scope="${ALL_SCOPES}", error_description="${description}"`;
  return new Response(JSON.stringify({ error: "invalid_token", error_description: description }), {
    status: 401,
    headers: { "content-type": "application/json", "cache-control": "no-store", "www-authenticate": challenge },
  });
}

/**
 * 403 with the authorization spec's scope challenge: the access token is
 * valid but its grant does not reach this call. A host can ask the person to
 * authorize again with every scope named here (step-up).
 */
export function insufficientScope(request: Request, description: string): Response {
  const challenge = `Bearer realm="OAuth", error="insufficient_scope", scope="${ALL_SCOPES}", resource_metadata="${resourceMetadataUrl(request)}", error_description="${description}"`;
  return new Response(JSON.stringify({ error: "insufficient_scope", error_description: description }), {
    status: 403,
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
