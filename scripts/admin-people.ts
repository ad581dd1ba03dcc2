/**
 * Accounts and the people who sign in, from the admin CLI (create-account,
 * invite); `npm run deploy -- --email` makes the first person with the same
 * commands against the deployed database.
 */
import { FIRST_SHARD, planAccount, roomiestOf } from "../src/db/provisioning.ts";
import { normalizeEmail, planInvite, setupUrl } from "../src/db/people-plans.ts";
import { databaseUses, databasesOf, execute, inDatabase, query, type Target } from "./lib/d1.ts";
import { accountMustExist, required, UsageError, type Values } from "./lib/cli.ts";
import { emailOwnerElsewhere } from "../src/db/email-owners.ts";
import type { Row, SqlDb } from "../src/db/move-account.ts";

/** A database of the target as the shared checks read it (wrangler d1 execute). */
function sqlOf(target: Target): SqlDb {
  return { all: async (s) => query<Row>(target, s), batch: async (statements) => execute(target, statements) };
}

export function createAccountCommand(values: Values, target: Target): { id: string; name: string } {
  const name = required(values, "name");
  if (name.length > 200) throw new UsageError("--name is limited to 200 characters");
  // A new account goes to the database with the most room; the directory (in the first) says where.
  const databases = databasesOf(target);
  const shard = databases.length === 1 ? FIRST_SHARD : roomiestOf(databaseUses(target));
  const plan = planAccount(name, new Date().toISOString(), shard);
  if (shard === FIRST_SHARD) execute(target, [...plan.directory, ...plan.statements]);
  else {
    execute(inDatabase(target, shard), plan.statements);
    execute(target, plan.directory);
  }
  return { id: plan.id, name: plan.name };
}

export interface Invited {
  person_id: string | null;
  account_id: string;
  email: string;
  setup_url: string;
  expires_at: string;
}

export async function inviteCommand(values: Values, target: Target): Promise<Invited> {
  const accountId = required(values, "account");
  const email = normalizeEmail(required(values, "email"));
  const base = baseUrl(values, target);
  let plan;
  try {
    plan = await planInvite(accountId, email, new Date().toISOString());
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  accountMustExist(target, accountId);
  // Every database of the deployment, and the directory: an email belongs to one account wherever it lives.
  const deployment = inDatabase(target, "DB");
  const owner = await emailOwnerElsewhere(
    plan.email,
    accountId,
    sqlOf(deployment),
    databasesOf(target).map((name) => ({ name, db: sqlOf(inDatabase(target, name)) })),
  );
  if (owner) {
    throw new UsageError(`${plan.email} already signs in to account ${owner.account} (${owner.where}); an email belongs to one account in the whole deployment`);
  }
  execute(inDatabase(target, "DB"), plan.directory);
  execute(target, plan.statements);
  const person = query<{ id: string }>(target, { sql: "SELECT id FROM people WHERE email = ?", params: [plan.email] });
  console.error("Send this link to the person: it works once, until it expires.");
  return { person_id: person[0]?.id ?? null, account_id: accountId, email: plan.email, setup_url: setupUrl(base, plan.secret), expires_at: plan.expiresAt };
}

/** Where the setup link points: --url, or the local server `npm start` runs. */
function baseUrl(values: Values, target: Target): string {
  const raw = typeof values.url === "string" ? values.url.trim() : "";
  if (!raw) {
    if (target.remote) throw new UsageError("--url https://your-taskgate-host is needed with --remote: the link must point at the deployed Worker");
    return `http://127.0.0.1:${process.env.PORT || "8787"}`;
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`--url must be an origin like https://taskgate.example.com (got ${raw})`);
  }
  const loopback = ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);
  if (url.protocol !== "https:" && !(url.protocol === "http:" && loopback)) throw new UsageError("--url must use https (http only for localhost)");
  return url.origin;
}
