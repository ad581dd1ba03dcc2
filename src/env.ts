import type { OAuthHelpers } from "@cloudflare/workers-oauth-provider";
import type { TaskgateEvent } from "./domain/events.ts";

export interface Env {
  /**
   * The first D1 database: it keeps the directory and the accounts placed in it. In an account's
   * view of the deployment (src/db/shards.ts accountEnv), that account's database.
   */
  DB: D1Database;
  /** More databases (shards) of a deployment that outgrew one: DB_1, DB_2, … (wrangler configuration). */
  DB_1?: D1Database;
  /** Seconds an account's database stays cached in the isolate (default 60). */
  SHARD_CACHE_SECONDS?: string;
  /** The OAuth provider's storage: clients, grants, hashed tokens (see wrangler.toml). */
  OAUTH_KV: KVNamespace;
  /**
   * Set by the OAuth provider on every request it hands to Taskgate: its
   * helpers (consent, completing a grant, revoking one). Absent elsewhere.
   */
  OAUTH_PROVIDER?: OAuthHelpers;
  /** Producer binding of the webhook queue (its consumer is this Worker's `queue` handler). */
  WEBHOOK_QUEUE?: Queue<TaskgateEvent>;
  /**
   * "1" in local development (npm start, tests): webhooks may use http:// URLs and loopback receivers, and push
   * endpoints the tests' stand-in push service (src/domain/push.ts). Never set in production.
   */
  ALLOW_HTTP_WEBHOOKS?: string;
  /** Comma-separated browser origins allowed to call /mcp. */
  ALLOWED_ORIGINS?: string;
  /** Minutes without a run event after which fleet_status calls a run stale (default 15). */
  STALE_RUN_MINUTES?: string;
  /** "off": no request log line (src/http/request-log.ts); on otherwise. */
  REQUEST_LOG?: string;
  /** Seconds a resolved token may be served from the isolate cache (default 5). */
  AUTH_CACHE_SECONDS?: string;
  /** Base64 of 32 bytes: the AES-GCM key for connector credentials. A secret. */
  CONNECTOR_KEY?: string;
  /**
   * `<public>.<private>` (base64url): the VAPID key pair that signs Web Push messages (src/domain/push.ts).
   * A secret, made once by `npm start` (.dev.vars) and `npm run deploy`, never replaced.
   */
  VAPID_KEY?: string;
  /** Set in tests: every tool result is checked against its output schema on the server too. */
  VALIDATE_OUTPUT?: string;
  /** Set only by `npm run bench` on its own `wrangler dev`: "1" serves the benchmark's floor (src/mcp/floor.ts). Never deployed. */
  BENCH_FLOOR?: string;
}

export const VERSION = "0.1.0";

/** Local development (`ALLOW_HTTP_WEBHOOKS`, set by npm start and the tests): webhooks to loopback and over http://, the stand-in push service. */
export function localDevelopment(env: Pick<Env, "ALLOW_HTTP_WEBHOOKS">): boolean {
  return env.ALLOW_HTTP_WEBHOOKS === "1" || env.ALLOW_HTTP_WEBHOOKS === "true";
}
