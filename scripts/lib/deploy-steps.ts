/**
 * The steps of `npm run deploy`, each with wrangler's own commands and in
 * wrangler's own output formats (read from wrangler's source): `whoami
 * --json`, `d1 list --json`, `kv namespace list` (JSON), `queues list` (a
 * table), `secret list` (JSON), `d1 execute --json`. Each step records what
 * it does and why; with `plan` nothing is created, written or deployed.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { COUNT_ACCOUNTS_SQL } from "../../src/db/provisioning.ts";
import { query, ROOT, type Target } from "./d1.ts";
import { DEPLOY_CONFIG, DEPLOY_CONFIG_NAME, deployConfigText, isPlaceholder, readNames, WRANGLER_TOML, type Names } from "./deploy-config.ts";
import { jsonIn, runWrangler, tableRows, WranglerError, type RunOptions, type WranglerResult } from "./wrangler-run.ts";

export interface Step {
  step: string;
  action: string;
  why: string;
  [detail: string]: unknown;
}

/** A step that could not be done: wrangler's error (or ours) and what the person can do about it. */
export class DeployFailure extends Error {
  readonly step: string;
  readonly advice: string;
  constructor(step: string, message: string, advice: string) {
    super(message);
    this.step = step;
    this.advice = advice;
  }
}

const MIGRATIONS_DIR = join(ROOT, "migrations");
const QUEUE_PAGES = 20;

export class Deployment {
  readonly steps: Step[] = [];
  account: { id: string; name: string } | null = null;
  willInvite = false;
  private readonly names: Names;
  private readonly source: string;
  /** Each D1 binding's database in the account (DB, DB_1, …), once found or made. */
  private readonly dbs = new Map<string, { uuid: string; name: string }>();
  private kvId: string | null = null;
  /** Each database's migrations not yet recorded, by binding. */
  private pending = new Map<string, string[]>();
  private workerExists = false;
  /** The Worker's secret names (secret list), once read; null when the Worker does not exist yet. */
  private secretNames: string[] | null = null;
  private configWritten = false;
  private scratch: string | null = null;
  private readonly wrangler: string;
  private readonly plan: boolean;

  /** `source`: the wrangler configuration to deploy (wrangler.toml unless --config names another). */
  constructor(wrangler: string, plan: boolean, source = WRANGLER_TOML) {
    this.wrangler = wrangler;
    this.plan = plan;
    this.source = source;
    this.names = readNames(readFileSync(source, "utf8"));
  }

  /** Runs one step's work; a wrangler failure becomes a DeployFailure with the step's advice. */
  async run<T>(step: string, advice: string, work: () => Promise<T> | T): Promise<T> {
    try {
      return await work();
    } catch (e) {
      if (e instanceof DeployFailure) throw e;
      throw new DeployFailure(step, (e as Error).message, advice);
    }
  }

  private record(s: Step): void {
    this.steps.push(s);
    if (!this.plan) console.error(`• ${s.step}: ${s.action} (${s.why})`);
  }

  private w(args: string[], o: RunOptions = {}): Promise<WranglerResult> {
    return runWrangler(this.wrangler, args, o);
  }

  async login(): Promise<void> {
    const advice = "log in with `npx wrangler login` (or set CLOUDFLARE_API_TOKEN to an API token that may edit Workers, D1, KV and Queues), then run npm run deploy again";
    const out = await this.run("login", advice, () =>
      this.w(["whoami", "--json"]).catch((e: WranglerError) => ({ stdout: e.detail, stderr: "" })),
    );
    let who: { loggedIn?: boolean; email?: string; accounts?: { id: string; name: string }[] };
    try {
      who = jsonIn(out.stdout);
    } catch {
      throw new DeployFailure("login", `wrangler whoami --json did not answer in JSON:\n${out.stdout.trim().slice(0, 500)}`, advice);
    }
    if (!who.loggedIn) throw new DeployFailure("login", "Not logged in to Cloudflare (wrangler whoami --json: {\"loggedIn\":false}).", advice);
    const accounts = who.accounts ?? [];
    const chosen = process.env.CLOUDFLARE_ACCOUNT_ID;
    const account = chosen ? accounts.find((a) => a.id === chosen) : accounts.length === 1 ? accounts[0] : undefined;
    if (!account) {
      const list = accounts.map((a) => `${a.name} (${a.id})`).join(", ") || "none";
      throw new DeployFailure(
        "login",
        chosen ? `CLOUDFLARE_ACCOUNT_ID=${chosen} is not one of this login's accounts: ${list}.` : `This login has ${accounts.length} accounts: ${list}.`,
        "say which one: CLOUDFLARE_ACCOUNT_ID=<id> npm run deploy",
      );
    }
    this.account = { id: account.id, name: account.name };
    this.record({ step: "login", action: "check", why: `logged in${who.email ? ` as ${who.email}` : ""}, deploying to the account ${account.name} (${account.id})` });
  }

