/**
 * Taskgate admin CLI: `npm run -s admin -- <command> [options]` (-s: no npm banner on stdout).
 * Local D1 by default (the one `wrangler dev` uses; --persist-to DIR to share a
 * directory with `wrangler dev --persist-to DIR`), or --remote.
 * Prints one line of JSON on stdout; messages go to stderr; bad arguments exit 2.
 */
import { isPolicyPreset, POLICY_PRESET_NAMES, POLICY_PRESETS, rulesText } from "../src/catalog/policy.ts";
import { parseArgs } from "node:util";
import { parseIsoTime } from "../src/domain/dates.ts";
import { EVENT_TYPES } from "../src/domain/events.ts";
import { planToken } from "../src/db/provisioning.ts";
import { findTokenSql, listTokensSql, revokeTokenSql } from "../src/db/admin-tokens.ts";
import { accountTarget, applyMigrations, execute, findInDatabases, query, type Target } from "./lib/d1.ts";
import { migrationLines } from "./lib/migration-report.ts";
import { accountMustExist, oneOf, required, UsageError, type Values } from "./lib/cli.ts";
import { connectCommand } from "./admin-connect.ts";
import { addWebhookCommand, listWebhooksCommand, removeWebhookCommand } from "./admin-webhooks.ts";
import { createAccountCommand, inviteCommand } from "./admin-people.ts";
import { deployConfigIfAny } from "./lib/deploy-config.ts";
import { moveAccountCommand } from "./admin-move.ts";

const USAGE = `Usage: npm run -s admin -- <command> [--remote | --persist-to DIR] [--config FILE]

Commands:
  create-account --name NAME                               (in the database with the most room)
  migrate                                                  (applies new migrations to every database)
  create-token   --account ID --kind human|agent --scope read|write [--agent NAME] [--label TEXT] [--expires ISO]
                 [--policy trusted|careful|read_only]            (an agent token's own policy preset; default trusted)
  invite         --account ID --email EMAIL [--url BASE]   (prints a one-time setup link, valid 7 days)
  list-tokens    --account ID                              (tg_ tokens and apps connected through OAuth)
  revoke-token   --id ID
  connect        --account ID --provider drive|slack|notion --credentials-file FILE
  add-webhook    --account ID --url URL --events TYPE,…|all   (https:// only with --remote)
  list-webhooks  --account ID
  remove-webhook --id ID
  move-account   --account ID --to DB_n [--settle SECONDS]  (checks, copies, verifies, switches, deletes the old rows once routes
                                                           cached at the edge lapse (--settle, 65); safe to run again;
                                                           writes to the account are refused meanwhile)

Webhook events: ${EVENT_TYPES.join(", ")};
  all (or every one named): every event, those added later too`;

