/**
 * The request id of the edge, for handlers that run behind the OAuth provider
 * (it hands them the same Request object, not the edge's Hono context). Keyed
 * weakly by the request, so nothing outlives it.
 */
const ids = new WeakMap<Request, string>();

export function tagRequest(request: Request, id: string): void {
  ids.set(request, id);
}

export function requestIdOf(request: Request): string {
  return ids.get(request) ?? "unknown";
}