  /** Every D1 database of the configuration (DB, then DB_1, DB_2, …): found by its id or name, or created. */
  async databases(): Promise<void> {
    const advice = "check that this login may list and create D1 databases (an API token needs D1 Edit) and that the account is below its number of databases";
    const list = () => this.run("d1", advice, async () => jsonIn<{ uuid: string; name: string }[]>((await this.w(["d1", "list", "--json"])).stdout));
    let all = await list();
    for (const { binding, name, id } of this.names.databases) {
      const find = () => all.find((d) => (id ? d.uuid === id : d.name === name)) ?? null;
      const found = find();
      if (id && !found) {
        throw new DeployFailure("d1", `wrangler.toml names the D1 database ${id} (binding ${binding}), which this account does not have.`, "log in to the account that has it, or put the placeholder id back in wrangler.toml so that npm run deploy finds or creates the database by its name");
      }
      if (found) {
        this.dbs.set(binding, found);
        this.record({ step: "d1", action: "reuse", binding, name: found.name, id: found.uuid, why: id ? `the database_id of ${binding} in wrangler.toml` : `the account has a D1 database named ${name}` });
        continue;
      }
      const why = binding === "DB" ? `the account has no D1 database named ${name}` : `wrangler.toml adds the database ${binding}, and the account has none named ${name}: new accounts will go to it`;
      this.record({ step: "d1", action: "create", binding, name, why });
      if (this.plan) continue;
      await this.run("d1", advice, () => this.w(["d1", "create", name]));
      all = await list();
      const made = find();
      if (!made) throw new DeployFailure("d1", `wrangler d1 create ${name} succeeded, but d1 list does not show it.`, "run npm run deploy again in a minute");
      this.dbs.set(binding, made);
    }
  }

  async kvNamespace(): Promise<void> {
    const { kvId, kvTitle } = this.names;
    const advice = "check that this login may list and create KV namespaces (an API token needs Workers KV Storage Edit)";
    const list = () => this.run("kv", advice, async () => jsonIn<{ id: string; title: string }[]>((await this.w(["kv", "namespace", "list"])).stdout));
    const find = (all: { id: string; title: string }[]) => all.find((n) => (kvId ? n.id === kvId : n.title === kvTitle))?.id ?? null;
    this.kvId = find(await list());
    if (kvId && !this.kvId) {
      throw new DeployFailure("kv", `wrangler.toml names the KV namespace ${kvId}, which this account does not have.`, "log in to the account that has it, or put the placeholder id back in wrangler.toml so that npm run deploy finds or creates the namespace");
    }
    if (this.kvId) {
      this.record({ step: "kv", action: "reuse", title: kvTitle, id: this.kvId, why: kvId ? "the OAUTH_KV id in wrangler.toml" : `the account has a KV namespace titled ${kvTitle}` });
      return;
    }
    this.record({ step: "kv", action: "create", title: kvTitle, why: `the account has no KV namespace titled ${kvTitle} (OAuth clients and grants, binding OAUTH_KV)` });
    if (this.plan) return;
    await this.run("kv", advice, () => this.w(["kv", "namespace", "create", kvTitle]));
    this.kvId = find(await list());
    if (!this.kvId) throw new DeployFailure("kv", `wrangler kv namespace create ${kvTitle} succeeded, but kv namespace list does not show it.`, "run npm run deploy again in a minute");
  }

  async queue(): Promise<void> {
    const { queue } = this.names;
    const advice = "Queues need the Workers Paid plan on the account; check the plan, and that this login may create queues (an API token needs Queues Edit)";
    let exists = false;
    await this.run("queue", advice, async () => {
      // `queues list` prints one page of a table; later pages until one comes back empty.
      for (let page = 1; page <= QUEUE_PAGES && !exists; page++) {
        const rows = tableRows((await this.w(["queues", "list", ...(page > 1 ? ["--page", String(page)] : [])])).stdout);
        exists = rows.some((r) => r.name === queue);
        if (rows.length === 0) break;
      }
    });
    this.record({ step: "queue", action: exists ? "reuse" : "create", name: queue, why: exists ? `the account has the queue ${queue}` : `the account has no queue ${queue} (webhook deliveries)` });
    if (!exists && !this.plan) await this.run("queue", advice, () => this.w(["queues", "create", queue]));
  }

