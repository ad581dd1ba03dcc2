/**
 * The local setup `npm start` prepares before serving: the schema in the local
 * D1, a demo account with one token of each kind (kept in a git-ignored file so
 * every start can show them again), and `.dev.vars` with a connector key.
 */
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { FIRST_SHARD, planAccount, planToken, type Sql } from "../../src/db/provisioning.ts";
import { planDemoPerson } from "../../src/db/people-plans.ts";
import { hashPassword, verifyPassword } from "../../src/domain/passwords.ts";
import type { TokenKind, TokenScope } from "../../src/domain/principal.ts";
import { applyMigrations, applySchemaFile, databasesOf, execute, inDatabase, query, ROOT, type Target } from "./d1.ts";
import type { AppliedMigrations } from "./migration-report.ts";

/** Where the demo tokens are kept: the project root, or the state directory given with --persist-to. */
export function demoFile(target: Target): string {
  return join(target.persistTo ?? ROOT, ".taskgate-demo.json");
}

/** The project's .dev.vars, which wrangler dev reads on its own. */
export const DEV_VARS_FILE = join(ROOT, ".dev.vars");
export const DEMO_AGENT = "demo-agent";
export const DEMO_EMAIL = "demo@example.com";

export type DemoRole = "human" | "humanRead" | "agent" | "agentRead";

export const DEMO_ROLES: Record<DemoRole, { kind: TokenKind; scope: TokenScope; agent?: string; sees: string }> = {
  human: { kind: "human", scope: "write", sees: "every tool" },
  humanRead: { kind: "human", scope: "read", sees: "the read tools" },
  agent: { kind: "agent", scope: "write", agent: DEMO_AGENT, sees: "every tool except the human-only ones" },
  agentRead: { kind: "agent", scope: "read", agent: DEMO_AGENT, sees: "the read tools" },
};

export interface DemoToken {
  id: string;
  secret: string;
}

export interface DemoPerson {
  email: string;
  password: string;
}

export interface Demo {
  account: { id: string; name: string };
  tokens: Record<DemoRole, DemoToken>;
  /** The person who signs in on the pages (and consents when an app connects by URL). */
  person?: DemoPerson;
  created_at: string;
}

export interface DevVars {
  /** The file that holds CONNECTOR_KEY and VAPID_KEY. */
  file: string;
  created: boolean;
  /** Pass it to wrangler dev with --env-file (it is not the project's own .dev.vars). */
  envFile: boolean;
  /** A VAPID_KEY was written to it by this start. */
  vapidAdded: boolean;
}

/** A new VAPID key pair as the VAPID_KEY value: `<public>.<private>`, base64url (src/domain/push.ts parses it). */
export function newVapidKeyValue(): string {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const jwk = privateKey.export({ format: "jwk" });
  const point = Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x as string, "base64url"), Buffer.from(jwk.y as string, "base64url")]);
  return `${point.toString("base64url")}.${jwk.d}`;
}

/**
 * Local secrets for wrangler dev: a CONNECTOR_KEY (connectors, webhook
 * secrets) and a VAPID_KEY (Web Push). The project's `.dev.vars` when it
 * exists; else one is made with random keys, at the project root, or with
 * --persist-to in that directory (so such a run writes only there). A file
 * without a VAPID_KEY (from an older start) gets one added; no key in it is
 * ever replaced.
 */
export function ensureDevVars(target: Target): DevVars {
  const existing = existsSync(DEV_VARS_FILE) ? DEV_VARS_FILE : target.persistTo ? join(target.persistTo, ".dev.vars") : DEV_VARS_FILE;
  const envFile = existing !== DEV_VARS_FILE;
  if (existsSync(existing)) {
    const text = readFileSync(existing, "utf8");
    const vapidAdded = !/^VAPID_KEY=/m.test(text);
    if (vapidAdded) writeFileSync(existing, `${text}${text.endsWith("\n") || text === "" ? "" : "\n"}VAPID_KEY=${newVapidKeyValue()}\n`, { mode: 0o600 });
    return { file: existing, created: false, envFile, vapidAdded };
  }
  const key = randomBytes(32).toString("base64");
  mkdirSync(dirname(existing), { recursive: true });
  writeFileSync(existing, `# Local secrets for wrangler dev (git-ignored).\nCONNECTOR_KEY=${key}\nVAPID_KEY=${newVapidKeyValue()}\n`, { mode: 0o600 });
  return { file: existing, created: true, envFile, vapidAdded: true };
}

/** What ensureSchema did: the databases it made from schema.sql, and the migrations it applied to the others. */
export interface PreparedSchema {
  created: string[];
  migrated: AppliedMigrations[];
}

/**
 * Applies schema.sql to each database of the configuration that has no
 * `tasks` table yet; a database from an earlier start gets the migrations it
 * lacks instead. Returns what it did to each.
 */
