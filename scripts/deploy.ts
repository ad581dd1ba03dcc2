/**
 * `npm run deploy [-- --email EMAIL] [-- --plan]`: from a Cloudflare account
 * with nothing in it to a working Taskgate, and on a later run an upgrade of
 * it, with wrangler's own commands (scripts/lib/deploy-steps.ts):
 * login checked, every D1 database of the configuration (DB, and DB_1, DB_2,
 * … once a deployment grows), the KV namespace and the queue found or
 * created, their ids written to wrangler.deploy.toml (wrangler.toml keeps its
 * placeholders), the migrations each database has not recorded applied,
 * CONNECTOR_KEY set once when the Worker has none (printed once, never
 * replaced), VAPID_KEY likewise (Web Push; not printed), `wrangler deploy`, then the MCP and console URLs and, with
 * --email into a database without accounts, a setup link for the first person.
 * --plan prints one JSON object with each step it would take and why, and
 * changes nothing. A failing step shows wrangler's error and what to do.
 */
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { normalizeEmail, isEmail } from "../src/db/people-plans.ts";
import { createAccountCommand, inviteCommand } from "./admin-people.ts";
import { DEPLOY_CONFIG_NAME, WRANGLER_TOML } from "./lib/deploy-config.ts";
import { DeployFailure, Deployment, type Step } from "./lib/deploy-steps.ts";
import { newVapidKeyValue } from "./lib/demo.ts";
import { resolveWrangler } from "./lib/wrangler-run.ts";

const USAGE = `Usage: npm run deploy [-- --email EMAIL [--account-name NAME]] [-- --plan] [-- --config FILE]

  --email EMAIL          on the first deploy (a database without accounts): an account and a setup link for this person
  --account-name NAME    that account's name (default "Taskgate")
  --plan                 print, as one JSON object, each step it would take and why; change nothing
  --config FILE          the wrangler configuration to deploy (default wrangler.toml); its ids may be placeholders`;

interface Options {
  plan: boolean;
  email: string | null;
  accountName: string;
  config: string;
}

function options(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: { plan: { type: "boolean" }, email: { type: "string" }, "account-name": { type: "string" }, config: { type: "string" }, help: { type: "boolean", short: "h" } },
  });
  if (values.help) {
    console.error(USAGE);
    process.exit(0);
  }
  const email = values.email === undefined ? null : normalizeEmail(values.email);
  if (email !== null && !isEmail(email)) throw new Error(`--email must be an email address (got ${values.email})`);
  const accountName = (values["account-name"] ?? "Taskgate").trim();
  if (!accountName || accountName.length > 200) throw new Error("--account-name must be 1 to 200 characters");
  const config = values.config === undefined ? WRANGLER_TOML : resolve(values.config);
  if (!existsSync(config)) throw new Error(`--config: there is no file ${values.config}`);
  return { plan: values.plan === true, email, accountName, config };
}

/** The first person: an account and a one-time setup link, with the admin CLI's own commands against the deployed database. */
async function firstPerson(d: Deployment, o: Options, origin: string): Promise<string | null> {
  if (!o.email) return null;
  const target = d.adminTarget();
  const account = createAccountCommand({ name: o.accountName }, target);
  const invited = await inviteCommand({ account: account.id, email: o.email, url: origin }, target);
  return `  First person: ${invited.email} in account ${account.id} (${account.name}). Their setup link (works once, until ${invited.expires_at}):\n    ${invited.setup_url}`;
}

function printFailure(e: DeployFailure, plan: boolean, steps: Step[]): void {
  if (plan) {
    process.stdout.write(JSON.stringify({ plan: true, ok: false, steps, failed: { step: e.step, error: e.message, what_to_do: e.advice } }, null, 2) + "\n");
    return;
  }
  console.error(`\nnpm run deploy stopped at the step "${e.step}".\n${e.message}\nWhat to do: ${e.advice}`);
  console.error("What the steps before it made stays; once it is fixed, run npm run deploy again: it reuses what exists.");
}

async function main(argv: string[]): Promise<number> {
  let o: Options;
  try {
    o = options(argv);
  } catch (e) {
    console.error(`${(e as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const wrangler = resolveWrangler();
  if (!wrangler) {
    console.error("npm run deploy: no wrangler on PATH nor in node_modules/.bin; run npm install first.");
    return 1;
  }
  let d: Deployment;
  try {
    d = new Deployment(wrangler, o.plan, o.config);
  } catch (e) {
    console.error(`npm run deploy: ${(e as Error).message}`);
    return 2;
  }
  try {
    await d.login();
    await d.databases();
    await d.kvNamespace();
    await d.queue();
    d.writeConfig();
    await d.migrations();
    const key = await d.connectorKey(() => randomBytes(32).toString("base64"));
    const vapidSet = await d.vapidKey(newVapidKeyValue);
    await d.firstPersonStep(o.email);
    const origin = await d.deploy();
    if (o.plan) {
      process.stdout.write(JSON.stringify({ plan: true, ok: true, account: d.account, steps: d.steps }, null, 2) + "\n");
      return 0;
    }
    const lines = ["", "Taskgate is deployed."];
    if (origin) {
      lines.push(`  MCP server:   ${origin}/mcp   (give this URL to Claude, ChatGPT, Cursor or VS Code as it is)`, `  Web console:  ${origin}/`);
    } else {
      lines.push("  wrangler reported no workers.dev URL (routes only?): the MCP server is https://<your route>/mcp and the console https://<your route>/.");
    }
    if (d.willInvite) {
      const person = await d.run("first-person", "the account and the setup link were not made; make them with npm run -s admin -- create-account --remote, then invite --remote", () =>
        origin ? firstPerson(d, o, origin) : Promise.resolve("  No setup link: without a workers.dev URL, make one with npm run -s admin -- invite --remote --url https://<your route>"),
      );
      if (person) lines.push(person);
    }
    if (key) {
      lines.push(
        "",
        "CONNECTOR_KEY was set on the Worker. It is shown this once: store it now (a password manager).",
        "It seals connector credentials and webhook secrets; `npm run admin -- connect|add-webhook --remote` need it as CONNECTOR_KEY in their environment,",
        "and a later npm run deploy never replaces it.",
        `  CONNECTOR_KEY=${key}`,
      );
    }
    if (vapidSet) lines.push("", "VAPID_KEY was set on the Worker: it signs push notifications, stays on the Worker and is never replaced; there is nothing to store.");
    lines.push("", `The ids are in ${DEPLOY_CONFIG_NAME}; run npm run deploy again after pulling a new version: it applies new migrations and deploys.`);
    console.log(lines.join("\n"));
    return 0;
  } catch (e) {
    if (e instanceof DeployFailure) {
      printFailure(e, o.plan, d.steps);
      return 1;
    }
    throw e;
  } finally {
    d.cleanup();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e) => {
    console.error(`npm run deploy: ${(e as Error).stack ?? e}`);
    process.exit(1);
  },
);
