/**
 * The deploy configuration: wrangler.toml as it is, with the ids of the
 * account's own D1 database and KV namespace in place of the placeholders,
 * written to wrangler.deploy.toml (git-ignored) for every wrangler command of
 * `npm run deploy` and for `npm run admin -- … --remote`. wrangler.toml itself
 * is never edited; a real id already there is kept.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { ROOT } from "./d1.ts";

export const WRANGLER_TOML = join(ROOT, "wrangler.toml");
export const DEPLOY_CONFIG_NAME = "wrangler.deploy.toml";
/** Beside wrangler.toml; the deploy tests put it in a temporary directory (TASKGATE_DEPLOY_CONFIG). */
export const DEPLOY_CONFIG = process.env.TASKGATE_DEPLOY_CONFIG || join(ROOT, DEPLOY_CONFIG_NAME);

/** The deploy configuration when `npm run deploy` has written one (the admin CLI's --remote uses it). */
export function deployConfigIfAny(): string | undefined {
  return existsSync(DEPLOY_CONFIG) ? DEPLOY_CONFIG : undefined;
}

/** An id made of zeros (and dashes): wrangler.toml's placeholder, never deployed with. */
export function isPlaceholder(id: string | null | undefined): boolean {
  return !id || /^[0-]+$/.test(id);
}

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

/** What `npm run deploy` reads from wrangler.toml. */
export interface Names {
  worker: string;
  database: string;
  /** The id in wrangler.toml, or null when it is the placeholder. */
  databaseId: string | null;
  kvId: string | null;
  /** The KV namespace's title when one is made: named after the Worker, as wrangler's own provisioning names it. */
  kvTitle: string;
  queue: string;
}

export function readNames(toml = readFileSync(WRANGLER_TOML, "utf8")): Names {
  const all = blocks(toml);
  const worker = value(all[0], "name");
  const d1 = bindingBlock(all, "[[d1_databases]]", "DB");
  const kv = bindingBlock(all, "[[kv_namespaces]]", "OAUTH_KV");
  const queue = value(all.find((b) => b.header === "[[queues.producers]]" && value(b, "binding") === "WEBHOOK_QUEUE"), "queue");
  const database = value(d1, "database_name");
  if (!worker || !database || !kv || !queue) throw new Error("wrangler.toml lacks the Worker's name, the DB database, the OAUTH_KV namespace or the WEBHOOK_QUEUE queue");
  const databaseId = value(d1, "database_id");
  const kvId = value(kv, "id");
  return {
    worker,
    database,
    databaseId: isPlaceholder(databaseId) ? null : databaseId,
    kvId: isPlaceholder(kvId) ? null : kvId,
    kvTitle: `${worker}-oauth-kv`,
    queue,
  };
}

/** wrangler.toml with these ids; throws rather than produce a configuration with a placeholder. */
export function deployConfigText(ids: { databaseId: string; kvId: string }, file = DEPLOY_CONFIG, toml = readFileSync(WRANGLER_TOML, "utf8")): string {
  if (isPlaceholder(ids.databaseId) || isPlaceholder(ids.kvId)) throw new Error("refusing to write a deploy configuration with a placeholder id");
  const all = blocks(toml);
  const set = (b: Block | undefined, key: string, id: string) => {
    const i = b?.lines.findIndex((l) => VALUE(key).test(l)) ?? -1;
    if (!b || i < 0) throw new Error(`wrangler.toml has no ${key} to set`);
    b.lines[i] = `${key} = "${id}"`;
  };
  // Paths as seen from where the file is written (the same as wrangler.toml's beside it).
  const here = (path: string) => relative(dirname(file), join(ROOT, path)) || ".";
  set(all[0], "main", here(value(all[0], "main") ?? "src/index.ts"));
  const d1 = bindingBlock(all, "[[d1_databases]]", "DB");
  set(d1, "database_id", ids.databaseId);
  d1?.lines.splice(d1.lines.findIndex((l) => VALUE("database_id").test(l)) + 1, 0, `migrations_dir = "${here(value(d1, "migrations_dir") ?? "migrations")}"`);
  set(bindingBlock(all, "[[kv_namespaces]]", "OAUTH_KV"), "id", ids.kvId);
  const head = `# Written by \`npm run deploy\` from wrangler.toml with this account's ids; edit wrangler.toml, not this file.\n`;
  return head + all.map((b) => b.lines.join("\n")).join("\n");
}
