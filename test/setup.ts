import { env } from "cloudflare:workers";
import { beforeAll } from "vitest";
import { applySchema } from "./schema.ts";
import { installTools } from "../src/mcp/registry.ts";
import { ALL_TOOLS } from "../src/tools/index.ts";

// Tests that call the registry without a request through src/index.ts get the same tools it installs.
installTools(ALL_TOOLS);

beforeAll(async () => {
  await applySchema(env.DB, env.SCHEMA_SQL);
  await applySchema(env.DB_1, env.SCHEMA_SQL);
});