const commands: Record<string, (values: Values, target: Target) => Promise<unknown> | unknown> = {
  "create-account": createAccountCommand,
  migrate(_values, target) {
    const done = applyMigrations(target);
    for (const line of migrationLines(done)) console.error(line);
    return { migrated: done.map((d) => d.database), applied: Object.fromEntries(done.map((d) => [d.database, d.applied])) };
  },
  async "create-token"(values, target) {
    const accountId = required(values, "account");
    const kind = oneOf(values, "kind", ["human", "agent"] as const);
    const scope = oneOf(values, "scope", ["read", "write"] as const);
    let expires: string | undefined;
    if (typeof values.expires === "string") {
      const parsed = parseIsoTime(values.expires);
      if (!parsed.ok) throw new UsageError(`--expires: ${parsed.problem}`);
      if (Date.parse(parsed.value) <= Date.now()) throw new UsageError("--expires must be in the future");
      expires = parsed.value;
    }
    const preset = typeof values.policy === "string" ? values.policy : "trusted";
    if (!isPolicyPreset(preset)) throw new UsageError(`--policy must be one of ${POLICY_PRESET_NAMES.join(", ")}`);
    if (kind !== "agent" && preset !== "trusted") throw new UsageError("--policy is only for --kind agent: a policy binds agents, never a person");
    let plan;
    try {
      plan = await planToken(
        {
          accountId,
          kind,
          scope,
          agent: typeof values.agent === "string" ? values.agent : undefined,
          label: typeof values.label === "string" ? values.label : undefined,
          expiresAt: expires ?? null,
          policy: rulesText(POLICY_PRESETS[preset].rules),
          // The secret names the account's database, so a call finds it without asking the directory.
          shard: target.database ?? "DB",
        },
        new Date().toISOString(),
      );
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
    accountMustExist(target, accountId);
    execute(target, plan.statements);
    console.error("Store this token now: it is shown only once.");
    return { id: plan.id, token: plan.secret };
  },
  invite: inviteCommand,
  "list-tokens"(values, target) {
    const accountId = required(values, "account");
    accountMustExist(target, accountId);
    return query(target, listTokensSql(accountId));
  },
  "revoke-token"(values, target) {
    const id = required(values, "id");
    const found = findInDatabases<{ revoked_at: string | null; client_id: string | null }>(target, findTokenSql(id));
    if (!found) throw new UsageError(`no token ${id}; list-tokens --account ID shows the ids`);
    const rows = [found.row];
    const revokedAt = rows[0].revoked_at ?? new Date().toISOString();
    if (!rows[0].revoked_at) execute(found.target, [revokeTokenSql(id, revokedAt)]);
    if (rows[0].client_id) {
      // D1 is checked on every request and every refresh: the app's next one is refused, which also ends the grant in KV.
      console.error("The app's access tokens are refused from its next request on (within a few seconds), and its refresh token ends the grant.");
    }
    return { id, source: rows[0].client_id ? "oauth" : "token", revoked_at: revokedAt };
  },
  connect: connectCommand,
  "add-webhook": addWebhookCommand,
  "list-webhooks": listWebhooksCommand,
  "remove-webhook": removeWebhookCommand,
  "move-account": moveAccountCommand,
};

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === "--help" || command === "-h" || command === "help") {
    console.error(USAGE);
    return command ? 0 : 2;
  }
  const handler = commands[command];
  if (!handler) {
    console.error(`Unknown command ${command}.\n\n${USAGE}`);
    return 2;
  }
  try {
    const { values } = parseArgs({
      args: rest,
      strict: true,
      options: {
        remote: { type: "boolean" },
        "persist-to": { type: "string" },
        config: { type: "string" },
        name: { type: "string" },
        account: { type: "string" },
        kind: { type: "string" },
        scope: { type: "string" },
        agent: { type: "string" },
        label: { type: "string" },
        expires: { type: "string" },
        policy: { type: "string" },
        id: { type: "string" },
        email: { type: "string" },
        url: { type: "string" },
        provider: { type: "string" },
        "credentials-file": { type: "string" },
        events: { type: "string" },
        to: { type: "string" },
        settle: { type: "string" },
      },
    });
    if (values.remote && values["persist-to"]) throw new UsageError("--persist-to is for the local database; leave it out with --remote");
    // After `npm run deploy`, --remote reaches the database whose id it wrote into wrangler.deploy.toml.
    // --config: another wrangler configuration (a local deployment of several databases, say).
    const config = values.config ?? (values.remote ? deployConfigIfAny() : undefined);
    const deployment: Target = { remote: values.remote === true, persistTo: values["persist-to"], config };
    // A command about one account runs in that account's database, found in the directory.
    const target = typeof values.account === "string" ? accountTarget(deployment, values.account) : deployment;
    const result = await handler(values, target);
    process.stdout.write(JSON.stringify(result) + "\n");
    return 0;
  } catch (e) {
    const message = (e as Error).message;
    if (e instanceof UsageError || (e as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      console.error(`${message}\n\n${USAGE}`);
      return 2;
    }
    console.error(`Error: ${message}`);
    return 1;
  }
}

main(process.argv.slice(2)).then((code) => process.exit(code));
