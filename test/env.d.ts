declare namespace Cloudflare {
  interface Env {
    DB: D1Database;
    /** The second database: accounts placed there live only there. */
    DB_1: D1Database;
    OAUTH_KV: KVNamespace;
    SCHEMA_SQL: string;
    /** JSON: [{ name, sql }] of migrations/*.sql in order. */
    MIGRATIONS: string;
    /** An empty database the upgrade test builds from the migrations. */
    MIGRATED_DB: D1Database;
    /** A second database upgraded the same way (every migration applies to every database). */
    MIGRATED_DB_1: D1Database;
    REPLICA_NEAR: D1Database;
    REPLICA_FAR: D1Database;
    /** test/fixtures/upgrade-from-0009.sql: a database of commit 45241fa (migrations 0000–0009) filled through its own tools. */
    UPGRADE_FIXTURE_SQL: string;
    VALIDATE_OUTPUT: string;
    CONNECTOR_KEY: string;
    VAPID_KEY: string;
    /** The stand-in push service (web-push-testing, run in Node by vitest.config.ts). */
    PUSH_SERVICE: Fetcher;
    ALLOWED_ORIGINS: string;
    STALE_RUN_MINUTES: string;
    ALLOW_HTTP_WEBHOOKS: string;
    WEBHOOK_QUEUE: Queue;
    /** docs/webhooks.md as text. */
    DOCS_WEBHOOKS_MD: string;
    /** examples/verify-webhook.mjs as text (docs/webhooks.md must show it verbatim). */
    VERIFY_SNIPPET: string;
    /** wrangler.toml as text. */
    WRANGLER_TOML: string;
    /** docs/deploy.md as text. */
    DOCS_DEPLOY_MD: string;
  }
}
