/**
 * A deployment's D1 databases (shards) and the directory that says where each
 * account lives. The bindings are `DB` (the first: it also keeps the
 * directory) and, when a deployment grows, `DB_1`, `DB_2`, … declared in the
 * wrangler configuration. With `DB` alone (the default) nothing here queries
 * anything: every account is in it.
 *
 * An account's rows all live in one shard. The code above sees one database:
 * `accountEnv(env, shard)` is the deployment as that account's requests see
 * it, with `env.DB` its shard. The edge picks it once it knows the account
 * (a token, a grant's props, a session, a setup link, an email at sign-in);
 * the registry, the tools and every SQL statement read `env.DB` as before.
 *
 * Resolution caches (per isolate, safe to lose): account → shard for
 * SHARD_CACHE_SECONDS (default 60). A moving account is resolved by the
 * directory itself (locateNow), and a move deletes the old rows only after
 * every route cached before its switch has lapsed (src/db/move-account.ts).
 */
import type { Env } from "../env.ts";
import { accountInSecret } from "../domain/tokens.ts";
import { FIRST_SHARD } from "./provisioning.ts";

export { FIRST_SHARD };

const SHARD_NAME = /^DB(?:_[1-9][0-9]*)?$/;

export interface Shard {
  name: string;
  db: D1Database;
}

/** The deployment as a request saw it before any account's view (accountEnv) replaced env.DB. */
const ROOT = Symbol("deployment");

function rootOf(env: Env): Env {
  return (env as Env & { [ROOT]?: Env })[ROOT] ?? env;
}

function bindingOf(env: Env, name: string): D1Database | undefined {
  return (rootOf(env) as unknown as Record<string, D1Database | undefined>)[name];
}

/** Every shard of this deployment, in order: DB, then DB_1, DB_2, … while they are bound. */
export function shardsOf(env: Env): Shard[] {
  const out: Shard[] = [{ name: FIRST_SHARD, db: bindingOf(env, FIRST_SHARD) as D1Database }];
  for (let i = 1; ; i++) {
    const db = bindingOf(env, `DB_${i}`);
    if (!db) return out;
    out.push({ name: `DB_${i}`, db });
  }
}

/** The database that keeps the directory (and the deployment's own records): the first shard. */
export function directoryOf(env: Env): D1Database {
  return bindingOf(env, FIRST_SHARD) as D1Database;
}

export function isSharded(env: Env): boolean {
  return bindingOf(env, "DB_1") !== undefined;
}

/** A shard's database by name; an unknown name (a binding removed from the configuration) is a fault. */
export function shardDb(env: Env, shard: string): D1Database {
  const db = SHARD_NAME.test(shard) ? bindingOf(env, shard) : undefined;
  if (!db) throw new Error(`The directory names database ${shard}, which this deployment does not bind (wrangler configuration).`);
  return db;
}

/** The shard's name when this deployment binds it (a hint from a secret may name any). */
export function boundShard(env: Env, name: string): string | null {
  return isSharded(env) && SHARD_NAME.test(name) && bindingOf(env, name) ? name : null;
}

/** The deployment as one account's requests see it: `env.DB` is the account's shard. */
export function accountEnv(env: Env, shard: string): Env {
  const root = rootOf(env);
  if (shard === FIRST_SHARD) return root;
  // Own properties copied as they are (a lazy getter stays lazy), so a spread of the view is still the view.
  const view = Object.defineProperties({}, Object.getOwnPropertyDescriptors(root)) as Env & { [ROOT]?: Env };
  Object.defineProperty(view, "DB", { value: shardDb(root, shard), enumerable: true, configurable: true, writable: true });
  Object.defineProperty(view, ROOT, { value: root, enumerable: true });
  return view;
}

/**
 * The account's view with its database read through `db` (the request's
 * session, src/db/read-sessions.ts): the directory and every other shard are
 * still the deployment's own bindings, read from their primaries.
 */
export function throughSession(own: Env, db: D1Database): Env {
  const view = Object.defineProperties({}, Object.getOwnPropertyDescriptors(own)) as Env & { [ROOT]?: Env };
  Object.defineProperty(view, "DB", { value: db, enumerable: true, configurable: true, writable: true });
  Object.defineProperty(view, ROOT, { value: rootOf(own), enumerable: true });
  return view;
}

interface Cached {
  shard: string;
  at: number;
}

const CACHE_LIMIT = 5000;
const accounts = new Map<string, Cached>();

export function forgetShardPlacements(): void {
  accounts.clear();
}

function cacheMs(env: Env): number {
  return Number(rootOf(env).SHARD_CACHE_SECONDS ?? "60") * 1000;
}

/**
 * Where an account (or what stands for it: a sign-in email, a token hash from
 * before tokens carried their account) lives. One directory query when the
 * account is not cached, none with one database. Unknown → the first shard,
 * where everything from before the directory lives.
 */
export async function locate(env: Env, by: Placement): Promise<string> {
  if (!isSharded(env)) return FIRST_SHARD;
  const hit = by.account ? accounts.get(by.account) : undefined;
  if (hit && Date.now() - hit.at < cacheMs(env)) return hit.shard;
  return placedBy(await directoryLookup(env, by).all<DirectoryRow>().then((r) => r.results));
}

/**
 * The directory's word now, past any cache: asked when a row found says its
 * account is moving (both copies carry the mark until the move ends), so a
 * half-made copy is never read, and whatever the cache held is replaced.
 */
export async function locateNow(env: Env, accountId: string): Promise<string> {
  if (!isSharded(env)) return FIRST_SHARD;
  return placedBy(await directoryLookup(env, { account: accountId }).all<DirectoryRow>().then((r) => r.results));
}

type Placement = { account?: string | null; kind?: "email" | "token"; key?: string };
export interface DirectoryRow {
  account_id: string;
  shard: string;
}

/** The directory's query behind locate, to send in a batch of the first database (placedBy reads its rows). */
export function directoryLookup(env: Env, by: Placement): D1PreparedStatement {
  return directoryOf(env)
    .prepare(
      `SELECT account_id, shard FROM directory_accounts WHERE account_id = ?1
       UNION ALL
       SELECT a.account_id, a.shard FROM directory_keys k JOIN directory_accounts a ON a.account_id = k.account_id WHERE k.kind = ?2 AND k.key = ?3
       LIMIT 1`,
    )
    .bind(by.account ?? null, by.kind ?? null, by.key ?? null);
}

/** The shard the directory's answer names (cached for its account); none → the first. */
export function placedBy(rows: DirectoryRow[]): string {
  const row = rows[0];
  if (!row) return FIRST_SHARD;
  if (accounts.size >= CACHE_LIMIT) accounts.clear();
  accounts.set(row.account_id, { shard: row.shard, at: Date.now() });
  return row.shard;
}

/** The shard of a secret that may carry its account (tokens, sessions, setup links), else of its hash in the directory. */
export function locateSecret(env: Env, secret: string, hash: string | null): Promise<string> {
  return locate(env, { account: accountInSecret(secret), kind: hash ? "token" : undefined, key: hash ?? undefined });
}

/** The view of the deployment for an account (see accountEnv). */
export async function envOfAccount(env: Env, accountId: string): Promise<Env> {
  return accountEnv(env, await locate(env, { account: accountId }));
}

/** Each shard's size in bytes, as D1 reports it after a trivial query. */
export async function shardSizes(env: Env): Promise<{ name: string; bytes: number }[]> {
  return Promise.all(
    shardsOf(env).map(async (s) => ({ name: s.name, bytes: Number((await s.db.prepare("SELECT 1").run()).meta.size_after ?? 0) })),
  );
}
