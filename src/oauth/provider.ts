/**
 * The OAuth 2.1 authorization server and protected resource, from
 * @cloudflare/workers-oauth-provider. The library owns the protocol
 * (discovery, DCR, CIMD, PKCE, codes, tokens, refresh rotation, revocation,
 * audience binding); Taskgate owns sign-in, the consent page (/authorize) and
 * what a grant means.
 *
 * The canonical resource is the `/mcp` URL of the origin that serves the
 * request (a local port, the test host, workers.dev or a custom domain), so
 * one provider is built per origin and kept for the isolate. `http` is allowed
 * only on loopback hosts, as OAuth 2.1 requires; the edge sends other plain
 * http requests to https before they get here.
 */
import { getOAuthApi, OAuthProvider, type OAuthHelpers, type OAuthProviderOptions } from "@cloudflare/workers-oauth-provider";
import type { Env } from "../env.ts";
import { ACCESS_TOKEN_SECONDS, GRANT_SECONDS, OAUTH_SCOPES, READ_SCOPE } from "../domain/grants.ts";
import { CLIENT_REGISTRATION_SECONDS, REGISTRATION_BODY_MAX_BYTES, registrationProblem } from "../domain/client-registration.ts";
import { looksLikeToken, hashToken } from "../domain/tokens.ts";
import { credentialOf, resolveCredential } from "../db/principals.ts";
import { authCacheMs, mcpApi, type TokenProps } from "../http/mcp.ts";
import { canonicalOrigin, pathAndQuery } from "../http/url-text.ts";
import { webApp } from "../web/app.ts";
import { authorizeRoutes } from "./authorize.tsx";
import { onCodeOrRefresh } from "./grants.ts";

export const AUTHORIZE_PATH = "/authorize";
export const TOKEN_PATH = "/oauth/token";
export const REGISTER_PATH = "/oauth/register";

const pages = webApp(authorizeRoutes);

function options(origin: string): OAuthProviderOptions<Env> {
  return {
    apiRoute: "/mcp",
    apiHandler: mcpApi,
    defaultHandler: { fetch: (request, env, ctx) => pages.fetch(request, env, ctx) },
    authorizeEndpoint: AUTHORIZE_PATH,
    tokenEndpoint: TOKEN_PATH,
    clientRegistrationEndpoint: REGISTER_PATH,
    clientIdMetadataDocumentEnabled: true,
    scopesSupported: [...OAUTH_SCOPES],
    // Advertised (the resource metadata, the 401 challenge), not enforced: the registry refuses by scope, and a
    // write call with a read grant gets the step-up challenge (src/http/mcp.ts).
    requiredScopes: [...OAUTH_SCOPES],
    resourceMetadata: {
      resource: `${origin}/mcp`,
      authorization_servers: [origin],
      bearer_methods_supported: ["header"],
      resource_name: "Taskgate",
    },
    accessTokenTTL: ACCESS_TOKEN_SECONDS,
    refreshTokenTTL: GRANT_SECONDS,
    tokenExchangeCallback: onCodeOrRefresh,
    clientRegistrationTTL: CLIENT_REGISTRATION_SECONDS,
    /** Bounds on what a registration may hold (src/domain/client-registration.ts), after the provider's own checks. */
    async clientRegistrationCallback({ clientMetadata, request }) {
      const bytes = (await request.arrayBuffer()).byteLength;
      if (bytes > REGISTRATION_BODY_MAX_BYTES) {
        return { code: "invalid_request", status: 413, description: `A registration body is at most ${REGISTRATION_BODY_MAX_BYTES / 1024} KiB (this one has ${bytes} bytes)` };
      }
      const problem = registrationProblem(clientMetadata);
      if (problem) return { code: problem.startsWith("redirect_uris") ? "invalid_redirect_uri" : "invalid_client_metadata", description: problem };
    },
    /**
     * `tg_` tokens on the same URL: resolved like a grant (one path, one
     * cache) and bound to this resource. Nothing else is accepted from outside.
     */
    async resolveExternalToken({ token, request, env }) {
      // The edge's lane for tg_ tokens (serveTokenCall) looked this one up already and found it refused.
      if (refusedByLane.has(request)) return null;
      const props = await resolveTgToken(token, env);
      return props ? { props, audience: `${origin}/mcp` } : null;
    },
    onError({ code, status, internal }) {
      console.warn(JSON.stringify({ level: "warn", where: "oauth", code, status, category: internal.category, reason: internal.reason }));
    },
  };
}

/** A `tg_` token's props: its resolution (revocation, expiry, the agent's pause), or null when it is refused. */
async function resolveTgToken(token: string, env: Env): Promise<TokenProps | null> {
  if (!looksLikeToken(token)) return null;
  const resolution = await resolveCredential(env, credentialOf(token, await hashToken(token)), authCacheMs(env));
  return resolution.ok ? { via: "token", resolution } : null;
}

/** The provider's reading of an Authorization header. */
const BEARER = /^Bearer[\t ]+([^\s,]+)$/i;

/** Requests whose tg_ token the lane found refused: the provider answers them without a second lookup. */
const refusedByLane = new WeakSet<Request>();

/**
 * The lane for the calls of `tg_` tokens (headless agents and scripts, most
 * of the traffic): a POST to /mcp or below it, from no browser (no Origin),
 * whose token resolves. It hands mcpApi exactly what the provider would
 * (the same props from the same resolution, the helpers on `env`), without
 * the provider's routing, which parses the URL several times over and
 * normalizes the resource for every request. Anything else, a refused token
 * included, is left to the provider (null), which answers as always: its
 * 401 and challenge, its CORS, its own access tokens.
 */
export async function serveTokenCall(request: Request, env: Env, ctx: ExecutionContext, origin: string): Promise<Response | null> {
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
  // What the provider sets before it calls the handler: the helpers (made only when a tool revokes a grant) and the props.
  let helpers: OAuthHelpers | undefined;
  const apiEnv: Env = { ...env };
  Object.defineProperty(apiEnv, "OAUTH_PROVIDER", { get: () => (helpers ??= helpersFor(origin, env)), enumerable: true, configurable: true });
  const apiCtx = {
    props,
    waitUntil: (p: Promise<unknown>) => ctx.waitUntil(p),
    passThroughOnException: () => ctx.passThroughOnException(),
  } as unknown as ExecutionContext;
  return mcpApi.fetch(request, apiEnv, apiCtx);
}

const providers = new Map<string, OAuthProvider<Env>>();
const PROVIDER_LIMIT = 16;

/** The provider for this origin, made on first use (construction validates the whole configuration). */
export function providerFor(origin: string): OAuthProvider<Env> {
  let provider = providers.get(origin);
  if (!provider) {
    if (providers.size >= PROVIDER_LIMIT) providers.clear();
    provider = new OAuthProvider<Env>(options(origin));
    providers.set(origin, provider);
  }
  return provider;
}

/** The provider's helpers outside a request it dispatched (after a response, in the edge). */
export function helpersFor(origin: string, env: Env): OAuthHelpers {
  return getOAuthApi(options(origin), env);
}
