/**
 * A request's URL read as text. The runtime gives it serialized (scheme and
 * host in lower case, no default port, path percent-encoded), so its parts
 * are found by position: hot paths that need only the path need not parse it.
 */

/** The path and query (with its "?", or "") of an absolute URL, as `new URL(href)` gives them. */
export function pathAndQuery(href: string): { pathname: string; search: string } {
  const start = href.indexOf("/", href.indexOf("//") + 2);
  if (start < 0) return { pathname: "/", search: "" };
  const q = href.indexOf("?", start);
  const hash = href.indexOf("#", start);
  const end = hash < 0 ? href.length : hash;
  if (q < 0 || q > end) return { pathname: href.slice(start, end), search: "" };
  return { pathname: href.slice(start, q), search: q + 1 === end ? "" : href.slice(q, end) };
}

/**
 * The origin of a request's URL as an OAuth identifier, or null when it may
 * not be one (plain http off loopback). `href` is a request's URL as the
 * runtime gives it, already serialized (lower-case scheme and host, no
 * default port), so the origin is its text up to the path.
 */
export function canonicalOrigin(href: string): string | null {
  const https = href.startsWith("https://");
  if (!https && !href.startsWith("http://")) return null;
  const hostStart = https ? 8 : 7;
  const pathStart = href.indexOf("/", hostStart);
  const origin = pathStart < 0 ? href : href.slice(0, pathStart);
  if (https) return origin;
  const host = origin.slice(hostStart);
  const hostname = host.startsWith("[") ? host.slice(0, host.indexOf("]") + 1) : host.split(":")[0];
  const loopback = hostname === "localhost" || hostname === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
  return loopback ? origin : null;
}
