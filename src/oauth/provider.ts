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
import { ACCESS_TOKEN_SECONDS, GRANT_SECONDS, OAUTH_SCOPES } from "../domain/grants.ts";
import { CLIENT_REGISTRATION_SECONDS, REGISTRATION_BODY_MAX_BYTES, registrationProblem } from "../domain/client-registration.ts";
import { mcpApi } from "../http/mcp.ts";
import { isRefusedByLane, resolveTgToken } from "../http/token-lane.ts";
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
      // The edge's lane for tg_ tokens (src/http/token-lane.ts) looked this one up already and found it refused.
      if (isRefusedByLane(request)) return null;
      const props = await resolveTgToken(token, env);
      return props ? { props, audience: `${origin}/mcp` } : null;
    },
    onError({ code, status, internal }) {
      console.warn(JSON.stringify({ level: "warn", where: "oauth", code, status, category: internal.category, reason: internal.reason }));
    },
  };
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
