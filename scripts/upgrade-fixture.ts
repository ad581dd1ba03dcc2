/**
 * Makes test/fixtures/upgrade-from-0009.sql: a database of the oldest
 * supported version (commit 45241fa, migrations 0000–0009) filled by that
 * version's own tools, for test/consent-audit-upgraded.test.ts, which loads
 * it, applies every later migration and holds the upgraded rows to the
 * consent rules.
 *
 *   node --no-warnings scripts/upgrade-fixture.ts
 *
 * (with Node 22, the project's own: `npx node --no-warnings scripts/upgrade-fixture.ts`
 * where the system's node is older). It takes about half a minute.
 *
 * What it does:
 *  1. checks the old version out into a temporary git worktree (/tmp/tg-0009)
 *     and links this checkout's node_modules into it (the old version runs
 *     with today's packages);
 *  2. starts the old version with its own `npm start` on a free port, its
 *     data in a temporary --persist-to directory: it applies its schema.sql
 *     and makes its demo account (a person and the agent `demo-agent`);
 *  3. makes a second agent's token with the old admin CLI (`helper`);
 *  4. fills the account over MCP, as a person and the two agents: a task the
 *     person completed, one the agent completed under auto-OK, a sign-off the
 *     person approved, a blocked task with its reason, a project the person
 *     archived, a dependency the person added and one the agent added,
 *     labels, steps, a run with events, comments, a task trashed by the
 *     person and one by the agent, and a claimed task;
 *  5. stops the server and dumps its D1 database (the SQLite file under the
 *     persist directory) to SQL: tables in the order they were made, their
 *     rows (rowid kept, since the search index points at it), the search
 *     index refilled from its own postings, then indexes, views and
 *     triggers; the migration ledger (d1_migrations) is kept, miniflare's
 *     own tables (_cf_*) and sqlite_sequence are left out;
 *  6. removes the worktree and the temporary directory.
 *
 * The tokens the old tools made are in the dump hashed only; the test makes
 * new ones for the same account and agent names.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { ROOT } from "./lib/d1.ts";
import { freePort, waitForHealth } from "./lib/dev-server.ts";
import { connect, type McpSession } from "./lib/e2e-harness.ts";

/** The oldest supported version: its migrations are 0000–0009. */
const OLD_COMMIT = "45241fa";
const WORKTREE = "/tmp/tg-0009";
const OUTPUT = join(ROOT, "test", "fixtures", "upgrade-from-0009.sql");
/** The second agent, made with the old admin CLI (the demo account has `demo-agent`). */
const SECOND_AGENT = "helper";

