import { env } from "cloudflare:workers";
import { beforeAll } from "vitest";
import { applySchema } from "./schema.ts";

beforeAll(async () => {
  await applySchema(env.DB, env.SCHEMA_SQL);
  await applySchema(env.DB_1, env.SCHEMA_SQL);
});
