/**
 * The person's pages, server-rendered with hono/jsx and usable without
 * JavaScript: sign-in, password setup, sign-out, the web console (src/web/console), the stylesheet.
 * The consent step (/authorize) is added by src/oauth. A request that fails is
 * answered with an error page (or JSON for API clients), never a stack trace.
 */
import { Hono } from "hono";
import type { WebEnv } from "./context.ts";
import { errorResponse, notFoundResponse } from "./errors.tsx";
import { consoleRoutes } from "./console/routes.ts";
import { setupRoutes } from "./setup.tsx";
import { signInRoutes } from "./signin.tsx";
import { closeReads } from "./session.ts";
import { STYLESHEET_PATH, stylesheetResponse } from "./style.ts";
import { ICON_PATH, iconResponse, MANIFEST_PATH, manifestResponse, PUSH_SCRIPT_PATH, pushScriptResponse, SERVICE_WORKER_PATH, serviceWorkerResponse } from "./pwa.ts";

export function webApp(extend?: (web: Hono<WebEnv>) => void): Hono<WebEnv> {
  const web = new Hono<WebEnv>();
  // A signed-in request's D1 session is closed after its response (src/web/session.ts).
  web.use("*", closeReads());
  web.get(STYLESHEET_PATH, () => stylesheetResponse());
  web.get(MANIFEST_PATH, () => manifestResponse());
  web.get(ICON_PATH, () => iconResponse());
  web.get(SERVICE_WORKER_PATH, () => serviceWorkerResponse());
  web.get(PUSH_SCRIPT_PATH, () => pushScriptResponse());
  signInRoutes(web);
  setupRoutes(web);
  consoleRoutes(web);
  extend?.(web);
  web.notFound((c) => notFoundResponse(c));
  web.onError((err, c) => errorResponse(c, err));
  return web;
}