/** Runs a command to its end; its output is returned, a failure throws with what it printed. */
function run(command: string, args: string[], cwd: string): string {
  const r = spawnSync(command, args, { cwd, encoding: "utf8", env: { ...process.env, PATH: `${join(ROOT, "node_modules", ".bin")}:${process.env.PATH}` } });
  if (r.status !== 0) throw new Error(`${command} ${args.join(" ")} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

function removeWorktree(): void {
  if (existsSync(WORKTREE)) spawnSync("git", ["worktree", "remove", "--force", WORKTREE], { cwd: ROOT });
  spawnSync("git", ["worktree", "prune"], { cwd: ROOT });
}

/** The old version, checked out beside this one, with this checkout's packages. */
function checkOutOldVersion(): void {
  removeWorktree();
  run("git", ["worktree", "add", "--detach", WORKTREE, OLD_COMMIT], ROOT);
  symlinkSync(realpathSync(join(ROOT, "node_modules")), join(WORKTREE, "node_modules"));
}

interface OldServer {
  child: ChildProcess;
  url: string;
  log: string[];
}

/** `npm start` of the old version, in a process group of its own (stopped with the group). */
async function startOldServer(state: string): Promise<OldServer> {
  const port = await freePort();
  const log: string[] = [];
  const child = spawn("npm", ["start", "--", "--persist-to", state], {
    cwd: WORKTREE,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, PORT: String(port), PATH: `${join(ROOT, "node_modules", ".bin")}:${process.env.PATH}` },
  });
  child.stdout!.on("data", (d) => log.push(String(d)));
  child.stderr!.on("data", (d) => log.push(String(d)));
  let exited: string | null = null;
  child.on("exit", (code, signal) => (exited = `exit ${code ?? signal}`));
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitForHealth(base, 120_000, () => exited);
  } catch (e) {
    throw new Error(`${(e as Error).message}\n${log.join("").slice(-3000)}`);
  }
  return { child, url: `${base}/mcp`, log };
}

/** SIGTERM to the server's group (npm start stops wrangler and what it started), then waits for it to go. */
async function stopOldServer(s: OldServer): Promise<void> {
  if (s.child.exitCode !== null || s.child.signalCode !== null) return;
  const gone = new Promise<void>((resolve) => s.child.once("exit", () => resolve()));
  process.kill(-s.child.pid!, "SIGTERM");
  const timeout = new Promise<"late">((resolve) => setTimeout(() => resolve("late"), 15_000).unref());
  if ((await Promise.race([gone, timeout])) === "late") {
    try {
      process.kill(-s.child.pid!, "SIGKILL");
    } catch {
      /* already gone */
    }
    await gone;
  }
}

interface DemoFile {
  account: { id: string };
  tokens: Record<"human" | "agent", { secret: string }>;
}

/**
 * The account filled through the old tools, as the person, the agent
 * `demo-agent` and the agent `helper`. The titles are how the test finds the rows.
 */
async function fill(person: McpSession, agent: McpSession, helper: McpSession): Promise<void> {
  const task = async (who: McpSession, args: Record<string, unknown>) => (await who.ok("create_task", args)).task.id as string;

  const home = (await person.ok("create_project", { name: "Home" })).project.id as string;
  const lastYear = (await person.ok("create_project", { name: "Last year" })).project.id as string;
  await task(person, { title: "File the old receipts", project_id: lastYear });
  await person.ok("archive_project", { project_id: lastYear });

  // Completed by the person directly.
  const lease = await task(person, { title: "Sign the lease", project_id: home });
  await person.ok("complete_task", { task_id: lease });

  // Completed by the agent under auto-OK.
  const inbox = await task(person, { title: "Tidy the inbox", project_id: home, auto_ok: true });
  await agent.ok("claim_task", { task_id: inbox });
  await agent.ok("complete_task", { task_id: inbox, note: "Archived 40 newsletters" });

  // Completed by the agent, signed off by the person.
  const report = await task(person, { title: "Write the quarterly report", project_id: home });
  await agent.ok("claim_task", { task_id: report });
  await agent.ok("complete_task", { task_id: report, note: "Draft in the shared folder" });
  await person.ok("approve_task", { task_id: report });

  // Blocked by the agent that holds it, with a reason.
  const plumber = await task(person, { title: "Pay the plumber", project_id: home });
  await agent.ok("claim_task", { task_id: plumber });
  await agent.ok("block_task", { task_id: plumber, reason: "the invoice has not come" });

  // A dependency the person added, and one the agent added.
  const fence = await task(person, { title: "Paint the fence", project_id: home });
  const paint = await task(person, { title: "Buy paint", project_id: home });
  await person.ok("add_dependency", { task_id: fence, depends_on_id: paint });
  const newsletter = await task(person, { title: "Draft the newsletter", project_id: home });
  const news = await task(agent, { title: "Collect the news", project_id: home });
  await agent.ok("add_dependency", { task_id: newsletter, depends_on_id: news });

  // Labels, steps and comments.
  await person.ok("create_label", { name: "outdoors" });
  await person.ok("label_task", { task_id: fence, labels: ["outdoors"] });
  await agent.ok("label_task", { task_id: newsletter, labels: ["writing"] });
  await person.ok("add_steps", { task_id: fence, steps: ["Sand the boards", "Paint two coats"] });
  await agent.ok("add_steps", { task_id: newsletter, steps: ["Outline", "Draft"] });
  await person.ok("comment_on_task", { task_id: fence, body: "White, like last time" });
  await agent.ok("comment_on_task", { task_id: plumber, body: "Asked the plumber for the invoice" });

  // A task the second agent holds, with a run and its events.
  const backup = await task(person, { title: "Back up the laptop", project_id: home });
  await helper.ok("claim_task", { task_id: backup });
  const run = (await helper.ok("start_run", { task_id: backup })).run.id as string;
  await helper.ok("log_run_event", { run_id: run, kind: "progress", message: "Copied the photos" });
  await helper.ok("log_run_event", { run_id: run, kind: "artifact", message: "Backup log", url: "https://example.com/backup.log" });

  // Trashed by the person, and by the agent.
  const idea = await task(person, { title: "An old idea", project_id: home });
  await person.ok("delete_task", { task_id: idea });
  const scratch = await task(agent, { title: "Agent scratch notes", project_id: home });
  await agent.ok("delete_task", { task_id: scratch });
}

/** An SQL literal for a value node:sqlite read. */
function literal(v: unknown): string {
  if (v === null || v === undefined) return "NULL";
  if (typeof v === "number" || typeof v === "bigint") return String(v);
  if (v instanceof Uint8Array) return `X'${Buffer.from(v).toString("hex")}'`;
  // The test splits the file with test/schema.ts splitSql, which drops `--` to the end of a line as a comment.
  if (String(v).includes("--")) throw new Error(`a value holds "--", which the test's splitSql would cut: ${String(v).slice(0, 80)}`);
  // A string on one line: a newline is written as char(10), so each statement stays on lines of its own.
  const quoted = `'${String(v).replace(/'/g, "''")}'`;
  return quoted.includes("\n") ? quoted.split("\n").join("' || char(10) || '") : quoted;
}

/** Whether a table is one of miniflare's, SQLite's own, or a full-text index's storage. */
function skippedTable(name: string, fts: string[]): boolean {
  return name.startsWith("_cf_") || name.startsWith("sqlite_") || fts.some((f) => name.startsWith(`${f}_`));
}

/**
 * The database as SQL statements, one per line (a trigger's body spans lines
 * and ends with `END;`), in an order that loads into an empty database: the
 * tables, their rows, the search index, then indexes, views and triggers
 * (so no trigger fires while the rows go in).
 */
function dump(file: string): string {
  const db = new DatabaseSync(file, { readOnly: false });
  type Obj = { type: string; name: string; sql: string | null };
  const objects = db.prepare("SELECT type, name, sql FROM sqlite_master ORDER BY rowid").all() as unknown as Obj[];
  const fts = objects.filter((o) => o.type === "table" && /USING\s+fts5/i.test(o.sql ?? "")).map((o) => o.name);
  const out: string[] = [`-- Made by scripts/upgrade-fixture.ts from commit ${OLD_COMMIT} (migrations 0000-0009), filled through its own MCP tools.`];
  const tables = objects.filter((o) => o.type === "table" && o.sql && !skippedTable(o.name, fts) && !fts.includes(o.name));

  for (const t of tables) out.push(`${t.sql};`);
  for (const t of tables) {
    const withoutRowid = /WITHOUT\s+ROWID/i.test(t.sql!);
    const columns = (db.prepare(`SELECT name FROM pragma_table_info(?)`).all(t.name) as { name: string }[]).map((c) => c.name);
    // The rowid under a name of its own: a table whose INTEGER PRIMARY KEY is the rowid would answer it under that column's name.
    const read = [...(withoutRowid ? [] : ["rowid AS __rowid"]), ...columns.map((c) => `"${c}"`)];
    const keys = [...(withoutRowid ? [] : ["__rowid"]), ...columns];
    const names = [...(withoutRowid ? [] : ["rowid"]), ...columns.map((c) => `"${c}"`)].join(", ");
    const rows = db.prepare(`SELECT ${read.join(", ")} FROM "${t.name}" ORDER BY ${withoutRowid ? "1" : "rowid"}`).all() as Record<string, unknown>[];
    for (const row of rows) out.push(`INSERT INTO "${t.name}" (${names}) VALUES (${keys.map((k) => literal(row[k])).join(", ")});`);
  }
  // The full-text indexes: made again, each document refilled with the terms it holds (a contentless index keeps no text; its vocabulary does).
  for (const name of fts) {
    const made = objects.find((o) => o.name === name)!;
    out.push(`${made.sql};`);
    db.exec(`CREATE VIRTUAL TABLE temp."${name}_words" USING fts5vocab(main, "${name}", instance)`);
    const words = db.prepare(`SELECT term, doc, col, "offset" FROM temp."${name}_words" ORDER BY doc, col, "offset"`).all() as {
      term: string;
      doc: number;
      col: string;
      offset: number;
    }[];
    const columns = (db.prepare(`SELECT name FROM pragma_table_info(?)`).all(name) as { name: string }[]).map((c) => c.name);
    const docs = new Map<number, Record<string, string[]>>();
    for (const w of words) {
      const doc = docs.get(w.doc) ?? Object.fromEntries(columns.map((c) => [c, [] as string[]]));
      doc[w.col].push(w.term);
      docs.set(w.doc, doc);
    }
    for (const [rowid, doc] of docs)
      out.push(`INSERT INTO "${name}" (rowid, ${columns.map((c) => `"${c}"`).join(", ")}) VALUES (${rowid}, ${columns.map((c) => literal(doc[c].join(" "))).join(", ")});`);
  }
  for (const type of ["index", "view", "trigger"])
    for (const o of objects) if (o.type === type && o.sql && !skippedTable(o.name, fts)) out.push(`${o.sql.trim()};`);
  db.close();
  return out.join("\n") + "\n";
}

/** The D1 database file of the local state (the one that is not miniflare's metadata). */
function databaseFile(state: string): string {
  const dir = join(state, "v3", "d1", "miniflare-D1DatabaseObject");
  const files = readdirSync(dir).filter((f) => /^[0-9a-f]{64}\.sqlite$/.test(f));
  if (files.length !== 1) throw new Error(`expected one D1 database in ${dir}, found ${files.length}`);
  return join(dir, files[0]);
}

async function main(): Promise<void> {
  const state = mkdtempSync(join(tmpdir(), "tg-0009-state-"));
  let server: OldServer | undefined;
  const sessions: McpSession[] = [];
  try {
    console.error(`Checking out ${OLD_COMMIT} into ${WORKTREE}…`);
    checkOutOldVersion();
    console.error("Starting it (npm start)…");
    server = await startOldServer(state);
    const demo = JSON.parse(readFileSync(join(state, ".taskgate-demo.json"), "utf8")) as DemoFile;
    const made = JSON.parse(
      run(
        "node",
        ["--no-warnings", "scripts/admin.ts", "create-token", "--persist-to", state, "--account", demo.account.id, "--kind", "agent", "--scope", "write", "--agent", SECOND_AGENT],
        WORKTREE,
      ),
    ) as { token: string };
    const [person, agent, helper] = await Promise.all([
      connect(server.url, demo.tokens.human.secret, "modern"),
      connect(server.url, demo.tokens.agent.secret, "modern"),
      connect(server.url, made.token, "modern"),
    ]);
    sessions.push(person, agent, helper);
    console.error("Filling the demo account through the old tools…");
    await fill(person, agent, helper);
    await Promise.all(sessions.map((s) => s.close()));
    sessions.length = 0;
    await stopOldServer(server);
    const sql = dump(databaseFile(state));
    writeFileSync(OUTPUT, sql);
    console.error(`Wrote ${OUTPUT} (${Math.round(sql.length / 1024)} KB, account ${demo.account.id}).`);
  } finally {
    await Promise.allSettled(sessions.map((s) => s.close()));
    if (server) await stopOldServer(server);
    removeWorktree();
    rmSync(state, { recursive: true, force: true });
  }
}

await main();
