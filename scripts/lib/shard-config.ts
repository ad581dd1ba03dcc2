/**
 * A local deployment of several D1 databases: wrangler.toml with DB_1 …
 * DB_{n-1} declared after DB (as an operator adds them), written into a
 * directory of its own with every path made absolute, so that `wrangler dev
 * --config`, `wrangler d1 …` and the admin CLI's `--config` all read it.
 * Each database is a SQLite file of its own under the same --persist-to.
 */
import { copyFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { shardName } from "../../src/db/provisioning.ts";
import { ROOT } from "./d1.ts";

/** The name of the generated configuration in its directory. */
export const SHARD_CONFIG = "wrangler.shards.toml";

/** The bindings of a deployment of `count` databases: DB, DB_1, … */
export function shardNames(count: number): string[] {
  return Array.from({ length: count }, (_, i) => shardName(i));
}

/**
 * Writes the configuration of `count` databases into `dir` and returns its
 * path. wrangler reads .dev.vars beside the configuration, so the project's
 * own (when there is one) is copied there too.
 */
export function writeShardConfig(dir: string, count: number, name = SHARD_CONFIG): string {
  const migrations = `migrations_dir = "${join(ROOT, "migrations")}"`;
  let toml = readFileSync(join(ROOT, "wrangler.toml"), "utf8")
    .replace(/^main\s*=\s*"([^"]+)"/m, (_m, p: string) => `main = "${join(ROOT, p)}"`)
    .replace(/^(database_name\s*=\s*"taskgate"\s*)$/m, `$1\n${migrations}`);
  for (const name of shardNames(count).slice(1)) {
    const i = Number(name.slice(3));
    toml += `\n[[d1_databases]]\nbinding = "${name}"\ndatabase_name = "taskgate-${i}"\ndatabase_id = "00000000-0000-0000-0000-${String(i).padStart(12, "0")}"\n${migrations}\n`;
  }
  const config = join(dir, name);
  writeFileSync(config, toml);
  if (existsSync(join(ROOT, ".dev.vars"))) copyFileSync(join(ROOT, ".dev.vars"), join(dir, ".dev.vars"));
  return config;
}
