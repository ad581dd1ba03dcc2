/**
 * Taskgate's side of the provider's token endpoint (code exchange, refresh,
 * RFC 7009 revocation): a request that names its client ambiguously is
 * refused and a client id the provider would fetch is checked with the
 * outbound rule first (client-ids.ts), a refresh token is spent once, in D1,
 * and one that was already used ends its grant (refresh-replay.ts), and a
 * grant the provider ended by itself is ended in D1 too (revocation.ts). The
 * rest is the provider's.
 */
import { shardsOf } from "../db/shards.ts";
import type { OAuthProvider } from "@cloudflare/workers-oauth-provider";
import type { Env } from "../env.ts";
import { basicClientId, clientIdProblem, invalidClient, tokenRequestClients } from "./client-ids.ts";
import { helpersFor } from "./provider.ts";
import { endReplayedGrant, exchangeSpent, spendOrReplay, type SpentToken } from "./refresh-replay.ts";
import { credentialOf, mayHaveEnded, reflectEndedGrant } from "./revocation.ts";

export async function serveTokenEndpoint(request: Request, env: Env, ctx: ExecutionContext, origin: string, provider: OAuthProvider<Env>): Promise<Response> {
  const form = await request.clone().formData().catch(() => null);
  const authorization = request.headers.get("authorization");
  const basic = basicClientId(authorization) !== null;
  const clients = tokenRequestClients(form, authorization);
  if ("refused" in clients) return invalidClient(clients.refused, basic);
  for (const clientId of clients.ids) {
    const problem = clientIdProblem(clientId);
    if (problem) return invalidClient(problem, basic);
  }
  const refreshToken = form?.get("grant_type") === "refresh_token" ? form.get("refresh_token") : null;
  let spent: SpentToken | null = null;
  if (typeof refreshToken === "string") {
    const check = await spendOrReplay(env, refreshToken);
    if (check && "replayed" in check) return endReplayedGrant(env, helpersFor(origin, env), check.replayed);
    spent = check?.spent ?? null;
  }
  const credential = credentialOf(form);
  // A copy: the provider sets env.OAUTH_PROVIDER on what it gets, and that must not leak to another origin's request.
  const exchange = () => provider.fetch(request, { ...env }, ctx);
  const res = spent ? await exchangeSpent(env, helpersFor(origin, env), spent, exchange) : await exchange();
  if (credential && mayHaveEnded(credential, res.status)) {
    for (const { db } of shardsOf(env)) await reflectEndedGrant(db, helpersFor(origin, env), credential.value);
  }
  return res;
}
