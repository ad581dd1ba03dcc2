/**
 * Every page goes out through `page()`: HTML with the same security headers —
 * a Content-Security-Policy without any script and with `frame-ancestors
 * 'none'`, no framing, no sniffing, no caching, no referrer to other origins.
 * The one exception is Settings, which loads the push script of this origin
 * (`scripts`: script-src and worker-src 'self', never inline).
 */
import type { Child } from "hono/jsx";

/**
 * `formTargets`: origins a form on this page may end up at besides this one.
 * The consent form redirects to the client's validated redirect URI, and
 * browsers apply `form-action` to that redirect too.
 */
export function contentSecurityPolicy(formTargets: string[] = [], scripts = false): string {
  const targets = formTargets.map((t) => ` ${t}`).join("");
  return [
    "default-src 'none'",
    ...(scripts ? ["script-src 'self'", "worker-src 'self'"] : []),
    "style-src 'self'",
    "img-src 'self'",
    "manifest-src 'self'",
    `form-action 'self'${targets}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join("; ");
}

export interface PageOptions {
  status?: number;
  /** Headers to send along (the consent helpers' cookies, Retry-After…); security headers win. */
  headers?: Headers | Record<string, string>;
  /** Extra Set-Cookie values. */
  cookies?: (string | null | undefined)[];
  formTargets?: string[];
  /** The page loads a script of this origin (Settings' push script). */
  scripts?: boolean;
}

export async function page(node: Child, o: PageOptions = {}): Promise<Response> {
  const headers = new Headers();
  const given = o.headers instanceof Headers ? o.headers : new Headers(o.headers ?? {});
  for (const [k, v] of given) headers.append(k, v);
  for (const c of o.cookies ?? []) if (c) headers.append("set-cookie", c);
  headers.set("content-type", "text/html; charset=utf-8");
  headers.set("content-security-policy", contentSecurityPolicy(o.formTargets, o.scripts));
  headers.set("x-frame-options", "DENY");
  headers.set("x-content-type-options", "nosniff");
  headers.set("referrer-policy", "same-origin");
  headers.set("cache-control", "no-store");
  const resolved = (await node) as { toString(): string | Promise<string> };
  const html = "<!doctype html>" + (await resolved.toString());
  return new Response(html, { status: o.status ?? 200, headers });
}

/** A redirect after a form post (303) or to another page (302), with cookies. */
export function redirect(location: string, o: { status?: 302 | 303; cookies?: (string | null | undefined)[]; headers?: Headers } = {}): Response {
  const headers = new Headers();
  for (const [k, v] of o.headers ?? new Headers()) headers.append(k, v);
  for (const c of o.cookies ?? []) if (c) headers.append("set-cookie", c);
  headers.set("location", location);
  headers.set("cache-control", "no-store");
  return new Response(null, { status: o.status ?? 303, headers });
}
