/**
 * /mcp behind the OAuth provider: the provider has verified the bearer token
 * (audience, expiry) and hands over its props. A `tg_` token's props already
 * hold its resolution; a grant's props name its tokens row, which resolves the
 * same way (revocation, expiry, the agent's pause). Either way the SDK's
 * handler gets one Principal.
 */
import type { Env } from "../env.ts";
import { effectiveScope, isGrantProps } from "../domain/grants.ts";
import type { Principal } from "../domain/principal.ts";
import { resolveCredential, touchIfDue, type Resolution } from "../db/principals.ts";
import { accountEnv, throughSession } from "../db/shards.ts";
import { closeReadSession, openReadSession } from "../db/read-sessions.ts";
import type { ResolvedToken } from "../db/tokens.ts";
import { serveMcp } from "../mcp/server.ts";
import { isFloorRequest, serveFloor } from "../mcp/floor.ts";
import { insufficientScope, invalidToken } from "./auth.ts";
import { requestIdOf } from "./request-id.ts";
import { readToolSelection } from "./toolsets.ts";

/** The props `resolveExternalToken` gives a `tg_` token. */
export interface TokenProps {
  via: "token";
  resolution: Extract<Resolution, { ok: true }>;
}

export function isTokenProps(value: unknown): value is TokenProps {
  return (value as TokenProps | null)?.via === "token" && (value as TokenProps).resolution?.ok === true;
}

interface ProviderContext extends ExecutionContext {
  props: unknown;
  auth?: { scope: string[] };
}

export function authCacheMs(env: Env): number {
  return Number(env.AUTH_CACHE_SECONDS ?? "5") * 1000;
}

const REFUSED = {
  unknown: "This app's access is no longer on record; connect it again.",
  revoked: "This app's access was revoked; connect it again to get a new one.",
  expired: "This app's access has expired; connect it again.",
} as const;

async function grantPrincipal(
  request: Request,
  env: Env,
  ctx: ExecutionContext,
  props: unknown,
  grantedScopes: string[],
  nowMs: number,
): Promise<{ principal: Principal; resolved: ResolvedToken; shard: string } | Response> {
  if (!isGrantProps(props)) return invalidToken(request, "The access token carries no Taskgate grant.");
  const r = await resolveCredential(env, { id: props.tokenId, account: props.accountId }, authCacheMs(env), nowMs);
  if (!r.ok) {
    // Revoked in D1 (the admin CLI) but still live in KV: finish the revocation there too.
    const grant = r.resolved?.grant;
    if (r.reason === "revoked" && grant?.id && env.OAUTH_PROVIDER) {
      ctx.waitUntil(env.OAUTH_PROVIDER.revokeGrant(grant.id, grant.personId).catch((e) => console.error(JSON.stringify({ level: "warn", where: "revokeGrant", error: String(e) }))));
    }
    return invalidToken(request, REFUSED[r.reason]);
  }
  const p = r.principal;
  if (p.accountId !== props.accountId || p.kind !== props.kind || r.resolved.grant?.personId !== props.personId) {
    return invalidToken(request, "The access token does not match its grant.");
  }
  const scope = effectiveScope(p.scope, grantedScopes);
  return { principal: scope === p.scope ? p : { ...p, scope }, resolved: r.resolved, shard: r.shard };
}

const STEP_UP = "This call changes data and this app's access is read-only; authorize it again with tasks:write to make it.";

/** /mcp as the provider calls it: the props (and the scopes granted) it verified, on the request's context. */
export const mcpApi = {
  fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
    const c = ctx as ProviderContext;
    return serveApi(request, env, ctx, c.props, c.auth?.scope ?? []);
  },
};

/**
 * /mcp for a verified bearer: its props (a `tg_` token's resolution, or a
 * grant's) and the scopes granted with it, given explicitly by whichever
 * path verified it (the provider, or the edge's lane for `tg_` tokens).
 */
export async function serveApi(request: Request, env: Env, ctx: ExecutionContext, props: unknown, grantedScopes: string[]): Promise<Response> {
  // The connection's toolsets (URL, query, header) narrowed by those the person chose for the grant.
  const grantToolsets = isGrantProps(props) && props.toolsets?.length ? [props.toolsets.join(",")] : [];
  // The benchmark's floor (src/mcp/floor.ts) only where BENCH_FLOOR=1; elsewhere its path is refused like any unknown one.
  const floor = isFloorRequest(request, env);
  const toolsets = floor ? undefined : readToolSelection(request, grantToolsets);
  if (toolsets instanceof Response) return toolsets;
  const nowMs = Date.now();
  let principal: Principal;
  let resolved: ResolvedToken;
  let shard: string;
  const oauth = !isTokenProps(props);
  if (!oauth) {
    ({ principal, resolved, shard } = props.resolution);
  } else {
    const g = await grantPrincipal(request, env, ctx, props, grantedScopes, nowMs);
    if (g instanceof Response) return g;
    ({ principal, resolved, shard } = g);
  }
  // From here on the account's database is env.DB, for the registry, the tools and their SQL:
  // read through the caller's session (src/db/read-sessions.ts), from no state older than its latest write.
  const own = accountEnv(env, shard);
  touchIfDue(own.DB, resolved, nowMs, (p) => ctx.waitUntil(p));
  const reads = openReadSession(own.DB, resolved.reads);
  const scope = { env: throughSession(own, reads.db), principal, requestId: requestIdOf(request), toolsets, waitUntil: (p: Promise<unknown>) => ctx.waitUntil(p) };
  // An app can ask the person for more (step-up); a tg_ token's scope is fixed, and its call gets the registry's refusal.
  const onWriteScopeMissing = oauth && principal.scope === "read" ? () => insufficientScope(request, STEP_UP) : undefined;
  const res = await (floor ? serveFloor(request, scope) : serveMcp(request, scope, { onWriteScopeMissing }));
  // A streamed legacy answer is one SSE message: the call has run once it has been read whole.
  const whole = res.headers.get("content-type")?.startsWith("text/event-stream") && !res.headers.has("content-length") ? new Response(await res.arrayBuffer(), res) : res;
  closeReadSession(reads, (p) => ctx.waitUntil(p));
  return whole;
}
