/** How long an account keeps its activity entries and run events. */
export const ACTIVITY_RETENTION = { default: 180, min: 7, max: 3650 } as const;

/** The oldest time an account with this retention still keeps activity and run events from. */
export function keptSince(nowMs: number, retentionDays: number): string {
  return new Date(nowMs - retentionDays * 86_400_000).toISOString();
}
