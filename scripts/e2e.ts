/**
 * `npm run e2e`: Taskgate end to end over real HTTP. Starts `wrangler dev` on a
 * free local port with a temporary database, makes an account and tokens with
 * the admin CLI, and drives the server with both real MCP clients: the 2.x
 * client (negotiates 2026-07-28) and the 1.x SDK (opens with initialize);
 * webhook deliveries go through the local Queue to a receiver on this machine.
 * Then a person invited with the admin CLI sets a password in Chromium, and
 * both clients connect by URL alone with OAuth through their SDK's own OAuth
 * client support, the sign-in and consent done in the browser by Playwright.
 * The official MCP conformance suite runs against the same server with a real
 * token (its verdicts reviewed in scripts/lib/e2e-conformance.ts).
 * The server has two databases (DB and DB_1): migrations, every tool on an
 * account in DB_1, tenancy and moving an account (scripts/lib/e2e-shards.ts).
 * Last, `npm start` itself (a taken port; its minute cron lapsing a claim
 * lease; stopping it with SIGTERM and SIGINT), that the tool tables of
 * docs/tools.md are what `npm run -s catalog` prints, and `npm run deploy` against a
 * stand-in wrangler on PATH.
 * Prints one line per check and `e2e: N passed, M failed`; exits 1 on any
 * failure. Whatever happens, it stops the server and the browser and removes
 * the directory, and checks that nothing it started is left running.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { keyFromDotenv, newConnectorKey } from "../src/domain/crypto.ts";
import { ROOT } from "./lib/d1.ts";
import { INSPECTOR_ORIGINS } from "./lib/dev-server.ts";
import { assert, Checks, connect, equal, type Era, type McpSession } from "./lib/e2e-harness.ts";
import { LocalStack } from "./lib/local-stack.ts";
import { descendants, settle } from "./lib/processes.ts";
import { httpEdges, taskLife, toolList, type TokenRole } from "./lib/e2e-checks.ts";
import { Receiver, webhookDeliveries } from "./lib/e2e-webhooks.ts";
import { oauthFlows } from "./lib/e2e-oauth-checks.ts";
import { catalogCheck, startScriptChecks, stopStartScripts } from "./lib/e2e-start.ts";
import { deployChecks } from "./lib/e2e-deploy.ts";
import { conformance } from "./lib/e2e-conformance.ts";
import { migrateChecks, shardChecks } from "./lib/e2e-shards.ts";

// The claim lease that lapses under npm start alone waits up to two minutes.
const HARD_TIMEOUT_MS = Number(process.env.E2E_TIMEOUT_MS ?? 20 * 60_000);
const AGENT = "e2e-agent";
const ALLOWED_ORIGIN = INSPECTOR_ORIGINS[0];
const ROLES: { role: TokenRole; args: string[] }[] = [
  { role: "human write", args: ["--kind", "human", "--scope", "write"] },
  { role: "human read", args: ["--kind", "human", "--scope", "read"] },
  { role: "agent write", args: ["--kind", "agent", "--scope", "write", "--agent", AGENT] },
  { role: "agent read", args: ["--kind", "agent", "--scope", "read", "--agent", AGENT] },
];

const checks = new Checks();
// Two databases (DB and DB_1, a generated configuration): the admin CLI's accounts land in both.
const stack = new LocalStack("taskgate-e2e-", { databases: 2 });
const receiver = new Receiver();
const sessions: McpSession[] = [];

/**
 * The key that seals webhook secrets: wrangler dev reads .dev.vars when there
 * is one, so the admin CLI takes the same; otherwise a fresh key for this run.
 */
