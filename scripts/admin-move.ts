/**
 * `move-account --account ID --to DB_n`: moves an account with all of its rows
 * to another database of the deployment, through wrangler (local or --remote),
 * with the steps of src/db/move-account.ts. Safe to run again after a failure.
 */
import { hasAccount, moveAccount, type Row, type SqlDb } from "../src/db/move-account.ts";
import { databasesOf, execute, inDatabase, query, type Target } from "./lib/d1.ts";
import { required, UsageError, type Values } from "./lib/cli.ts";

function wranglerDb(target: Target): SqlDb {
  return {
    all: async (s) => query<Row>(target, s),
    batch: async (statements) => {
      if (statements.length) execute(target, statements);
    },
  };
}

/** How long routes cached at the edge may live (SHARD_CACHE_SECONDS, 60 by default), with a margin. */
const SETTLE_SECONDS = 65;

export async function moveAccountCommand(values: Values, target: Target): Promise<unknown> {
  const accountId = required(values, "account");
  const to = required(values, "to");
  const names = databasesOf(target);
  if (!names.includes(to)) throw new UsageError(`--to must name a database of the configuration: ${names.join(", ")}`);
  const settleSeconds = typeof values.settle === "string" ? Number(values.settle) : SETTLE_SECONDS;
  if (!Number.isFinite(settleSeconds) || settleSeconds < 0) throw new UsageError("--settle must be a number of seconds");
  // The target is the account's database as the directory names it; after a switch that is `to`, and the rows to delete are elsewhere.
  let from = target.database ?? "DB";
  if (from === to) {
    const others = names.filter((n) => n !== to);
    const holding: string[] = [];
    for (const n of others) if (await hasAccount(wranglerDb(inDatabase(target, n)), accountId)) holding.push(n);
    from = holding[0] ?? others[0];
    if (!from) throw new UsageError("The deployment has one database; add one before moving an account.");
  }
  return moveAccount({
    accountId,
    from: { name: from, db: wranglerDb(inDatabase(target, from)) },
    to: { name: to, db: wranglerDb(inDatabase(target, to)) },
    directory: wranglerDb(inDatabase(target, "DB")),
    settle: async () => {
      if (settleSeconds > 0) console.error(`Waiting ${settleSeconds} s for routes cached at the edge to expire…`);
      await new Promise((r) => setTimeout(r, settleSeconds * 1000));
    },
    after: (step) => console.error(`${step}: done`),
  });
}
