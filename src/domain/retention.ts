/** How long an account keeps its activity entries and run events. */
export const ACTIVITY_RETENTION = { default: 180, min: 7, max: 3650 } as const;

const DAY_MS = 86_400_000;

/**
 * From when an account with this retention surely keeps its activity and run
 * events: the first UTC midnight at or after `retentionDays` ago (the daily job
 * removes rows older than its own run time minus the retention), so the value
 * holds for a whole day and a document that carries it stays the same.
 */
export function keptSince(nowMs: number, retentionDays: number): string {
  return new Date(Math.ceil((nowMs - retentionDays * DAY_MS) / DAY_MS) * DAY_MS).toISOString();
}
