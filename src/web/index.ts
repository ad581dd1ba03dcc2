/**
 * What the person's pages share, for every page that is added (the web
 * console builds on these):
 *
 * - Session: `currentSession(c)` → `{ personId, accountId, email, csrfToken }`
 *   or null; `requireSession()` (signed out → /signin, back here afterwards);
 *   `requireCsrf()` for signed-in POSTs, or `csrfOk(session, form.csrf)` and
 *   `sameOrigin(c)` by hand. Every signed-in form posts `csrf`.
 * - Pages: `<Layout title session>` (stylesheet, header with Sign out),
 *   `<ErrorPage>`, `<Notice>`, and `page(node, { status, headers, cookies })`,
 *   which adds the security headers (CSP without script, no framing, no cache);
 *   `redirect(location)` for post/redirect/get.
 * - Routes: `webApp(extend)` builds the pages' Hono app; `extend(web)` adds more.
 * - Return paths: `safeReturnTo(raw)` and `signInPath(returnTo)`.
 */
export { currentSession, requireSession, requireCsrf, csrfOk, sameOrigin } from "./session.ts";
export { envOf, type Session } from "./context.ts";
export { Layout, ErrorPage, Notice, SignOutForm } from "./layout.tsx";
export { page, redirect, contentSecurityPolicy } from "./render.ts";
export { safeReturnTo, signInPath } from "./return-to.ts";
export { webApp } from "./app.ts";
export type { WebEnv, WebContext } from "./context.ts";