const devVarsKey = existsSync(join(ROOT, ".dev.vars")) ? keyFromDotenv(readFileSync(join(ROOT, ".dev.vars"), "utf8")) : undefined;
const runKey = devVarsKey ? null : newConnectorKey();
process.env.CONNECTOR_KEY = devVarsKey ?? (runKey as string);
const SERVER_VARS: Record<string, string> = {
  ALLOWED_ORIGINS: ALLOWED_ORIGIN,
  // Local development: the webhook receiver below listens on http://127.0.0.1; a run is stale after 1.2 s.
  ALLOW_HTTP_WEBHOOKS: "1",
  STALE_RUN_MINUTES: "0.02",
  // Where an account lives is cached for a second, so a move settles in two.
  SHARD_CACHE_SECONDS: "1",
  ...(runKey ? { CONNECTOR_KEY: runKey } : {}),
};
let cleaning: Promise<void> | null = null;

/** Stops everything this script started and removes the directory; every caller waits for the same run. */
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    stopStartScripts();
    await Promise.allSettled(sessions.map((s) => s.close()));
    await receiver.stop();
    await stack.stop().catch((e) => checks.fail("stop wrangler dev", (e as Error).message));
    const left = await settle(() => descendants().filter((p) => /workerd|wrangler|chromium|headless_shell/.test(p.command)));
    if (left.length > 0) checks.fail("nothing left running", left.map((p) => `${p.pid} ${p.command.slice(0, 60)}`).join("; "));
  })();
  return cleaning;
}

const startedAt = Date.now();

function finish(): never {
  console.log(`e2e: ${checks.passed} passed, ${checks.failed} failed in ${Math.round((Date.now() - startedAt) / 1000)} s`);
  process.exit(checks.failed > 0 ? 1 : 0);
}

process.on("exit", () => stopStartScripts());
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    checks.fail("e2e", `interrupted by ${signal}`);
    void cleanup().finally(finish);
  });
}
const overall = setTimeout(() => {
  checks.fail("e2e", `did not finish within ${Math.round(HARD_TIMEOUT_MS / 1000)} s`);
  void cleanup().finally(finish);
}, HARD_TIMEOUT_MS);

interface Ready {
  accountId: string;
  tokens: Record<TokenRole, string>;
  tokenIds: Record<TokenRole, string>;
  /** Every account the admin CLI made. */
  accountIds: string[];
}

async function setup(): Promise<Ready | null> {
  const schema = await checks.run("temporary D1 databases: schema.sql applied to DB (DB_1 starts empty)", async () => {
    await stack.applySchema();
    return true;
  });
  if (schema === undefined || !(await migrateChecks(checks, stack))) return null;
  const started = await checks.run("wrangler dev answers GET /health on a free local port", async () => {
    await stack.start(SERVER_VARS);
    return stack.base;
  });
  if (started === undefined) return null;
  // The server holds the same SQLite file: a write that meets its lock is run again, not lost.
  const locked = await checks.run("admin CLI: waits out a write lock another process holds on the database", async () => {
    const lock = await stack.holdWriteLock(2_000);
    const other = await stack.admin(["create-account", "--name", "E2E while locked"]);
    assert(/^acc_/.test(other.id), `an account id, got ${JSON.stringify(other)}`);
    await lock.released;
    return other.id;
  });
  return (
    (await checks.run("admin CLI: create-account, then one token of each kind and scope", async () => {
      const account = await stack.admin(["create-account", "--name", "E2E"]);
      assert(/^acc_/.test(account.id), `an account id, got ${JSON.stringify(account)}`);
      const tokens = {} as Record<TokenRole, string>;
      const tokenIds = {} as Record<TokenRole, string>;
      for (const { role, args } of ROLES) {
        const t = await stack.admin(["create-token", "--account", account.id, ...args]);
        assert(/^tg_/.test(t.token), `a token for ${role}`);
        tokens[role] = t.token;
        tokenIds[role] = t.id;
      }
      return { accountId: account.id, tokens, tokenIds, accountIds: [...(locked ? [locked] : []), account.id] };
    })) ?? null
  );
}