  /** wrangler.deploy.toml: wrangler.toml with this account's ids. */
  writeConfig(): void {
    const why = `wrangler.toml with this account's D1 and KV ids, for every wrangler command that follows (wrangler.toml keeps its placeholders)`;
    this.record({ step: "config", action: "write", file: DEPLOY_CONFIG_NAME, why });
    if (this.plan) return;
    const databaseIds = Object.fromEntries([...this.dbs].map(([binding, d]) => [binding, d.uuid]));
    if (this.dbs.size !== this.names.databases.length || !this.kvId) throw new DeployFailure("config", "a D1 database or the KV namespace has no id", "run npm run deploy again");
    writeFileSync(DEPLOY_CONFIG, deployConfigText({ databaseIds, kvId: this.kvId }, DEPLOY_CONFIG, readFileSync(this.source, "utf8"), dirname(this.source)));
    this.configWritten = true;
  }

  /**
   * The configuration the read-only commands use: the deploy configuration
   * once written; with --plan, a scratch copy with the ids known so far (the
   * Worker's name, and the database when it exists).
   */
  private readConfig(): string {
    if (this.configWritten) return DEPLOY_CONFIG;
    this.scratch ??= mkdtempSync(join(tmpdir(), "taskgate-plan-"));
    const file = join(this.scratch, "wrangler.toml");
    const d1 = [...this.dbs]
      .map(([binding, d]) => `\n[[d1_databases]]\nbinding = "${binding}"\ndatabase_name = "${d.name}"\ndatabase_id = "${d.uuid}"\nmigrations_dir = ${JSON.stringify(MIGRATIONS_DIR)}\n`)
      .join("");
    writeFileSync(file, `name = "${this.names.worker}"\nmain = ${JSON.stringify(join(ROOT, "src", "index.ts"))}\ncompatibility_date = "2026-10-01"\n${d1}`);
    return file;
  }

  /** The admin CLI's target for the deployed databases (or one of them, by binding), through the same wrangler. */
  adminTarget(database?: string): Target {
    return { remote: true, config: this.readConfig(), wrangler: this.wrangler, ...(database ? { database } : {}) };
  }

