/**
 * Registrations that never led to a grant are removed a day after they were
 * made (the daily cron). Anyone may register a client (RFC 7591) and hosted
 * apps register from shared addresses, so registration is not limited per
 * address; instead what is never used does not stay. A client that led to a
 * grant keeps the provider's lifetime (CLIENT_REGISTRATION_SECONDS after its
 * last token exchange).
 *
 * The provider stores a registered client as `client:<id>` in OAUTH_KV with
 * that lifetime as its KV expiration, so a listing of keys (1,000 a call)
 * tells each one's registration time without reading it; a candidate's
 * record is read to confirm it. Its key is then deleted: the provider's
 * deleteClient() would also search every grant of every user for the
 * client's, and a client that never led to a grant has none.
 */
import { shardsOf } from "../db/shards.ts";
import type { Env } from "../env.ts";
import { clientsWithGrants } from "../db/grants.ts";
import { CLIENT_REGISTRATION_SECONDS } from "../domain/client-registration.ts";

export const UNUSED_REGISTRATION_MS = 86_400_000;
/** Per run, so one run stays well inside a Worker's subrequests; the next day continues. */
const MAX_REMOVED_PER_RUN = 400;
const MAX_PAGES_PER_RUN = 50;

const PREFIX = "client:";

/** Removes unused registrations older than a day; returns how many. */
export async function removeUnusedRegistrations(env: Env, nowMs: number): Promise<number> {
  const kv = env.OAUTH_KV;
  const cutoffSeconds = Math.floor((nowMs - UNUSED_REGISTRATION_MS) / 1000);
  let removed = 0;
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES_PER_RUN && removed < MAX_REMOVED_PER_RUN; page++) {
    const listed = await kv.list({ prefix: PREFIX, cursor });
    const old = listed.keys
      .filter((k) => k.expiration !== undefined && k.expiration - CLIENT_REGISTRATION_SECONDS <= cutoffSeconds)
      .map((k) => k.name.slice(PREFIX.length));
    const used = new Set<string>();
    for (const { db } of shardsOf(env)) for (const c of await clientsWithGrants(db, old)) used.add(c);
    for (const id of old.filter((c) => !used.has(c)).slice(0, MAX_REMOVED_PER_RUN - removed)) {
      const record = await kv.get<{ registrationDate?: number }>(`${PREFIX}${id}`, "json");
      if (record?.registrationDate === undefined || record.registrationDate > cutoffSeconds) continue;
      await kv.delete(`${PREFIX}${id}`);
      removed++;
    }
    if (listed.list_complete) break;
    cursor = listed.cursor;
  }
  return removed;
}