async function open(era: Era, role: TokenRole, secret: string): Promise<McpSession | undefined> {
  return checks.run(`${era} client connects with the ${role} token`, async () => {
    const s = await connect(`${stack.base}/mcp`, secret, era);
    sessions.push(s);
    if (era === "modern") equal(s.protocolVersion, "2026-07-28", "negotiated protocol version");
    else assert(s.protocolVersion && s.protocolVersion !== "2026-07-28", `a legacy protocol version, got ${s.protocolVersion}`);
    return s;
  });
}

async function main(): Promise<void> {
  console.log(`e2e: temporary state in ${stack.dir}`);
  const ready = await setup();
  if (!ready) return;
  const { accountId, tokens, tokenIds, accountIds } = ready;
  await httpEdges(checks, stack.base, tokens["human write"], ALLOWED_ORIGIN);
  const suiteRoles: TokenRole[] = ["human write", "agent read"];
  await conformance(checks, stack.base, suiteRoles.map((role) => ({ role, token: tokens[role] })), stack.dir);

  const byEra = {} as Record<Era, Partial<Record<TokenRole, McpSession>>>;
  for (const era of ["modern", "legacy"] as const) {
    byEra[era] = {};
    for (const { role } of ROLES) {
      const s = await open(era, role, tokens[role]);
      if (!s) continue;
      byEra[era][role] = s;
      await toolList(checks, s, role);
    }
  }

  const pairs: [Era, Era][] = [
    ["modern", "legacy"],
    ["legacy", "modern"],
  ];
  for (const [agentEra, humanEra] of pairs) {
    const human = byEra[humanEra]["human write"];
    const agent = byEra[agentEra]["agent write"];
    const agentRead = byEra[agentEra]["agent read"];
    if (!human || !agent || !agentRead) {
      checks.fail(`task life [agent ${agentEra}, human ${humanEra}]`, "a client did not connect");
      continue;
    }
    await taskLife(checks, { human, agent, agentRead, agentName: AGENT });
  }

  const human = byEra.modern["human write"];
  const agent = byEra.legacy["agent write"];
  if (!human || !agent) checks.fail("webhooks", "a client did not connect");
  else {
    await receiver.start();
    await webhookDeliveries(checks, { dir: stack.dir, base: stack.base, accountId, human, agent, receiver });
  }

  sessions.push(...(await oauthFlows(checks, stack, accountId)));

  await checks.run("admin CLI create-token --policy careful: the agent's list asks before delete_task, and its call waits for the person", async () => {
    const t = await stack.admin(["create-token", "--account", accountId, "--kind", "agent", "--scope", "write", "--agent", "careful-bot", "--policy", "careful"]);
    const careful = await connect(`${stack.base}/mcp`, t.token, "legacy");
    sessions.push(careful);
    const told = (await careful.listTools()).find((tool) => tool.name === "delete_task")?._meta?.["dev.taskgate/policy"];
    equal(told?.decision, "ask", "delete_task's decision");
    const task = (await careful.ok("create_task", { title: "Careful with this one" })).task;
    const asked = await careful.call("delete_task", { task_id: task.id });
    assert(asked.isError && asked.meta["dev.taskgate/pending_action"]?.outcome === "awaiting_approval", `delete_task waits as a pending action: ${asked.text}`);
    equal((await careful.ok("get_task", { task_id: task.id })).task.id, task.id, "the task, still there");
  });

  // The read tokens have served their checks: revoke_token of the catalog revokes them, one in each era.
  const main = { id: accountId, human: tokens["human write"], agent: tokens["agent write"], agentName: AGENT, spares: [tokenIds["human read"], tokenIds["agent read"]] };
  await shardChecks(checks, stack, accountIds, main, sessions);

  await startScriptChecks(checks, join(stack.dir, "npm-start"));
  await catalogCheck(checks);
  await deployChecks(checks);
}

main()
  .catch((e) => checks.fail("e2e", (e as Error).stack ?? String(e)))
  .finally(async () => {
    clearTimeout(overall);
    await cleanup();
    finish();
  });
