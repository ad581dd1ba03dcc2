/**
 * A stand-in for `wrangler` on PATH, for the tests of `npm run deploy`: it
 * answers the commands the deploy uses in wrangler 4's own output formats
 * (copied from wrangler's source: `whoami --json`, `d1 list --json`, `d1
 * create`, `kv namespace list|create`, `queues list|create`, `secret
 * list|put`, `d1 execute`, `d1 migrations apply`, `deploy`), keeps the
 * account's state in $FAKE_WRANGLER_DIR (state.json, and each D1 database as
 * a real SQLite file, so migrations and the admin CLI's SQL really run), and
 * appends every call to calls.jsonl.
 * FAKE_WRANGLER_LOGGED_OUT=1: not logged in. FAKE_WRANGLER_FAIL="queues
 * create": that command fails as the Cloudflare API makes it fail.
 */
import { randomUUID } from "node:crypto";
import { appendFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { DatabaseSync } from "node:sqlite";

const DIR = process.env.FAKE_WRANGLER_DIR ?? "";
if (!DIR) {
  process.stderr.write("fake wrangler: FAKE_WRANGLER_DIR is not set\n");
  process.exit(2);
}
const VERSION = "4.164.0";
const ACCOUNT = { id: "9a7b0c1d2e3f40516273849506a7b8c9", name: "Ada's Account" };

interface State {
  d1: { uuid: string; name: string; created_at: string; version: string; num_tables: number; file_size: number; jurisdiction: null }[];
  kv: { id: string; title: string; supports_url_encoding: boolean }[];
  queues: { queue_id: string; queue_name: string; created_on: string; modified_on: string; producers_total_count: number; consumers_total_count: number }[];
  workers: Record<string, { secrets: Record<string, string>; deployments: number }>;
  subdomain: string;
}

const stateFile = join(DIR, "state.json");
const state: State = existsSync(stateFile) ? JSON.parse(readFileSync(stateFile, "utf8")) : { d1: [], kv: [], queues: [], workers: {}, subdomain: "ada" };
const save = () => writeFileSync(stateFile, JSON.stringify(state, null, 2));

const argv = process.argv.slice(2);
const flag = (name: string) => argv.includes(`--${name}`);
const option = (name: string) => {
  const i = argv.findIndex((a) => a === `--${name}` || (name === "config" && a === "-c"));
  return i >= 0 ? argv[i + 1] : undefined;
};
const VALUED = new Set(["--config", "-c", "--page", "--command", "--file", "--binding"]);
const positional = argv.filter((a, i) => !a.startsWith("-") && !(i > 0 && VALUED.has(argv[i - 1])));
const command = positional.slice(0, positional[0] === "kv" ? 3 : positional[0] === "d1" && positional[1] === "migrations" ? 3 : 2).join(" ");
const configPath = option("config");
const configText = configPath && existsSync(configPath) ? readFileSync(configPath, "utf8") : null;
const stdin = command === "secret put" ? readFileSync(0, "utf8") : undefined;
appendFileSync(join(DIR, "calls.jsonl"), JSON.stringify({ argv, command, config: configText, stdin }) + "\n");

const out = (text: string) => process.stdout.write(text.endsWith("\n") ? text : text + "\n");
const banner = () => out(`\n \u26C5\uFE0F wrangler ${VERSION}\n${"\u2500".repeat(20)}`);
/** esbuild's error format, as wrangler prints a UserError or an API error (with its colours). */
function fail(text: string, notes: string[] = []): never {
  const body = notes.length ? `\n\n${notes.map((n) => `  ${n}`).join("\n")}\n` : "\n";
  process.stderr.write(`\n\x1b[31m\u2718 \x1b[41;31m[\x1b[41;97mERROR\x1b[41;31m]\x1b[0m \x1b[1m${text}\x1b[0m\n${body}\n`);
  process.exit(1);
}
const apiFail = (resource: string, message: string, code: number): never =>
  fail(`A request to the Cloudflare API (/accounts/${ACCOUNT.id}${resource}) failed.`, [
    `${message} [code: ${code}]`,
    "",
    "If you think this is a bug, please open an issue at: https://github.com/cloudflare/workers-sdk/issues/new/choose",
  ]);

/** cli-table3 as wrangler configures it (no colours without a terminal). */
function table(rows: Record<string, string>[]): string {
  if (rows.length === 0) return "";
  const head = Object.keys(rows[0]);
  const widths = head.map((h) => Math.max(h.length, ...rows.map((r) => r[h].length)) + 2);
  const line = (l: string, m: string, r: string) => l + widths.map((w) => "\u2500".repeat(w)).join(m) + r;
  const row = (cells: string[]) => "\u2502" + cells.map((c, i) => ` ${c.padEnd(widths[i] - 1)}`).join("\u2502") + "\u2502";
  const body = rows.map((r) => row(head.map((h) => r[h])));
  return [line("\u250C", "\u252C", "\u2510"), row(head), ...body.flatMap((b) => [line("\u251C", "\u253C", "\u2524"), b]), line("\u2514", "\u2534", "\u2518")].join("\n");
}

/** A value of the --config file (`key = "value"` in the block that `within` starts, or anywhere). */
function configValue(key: string, within?: string): string | undefined {
  if (!configText) return undefined;
  const text = within ? configText.slice(Math.max(0, configText.indexOf(within))) : configText;
  return new RegExp(`^\\s*${key}\\s*=\\s*"([^"]*)"`, "m").exec(text)?.[1];
}

function workerName(): string {
  const name = configValue("name");
  if (!name) fail("Required Worker name missing. Please specify the Worker name in your wrangler.toml file, or pass it as an argument with `--name <worker-name>`");
  return name;
}

/** The D1 database the config names (by name or binding), as `d1 execute` and `d1 migrations` look it up. */
function configDatabase(name: string): { uuid: string; file: string; migrationsDir: string } {
  const block = configText?.split(/^\[\[d1_databases\]\]/m).slice(1).find((b) => new RegExp(`(database_name|binding)\\s*=\\s*"${name}"`).test(b));
  const uuid = block ? /database_id\s*=\s*"([^"]*)"/.exec(block)?.[1] : undefined;
  if (!block || !uuid) fail(`Couldn't find a D1 DB with the name or binding '${name}' in your wrangler.toml file.`);
  if (!state.d1.some((d) => d.uuid === uuid)) apiFail(`/d1/database/${uuid}/query`, `The database ${uuid} could not be found`, 7404);
  const dir = /migrations_dir\s*=\s*"([^"]*)"/.exec(block)?.[1] ?? "migrations";
  return { uuid, file: join(DIR, `d1-${uuid}.sqlite`), migrationsDir: resolve(dirname(configPath as string), dir) };
}

