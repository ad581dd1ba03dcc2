/**
 * Preloaded (`node --import`) into the conformance suite's process: every
 * HTTP request it makes to CONFORMANCE_ORIGIN carries
 * `Authorization: Bearer $CONFORMANCE_TOKEN`, as a host holding a token sends
 * it. The suite has no option for a token; this sets undici's global
 * dispatcher, which both Node's fetch (the SDK client's transport) and the
 * suite's own `undici.request` (the DNS-rebinding probe) go through. A
 * request that already names its own Authorization keeps it. A request to any
 * other origin is refused and named on stderr (REFUSED_MARK): the suite runs
 * against the local server only, and a run that reaches past it shows up
 * instead of passing quietly.
 */
import { createRequire } from "node:module";
import type { Dispatcher } from "undici";

/** The start of the line on stderr for each request to another origin. */
export const REFUSED_MARK = "conformance-auth: refused a request to";

type Headers = Dispatcher.DispatchOptions["headers"];

function withToken(headers: Headers, token: string): Headers {
  const value = `Bearer ${token}`;
  if (headers == null) return { authorization: value };
  if (Array.isArray(headers)) {
    const names = headers.filter((_, i) => i % 2 === 0).map((n) => String(n).toLowerCase());
    return names.includes("authorization") ? headers : [...headers, "authorization", value];
  }
  if (Symbol.iterator in headers) throw new Error("conformance-auth: headers given as an iterable are not handled");
  const named = Object.keys(headers).some((k) => k.toLowerCase() === "authorization");
  return named ? headers : { ...headers, authorization: value };
}

function install(origin: string, token: string): void {
  // The suite's own undici: its global dispatcher is shared with Node's fetch through a well-known symbol.
  const suite = createRequire(import.meta.url).resolve("@modelcontextprotocol/conformance/package.json");
  const { Agent, setGlobalDispatcher } = createRequire(suite)("undici") as typeof import("undici");
  setGlobalDispatcher(
    new Agent().compose((dispatch) => (opts, handler) => {
      const to = typeof opts.origin === "string" ? opts.origin : opts.origin?.origin;
      if (to !== origin) {
        console.error(`${REFUSED_MARK} ${to}`);
        throw new Error(`${REFUSED_MARK} ${to}: only ${origin} may be reached`);
      }
      return dispatch({ ...opts, headers: withToken(opts.headers, token) }, handler);
    }),
  );
}

// Only as the suite's preload (the e2e script imports REFUSED_MARK and must stay untouched).
const { CONFORMANCE_ORIGIN, CONFORMANCE_TOKEN } = process.env;
if (CONFORMANCE_ORIGIN && CONFORMANCE_TOKEN) install(CONFORMANCE_ORIGIN, CONFORMANCE_TOKEN);
