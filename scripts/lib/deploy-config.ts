/**
 * The deploy configuration: wrangler.toml as it is, with the ids of the
 * account's own D1 database and KV namespace in place of the placeholders,
 * written to wrangler.deploy.toml (git-ignored) for every wrangler command of
 * `npm run deploy` and for `npm run admin -- … --remote`. wrangler.toml itself
 * is never edited; a real id already there is kept.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { ROOT } from "./d1.ts";
import { isPlaceholder, sharedDatabaseIdProblem } from "./database-ids.ts";

export const WRANGLER_TOML = join(ROOT, "wrangler.toml");
export const DEPLOY_CONFIG_NAME = "wrangler.deploy.toml";
/** Beside wrangler.toml; the deploy tests put it in a temporary directory (TASKGATE_DEPLOY_CONFIG). */
export const DEPLOY_CONFIG = process.env.TASKGATE_DEPLOY_CONFIG || join(ROOT, DEPLOY_CONFIG_NAME);

/** The deploy configuration when `npm run deploy` has written one (the admin CLI's --remote uses it). */
export function deployConfigIfAny(): string | undefined {
  return existsSync(DEPLOY_CONFIG) ? DEPLOY_CONFIG : undefined;
}

export { isPlaceholder };

interface Block {
  header: string;
  lines: string[];
}

function blocks(toml: string): Block[] {
  const out: Block[] = [{ header: "", lines: [] }];
  for (const line of toml.split("\n")) {
    if (/^\s*\[/.test(line)) out.push({ header: line.trim(), lines: [line] });
    else out[out.length - 1].lines.push(line);
  }
  return out;
}

const VALUE = (key: string) => new RegExp(`^\\s*${key}\\s*=\\s*"([^"]*)"`, "m");

function value(b: Block | undefined, key: string): string | null {
  return b ? (VALUE(key).exec(b.lines.join("\n"))?.[1] ?? null) : null;
}

function bindingBlock(all: Block[], header: string, binding: string): Block | undefined {
  return all.find((b) => b.header === header && value(b, "binding") === binding);
}

/** One D1 database the configuration declares: its binding (DB, DB_1, …), its name, its id unless a placeholder. */
export interface DatabaseName {
  binding: string;
  name: string;
  id: string | null;
}

/** What `npm run deploy` reads from wrangler.toml. */
export interface Names {
  worker: string;
  /** Every D1 database, in order: DB (which keeps the directory), then DB_1, DB_2, … as src/db/shards.ts binds them. */
  databases: DatabaseName[];
  kvId: string | null;
  /** The KV namespace's title when one is made: named after the Worker, as wrangler's own provisioning names it. */
  kvTitle: string;
  queue: string;
}

/** The D1 blocks the Worker binds, in order: DB, then DB_1, DB_2, … up to the first gap. */
function databaseBlocks(all: Block[]): { binding: string; block: Block }[] {
  const out: { binding: string; block: Block }[] = [];
  for (let i = 0; ; i++) {
    const binding = i === 0 ? "DB" : `DB_${i}`;
    const block = bindingBlock(all, "[[d1_databases]]", binding);
    if (!block) return out;
    out.push({ binding, block });
  }
}

export function readNames(toml = readFileSync(WRANGLER_TOML, "utf8")): Names {
  const shared = sharedDatabaseIdProblem(toml);
  if (shared) throw new Error(shared);
  const all = blocks(toml);
  const worker = value(all[0], "name");
  const kv = bindingBlock(all, "[[kv_namespaces]]", "OAUTH_KV");
  const queue = value(all.find((b) => b.header === "[[queues.producers]]" && value(b, "binding") === "WEBHOOK_QUEUE"), "queue");
  const d1 = databaseBlocks(all);
  if (!worker || d1.length === 0 || !kv || !queue) throw new Error("wrangler.toml lacks the Worker's name, the DB database, the OAUTH_KV namespace or the WEBHOOK_QUEUE queue");
  const databases = d1.map(({ binding, block }) => {
    const name = value(block, "database_name");
    if (!name) throw new Error(`wrangler.toml declares the D1 binding ${binding} without a database_name`);
    const id = value(block, "database_id");
    return { binding, name, id: isPlaceholder(id) ? null : id };
  });
  const names = databases.map((d) => d.name);
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice) throw new Error(`wrangler.toml names the D1 database ${twice} for two bindings; each binding needs a database of its own`);
  const kvId = value(kv, "id");
  return { worker, databases, kvId: isPlaceholder(kvId) ? null : kvId, kvTitle: `${worker}-oauth-kv`, queue };
}

/**
 * The configuration with these ids (each D1 binding's by its binding name);
 * throws rather than produce one with a placeholder. Relative paths are
 * rewritten for where the file is written.
 */
export function deployConfigText(
  ids: { databaseIds: Record<string, string>; kvId: string },
  file = DEPLOY_CONFIG,
  toml = readFileSync(WRANGLER_TOML, "utf8"),
  base = ROOT,
): string {
  if (isPlaceholder(ids.kvId)) throw new Error("refusing to write a deploy configuration with a placeholder id");
  const all = blocks(toml);
  const set = (b: Block | undefined, key: string, v: string, after?: string) => {
    const i = b?.lines.findIndex((l) => VALUE(key).test(l)) ?? -1;
    if (b && i >= 0) b.lines[i] = `${key} = "${v}"`;
    else if (b && after) b.lines.splice(b.lines.findIndex((l) => VALUE(after).test(l)) + 1, 0, `${key} = "${v}"`);
    else throw new Error(`wrangler.toml has no ${key} to set`);
  };
  // Paths as seen from where the file is written (the same as the source's beside it).
  const here = (path: string) => relative(dirname(file), resolve(base, path)) || ".";
  set(all[0], "main", here(value(all[0], "main") ?? "src/index.ts"));
  for (const { binding, block } of databaseBlocks(all)) {
    const id = ids.databaseIds[binding];
    if (isPlaceholder(id)) throw new Error(`refusing to write a deploy configuration with a placeholder id (D1 binding ${binding})`);
    set(block, "database_id", id);
    set(block, "migrations_dir", here(value(block, "migrations_dir") ?? "migrations"), "database_id");
  }
  set(bindingBlock(all, "[[kv_namespaces]]", "OAUTH_KV"), "id", ids.kvId);
  const head = `# Written by \`npm run deploy\` from wrangler.toml with this account's ids; edit wrangler.toml, not this file.\n`;
  return head + all.map((b) => b.lines.join("\n")).join("\n");
}
