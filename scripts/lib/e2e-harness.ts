/**
 * The pieces of the end-to-end script: a check list that prints one line per
 * check, the local `wrangler dev` it starts and always stops, the admin CLI,
 * and the two real MCP clients (2.x negotiating 2026-07-28, 1.x with initialize).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ROOT } from "./d1.ts";
import { freePort, waitForHealth, WRANGLER_JS, wranglerDevArgs, wranglerEnv } from "./dev-server.ts";
import { groupAlive, settle } from "./processes.ts";
import { SHARD_CONFIG } from "./shard-config.ts";

export class Checks {
  passed = 0;
  failed = 0;

  /** Runs one check; a thrown error fails it with its message. Returns the check's value, or undefined on failure. */
  async run<T>(name: string, fn: () => Promise<T> | T): Promise<T | undefined> {
    try {
      const value = await fn();
      this.passed++;
      console.log(`ok    ${name}`);
      return value;
    } catch (e) {
      this.failed++;
      // The whole message: a failure's cause is often in its last lines (wrangler's own error).
      const [first, ...rest] = (e as Error).message.split("\n").filter((l) => l.trim());
      console.log(`FAIL  ${name}: ${first ?? ""}`);
      for (const line of rest.slice(-40)) console.log(`      ${line}`);
      return undefined;
    }
  }

  fail(name: string, why: string): void {
    this.failed++;
    console.log(`FAIL  ${name}: ${why}`);
  }
}

export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

export function equal<T>(actual: T, expected: T, what: string): void {
  if (actual !== expected) throw new Error(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}

const running = new Set<ChildProcess>();

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (!child.pid) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    /* the group is already gone */
  }
}

/** Stops every command `run` started that is still running (and what they started). */
export function stopCommands(): void {
  for (const child of running) killGroup(child, "SIGKILL");
  running.clear();
}

export interface RunOptions {
  /** Added to the environment wrangler gets. */
  env?: NodeJS.ProcessEnv;
  /** Exit codes that count as finished, not failed (0 only unless given). */
  exitCodes?: number[];
}

/**
 * Runs a command in its own process group without blocking the event loop (so
 * the overall timeout can still fire, and stopCommands can stop it and its children).
 */
export function run(file: string, args: string[], timeoutMs: number, options: RunOptions = {}): Promise<{ stdout: string; stderr: string; code: number }> {
  const exitCodes = options.exitCodes ?? [0];
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd: ROOT, env: { ...wranglerEnv(), ...options.env }, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    running.add(child);
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => killGroup(child, "SIGKILL"), timeoutMs);
    const name = `${file.split("/").pop()} ${args.slice(0, 3).join(" ")}`;
    child.on("error", (e) => {
      clearTimeout(timer);
      running.delete(child);
      reject(new Error(`${name}: ${e.message}`));
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      if (code !== null && exitCodes.includes(code)) return resolve({ stdout, stderr, code });
      const detail = stderr.trim().split("\n").slice(-3).join(" | ") || `exit ${code ?? signal}`;
      reject(new Error(`${name} failed: ${detail}`));
    });
  });
}

/** The configuration of a state directory that serves several databases (scripts/lib/shard-config.ts), if it has one. */
export function stateConfig(persistTo: string): string | undefined {
  const file = join(persistTo, SHARD_CONFIG);
  return existsSync(file) ? file : undefined;
}

