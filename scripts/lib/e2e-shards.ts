/**
 * The two-database part of the end-to-end script: the stack serves DB and
 * DB_1 (a generated configuration, scripts/lib/shard-config.ts). Migrations
 * reach both; the admin CLI's accounts have their rows where the directory
 * says (moved to DB_1 by the admin CLI when none landed there); an account in DB_1
 * answers every tool of the catalog to both real SDK clients with its rows in
 * DB_1's file and none in DB's; another account's token cannot reach them;
 * and the admin CLI moves that account to DB while its token is in use.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { CATALOG_CALLS, type Fixture } from "../../bench/catalog-calls.ts";
import { ACCOUNT_TABLES, COPIED_TABLES } from "../../src/db/move-account.ts";
import { TOOL_NAMES } from "../../src/catalog/effects.ts";
import { ROOT } from "./d1.ts";
import { assert, connect, equal, type Checks, type Era, type McpSession } from "./e2e-harness.ts";
import type { LocalStack } from "./local-stack.ts";

/**
 * How long a move keeps the old rows after its switch: the edge keeps an
 * account's database (SHARD_CACHE_SECONDS, 1 in the e2e server) and then a
 * token's resolution made from it (AUTH_CACHE_SECONDS, 5).
 */
const SETTLE = "6";

const MIGRATIONS = readdirSync(join(ROOT, "migrations")).filter((f) => f.endsWith(".sql")).sort();

interface Migrated {
  migrated: string[];
  applied: Record<string, string[]>;
}

/**
 * `npm run admin -- migrate` on a stack whose DB has schema.sql and whose
 * DB_1 is new: every migration goes to DB_1 and none to DB; run again, none anywhere.
 */
export async function migrateChecks(c: Checks, stack: LocalStack): Promise<boolean> {
  const first = await c.run("admin CLI migrate: applies to both databases (every migration to the new DB_1, none to DB, which schema.sql made)", async () => {
    const out = (await stack.admin(["migrate"])) as unknown as Migrated;
    equal(out.migrated.join(","), "DB,DB_1", "databases migrated");
    equal(out.applied.DB.join(","), "", "applied to DB");
    equal(out.applied.DB_1.join(","), MIGRATIONS.join(","), "applied to DB_1");
    return true;
  });
  await c.run("admin CLI migrate: a second run has nothing to apply in either database", async () => {
    const out = (await stack.admin(["migrate"])) as unknown as Migrated;
    equal(out.migrated.join(","), "DB,DB_1", "databases reported");
    equal(Object.values(out.applied).flat().length, 0, "migrations applied");
  });
  return first === true;
}

/** An account's rows per table in one database file (of every table, or of those given). */
function rowCounts(file: string, accountId: string, tables: readonly string[] = ACCOUNT_TABLES): Record<string, number> {
  const db = new DatabaseSync(file, { readOnly: true });
  db.exec("PRAGMA busy_timeout = 5000");
  try {
    return Object.fromEntries(
      tables.map((t) => [t, (db.prepare(`SELECT count(*) AS n FROM ${t} WHERE ${t === "accounts" ? "id" : "account_id"} = ?`).get(accountId) as { n: number }).n]),
    );
  } finally {
    db.close();
  }
}

const total = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

function placements(stack: LocalStack, accountIds: string[]): Map<string, string> {
  const db = new DatabaseSync(stack.file("DB"), { readOnly: true });
  try {
    const rows = db.prepare(`SELECT account_id, shard FROM directory_accounts WHERE account_id IN (${accountIds.map(() => "?").join(", ")})`).all(...accountIds) as { account_id: string; shard: string }[];
    return new Map(rows.map((r) => [r.account_id, r.shard]));
  } finally {
    db.close();
  }
}

export interface ShardAccount {
  id: string;
  human: string;
  agent: string;
  agentName: string;
  /** Ids of the account's tokens no later check uses (revoke_token revokes one per era). */
  spares: string[];
}

