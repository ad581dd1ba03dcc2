import { env } from "cloudflare:workers";
import { afterEach, beforeAll, expect } from "vitest";
import { takeOutputFailures } from "./output-check.ts";
import { applySchema } from "./schema.ts";
import { installTools } from "../src/mcp/registry.ts";
import { ALL_TOOLS } from "../src/tools/index.ts";

// Tests that call the registry without a request through src/index.ts get the same tools it installs.
installTools(ALL_TOOLS);

beforeAll(async () => {
  await applySchema(env.DB, env.SCHEMA_SQL);
  await applySchema(env.DB_1, env.SCHEMA_SQL);
});

// Every result a test's clients received meets its tool's published output schema (test/output-check.ts).
afterEach(() => {
  expect(takeOutputFailures(), "structured results that break their tool's published output schema").toEqual([]);
});
