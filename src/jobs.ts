/**
 * The Worker's `scheduled` and `queue` handlers (src/index.ts wires them).
 * Crons (wrangler.toml): every minute, run.stale and claim.lapsed detection; the daily one,
 * the trash purge, the marking of pending actions past their expiry, the sign-in records (ended sessions, expired setup links,
 * old failed sign-ins), the pruning of delivery records older than 30 days,
 * the removal of OAuth client registrations that never led to a grant, of
 * the spent refresh tokens of expired grants (in the first database, which
 * alone keeps them), and of activity entries and run events past each
 * account's retention.
 */
import { purgeExpiredActivity } from "./db/retention.ts";
import { purgeSpentRefreshTokens } from "./db/refresh-tokens.ts";
import { accountEnv, directoryOf, shardsOf } from "./db/shards.ts";
import { purgeExpiredTrash } from "./db/trash.ts";
import { expirePendingActions } from "./db/pending-actions.ts";
import { purgeFinishedDeliveries } from "./db/webhooks-d1.ts";
import { purgePushDeliveries } from "./db/push.ts";
import type { Env } from "./env.ts";
import { removeUnusedRegistrations } from "./oauth/registrations.ts";
import { purgeSignInRecords } from "./web/cleanup.ts";
import { handleWebhookBatch } from "./webhooks/deliver.ts";
import { announceStaleRuns } from "./webhooks/stale-runs.ts";
import { announceLapsedClaims } from "./webhooks/lapsed-claims.ts";

export const MINUTE_CRON = "* * * * *";
const DELIVERY_RECORDS_DAYS = 30;

function logged(where: string, p: Promise<unknown>): Promise<unknown> {
  return p.catch((e) => console.error(JSON.stringify({ level: "error", where, error: e instanceof Error ? e.stack ?? e.message : String(e) })));
}

export async function scheduled(controller: ScheduledController, env: Env, ctx: ExecutionContext): Promise<void> {
  const nowMs = Date.now();
  // Every job that spans accounts runs in every database of the deployment, each as if it were the only one.
  const shards = shardsOf(env).map((s) => ({ name: s.name, env: accountEnv(env, s.name) }));
  const each = (where: string, job: (shardEnv: Env) => Promise<unknown>) => {
    for (const s of shards) ctx.waitUntil(logged(shards.length > 1 ? `${where} ${s.name}` : where, job(s.env)));
  };
  if (controller.cron === MINUTE_CRON) {
    each("announceStaleRuns", (e) => announceStaleRuns(e, nowMs));
    each("announceLapsedClaims", (e) => announceLapsedClaims(e, nowMs));
    return;
  }
  const now = new Date(nowMs).toISOString();
  each("purgeExpiredTrash", (e) => purgeExpiredTrash(e.DB, now));
  each("expirePendingActions", (e) => expirePendingActions(e.DB, now));
  each("purgeSignInRecords", (e) => purgeSignInRecords(e.DB, new Date(nowMs)));
  ctx.waitUntil(logged("removeUnusedRegistrations", removeUnusedRegistrations(env, nowMs)));
  ctx.waitUntil(
    logged("purgeSpentRefreshTokens", purgeSpentRefreshTokens(directoryOf(env), now).then((r) => console.log(JSON.stringify({ level: "info", where: "purgeSpentRefreshTokens", ...r })))),
  );
  each("purgeExpiredActivity", (e) => purgeExpiredActivity(e.DB, now).then((r) => console.log(JSON.stringify({ level: "info", where: "purgeExpiredActivity", ...r }))));
  each("purgeFinishedDeliveries", (e) => purgeFinishedDeliveries(e.DB, new Date(nowMs - DELIVERY_RECORDS_DAYS * 86_400_000).toISOString()));
  each("purgePushDeliveries", (e) => purgePushDeliveries(e.DB, new Date(nowMs - DELIVERY_RECORDS_DAYS * 86_400_000).toISOString()));
}

export async function queue(batch: MessageBatch<unknown>, env: Env, _ctx: ExecutionContext): Promise<void> {
  await handleWebhookBatch(batch, env);
}
