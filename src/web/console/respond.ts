/**
 * The principal a signed-in person acts with in the console, and the call
 * scope that hands it to the registry.
 */
import type { Principal } from "../../domain/principal.ts";
import type { CallScope } from "../../mcp/registry.ts";
import { requestIdOf } from "../../http/request-id.ts";
import { envOf, type Session, type WebContext } from "../context.ts";

/** The token-id prefix that marks the web console's calls in activity rows. */
export const WEB_TOKEN_PREFIX = "web_";

/**
 * The person acting through the web: kind human, scope write, on their own
 * account. Its token id names the signed-in person (never a session secret),
 * so every activity row says the call came from the web, and by whom.
 */
export function webPrincipal(s: Session): Principal {
  return {
    tokenId: `${WEB_TOKEN_PREFIX}${s.personId}`,
    accountId: s.accountId,
    kind: "human",
    scope: "write",
    agentId: null,
    agentName: null,
    paused: false,
    label: `web console (${s.email})`,
    expiresAt: null,
    ...(s.moving ? { moving: true } : {}),
    person: { id: s.personId, name: s.name },
  };
}

export function callScope(c: WebContext, s: Session): CallScope {
  return {
    env: envOf(c),
    principal: webPrincipal(s),
    requestId: requestIdOf(c.req.raw),
    waitUntil: (p: Promise<unknown>) => c.executionCtx.waitUntil(p),
  };
}
