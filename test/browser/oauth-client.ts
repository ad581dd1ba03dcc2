/**
 * The client side of an OAuth authorization, by hand (the end-to-end script
 * uses the SDKs' own): discovery, dynamic client registration, an
 * authorization URL with PKCE S256 and state, and the code exchange.
 */
import { createHash, randomBytes } from "node:crypto";

export interface ServerMetadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  registration_endpoint: string;
  scopes_supported?: string[];
}

export async function json<T>(res: Response, what: string): Promise<T> {
  const text = await res.text();
  if (!res.ok) throw new Error(`${what}: HTTP ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

export async function discover(base: string): Promise<{ as: ServerMetadata; resource: string; scopes: string[] }> {
  const prm = await json<{ resource: string; authorization_servers: string[]; scopes_supported?: string[] }>(
    await fetch(`${base}/.well-known/oauth-protected-resource/mcp`),
    "protected-resource metadata",
  );
  const as = await json<ServerMetadata>(await fetch(new URL("/.well-known/oauth-authorization-server", prm.authorization_servers[0])), "authorization-server metadata");
  return { as, resource: prm.resource, scopes: prm.scopes_supported ?? as.scopes_supported ?? [] };
}

export async function register(as: ServerMetadata, clientName: string, redirectUri: string): Promise<string> {
  const res = await fetch(as.registration_endpoint, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      client_name: clientName,
      redirect_uris: [redirectUri],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    }),
  });
  return (await json<{ client_id: string }>(res, "dynamic client registration")).client_id;
}

export interface Authorization {
  url: string;
  state: string;
  verifier: string;
}

export function authorizationUrl(as: ServerMetadata, o: { clientId: string; redirectUri: string; resource: string; scope: string }): Authorization {
  const verifier = randomBytes(32).toString("base64url");
  const state = randomBytes(16).toString("base64url");
  const url = new URL(as.authorization_endpoint);
  url.search = new URLSearchParams({
    response_type: "code",
    client_id: o.clientId,
    redirect_uri: o.redirectUri,
    scope: o.scope,
    state,
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
    resource: o.resource,
  }).toString();
  return { url: url.href, state, verifier };
}

export interface Tokens {
  access_token: string;
  refresh_token?: string;
  token_type: string;
  expires_in?: number;
  scope?: string;
}

export async function exchange(as: ServerMetadata, o: { clientId: string; redirectUri: string; resource: string; code: string; verifier: string }): Promise<Tokens> {
  const res = await fetch(as.token_endpoint, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code: o.code,
      redirect_uri: o.redirectUri,
      client_id: o.clientId,
      code_verifier: o.verifier,
      resource: o.resource,
    }),
  });
  return json<Tokens>(res, "code exchange");
}
