/**
 * The lane for the calls of `tg_` tokens (headless agents and scripts, most
 * of the traffic): a POST to /mcp or below it, from no browser (no Origin),
 * whose token resolves. It hands /mcp's handler exactly what the OAuth
 * provider would (the same props from the same resolution, the helpers on
 * `env`), without the provider's routing, which parses the URL several times
 * over and normalizes the resource for every request. Anything else, a
 * refused token included, is left to the provider (null), which answers as
 * always: its 401 and challenge, its CORS, its own access tokens.
 */
import type { OAuthHelpers } from "@cloudflare/workers-oauth-provider";
import type { Env } from "../env.ts";
import { looksLikeToken, hashToken } from "../domain/tokens.ts";
import { credentialOf, resolveCredential } from "../db/principals.ts";
import { authCacheMs, serveApi, type TokenProps } from "./mcp.ts";
import { pathAndQuery } from "./url-text.ts";

/** A `tg_` token's props: its resolution (revocation, expiry, the agent's pause), or null when it is refused. */
export async function resolveTgToken(token: string, env: Env): Promise<TokenProps | null> {
  if (!looksLikeToken(token)) return null;
  const resolution = await resolveCredential(env, credentialOf(token, await hashToken(token)), authCacheMs(env));
  return resolution.ok ? { via: "token", resolution } : null;
}

/** The provider's reading of an Authorization header. */
const BEARER = /^Bearer[\t ]+([^\s,]+)$/i;

/** Requests whose tg_ token the lane found refused: the provider answers them without a second lookup. */
const refusedByLane = new WeakSet<Request>();

/** Whether the lane already looked this request's tg_ token up and found it refused. */
export function isRefusedByLane(request: Request): boolean {
  return refusedByLane.has(request);
}

/**
 * Serves the call of a `tg_` token that resolves, with the request's own
 * ExecutionContext; null for anything the provider answers instead.
 * `helpers` makes the provider's helpers for this origin (only when a tool
 * revokes a grant): the edge is given them by the composition root.
 */
export async function serveTokenCall(request: Request, env: Env, ctx: ExecutionContext, helpers: () => OAuthHelpers): Promise<Response | null> {
  if (request.method !== "POST" || request.headers.has("origin")) return null;
  // The path as the provider matches its API route: undecoded, as URL parsing gives it.
  const { pathname } = pathAndQuery(request.url);
  if (pathname !== "/mcp" && !pathname.startsWith("/mcp/")) return null;
  const bearer = BEARER.exec(request.headers.get("authorization") ?? "");
  if (!bearer || !looksLikeToken(bearer[1])) return null;
  const props = await resolveTgToken(bearer[1], env);
  if (!props) {
    refusedByLane.add(request);
    return null;
  }
  // What the provider sets before it calls the handler: the helpers (made only when a tool revokes a grant), on a copy of env.
  let made: OAuthHelpers | undefined;
  const apiEnv: Env = { ...env };
  Object.defineProperty(apiEnv, "OAUTH_PROVIDER", { get: () => (made ??= helpers()), enumerable: true, configurable: true });
  return serveApi(request, apiEnv, ctx, props, []);
}
