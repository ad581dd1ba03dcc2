/**
 * Where to send a person after sign-in or a console form: only a path of this
 * origin. This is the one place that decides it; every redirect to a value
 * that came from a request goes through `safeReturnTo`.
 *
 * The value is resolved the way a browser resolves a Location header (dot
 * segments collapsed, percent-encoded dots included), and the *result* is
 * checked: it must stay on a fixed dummy origin, and its path, percent-decoded
 * too, must neither start with `//` or `/\` (a browser reads that as another
 * host) nor hold a refused character. Anything else — another origin, a
 * scheme, userinfo, a backslash (raw or `%5C`), a control or whitespace
 * character, a value over 2,000 characters — gives the home page, so sign-in
 * can never be used as an open redirect.
 */
const BASE = "https://taskgate.invalid";
const FALLBACK = "/";
export const RETURN_TO_MAX = 2000;

/** Control characters (C0, DEL, C1), any whitespace, and backslashes raw or percent-encoded. */
const REFUSED = /[\u0000-\u001f\u007f-\u009f\s\\]|%5c/i;

/** A path a browser would read as another host: `//host` or `/\host`. */
function leavesOrigin(pathname: string): boolean {
  return /^[/\\][/\\]/.test(pathname);
}

function decoded(pathname: string): string | null {
  try {
    return decodeURIComponent(pathname);
  } catch {
    return null;
  }
}

/** The same-origin path `raw` leads to, or null if it leads anywhere else (or is not a plain path). */
function localPath(raw: string): string | null {
  if (raw.length === 0 || raw.length > RETURN_TO_MAX || !raw.startsWith("/") || REFUSED.test(raw)) return null;
  let url: URL;
  try {
    url = new URL(raw, BASE);
  } catch {
    return null;
  }
  if (url.origin !== BASE || url.username || url.password) return null;
  const pathDecoded = decoded(url.pathname);
  if (pathDecoded === null || leavesOrigin(url.pathname) || leavesOrigin(pathDecoded) || REFUSED.test(pathDecoded)) return null;
  const path = url.pathname + url.search;
  if (path.length > RETURN_TO_MAX) return null;
  // What the browser will make of the answer must be the answer itself, on this origin.
  const again = new URL(path, BASE);
  return again.origin === BASE && again.pathname + again.search === path ? path : null;
}

export function safeReturnTo(raw: unknown): string {
  return typeof raw === "string" ? (localPath(raw) ?? FALLBACK) : FALLBACK;
}

/** The sign-in page that comes back to `returnTo` afterwards. */
export function signInPath(returnTo: string): string {
  const safe = safeReturnTo(returnTo);
  return safe === FALLBACK ? "/signin" : `/signin?return_to=${encodeURIComponent(safe)}`;
}
