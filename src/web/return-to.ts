/**
 * Where to send a person after sign-in: only a path of this origin. Anything
 * else (another origin, `//host`, `/\host`, a scheme, control characters) is
 * replaced by the home page, so sign-in can never be used as an open redirect.
 */
const BASE = "https://taskgate.invalid";

export function safeReturnTo(raw: unknown): string {
  if (typeof raw !== "string" || raw.length === 0 || raw.length > 4096) return "/";
  if (!raw.startsWith("/") || raw.startsWith("//") || raw.startsWith("/\\")) return "/";
  if (/[\u0000-\u001f\u007f\\]/.test(raw)) return "/";
  let url: URL;
  try {
    url = new URL(raw, BASE);
  } catch {
    return "/";
  }
  if (url.origin !== BASE) return "/";
  return url.pathname + url.search;
}

/** The sign-in page that comes back to `returnTo` afterwards. */
export function signInPath(returnTo: string): string {
  const safe = safeReturnTo(returnTo);
  return safe === "/" ? "/signin" : `/signin?return_to=${encodeURIComponent(safe)}`;
}