export function ensureSchema(target: Target): PreparedSchema {
  const done: PreparedSchema = { created: [], migrated: [] };
  // Every database of the configuration (DB, and DB_1, … when declared).
  for (const db of databasesOf(target)) {
    const one = inDatabase(target, db);
    const rows = query(one, { sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?", params: ["tasks"] });
    if (rows.length > 0) {
      done.migrated.push(...applyMigrations(one));
    } else {
      applySchemaFile(one, join(ROOT, "schema.sql"));
      done.created.push(db);
    }
  }
  return done;
}

/** A readable random password for the demo person: 20 characters, letters and digits. */
function demoPassword(): string {
  const alphabet = "abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
  return Array.from(randomBytes(20), (b) => alphabet[b % alphabet.length]).join("");
}

/** The demo person, kept if its saved password still signs in, otherwise (re)made with a new password. */
async function ensureDemoPerson(target: Target, demo: Demo, now: string): Promise<boolean> {
  if (demo.person) {
    const rows = query<{ password_hash: string | null; account_id: string }>(target, {
      sql: "SELECT password_hash, account_id FROM people WHERE email = ?",
      params: [demo.person.email],
    });
    const row = rows[0];
    if (row && row.account_id === demo.account.id && row.password_hash && (await verifyPassword(demo.person.password, row.password_hash))) return false;
  }
  const password = demoPassword();
  const plan = planDemoPerson(demo.account.id, DEMO_EMAIL, await hashPassword(password), now);
  execute(target, plan.statements);
  demo.person = { email: plan.email, password };
  return true;
}

function readDemo(file: string): Demo | null {
  if (!existsSync(file)) return null;
  try {
    const demo = JSON.parse(readFileSync(file, "utf8")) as Demo;
    if (!demo?.account?.id || !demo.tokens) return null;
    return demo;
  } catch {
    return null;
  }
}

function writeDemo(file: string, demo: Demo): void {
  writeFileSync(file, JSON.stringify(demo, null, 2) + "\n", { mode: 0o600 });
}

async function planRole(accountId: string, role: DemoRole, now: string): Promise<{ token: DemoToken; statements: Sql[] }> {
  const r = DEMO_ROLES[role];
  // The demo account lives in the first database; its secrets say so, so a call asks no directory.
  const plan = await planToken({ accountId, kind: r.kind, scope: r.scope, agent: r.agent, label: `demo: ${r.kind} ${r.scope}`, shard: FIRST_SHARD }, now);
  return { token: { id: plan.id, secret: plan.secret }, statements: plan.statements };
}

export interface DemoResult {
  demo: Demo;
  /** What this start did: "created", "kept", or "renewed" (some tokens were revoked or gone). */
  state: "created" | "kept" | "renewed";
}

/**
 * The demo account of `.taskgate-demo.json` (see demoFile) if it still exists in the local
 * database; tokens that were revoked, expired or removed are replaced. Without
 * the file (or its account), a fresh demo account with four tokens, written in
 * one batch.
 */
export async function ensureDemo(target: Target): Promise<DemoResult> {
  const now = new Date().toISOString();
  const file = demoFile(target);
  const saved = readDemo(file);
  if (saved) {
    const rows = query<{ token_id: string | null; revoked_at: string | null; expires_at: string | null }>(target, {
      sql: "SELECT t.id AS token_id, t.revoked_at, t.expires_at FROM accounts a LEFT JOIN tokens t ON t.account_id = a.id WHERE a.id = ?",
      params: [saved.account.id],
    });
    if (rows.length > 0) {
      const live = new Set(
        rows.filter((r) => r.token_id && !r.revoked_at && (!r.expires_at || Date.parse(r.expires_at) > Date.now())).map((r) => r.token_id),
      );
      const stale = (Object.keys(DEMO_ROLES) as DemoRole[]).filter((role) => !saved.tokens[role] || !live.has(saved.tokens[role].id));
      const personChanged = await ensureDemoPerson(target, saved, now);
      if (stale.length === 0) {
        if (personChanged) writeDemo(file, saved);
        return { demo: saved, state: personChanged ? "renewed" : "kept" };
      }
      const statements: Sql[] = [];
      for (const role of stale) {
        const planned = await planRole(saved.account.id, role, now);
        saved.tokens[role] = planned.token;
        statements.push(...planned.statements);
      }
      execute(target, statements);
      writeDemo(file, saved);
      return { demo: saved, state: "renewed" };
    }
  }
  const account = planAccount("Demo", now);
  const statements: Sql[] = [...account.directory, ...account.statements];
  const tokens = {} as Record<DemoRole, DemoToken>;
  for (const role of Object.keys(DEMO_ROLES) as DemoRole[]) {
    const planned = await planRole(account.id, role, now);
    tokens[role] = planned.token;
    statements.push(...planned.statements);
  }
  execute(target, statements);
  const demo: Demo = { account: { id: account.id, name: account.name }, tokens, created_at: now };
  await ensureDemoPerson(target, demo, now);
  writeDemo(file, demo);
  return { demo, state: "created" };
}
