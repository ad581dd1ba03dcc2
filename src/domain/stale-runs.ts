import type { Env } from "../env.ts";

/** Minutes without a run event after which a running run counts as stale (STALE_RUN_MINUTES, default 15). */
export function staleRunMinutes(env: Pick<Env, "STALE_RUN_MINUTES">): number {
  const n = Number(env.STALE_RUN_MINUTES);
  return Number.isFinite(n) && n > 0 ? n : 15;
}
