/**
 * Taskgate admin CLI: `npm run admin -- <command> [options]`.
 * Local D1 by default (the one `wrangler dev` uses; --persist-to DIR to share a
 * directory with `wrangler dev --persist-to DIR`), or --remote.
 * Prints one line of JSON on stdout; messages go to stderr; bad arguments exit 2.
 */
import { parseArgs } from "node:util";
import { planAccount, planToken } from "../src/domain/provisioning.ts";
import { execute, query, type Target } from "./lib/d1.ts";
import { accountMustExist, oneOf, required, UsageError, type Values } from "./lib/cli.ts";
import { connectCommand } from "./admin-connect.ts";
import { addWebhookCommand, listWebhooksCommand, removeWebhookCommand } from "./admin-webhooks.ts";

const USAGE = `Usage: npm run admin -- <command> [--remote | --persist-to DIR]

Commands:
  create-account --name NAME
  create-token   --account ID --kind human|agent --scope read|write [--agent NAME] [--label TEXT] [--expires ISO]
  list-tokens    --account ID
  revoke-token   --id ID
  connect        --account ID --provider drive|slack|notion --credentials-file FILE
  add-webhook    --account ID --url URL --events TYPE,…|all   (https:// only with --remote)
  list-webhooks  --account ID
  remove-webhook --id ID

Webhook events: approval.requested, task.completed, task.rejected, run.stale, claim.lapsed`;

const commands: Record<string, (values: Values, target: Target) => Promise<unknown> | unknown> = {
  "create-account"(values, target) {
    const name = required(values, "name");
    if (name.length > 200) throw new UsageError("--name is limited to 200 characters");
    const plan = planAccount(name, new Date().toISOString());
    execute(target, plan.statements);
    return { id: plan.id, name: plan.name };
  },
  async "create-token"(values, target) {
    const accountId = required(values, "account");
    const kind = oneOf(values, "kind", ["human", "agent"] as const);
    const scope = oneOf(values, "scope", ["read", "write"] as const);
    const expires = typeof values.expires === "string" ? values.expires : undefined;
    if (expires !== undefined && (Number.isNaN(Date.parse(expires)) || !/^\d{4}-\d{2}-\d{2}T/.test(expires))) {
      throw new UsageError("--expires must be an ISO 8601 time like 2027-01-31T00:00:00Z");
    }
    if (expires !== undefined && Date.parse(expires) <= Date.now()) throw new UsageError("--expires must be in the future");
    let plan;
    try {
      plan = await planToken(
        {
          accountId,
          kind,
          scope,
          agent: typeof values.agent === "string" ? values.agent : undefined,
          label: typeof values.label === "string" ? values.label : undefined,
          expiresAt: expires ? new Date(expires).toISOString() : null,
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
  "list-tokens"(values, target) {
    const accountId = required(values, "account");
    accountMustExist(target, accountId);
    return query(target, {
      sql: `SELECT t.id, t.label, t.kind, t.scope, a.name AS agent, t.prefix, t.created_at, t.expires_at, t.revoked_at, t.last_used_at
              FROM tokens t LEFT JOIN agents a ON a.id = t.agent_id WHERE t.account_id = ? ORDER BY t.created_at`,
      params: [accountId],
    });
  },
  "revoke-token"(values, target) {
    const id = required(values, "id");
    const rows = query<{ revoked_at: string | null }>(target, { sql: "SELECT revoked_at FROM tokens WHERE id = ?", params: [id] });
    if (rows.length === 0) throw new UsageError(`no token ${id}; list-tokens --account ID shows the ids`);
    const revokedAt = rows[0].revoked_at ?? new Date().toISOString();
    if (!rows[0].revoked_at) execute(target, [{ sql: "UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", params: [revokedAt, id] }]);
    return { id, revoked_at: revokedAt };
  },
  connect: connectCommand,
  "add-webhook": addWebhookCommand,
  "list-webhooks": listWebhooksCommand,
  "remove-webhook": removeWebhookCommand,
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
        name: { type: "string" },
        account: { type: "string" },
        kind: { type: "string" },
        scope: { type: "string" },
        agent: { type: "string" },
        label: { type: "string" },
        expires: { type: "string" },
        id: { type: "string" },
        provider: { type: "string" },
        "credentials-file": { type: "string" },
        url: { type: "string" },
        events: { type: "string" },
      },
    });
    if (values.remote && values["persist-to"]) throw new UsageError("--persist-to is for the local database; leave it out with --remote");
    const target: Target = { remote: values.remote === true, persistTo: values["persist-to"] };
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
