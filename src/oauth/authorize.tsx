/** GET/POST /authorize: sign-in, consent, and completing the grant. */
import type { Hono } from "hono";
import type { WebEnv } from "../web/context.ts";

export function authorizeRoutes(_web: Hono<WebEnv>): void {}
