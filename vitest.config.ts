import { readdirSync, readFileSync } from "node:fs";
import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { configDefaults, defineConfig } from "vitest/config";
import { newVapidKeyValue } from "./scripts/lib/demo.ts";
import { slowestFirst } from "./scripts/lib/test-order.ts";
import { pushServiceBinding } from "./test/push/push-service.ts";

/** The files that take longest, slowest first, as measured on a 2-core machine (docs/testing.md#where-the-time-goes). */
const SLOWEST = [
  "test/security/fuzz.test.ts",
  "test/consent-audit-upgraded.test.ts",
  "test/consent-audit-held.test.ts",
  "test/effect-audit.test.ts",
  "test/console-fuzz.test.ts",
  "test/consent-audit-decided.test.ts",
  "test/move-account.test.ts",
  "test/webhooks.test.ts",
  "test/consent-audit-policy-legacy.test.ts",
  "test/consent-audit-policy-modern.test.ts",
];

export default defineConfig({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: {
        // DB_1: a second database, so every test runs on a deployment with two (src/db/shards.ts).
        // REPLICA_NEAR, REPLICA_FAR: the lagging read replicas of test/read-replicas.test.ts (test/replica-stand-in.ts).
        d1Databases: ["DB_1", "MIGRATED_DB", "MIGRATED_DB_1", "REPLICA_NEAR", "REPLICA_FAR"],
        bindings: {
          SCHEMA_SQL: readFileSync("schema.sql", "utf8"),
          // Every migration, in order, for the upgrade test (it builds a second database from them).
          MIGRATIONS: JSON.stringify(
            readdirSync("migrations")
              .filter((f) => f.endsWith(".sql"))
              .sort()
              .map((name) => ({ name, sql: readFileSync(`migrations/${name}`, "utf8") })),
          ),
          // A database of the oldest supported version, filled by its own tools (scripts/upgrade-fixture.ts), for the upgraded consent audit.
          UPGRADE_FIXTURE_SQL: readFileSync("test/fixtures/upgrade-from-0009.sql", "utf8"),
          VALIDATE_OUTPUT: "1",
          // One log line a request would bury the test output: the replica test turns it on for its own requests.
          REQUEST_LOG: "off",
          // Local development: webhook receivers of the tests may use http://.
          ALLOW_HTTP_WEBHOOKS: "1",
          // The webhooks page, for the test that holds its verification snippet to examples/verify-webhook.mjs.
          DOCS_WEBHOOKS_MD: readFileSync("docs/webhooks.md", "utf8"),
          VERIFY_SNIPPET: readFileSync("examples/verify-webhook.mjs", "utf8"),
          // The configuration and the page that shows how to add a database, for the test that each binding has an id of its own.
          WRANGLER_TOML: readFileSync("wrangler.toml", "utf8"),
          DOCS_DEPLOY_MD: readFileSync("docs/deploy.md", "utf8"),
          ALLOWED_ORIGINS: "https://app.example.com",
          // A test-only key (32 zero-free bytes, base64); production uses a wrangler secret.
          CONNECTOR_KEY: "dGFza2dhdGUtdGVzdC1rZXktMDEyMzQ1Njc4OWFiY2Q=",
          // A VAPID key pair made for this run; production uses a wrangler secret made once by npm run deploy.
          VAPID_KEY: newVapidKeyValue(),
        },
        // The stand-in push service (web-push-testing, in Node): test/push/push-service.ts.
        serviceBindings: { PUSH_SERVICE: pushServiceBinding },
      },
    }),
  ],
  test: {
    include: ["test/**/*.test.ts"],
    // Node tests that drive a real browser: vitest.browser.config.ts.
    exclude: [...configDefaults.exclude, "test/browser/**"],
    setupFiles: ["./test/setup.ts"],
    // Two files at a time, each with its own storage: the Worker's tests wait on D1 as much as they compute, so two halve the run on a 2-core machine.
    maxWorkers: 2,
    // The slowest files start first (scripts/lib/test-order.ts; what each spends its time on: docs/testing.md#where-the-time-goes).
    sequence: { sequencer: slowestFirst(SLOWEST) },
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
