/**
 * How a call's scope reaches the SDK's handlers: serveMcp puts it in the
 * SDK's `authInfo.extra`, which the SDK types as a bag of unknowns, and the
 * handlers read it back here. This is the one place that says what `extra`
 * holds.
 */
import type { AuthInfo, RequestId } from "@modelcontextprotocol/server";
import type { CallScope } from "./engine.ts";

/** `arguments` of tools/call messages that are not objects, by JSON-RPC id (see serveMcp). */
export type SetAside = Map<RequestId, unknown>;

/** What `authInfo.extra` holds for a Taskgate call. */
interface CallExtra {
  scope: CallScope;
  setAsideArguments?: SetAside;
}

/** The SDK's authInfo for a call of this scope. */
export function authInfoFor(scope: CallScope, setAsideArguments?: SetAside): AuthInfo {
  const extra: CallExtra = { scope, setAsideArguments };
  return { token: scope.principal.tokenId, clientId: scope.principal.tokenId, scopes: [scope.principal.scope], extra: { ...extra } };
}

function extraOf(authInfo: AuthInfo | undefined): Partial<CallExtra> {
  return (authInfo?.extra ?? {}) as Partial<CallExtra>;
}

/** The call's scope; a request that reached the SDK without one is a bug. */
export function callScopeOf(authInfo: AuthInfo | undefined): CallScope {
  const scope = extraOf(authInfo).scope;
  if (!scope) throw new Error("MCP request without an authenticated principal");
  return scope;
}

/** The non-object `arguments` serveMcp set aside for this request, if any. */
export function setAsideOf(authInfo: AuthInfo | undefined): SetAside | undefined {
  return extraOf(authInfo).setAsideArguments;
}