/** Every tool of the catalog once through a real SDK client of `era`; what failed, with why. */
async function catalogOnce(human: McpSession, agent: McpSession, acc: ShardAccount, spares: string[]): Promise<string[]> {
  const f: Fixture = {
    human: (name, args) => human.ok(name, args),
    agent: (name, args) => agent.ok(name, args),
    agentName: acc.agentName,
    searchWord: "quarterly",
    spareTokenId: async () => {
      const id = spares.shift();
      assert(id, "no spare token left for revoke_token");
      return id;
    },
    connectors: false,
  };
  await f.human("create_task", { title: "The quarterly report" });
  const failed: string[] = [];
  for (const name of TOOL_NAMES) {
    const spec = CATALOG_CALLS[name];
    try {
      const r = await (spec.who === "agent" ? agent : human).call(name, await spec.prepare(f));
      if (r.isError && !spec.expectError?.(f)) failed.push(`${name}: ${r.text.slice(0, 160)}`);
      await spec.after?.(f);
    } catch (e) {
      failed.push(`${name}: ${(e as Error).message.slice(0, 160)}`);
    }
  }
  return failed;
}

/**
 * The checks on two databases. `accounts`: every account the admin CLI made;
 * `main`: the one with tokens (expected in DB_1, where the second account made goes).
 */
