
/** Minutes without a run event after which a running run counts as stale (STALE_RUN_MINUTES, default 15). */
export function staleRunMinutes(env: { STALE_RUN_MINUTES?: string }): number {
  const n = Number(env.STALE_RUN_MINUTES);
  return Number.isFinite(n) && n > 0 ? n : 15;
}
