/**
 * `npm run deploy` end to end against the stand-in wrangler
 * (scripts/e2e/fake-wrangler.ts) first on PATH, each case with its own
 * temporary account state: a first deploy from nothing, a second one that
 * changes nothing but the code, an upgrade that applies only the new
 * migration, a failing step, not logged in, and --plan. The deploy
 * configuration goes to the temporary directory (TASKGATE_DEPLOY_CONFIG), so
 * the project's own files are never touched.
 */
import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { ROOT } from "./d1.ts";
import { assert, equal, removeDir, type Checks } from "./e2e-harness.ts";

const DEPLOY = join(ROOT, "scripts", "deploy.ts");
const FAKE = join(ROOT, "scripts", "e2e", "fake-wrangler.ts");
const MIGRATIONS = readdirSync(join(ROOT, "migrations")).filter((f) => f.endsWith(".sql")).sort();

interface Call {
  argv: string[];
  command: string;
  config: string | null;
  stdin?: string;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  calls: Call[];
}

/** One Cloudflare account as the stand-in keeps it, and `npm run deploy` run against it. */
class FakeAccount {
  readonly dir = mkdtempSync(join(tmpdir(), "taskgate-deploy-"));
  private readonly bin = join(this.dir, "bin");
  readonly state = join(this.dir, "state");
  readonly config = join(this.dir, "wrangler.deploy.toml");
  private seen = 0;

  constructor() {
    mkdirSync(this.bin);
    mkdirSync(this.state);
    // `wrangler` on PATH, run by this Node (it has node:sqlite and strips types).
    writeFileSync(join(this.bin, "wrangler"), `#!/bin/sh\nexec "${process.execPath}" --no-warnings "${FAKE}" "$@"\n`);
    chmodSync(join(this.bin, "wrangler"), 0o755);
  }

  deploy(args: string[], env: Record<string, string> = {}): Promise<Run> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ["--no-warnings", DEPLOY, ...args], {
        cwd: ROOT,
        env: { ...process.env, PATH: [this.bin, process.env.PATH].join(delimiter), FAKE_WRANGLER_DIR: this.state, TASKGATE_DEPLOY_CONFIG: this.config, CLOUDFLARE_ACCOUNT_ID: "", ...env },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
      child.on("error", reject);
      child.on("close", (code) => {
        clearTimeout(timer);
        const all = this.calls();
        const calls = all.slice(this.seen);
        this.seen = all.length;
        resolve({ code, stdout, stderr, calls });
      });
    });
  }

  calls(): Call[] {
    const file = join(this.state, "calls.jsonl");
    return existsSync(file) ? readFileSync(file, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l)) : [];
  }

  account(): { d1: { uuid: string; name: string }[]; kv: { id: string; title: string }[]; queues: { queue_name: string }[]; workers: Record<string, { secrets: Record<string, string>; deployments: number }> } {
    const file = join(this.state, "state.json");
    return existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : { d1: [], kv: [], queues: [], workers: {} };
  }

  database(name = "taskgate"): DatabaseSync {
    const db = this.account().d1.find((d) => d.name === name);
    if (!db) throw new Error(`the account has no D1 database named ${name}`);
    return new DatabaseSync(join(this.state, `d1-${db.uuid}.sqlite`));
  }

  stop(): void {
    removeDir(this.dir);
  }
}

const commands = (r: Run) => r.calls.map((c) => c.command);
const changing = ["d1 create", "kv namespace create", "queues create", "secret put", "d1 migrations apply", "deploy"];

function expectOk(r: Run, what: string): void {
  assert(r.code === 0, `${what}: exit ${r.code}\n${r.stderr.slice(-800)}`);
}

