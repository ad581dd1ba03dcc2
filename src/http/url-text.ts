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

