/**
 * The one place every outbound request of the OAuth library passes: its
 * fetches of Client ID Metadata Documents and of the `jwks_uri` such a
 * document names. The library (v1.2.x) calls the global `fetch` and offers no
 * hook for it, so the Worker's `fetch` is wrapped once, at startup, and a
 * request that carries the library's User-Agent is held to the outbound rule
 * (src/domain/outbound-url.ts, public https hosts only) whatever client id,
 * parse or spelling led to it, and again at every redirect it would follow
 * (the guard follows them itself). Every other request passes untouched.
 * The checks before the library (client-ids.ts) give a clear answer; this one
 * makes the rule hold even where they would miss.
 */
import { outboundProblem, PUBLIC_ONLY } from "../domain/outbound-url.ts";

/** The start of the User-Agent the library sends with each of its outbound requests. */
export const LIBRARY_USER_AGENT = /^workers-oauth-provider\//;

/** Redirects the guard follows for one library request, each hop checked. */
const MAX_HOPS = 5;

const GUARDED = Symbol.for("taskgate.libraryFetchGuard");

/** Why the library may not fetch this URL, or null. */
function refusal(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "is not a URL";
  }
  return outboundProblem(parsed, PUBLIC_ONLY);
}

/** `next` with the outbound rule applied to the OAuth library's requests. */
export function guardLibraryFetch(next: typeof fetch): typeof fetch {
  const guarded = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    // Read without building a Request, which would take over the body of every other request the Worker sends.
    const headers = init?.headers !== undefined ? new Headers(init.headers) : input instanceof Request ? input.headers : null;
    if (!LIBRARY_USER_AGENT.test(headers?.get("user-agent") ?? "")) return next(input, init);
    let hop = new Request(input, init);
    for (let hops = 0; ; hops++) {
      const problem = refusal(hop.url);
      if (problem) throw new TypeError(`not fetched: ${hop.url.slice(0, 200)} ${problem}`);
      const res = await next(new Request(hop, { redirect: "manual" }));
      const location = res.status >= 300 && res.status < 400 ? res.headers.get("location") : null;
      if (!location) return res;
      if (hops >= MAX_HOPS) throw new TypeError(`not fetched: more than ${MAX_HOPS} redirects`);
      await res.body?.cancel();
      hop = new Request(new URL(location, hop.url).toString(), { method: "GET", headers: hop.headers, signal: hop.signal, redirect: "manual" });
    }
  };
  Object.defineProperty(guarded, GUARDED, { value: true });
  return guarded as typeof fetch;
}

/** Wraps the Worker's global `fetch` once (a second call changes nothing). */
export function installLibraryFetchGuard(): void {
  if ((globalThis.fetch as unknown as Record<symbol, unknown>)[GUARDED]) return;
  globalThis.fetch = guardLibraryFetch(globalThis.fetch.bind(globalThis));
}