if (process.env.FAKE_WRANGLER_FAIL && command === process.env.FAKE_WRANGLER_FAIL) {
  if (command === "queues create") apiFail("/queues", "Queues are only available on the Workers Paid plan.", 100129);
  apiFail(`/${command.replace(/ /g, "/")}`, "Authentication error", 10000);
}

const loggedIn = process.env.FAKE_WRANGLER_LOGGED_OUT !== "1";
if (!loggedIn && command !== "whoami") {
  fail(
    "In a non-interactive environment, it's necessary to set a CLOUDFLARE_API_TOKEN environment variable for wrangler to work. Please go to https://developers.cloudflare.com/fundamentals/api/get-started/create-token/ for instructions on how to create an api token, and assign its value to CLOUDFLARE_API_TOKEN.",
    ["", "To continue without logging in, rerun this command with `--temporary`. Wrangler will use a temporary account and print a claim URL."],
  );
}
const now = new Date().toISOString();

switch (command) {
  case "whoami": {
    if (!flag("json")) fail("the stand-in answers whoami --json only");
    if (!loggedIn) {
      out('\n{"loggedIn":false}');
      process.exit(1);
    }
    out("\n" + JSON.stringify({ loggedIn: true, authType: "OAuth Token", email: "ada@example.com", accounts: [ACCOUNT], tokenPermissions: ["account:read", "user:read", "workers:write", "d1:write", "queues:write"] }, null, 2));
    break;
  }
  case "d1 list":
    out(JSON.stringify(state.d1, null, 2));
    break;
  case "d1 create": {
    const name = positional[2];
    if (state.d1.some((d) => d.name === name)) apiFail("/d1/database", `A database with that name already exists`, 7502);
    const db = { uuid: randomUUID(), name, created_at: now, version: "production", num_tables: 0, file_size: 0, jurisdiction: null };
    state.d1.push(db);
    save();
    banner();
    out(`\u2705 Successfully created DB '${name}' in region WEUR\nCreated your new D1 database.\n`);
    out(`To access your new D1 Database in your Worker, add the following snippet to your configuration file:\n[[d1_databases]]\nbinding = "${name.replace(/[^a-zA-Z0-9_]/g, "_")}"\ndatabase_name = "${name}"\ndatabase_id = "${db.uuid}"\n`);
    break;
  }
  case "kv namespace list":
    out(JSON.stringify([...state.kv].sort((a, b) => a.title.localeCompare(b.title)), null, "  "));
    break;
  case "kv namespace create": {
    const title = positional[3];
    if (state.kv.some((n) => n.title === title)) fail(`A KV namespace with the title "${title}" already exists.`);
    const ns = { id: randomUUID().replace(/-/g, ""), title, supports_url_encoding: true };
    state.kv.push(ns);
    save();
    banner();
    out(`Resource location: remote \n\n\u{1F300} Creating namespace with title "${title}"\n\u2728 Success!`);
    out(`To access your new KV Namespace in your Worker, add the following snippet to your configuration file:\n[[kv_namespaces]]\nbinding = "${title.replace(/[\s-]/g, "_").replace(/[^a-zA-Z0-9_]/g, "")}"\nid = "${ns.id}"\n`);
    break;
  }
  case "queues list": {
    const page = Number(option("page") ?? 1);
    const rows = state.queues.slice((page - 1) * 100, page * 100).map((q) => ({
      id: q.queue_id, name: q.queue_name, created_on: q.created_on, modified_on: q.modified_on,
      producers: String(q.producers_total_count), consumers: String(q.consumers_total_count),
    }));
    banner();
    out(table(rows));
    break;
  }
  case "queues create": {
    const name = positional[2];
    banner();
    out(`\u{1F300} Creating queue '${name}'`);
    if (state.queues.some((q) => q.queue_name === name)) apiFail("/queues", "A queue with this name already exists", 11009);
    state.queues.push({ queue_id: randomUUID().replace(/-/g, ""), queue_name: name, created_on: now, modified_on: now, producers_total_count: 0, consumers_total_count: 0 });
    save();
    out(`\u2705 Created queue '${name}'\n\nConfigure your Worker to send messages to this queue:\n\n[[queues.producers]]\nqueue = "${name}"\nbinding = "${name.replace(/-/g, "_")}"\n\nConfigure your Worker to consume messages from this queue:\n\n[[queues.consumers]]\nqueue = "${name}"\n`);
    break;
  }
  case "secret list": {
    const name = workerName();
    const worker = state.workers[name];
    if (!worker) {
      fail(`Worker "${name}" not found.`, ["", "If this is a new Worker, run `wrangler deploy` first to create it.", "Otherwise, check that the Worker name is correct and you're logged into the right account."]);
    }
    out(JSON.stringify(Object.keys(worker.secrets).map((s) => ({ name: s, type: "secret_text" })), null, "  "));
    break;
  }
  case "secret put": {
    const name = workerName();
    const key = positional[2];
    banner();
    out(`\u{1F300} Creating the secret for the Worker "${name}" `);
    if (!state.workers[name]) {
      out(`? There doesn't seem to be a Worker called "${name}". Do you want to create a new Worker with that name and add secrets to it?\n\u{1F916} Using fallback value in non-interactive context: yes\n\u{1F300} Creating new Worker "${name}"...`);
      state.workers[name] = { secrets: {}, deployments: 0 };
    }
    state.workers[name].secrets[key] = (stdin ?? "").trimEnd();
    save();
    out(`\u2728 Success! Uploaded secret ${key}`);
    break;
  }
  case "d1 execute": {
    const db = configDatabase(positional[2]);
    const sqlite = new DatabaseSync(db.file);
    const json = flag("json");
    try {
      if (option("file")) {
        sqlite.exec(readFileSync(option("file") as string, "utf8"));
        out(`\u{1F300} Executing on remote database ${positional[2]} (${db.uuid}):\n\u{1F300} To execute on your local development database, remove the --remote flag from your wrangler command.\n\u{1F6A3} Executed 1 command in 0.52ms`);
      } else {
        const results = sqlite.prepare(option("command") as string).all();
        out(JSON.stringify([{ results, success: true, meta: { served_by: "v3-prod", duration: 0.2, changes: 0, last_row_id: 0, changed_db: false, size_after: 16384, rows_read: results.length, rows_written: 0 } }], null, 2));
      }
    } catch (e) {
      const text = `${(e as Error).message}: SQLITE_ERROR [code: 7500]`;
      if (json) {
        out(JSON.stringify({ error: { text } }, null, 2));
        process.exit(1);
      }
      fail(text);
    }
    break;
  }
  case "d1 migrations apply": {
    const db = configDatabase(positional[3]);
    const sqlite = new DatabaseSync(db.file);
    sqlite.exec("CREATE TABLE IF NOT EXISTS d1_migrations(\n\t\tid         INTEGER PRIMARY KEY AUTOINCREMENT,\n\t\tname       TEXT UNIQUE,\n\t\tapplied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL\n);");
    const applied = new Set(sqlite.prepare("SELECT name FROM d1_migrations").all().map((r) => String((r as { name: string }).name)));
    const pending = readdirSync(db.migrationsDir).filter((f) => f.endsWith(".sql") && !applied.has(f)).sort();
    banner();
    out("Resource location: remote \n");
    if (pending.length === 0) {
      out("\u2705 No migrations to apply!");
      break;
    }
    out(`Migrations to be applied:\n${table(pending.map((name) => ({ name })))}`);
    out(`? About to apply ${pending.length} migration(s)\nYour database may not be available to serve requests during the migration, continue?\n\u{1F916} Using fallback value in non-interactive context: yes`);
    const status = new Map(pending.map((p) => [p, "\u{1F552}\uFE0F"]));
    for (const name of pending) {
      try {
        sqlite.exec(`BEGIN;\n${readFileSync(join(db.migrationsDir, name), "utf8")}\nINSERT INTO d1_migrations (name) values ('${name}');\nCOMMIT;`);
        status.set(name, "\u2705");
      } catch (e) {
        sqlite.exec("ROLLBACK");
        status.set(name, "\u274C");
        out(table(pending.map((n) => ({ name: n, status: status.get(n) as string }))));
        process.stderr.write(`\u2718 [ERROR] Migration ${name} failed with the following errors:\n`);
        fail(`${(e as Error).message}: SQLITE_ERROR [code: 7500]`);
      }
      out(`\u{1F300} Executing on remote database ${positional[3]} (${db.uuid}):\n\u{1F6A3} Executed 1 command in 1.2ms`);
      out(table(pending.map((n) => ({ name: n, status: status.get(n) as string }))));
    }
    break;
  }
  case "deploy": {
    const name = workerName();
    const d1 = (configText ?? "").split(/^\[\[d1_databases\]\]/m).slice(1).map((b) => ({
      binding: /binding\s*=\s*"([^"]*)"/.exec(b)?.[1] ?? "",
      name: /database_name\s*=\s*"([^"]*)"/.exec(b)?.[1] ?? "",
      id: /database_id\s*=\s*"([^"]*)"/.exec(b)?.[1] ?? "",
    }));
    const kv = configValue("id", "[[kv_namespaces]]") ?? "";
    const queue = configValue("queue", "[[queues.producers]]") ?? "";
    banner();
    out("Total Upload: 1265.41 KiB / gzip: 249.09 KiB\nWorker Startup Time: 31 ms");
    for (const db of d1) {
      if (!state.d1.some((d) => d.uuid === db.id)) apiFail(`/workers/scripts/${name}/versions`, `binding ${db.binding} of type d1 must have a valid \`id\` specified`, 10021);
    }
    if (!state.kv.some((n) => n.id === kv)) apiFail(`/workers/scripts/${name}/versions`, `KV namespace '${kv}' is not valid.`, 10041);
    if (!state.queues.some((q) => q.queue_name === queue)) apiFail(`/workers/scripts/${name}/versions`, `Queue "${queue}" does not exist. To create it, run: wrangler queues create ${queue}`, 11000);
    state.workers[name] ??= { secrets: {}, deployments: 0 };
    state.workers[name].deployments++;
    save();
    const bindings = [
      [`env.WEBHOOK_QUEUE (${queue})`, "Queue"],
      [`env.OAUTH_KV (${kv})`, "KV Namespace"],
      ...d1.map((db) => [`env.${db.binding} (${db.name})`, "D1 Database"]),
      ['env.ALLOWED_ORIGINS ("")', "Environment Variable"],
      ['env.STALE_RUN_MINUTES ("15")', "Environment Variable"],
    ];
    out(`Your Worker has access to the following bindings:\n${["Binding", ...bindings.map((b) => b[0])].map((b, i) => `${b.padEnd(47)}${i === 0 ? "Resource" : bindings[i - 1][1]}`).join("\n")}\n`);
    out(`Uploaded ${name} (6.12 sec)\nDeployed ${name} triggers (1.05 sec)\n  https://${name}.${state.subdomain}.workers.dev\n  schedule: 17 3 * * *\n  schedule: * * * * *\n  Producer for ${queue}\n  Consumer for ${queue}\nCurrent Version ID: ${randomUUID()}`);
    break;
  }
  default:
    fail(`the stand-in wrangler does not know "${argv.join(" ")}"`);
}