export async function shardChecks(c: Checks, stack: LocalStack, accountIds: string[], main: ShardAccount, sessions: McpSession[]): Promise<void> {
  // create-account places each account in the database with the most room (by size), so where these landed depends on the sizes.
  const placed = await c.run("admin CLI: each account it made has its rows in the database the directory names, none in the other", () => {
    const where = placements(stack, accountIds);
    for (const id of accountIds) {
      const shard = where.get(id);
      assert(shard === "DB" || shard === "DB_1", `${id} is in no database of the directory`);
      const other = shard === "DB" ? "DB_1" : "DB";
      equal(rowCounts(stack.file(shard), id).accounts, 1, `${id} in ${shard}`);
      equal(total(rowCounts(stack.file(other), id)), 0, `${id}'s rows in ${other}`);
    }
    return where;
  });
  if (!placed) return;
  const inDb = accountIds.find((id) => id !== main.id && placed.get(id) === "DB");
  if (placed.get(main.id) !== "DB_1") {
    const moved = await c.run("admin CLI move-account: the account with tokens moves to DB_1 (both new accounts went to DB, the roomiest)", async () => {
      // Nothing has used its tokens for longer than the caches keep them (the OAuth checks ran since): no wait.
      await stack.admin(["move-account", "--account", main.id, "--to", "DB_1", "--settle", "0"]);
      equal(placements(stack, [main.id]).get(main.id), "DB_1", "the directory's word");
      equal(total(rowCounts(stack.file("DB"), main.id)), 0, "rows left in DB");
      return true;
    });
    if (!moved) return;
  }
  const spares = [...main.spares];
  const clients = {} as Record<Era, { human: McpSession; agent: McpSession }>;
  for (const era of ["modern", "legacy"] as const) {
    await c.run(`${era} client: every tool of the catalog (${TOOL_NAMES.length}) succeeds on an account in DB_1`, async () => {
      const human = await connect(`${stack.base}/mcp`, main.human, era);
      const agent = await connect(`${stack.base}/mcp`, main.agent, era);
      sessions.push(human, agent);
      clients[era] = { human, agent };
      const failed = await catalogOnce(human, agent, main, spares);
      assert(failed.length === 0, `${failed.length} failed:\n${failed.join("\n")}`);
    });
  }
  const before = await c.run("its rows are in DB_1's SQLite file, none in DB's", () => {
    const inShard = rowCounts(stack.file("DB_1"), main.id);
    for (const t of ["tasks", "steps", "comments", "runs", "run_events", "approvals", "activity"]) assert(inShard[t] > 0, `no ${t} rows in DB_1`);
    const stray = Object.entries(rowCounts(stack.file("DB"), main.id)).filter(([, n]) => n > 0);
    assert(stray.length === 0, `rows in DB: ${stray.map(([t, n]) => `${t} ${n}`).join(", ")}`);
    return inShard;
  });

  const human = clients.modern?.human;
  const taskId = human ? ((await human.ok("list_tasks", { limit: 1 })).items?.[0]?.id as string | undefined) : undefined;
  await c.run("tenancy: a token of an account in DB cannot see a task of the account in DB_1", async () => {
    assert(taskId, "no task of the account in DB_1");
    assert(inDb, "no other account in DB");
    const t = await stack.admin(["create-token", "--account", inDb, "--kind", "human", "--scope", "write"]);
    const other = await connect(`${stack.base}/mcp`, t.token, "modern");
    sessions.push(other);
    const refusal = await other.fails("get_task", { task_id: taskId });
    assert(refusal.includes(`No task ${taskId} in this account`), `the refusal names the task and the account, got ${refusal.slice(0, 200)}`);
    const listed = JSON.stringify(await other.ok("list_tasks", {}));
    assert(!listed.includes(taskId), "list_tasks of the other account shows the task");
  });

  if (!human || !before || !taskId) return c.fail("moving an account", "the account in DB_1 did not answer");
  await c.run("admin CLI move-account: the account in DB_1 moves to DB while its token reads; same counts, none left in DB_1", async () => {
    let reads = 0;
    let moving = true;
    const move = stack.admin(["move-account", "--account", main.id, "--to", "DB", "--settle", SETTLE]).finally(() => (moving = false));
    const reading = (async () => {
      while (moving) {
        try {
          await human.ok("get_task", { task_id: taskId });
        } catch (e) {
          // What the server logged about it, for the report.
          await new Promise((r) => setTimeout(r, 1000));
          const logged = stack.server.tail(400).split("\n").filter((l) => /error|Error|✘/.test(l)).slice(-8).join("\n");
          throw new Error(`a read during the move (after ${reads}): ${(e as Error).message}\n${logged}`);
        }
        reads++;
      }
    })();
    const [report] = await Promise.all([move, reading]);
    equal(JSON.stringify((report as unknown as { steps: string[] }).steps), '["mark","copy","verify","switch","delete","finish"]', "steps of the move");
    assert(reads > 0, "no read while the account moved");
    equal(placements(stack, [main.id]).get(main.id), "DB", "the directory's word");
    // Every table a move copies (callers' bookmarks name states of DB_1, and are deleted with the account, not copied).
    const copied = (counts: Record<string, number>) => JSON.stringify(Object.fromEntries(COPIED_TABLES.map((t) => [t, counts[t]])));
    equal(copied(rowCounts(stack.file("DB"), main.id)), copied(before), "rows per table in DB after the move");
    equal(total(rowCounts(stack.file("DB_1"), main.id)), 0, "rows left in DB_1");
    // The same clients, the same tokens: a read and a write after the move.
    equal((await human.ok("get_task", { task_id: taskId })).task?.id, taskId, "get_task after the move");
    await clients.legacy?.agent.ok("list_tasks", {});
    // A write may meet "try again shortly" only while the move finishes; resolutions of a moving account are not cached.
    for (let waited = 0; ; waited++) {
      const r = await human.call("create_task", { title: "Written after the move" });
      if (!r.isError) break;
      assert(/try again shortly/.test(r.text) && waited < 10, `create_task after the move: ${r.text.slice(0, 200)}`);
      await new Promise((res) => setTimeout(res, 1000));
    }
    equal(rowCounts(stack.file("DB"), main.id).tasks, before.tasks + 1, "tasks in DB after a write");
  });
  await c.run("admin CLI move-account: the same move again changes nothing and says so", async () => {
    const again = (await stack.admin(["move-account", "--account", main.id, "--to", "DB", "--settle", "0"])) as unknown as { moved: boolean; steps: string[] };
    equal(again.moved, false, "moved");
    equal(again.steps.length, 0, "steps");
    equal(total(rowCounts(stack.file("DB_1"), main.id)), 0, "rows in DB_1");
  });
}
