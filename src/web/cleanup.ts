import { purgeExpiredSetupLinks } from "../db/people.ts";
import { purgeSignInState } from "../db/sessions.ts";
import { THROTTLE_WINDOW_MS } from "./throttle.ts";

/** Daily: ended sessions, expired setup links, and failed sign-ins too old to count. One batch. */
export async function purgeSignInRecords(db: D1Database, now: Date): Promise<void> {
  const iso = now.toISOString();
  const before = new Date(now.getTime() - THROTTLE_WINDOW_MS).toISOString();
  await db.batch([...purgeSignInState(db, iso, before), purgeExpiredSetupLinks(db, iso)]);
}
