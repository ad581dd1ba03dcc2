/**
 * A grant over its life: completed at consent (the provider's grant plus its
 * tokens row), activated when the code is exchanged, and checked at every
 * refresh, so a revocation recorded only in D1 (the admin CLI) ends the
 * grant in the provider too: `invalid_grant` from this callback revokes it.
 */
import { envOfAccount } from "../db/shards.ts";
import { OAuthError, type AuthRequest, type OAuthHelpers, type TokenExchangeCallbackOptions } from "@cloudflare/workers-oauth-provider";
import type { Env } from "../env.ts";
import { GRANT_SECONDS, isGrantProps, oauthScopesFor, PENDING_GRANT_SECONDS, type GrantProps } from "../domain/grants.ts";
import { ID_PREFIX, newId } from "../domain/ids.ts";
import type { TokenKind, TokenScope } from "../domain/principal.ts";
import { activateGrant, grantIsLive, grantsToReplace, recordGrantStatements } from "../db/grants.ts";
import { forgetResolvedTokens } from "../db/principals.ts";
import { isFenced } from "../db/move-account.ts";

const MOVING = "This account is moving to another database; try again in a minute or two.";
const WITHDRAWN = "This authorization was revoked or has expired; connect the app again.";

export async function onCodeOrRefresh(o: TokenExchangeCallbackOptions<Env>): Promise<void> {
  const props = o.props as GrantProps;
  if (!isGrantProps(props)) throw new OAuthError("invalid_grant", { description: WITHDRAWN });
  const nowMs = Date.now();
  const now = new Date(nowMs).toISOString();
  const { DB: db } = await envOfAccount(o.env, props.accountId);
  if (o.grantType === "authorization_code") {
    const expiresAt = new Date(nowMs + GRANT_SECONDS * 1000).toISOString();
    let active: boolean;
    try {
      active = await activateGrant(db, props.tokenId, o.grantId, now, expiresAt);
    } catch (e) {
      // The databases' fence: the account is moving, and the grant's row cannot be written until it has moved.
      if (isFenced(e)) throw new OAuthError("temporarily_unavailable", { description: MOVING, statusCode: 503, headers: { "retry-after": "60" } });
      throw e;
    }
    if (!active) throw new OAuthError("invalid_grant", { description: WITHDRAWN });
  } else if (o.grantType === "refresh_token") {
    if (!(await grantIsLive(db, props.tokenId, o.grantId, now))) throw new OAuthError("invalid_grant", { description: WITHDRAWN });
  }
}

export interface ConsentChoice {
  kind: TokenKind;
  agent: string | null;
  scope: TokenScope;
  /** The toolsets the app sees (absent: every tool the scope allows). */
  toolsets?: string[];
  /** An agent connection's own policy rules as stored (a preset chosen at consent); absent: none. */
  policy?: string;
}

/**
 * Completes the approved authorization for the signed-in person: the
 * provider's grant (props = the choice and its tokens row), then, in one
 * batch, the row itself and the end of the person's earlier grant for this
 * client and redirect URI. Returns where to send the browser.
 */
export async function completeGrant(
  env: Env & { OAUTH_PROVIDER: OAuthHelpers },
  person: { personId: string; accountId: string },
  request: AuthRequest,
  clientName: string,
  choice: ConsentChoice,
): Promise<string> {
  const oauth = env.OAUTH_PROVIDER;
  const tokenId = newId(ID_PREFIX.token);
  const props: GrantProps = {
    via: "oauth",
    v: 1,
    tokenId,
    accountId: person.accountId,
    personId: person.personId,
    kind: choice.kind,
    agent: choice.agent,
    scope: choice.scope,
    ...(choice.toolsets?.length ? { toolsets: choice.toolsets } : {}),
  };
  const replaced = await grantsToReplace(env.DB, person.accountId, person.personId, request.clientId, request.redirectUri);
  const { redirectTo } = await oauth.completeAuthorization({
    request,
    userId: person.personId,
    metadata: { tokenId },
    scope: oauthScopesFor(choice.scope),
    props,
    revokeExistingGrants: false,
  });
  const nowMs = Date.now();
  await env.DB.batch(
    recordGrantStatements(
      env.DB,
      {
        tokenId,
        accountId: person.accountId,
        personId: person.personId,
        kind: choice.kind,
        scope: choice.scope,
        agent: choice.agent,
        clientId: request.clientId,
        clientName,
        redirectUri: request.redirectUri,
        policy: choice.kind === "agent" ? (choice.policy ?? null) : null,
        now: new Date(nowMs).toISOString(),
        pendingUntil: new Date(nowMs + PENDING_GRANT_SECONDS * 1000).toISOString(),
      },
      replaced.map((r) => r.id),
    ),
  );
  if (replaced.length) {
    forgetResolvedTokens();
    await Promise.allSettled(replaced.filter((r) => r.grant_id).map((r) => oauth.revokeGrant(r.grant_id as string, person.personId)));
  }
  return redirectTo;
}