  /** Each database's migrations that it has not recorded, applied (a new database gets every one: its whole schema). */
  async migrations(): Promise<void> {
    const all = readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith(".sql")).sort();
    const advice = "wrangler's error names the migration and its statement; the migrations before it stay applied. Fix the cause, then run npm run deploy again";
    for (const { binding, name } of this.names.databases) {
      let applied: string[] = [];
      if (this.dbs.has(binding)) {
        applied = await this.run("migrations", advice, () => {
          try {
            return query<{ name: string }>(this.adminTarget(binding), { sql: "SELECT name FROM d1_migrations ORDER BY id", params: [] }).map((r) => r.name);
          } catch (e) {
            if (/no such table: d1_migrations/.test((e as Error).message)) return [];
            throw e;
          }
        });
      }
      const pending = all.filter((f) => !applied.includes(f.replace(/\.sql$/, "")) && !applied.includes(f));
      this.pending.set(binding, pending);
      const why = pending.length === 0 ? "the database has recorded every file of migrations/" : applied.length === 0 ? "a new database: every file of migrations/ builds the schema" : `the database has not recorded ${pending.length === 1 ? "this file" : "these files"} of migrations/ yet`;
      this.record({ step: "migrations", action: pending.length ? "apply" : "none", binding, migrations: pending, why });
      if (pending.length === 0 || this.plan) continue;
      await this.run("migrations", advice, () => this.w(["d1", "migrations", "apply", name, "--remote", "--config", DEPLOY_CONFIG], { echo: true }));
    }
  }

  /** Sets CONNECTOR_KEY when the Worker has none; returns the new key (to print once), or null when it was kept. */
  async connectorKey(make: () => string): Promise<string | null> {
    const advice = "check that this login may edit Workers (an API token needs Workers Scripts Edit)";
    const names = await this.run("secret", advice, async () => {
      try {
        return jsonIn<{ name: string }[]>((await this.w(["secret", "list", "--config", this.readConfig()])).stdout).map((s) => s.name);
      } catch (e) {
        if (e instanceof WranglerError && /Worker "[^"]*" not found/.test(e.detail)) return null;
        throw e;
      }
    });
    this.workerExists = names !== null;
    this.secretNames = names;
    const has = names?.includes("CONNECTOR_KEY") ?? false;
    this.record({
      step: "secret",
      action: has ? "keep" : "set",
      name: "CONNECTOR_KEY",
      why: has ? "the Worker has CONNECTOR_KEY, which is never replaced" : this.workerExists ? "the Worker has no CONNECTOR_KEY" : "the Worker does not exist yet: a new key, printed once",
    });
    if (has || this.plan) return null;
    const key = make();
    await this.run("secret", advice, () => this.w(["secret", "put", "CONNECTOR_KEY", "--config", DEPLOY_CONFIG], { input: key }));
    return key;
  }

  /**
   * Sets VAPID_KEY (the key pair that signs Web Push messages) when the Worker
   * has none; never replaced, since every browser subscribed with its public
   * half. Runs after connectorKey, whose secret list it reads. True when set.
   */
  async vapidKey(make: () => string): Promise<boolean> {
    const advice = "check that this login may edit Workers (an API token needs Workers Scripts Edit)";
    const has = this.secretNames?.includes("VAPID_KEY") ?? false;
    this.record({
      step: "secret",
      action: has ? "keep" : "set",
      name: "VAPID_KEY",
      why: has ? "the Worker has VAPID_KEY, which is never replaced (subscribed browsers hold its public half)" : "the Worker has no VAPID_KEY to sign push notifications with",
    });
    if (has || this.plan) return false;
    await this.run("secret", advice, () => this.w(["secret", "put", "VAPID_KEY", "--config", DEPLOY_CONFIG], { input: make() }));
    return true;
  }

  /** Whether the first person is made after the deploy: --email, and no database with an account in it. */
  async firstPersonStep(email: string | null): Promise<void> {
    if (!email) return;
    const every = readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith(".sql")).length;
    let accounts = 0;
    for (const { binding } of this.names.databases) {
      // A database with no schema yet (or none at all) has no account.
      if (!this.dbs.has(binding) || (this.pending.get(binding)?.length ?? every) >= every) continue;
      const count = () => Number(query<{ n: number }>(this.adminTarget(binding), COUNT_ACCOUNTS_SQL)[0]?.n ?? 0);
      accounts += await this.run("first-person", `check that the database answers (npx wrangler d1 execute ${binding} --remote --command "SELECT 1")`, count);
    }
    this.willInvite = accounts === 0;
    this.record({
      step: "first-person",
      action: this.willInvite ? "invite" : "skip",
      email,
      why: this.willInvite
        ? "the database has no account yet: an account and a one-time setup link for this person"
        : `the deployment already has ${accounts} account${accounts === 1 ? "" : "s"}; invite more people with npm run -s admin -- invite --account ID --email EMAIL --remote --url https://…`,
    });
  }

  /** `wrangler deploy` with the deploy configuration; returns the workers.dev origin it printed, or null. */
  async deploy(): Promise<string | null> {
    this.record({ step: "deploy", action: "deploy", why: this.workerExists ? "upload this checkout's code to the Worker" : "the first upload of the Worker" });
    if (this.plan) return null;
    const advice = "read wrangler's error above; a new account registers its workers.dev subdomain once, in the dashboard (Workers & Pages)";
    const ids = [...this.dbs.values()].map((d) => d.uuid);
    if (ids.length !== this.names.databases.length || ids.some(isPlaceholder) || !this.kvId || isPlaceholder(this.kvId)) {
      throw new DeployFailure("deploy", "refusing to deploy with a placeholder id", advice);
    }
    const out = await this.run("deploy", advice, () => this.w(["deploy", "--config", DEPLOY_CONFIG], { echo: true }));
    return workersDevOrigin(out.stdout);
  }

  cleanup(): void {
    if (this.scratch) rmSync(this.scratch, { recursive: true, force: true });
  }
}

/** The `https://….workers.dev` line `wrangler deploy` prints under "Deployed NAME triggers". */
export function workersDevOrigin(output: string): string | null {
  const m = /^\s+(https:\/\/[a-z0-9.-]+\.workers\.dev)\s*$/im.exec(output);
  return m ? m[1] : null;
}
