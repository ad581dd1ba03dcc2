/**
 * Moving an account inside a running deployment, over the Worker's D1
 * bindings (src/db/move-account.ts has the steps).
 */
import type { Env } from "../env.ts";
import { hasAccount, moveAccount, type MoveOptions, type MoveReport, type Row, type SqlDb } from "./move-account.ts";
import { directoryOf, forgetShardPlacements, locate, shardsOf } from "./shards.ts";

export function d1Handle(db: D1Database): SqlDb {
  return {
    async all(s) {
      return (await db.prepare(s.sql).bind(...s.params).all<Row>()).results;
    },
    async batch(statements) {
      if (statements.length) await db.batch(statements.map((s) => db.prepare(s.sql).bind(...s.params)));
    },
  };
}

/** How long this deployment's edge may keep a route: an account's database and then a token's resolution made from it. */
export function routeLifetimeMs(env: Env): number {
  return (Number(env.SHARD_CACHE_SECONDS ?? "60") + Number(env.AUTH_CACHE_SECONDS ?? "5")) * 1000;
}

/**
 * The move inside a deployment (the Worker's bindings): from where the
 * directory places the account, or, when it already names the target (a run
 * that stopped after the switch), from the other database that still holds it.
 */
export async function moveAccountIn(
  env: Env,
  accountId: string,
  to: string,
  extra: Pick<MoveOptions, "after" | "now" | "lifetimeMs" | "sleep"> = {},
): Promise<MoveReport> {
  const shards = shardsOf(env);
  const target = shards.find((s) => s.name === to);
  if (!target) throw new Error(`This deployment has no database ${to}; it has ${shards.map((s) => s.name).join(", ")}.`);
  forgetShardPlacements();
  const placed = await locate(env, { account: accountId });
  let from = shards.find((s) => s.name === placed && s.name !== to);
  for (const s of shards) if (!from && s.name !== to && (await hasAccount(d1Handle(s.db), accountId))) from = s;
  // Switched and deleted already: the run ends the move (the mark in the target).
  if (!from && placed === to) from = shards.find((s) => s.name !== to);
  if (!from) throw new Error(`Account ${accountId} is in no database of this deployment.`);
  const report = await moveAccount({
    accountId,
    from: { name: from.name, db: d1Handle(from.db) },
    to: { name: to, db: d1Handle(target.db) },
    directory: d1Handle(directoryOf(env)),
    all: shards.map((s) => ({ name: s.name, db: d1Handle(s.db) })),
    lifetimeMs: routeLifetimeMs(env),
    ...extra,
  });
  forgetShardPlacements();
  return report;
}
