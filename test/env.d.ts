declare namespace Cloudflare {
  interface Env {
    DB: D1Database;
    SCHEMA_SQL: string;
    VALIDATE_OUTPUT: string;
    CONNECTOR_KEY: string;
    ALLOWED_ORIGINS: string;
    STALE_RUN_MINUTES: string;
  }
}
