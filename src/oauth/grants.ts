/** What a grant means over its life: recorded at consent, activated at the code exchange, checked at every refresh. */
import { OAuthError, type TokenExchangeCallbackOptions, type TokenExchangeCallbackResult } from "@cloudflare/workers-oauth-provider";
import type { Env } from "../env.ts";

export async function onCodeOrRefresh(_o: TokenExchangeCallbackOptions<Env>): Promise<TokenExchangeCallbackResult | void> {
  void OAuthError;
}