/** `npm run admin -- …` against the temporary database (and its configuration, when it has one); returns its one line of JSON. */
export async function admin(persistTo: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Record<string, string>> {
  const config = stateConfig(persistTo);
  const where = ["--persist-to", persistTo, ...(config ? ["--config", config] : [])];
  const { stdout } = await run(process.execPath, ["--no-warnings", join(ROOT, "scripts", "admin.ts"), ...args, ...where], 120_000, { env });
  return JSON.parse(stdout.trim().split("\n").pop() as string);
}

const FILES = "d1-files.json";

function d1Folder(persistTo: string): string {
  return join(persistTo, "v3", "d1", "miniflare-D1DatabaseObject");
}

function sqliteFiles(persistTo: string): string[] {
  return readdirSync(d1Folder(persistTo)).filter((f) => /^[0-9a-f]{64}\.sqlite$/.test(f));
}

/**
 * The SQLite file of a local D1 database under a `--persist-to` directory: the
 * first (DB) as applySchema found it; with two databases, DB_1 is the other one.
 */
export function d1File(persistTo: string, database = "DB"): string {
  const files = sqliteFiles(persistTo);
  const first = existsSync(join(persistTo, FILES)) ? (JSON.parse(readFileSync(join(persistTo, FILES), "utf8")) as { DB: string }).DB : files[0];
  const file = database === "DB" ? first : files.filter((f) => f !== first).length === 1 ? files.find((f) => f !== first) : undefined;
  if (!file) throw new Error(`no D1 database file for ${database} in ${d1Folder(persistTo)} (${files.length} files)`);
  return join(d1Folder(persistTo), file);
}

/** The SQLite file of the database the directory (in DB) places an account in. */
export function accountFile(persistTo: string, accountId: string): string {
  const db = new DatabaseSync(d1File(persistTo), { readOnly: true });
  try {
    const row = db.prepare("SELECT shard FROM directory_accounts WHERE account_id = ?").get(accountId) as { shard: string } | undefined;
    return d1File(persistTo, row?.shard ?? "DB");
  } finally {
    db.close();
  }
}

/** schema.sql in the first database (DB); its file is remembered, so that d1File tells the databases apart. */
export async function applySchema(persistTo: string): Promise<void> {
  const config = stateConfig(persistTo);
  const args = [WRANGLER_JS, "d1", "execute", "taskgate", "--local", "--persist-to", persistTo, ...(config ? ["--config", config] : []), "--yes", "--file", join(ROOT, "schema.sql")];
  await run(process.execPath, args, 120_000);
  const files = sqliteFiles(persistTo);
  if (files.length !== 1) throw new Error(`expected one D1 database file after the schema, found ${files.length}`);
  writeFileSync(join(persistTo, FILES), JSON.stringify({ DB: files[0] }));
}

/** `wrangler dev` in its own process group, so that stopping it stops workerd and esbuild too. */
export class DevServer {
  private child: ChildProcess | null = null;
  private output: string[] = [];
  base = "";

  /**
   * Starts wrangler dev on free ports. If it exits before serving (a port
   * taken between choosing and binding it, say), it is started once more on
   * new ports; the first attempt's last lines stay in the output for a report.
   */
  async start(persistTo: string, vars: Record<string, string>): Promise<void> {
    try {
      await this.attempt(persistTo, vars);
    } catch (e) {
      if (!/stopped before it served/.test((e as Error).message)) throw e;
      this.output.push(`(wrangler dev exited before serving: ${(e as Error).message}; starting it again on new ports)`);
      await this.attempt(persistTo, vars);
    }
  }

  /** The state directory's own configuration (several databases) when it has one, else wrangler.toml. */
  private async attempt(persistTo: string, vars: Record<string, string>): Promise<void> {
    const port = await freePort();
    let inspectorPort = await freePort();
    while (inspectorPort === port) inspectorPort = await freePort();
    this.base = `http://127.0.0.1:${port}`;
    const args = wranglerDevArgs({ host: "127.0.0.1", port, persistTo, config: stateConfig(persistTo), inspectorPort, vars });
    // --test-scheduled: GET /__scheduled?cron=… runs the scheduled handler (the crons do not fire in wrangler dev).
    const child = spawn(process.execPath, [WRANGLER_JS, ...args, "--show-interactive-dev-session=false", "--test-scheduled"], {
      cwd: ROOT,
      env: wranglerEnv(),
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.child = child;
    const keep = (chunk: Buffer) => {
      this.output.push(...chunk.toString().split("\n"));
      if (this.output.length > 400) this.output.splice(0, this.output.length - 400);
    };
    child.stdout?.on("data", keep);
    child.stderr?.on("data", keep);
    const stopped = () => (child.exitCode !== null || child.signalCode !== null ? `exit ${child.exitCode ?? child.signalCode}` : null);
    await waitForHealth(this.base, 120_000, stopped);
  }

  /** The last lines wrangler printed, for a failure report. */
  tail(lines = 40): string {
    return this.output.filter((l) => l.trim()).slice(-lines).join("\n");
  }

  /** The process group of the running server (wrangler, workerd, esbuild), or null when stopped. */
  get pgid(): number | null {
    return this.child?.pid ?? null;
  }

  /**
   * Stops the whole group: SIGTERM, then SIGKILL after 5 s. Throws if a process
   * of the group still lives a few seconds later, so nothing is left behind unnoticed.
   */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child?.pid) return;
    this.child = null;
    const gone = () => child.exitCode !== null || child.signalCode !== null;
    const signalGroup = (signal: NodeJS.Signals) => {
      try {
        process.kill(-(child.pid as number), signal);
      } catch {
        /* the group is already gone */
      }
    };
    signalGroup("SIGTERM");
    for (let i = 0; i < 50 && !gone(); i++) await new Promise((r) => setTimeout(r, 100));
    signalGroup("SIGKILL");
    const pgid = child.pid;
    const left = await settle(() => (groupAlive(pgid) ? [pgid] : []));
    if (left.length > 0) throw new Error(`wrangler dev's process group ${pgid} still runs after SIGKILL`);
  }

  /** Synchronous last resort when the process is exiting. */
  killNow(): void {
    if (this.child?.pid) {
      try {
        process.kill(-this.child.pid, "SIGKILL");
      } catch {
        /* already gone */
      }
    }
  }
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
}

export type Era = "modern" | "legacy";

export interface ListedTool {
  name: string;
  title?: string;
  annotations?: Record<string, unknown>;
  _meta?: Record<string, any>;
}

export interface CallResult {
  isError: boolean;
  text: string;
  structured: Record<string, any>;
  /** The result's `_meta` (a policy's decision, a pending action). */
  meta: Record<string, any>;
}

export interface McpSession {
  era: Era;
  protocolVersion: string | undefined;
  listTools(): Promise<ListedTool[]>;
  call(name: string, args?: Record<string, unknown>): Promise<CallResult>;
  /** Expects success and returns structuredContent. */
  ok(name: string, args?: Record<string, unknown>): Promise<Record<string, any>>;
  /** Expects an isError result and returns its text. */
  fails(name: string, args?: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

function toResult(r: any): CallResult {
  const text = (r.content ?? []).filter((c: any) => c.type === "text").map((c: any) => c.text).join("\n");
  return { isError: r.isError === true, text, structured: r.structuredContent ?? {}, meta: r._meta ?? {} };
}

/** What a session needs of either SDK's Client. */
interface SdkClient {
  listTools: (p?: any) => Promise<any>;
  callTool: (p: any) => Promise<any>;
  close: () => Promise<void>;
}

/** How the transport authenticates: a fixed bearer token, or an SDK OAuth client provider. */
export type Credentials = { secret: string } | { authProvider: object };

function transportOptions(credentials: Credentials): Record<string, unknown> {
  return "secret" in credentials ? { requestInit: { headers: { authorization: `Bearer ${credentials.secret}` } } } : { authProvider: credentials.authProvider };
}

/** A real SDK client over HTTP: the 2.x client (negotiating the newest protocol) or the 1.x SDK (initialize). */
export async function connect(url: string, credentials: string | Credentials, era: Era): Promise<McpSession> {
  const options = transportOptions(typeof credentials === "string" ? { secret: credentials } : credentials);
  let inner: SdkClient;
  let protocolVersion: string | undefined;
  if (era === "modern") {
    const client = new Client({ name: "taskgate-e2e", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), options));
    protocolVersion = client.getNegotiatedProtocolVersion();
    inner = client;
  } else {
    const client = new LegacyClient({ name: "taskgate-e2e-legacy", version: "1.0.0" });
    const transport = new LegacyTransport(new URL(url), options);
    await client.connect(transport);
    protocolVersion = transport.protocolVersion;
    inner = client;
  }
  return session(era, protocolVersion, inner);
}

function session(era: Era, protocolVersion: string | undefined, inner: SdkClient): McpSession {
  const call = async (name: string, args: Record<string, unknown> = {}) => toResult(await inner.callTool({ name, arguments: args }));
  return {
    era,
    protocolVersion,
    async listTools() {
      const tools: ListedTool[] = [];
      let cursor: string | undefined;
      do {
        const page = await inner.listTools(cursor ? { cursor } : undefined);
        tools.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor);
      return tools;
    },
    call,
    async ok(name, args) {
      const r = await call(name, args);
      if (r.isError) throw new Error(`${name} failed: ${r.text}`);
      return r.structured;
    },
    async fails(name, args) {
      const r = await call(name, args);
      if (!r.isError) throw new Error(`${name} should have been refused but returned ${r.text.slice(0, 200)}`);
      return r.text;
    },
    close: () => inner.close(),
  };
}
