import type { Context } from "hono";
import type { Env } from "../env.ts";
import type { Session } from "./session.ts";

/** Hono's bindings and variables for the pages. */
export interface WebEnv {
  Bindings: Env;
  Variables: { session: Session | null };
}

export type WebContext = Context<WebEnv>;

/** The origin the browser sees (scheme, host, port). */
export function originOf(c: Context): string {
  return new URL(c.req.url).origin;
}

export function isHttps(c: Context): boolean {
  return new URL(c.req.url).protocol === "https:";
}