/** The first deploy: everything created, schema from every migration, a key set once, URLs and a setup link printed. */
async function firstDeploy(a: FakeAccount): Promise<void> {
  const toml = readFileSync(join(ROOT, "wrangler.toml"), "utf8");
  const r = await a.deploy(["--email", "ada@example.com"]);
  expectOk(r, "npm run deploy");
  equal(
    commands(r).join(", "),
    // After the deploy: the account count, the account, its id, then the invite refusing an email held in the directory or in any database, the invite, the person.
    "whoami, d1 list, d1 create, d1 list, kv namespace list, kv namespace create, kv namespace list, queues list, queues create, d1 execute, d1 migrations apply, secret list, secret put, secret put, deploy, d1 execute, d1 execute, d1 execute, d1 execute, d1 execute, d1 execute, d1 execute",
    "wrangler commands",
  );
  const state = a.account();
  equal(state.d1.map((d) => d.name).join(), "taskgate", "D1 databases");
  equal(state.kv.map((n) => n.title).join(), "taskgate-oauth-kv", "KV namespaces");
  equal(state.queues.map((q) => q.queue_name).join(), "taskgate-webhooks", "queues");
  const applied = a.database().prepare("SELECT name FROM d1_migrations ORDER BY id").all().map((x) => (x as { name: string }).name);
  equal(applied.join(), MIGRATIONS.join(), "migrations recorded");
  // Deployed with the account's ids, never the placeholders; wrangler.toml untouched.
  const deployCall = r.calls.find((c) => c.command === "deploy") as Call;
  assert(deployCall.argv.join(" ").includes(`--config ${a.config}`), `deploy with the deploy configuration: ${deployCall.argv.join(" ")}`);
  assert(deployCall.config?.includes(`database_id = "${state.d1[0].uuid}"`) && deployCall.config.includes(`id = "${state.kv[0].id}"`), "the deploy configuration carries the account's ids");
  assert(!/"0{8}-0{4}|"0{32}"/.test(deployCall.config ?? ""), "a placeholder id in the deployed configuration");
  equal(readFileSync(join(ROOT, "wrangler.toml"), "utf8"), toml, "wrangler.toml after the deploy");
  // CONNECTOR_KEY: put once through stdin, printed once, the same value.
  const key = state.workers.taskgate.secrets.CONNECTOR_KEY;
  assert(/^[A-Za-z0-9+/]{43}=$/.test(key) && Buffer.from(key, "base64").length === 32, `a 32-byte base64 key, got ${key}`);
  assert(r.stdout.includes(`CONNECTOR_KEY=${key}`) && /store it now/.test(r.stdout), "the key printed once, with the advice to store it");
  assert(!r.calls.some((c) => c.argv.includes(key)), "the key on a command line");
  // VAPID_KEY: put once through stdin, a P-256 pair (<65-byte public point>.<32-byte private>, base64url), never printed.
  const vapid = state.workers.taskgate.secrets.VAPID_KEY;
  const [vapidPublic, vapidPrivate] = (vapid ?? "").split(".");
  assert(Buffer.from(vapidPublic ?? "", "base64url").length === 65 && Buffer.from(vapidPrivate ?? "", "base64url").length === 32, `a VAPID key pair, got ${vapid}`);
  assert(!r.stdout.includes(vapidPrivate) && !r.stderr.includes(vapidPrivate), "the VAPID private key printed");
  assert(!r.calls.some((c) => c.argv.includes(vapid)), "the VAPID key on a command line");
  assert(r.stdout.includes("MCP server:   https://taskgate.ada.workers.dev/mcp"), `the MCP URL:\n${r.stdout}`);
  assert(r.stdout.includes("Web console:  https://taskgate.ada.workers.dev/"), "the console URL");
  const link = /https:\/\/taskgate\.ada\.workers\.dev\/setup\?token=[A-Za-z0-9_-]+/.exec(r.stdout)?.[0];
  assert(link, `a setup link:\n${r.stdout}`);
  const people = a.database().prepare("SELECT p.email, a.name FROM people p JOIN accounts a ON a.id = p.account_id").all();
  equal(JSON.stringify(people), JSON.stringify([{ email: "ada@example.com", name: "Taskgate" }]), "the first person in the deployed database");
}

export async function deployChecks(c: Checks): Promise<void> {
  const accounts: FakeAccount[] = [];
  const account = () => {
    const a = new FakeAccount();
    accounts.push(a);
    return a;
  };
  try {
    const a = account();
    await c.run("npm run deploy -- --plan on an empty account: one JSON object, every step and why, nothing changed", async () => {
      const r = await a.deploy(["--plan", "--email", "ada@example.com"]);
      expectOk(r, "npm run deploy -- --plan");
      const plan = JSON.parse(r.stdout);
      equal(plan.ok, true, "ok");
      equal(plan.steps.map((s: { step: string; action: string }) => `${s.step}:${s.action}`).join(" "), "login:check d1:create kv:create queue:create config:write migrations:apply secret:set secret:set first-person:invite deploy:deploy", "steps");
      equal(plan.steps.filter((s: { step: string }) => s.step === "secret").map((s: { name: string }) => s.name).join(), "CONNECTOR_KEY,VAPID_KEY", "secrets it would set");
      assert(plan.steps.every((s: { why: string }) => typeof s.why === "string" && s.why.length > 10), "each step says why");
      equal(plan.steps.find((s: { step: string }) => s.step === "migrations").migrations.join(), MIGRATIONS.join(), "migrations it would apply");
      assert(!commands(r).some((x) => changing.includes(x)), `a changing command under --plan: ${commands(r).join(", ")}`);
      equal(JSON.stringify(a.account().d1), "[]", "D1 databases after --plan");
      assert(!existsSync(a.config), "--plan wrote the deploy configuration");
    });
    await c.run("npm run deploy -- --email: creates D1, KV and the queue, applies every migration, sets CONNECTOR_KEY and VAPID_KEY once, deploys with real ids, prints the URLs and a setup link", async () => {
      await firstDeploy(a);
    });
    await c.run("npm run deploy again: reuses everything, no new keys, no migration, deploys; --plan then says so", async () => {
      const before = a.account().workers.taskgate.secrets.CONNECTOR_KEY;
      const vapidBefore = a.account().workers.taskgate.secrets.VAPID_KEY;
      const r = await a.deploy([]);
      expectOk(r, "second npm run deploy");
      equal(commands(r).join(", "), "whoami, d1 list, kv namespace list, queues list, d1 execute, secret list, deploy", "wrangler commands");
      equal(a.account().workers.taskgate.secrets.CONNECTOR_KEY, before, "CONNECTOR_KEY");
      equal(a.account().workers.taskgate.secrets.VAPID_KEY, vapidBefore, "VAPID_KEY");
      equal(a.account().workers.taskgate.deployments, 2, "deployments");
      assert(!/CONNECTOR_KEY=/.test(r.stdout), "a key printed on the second deploy");
      const plan = JSON.parse((await a.deploy(["--plan", "--email", "bob@example.com"])).stdout);
      equal(plan.steps.map((s: { step: string; action: string }) => `${s.step}:${s.action}`).join(" "), "login:check d1:reuse kv:reuse queue:reuse config:write migrations:none secret:keep secret:keep first-person:skip deploy:deploy", "steps of the plan");
    });

    await c.run("a second database declared in the configuration (DB_1): npm run deploy -- --config creates it, builds its schema, leaves the first as it is, deploys with both ids", async () => {
      // wrangler.toml as an operator grows it (docs/deploy.md): a DB_1 block beside DB, with a placeholder id of its own. Paths absolute, as the file is elsewhere.
      const grown = readFileSync(join(ROOT, "wrangler.toml"), "utf8")
        .replace(/^main = "src\/index.ts"$/m, `main = ${JSON.stringify(join(ROOT, "src", "index.ts"))}`)
        .replace(/^database_id = "0{8}-0{4}-0{4}-0{4}-0{12}"$/m, (line) =>
          `${line}\nmigrations_dir = ${JSON.stringify(join(ROOT, "migrations"))}\n\n[[d1_databases]]\nbinding = "DB_1"\ndatabase_name = "taskgate-1"\ndatabase_id = "00000000-0000-0000-0000-000000000001"\nmigrations_dir = ${JSON.stringify(join(ROOT, "migrations"))}`);
      assert(grown.includes('binding = "DB_1"'), "the configuration with DB_1");
      const file = join(a.dir, "wrangler.grown.toml");
      writeFileSync(file, grown);
      const people = () => a.database().prepare("SELECT count(*) AS n FROM people").get()?.n;
      const before = people();
      const plan = JSON.parse((await a.deploy(["--plan", "--config", file])).stdout);
      equal(
        plan.steps.filter((s: { step: string }) => ["d1", "migrations"].includes(s.step)).map((s: { step: string; action: string; binding: string }) => `${s.step}:${s.action}:${s.binding}`).join(" "),
        "d1:reuse:DB d1:create:DB_1 migrations:none:DB migrations:apply:DB_1",
        "the plan for the databases",
      );
      const r = await a.deploy(["--config", file, "--email", "bob@example.com"]);
      expectOk(r, "npm run deploy -- --config");
      equal(a.account().d1.map((d) => d.name).join(), "taskgate,taskgate-1", "D1 databases");
      const applied = a.database("taskgate-1").prepare("SELECT name FROM d1_migrations ORDER BY id").all().map((x) => (x as { name: string }).name);
      equal(applied.join(), MIGRATIONS.join(), "migrations recorded in the new database");
      equal(r.calls.filter((x) => x.command === "d1 migrations apply").map((x) => x.argv[3]).join(), "taskgate-1", "databases migrated");
      const deployCall = r.calls.find((x) => x.command === "deploy") as Call;
      const ids = a.account().d1.map((d) => d.uuid);
      assert(ids.every((id) => deployCall.config?.includes(`database_id = "${id}"`)), "the deployed configuration carries both ids");
      assert(!/"0{8}-0{4}/.test(deployCall.config ?? ""), "a placeholder id in the deployed configuration");
      assert(r.stderr.includes("new accounts will go to it"), `says what the new database is for:\n${r.stderr}`);
      assert(!/setup\?token=/.test(r.stdout), "a setup link although the deployment has an account");
      equal(people(), before, "people in the first database");
      const again = JSON.parse((await a.deploy(["--plan", "--config", file])).stdout);
      equal(
        again.steps.filter((s: { step: string }) => ["d1", "migrations"].includes(s.step)).map((s: { step: string; action: string }) => `${s.step}:${s.action}`).join(" "),
        "d1:reuse d1:reuse migrations:none migrations:none",
        "the plan once both exist",
      );
    });

    const old = account();
    await c.run("npm run deploy on an older deployment: applies only the migration its database has not recorded, keeps its key, adds the VAPID key it lacks", async () => {
      // The account as an earlier version left it: everything made, the last migration not applied.
      const uuid = "3f1c2b4a-5d6e-4f70-8a9b-0c1d2e3f4a5b";
      writeFileSync(join(old.state, "state.json"), JSON.stringify({
        d1: [{ uuid, name: "taskgate", created_at: "2026-06-01T00:00:00Z", version: "production", num_tables: 20, file_size: 1, jurisdiction: null }],
        kv: [{ id: "5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b", title: "taskgate-oauth-kv", supports_url_encoding: true }],
        queues: [{ queue_id: "q1", queue_name: "taskgate-webhooks", created_on: "2026-06-01", modified_on: "2026-06-01", producers_total_count: 1, consumers_total_count: 1 }],
        workers: { taskgate: { secrets: { CONNECTOR_KEY: "kept" }, deployments: 7 } },
        subdomain: "ada",
      }));
      const db = new DatabaseSync(join(old.state, `d1-${uuid}.sqlite`));
      db.exec("CREATE TABLE d1_migrations (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL)");
      for (const m of MIGRATIONS.slice(0, -1)) db.exec(`${readFileSync(join(ROOT, "migrations", m), "utf8")}\nINSERT INTO d1_migrations (name) VALUES ('${m}');`);
      db.close();
      const r = await old.deploy([]);
      expectOk(r, "npm run deploy");
      assert(!commands(r).some((x) => ["d1 create", "kv namespace create", "queues create"].includes(x)), `it created something: ${commands(r).join(", ")}`);
      equal(r.calls.filter((x) => x.command === "secret put").map((x) => x.argv[2]).join(), "VAPID_KEY", "secrets put");
      const applied = old.database().prepare("SELECT name FROM d1_migrations ORDER BY id").all().map((x) => (x as { name: string }).name);
      equal(applied.join(), MIGRATIONS.join(), "migrations recorded");
      assert(r.stderr.includes(`migrations: apply`) && r.stderr.includes(MIGRATIONS[MIGRATIONS.length - 1]), "it named the new migration");
      equal(old.account().workers.taskgate.secrets.CONNECTOR_KEY, "kept", "CONNECTOR_KEY");
      assert(Buffer.from((old.account().workers.taskgate.secrets.VAPID_KEY ?? "").split(".")[0], "base64url").length === 65, "a VAPID key added");
    });

    const failing = account();
    await c.run("a failing step (queues create): wrangler's error and what to do, exit 1, nothing deployed; the next run reuses what was made", async () => {
      const r = await failing.deploy([], { FAKE_WRANGLER_FAIL: "queues create" });
      equal(r.code, 1, "exit status");
      assert(r.stderr.includes('stopped at the step "queue"'), `names the step:\n${r.stderr}`);
      assert(r.stderr.includes("wrangler queues create taskgate-webhooks failed") && r.stderr.includes("Queues are only available on the Workers Paid plan. [code: 100129]"), `wrangler's error:\n${r.stderr}`);
      assert(/What to do: Queues need the Workers Paid plan/.test(r.stderr), "what to do");
      assert(!r.stderr.includes("\x1b["), "colour codes in the error");
      assert(!commands(r).some((x) => ["secret put", "deploy", "d1 migrations apply"].includes(x)), `it went on: ${commands(r).join(", ")}`);
      const again = await failing.deploy([]);
      expectOk(again, "npm run deploy after the fix");
      assert(!commands(again).includes("d1 create") && !commands(again).includes("kv namespace create") && commands(again).includes("queues create"), `reused D1 and KV: ${commands(again).join(", ")}`);
    });

    const out = account();
    await c.run("not logged in: refuses at once with how to log in, touches nothing; --plan says so in its JSON", async () => {
      const r = await out.deploy(["--email", "ada@example.com"], { FAKE_WRANGLER_LOGGED_OUT: "1" });
      equal(r.code, 1, "exit status");
      assert(/Not logged in to Cloudflare/.test(r.stderr) && /npx wrangler login/.test(r.stderr), `the refusal:\n${r.stderr}`);
      equal(commands(r).join(), "whoami", "wrangler commands");
      const plan = await out.deploy(["--plan"], { FAKE_WRANGLER_LOGGED_OUT: "1" });
      equal(plan.code, 1, "exit status of --plan");
      const json = JSON.parse(plan.stdout);
      equal(`${json.ok} ${json.failed.step}`, "false login", "the plan's failure");
    });
  } finally {
    for (const a of accounts) a.stop();
  }
}
