import type { Env } from "../env.ts";
import type { Principal } from "../domain/principal.ts";

/** Hono's typed bindings and context variables for this app. */
export interface AppEnv {
  Bindings: Env;
  Variables: { principal: Principal; requestId: string };
}
