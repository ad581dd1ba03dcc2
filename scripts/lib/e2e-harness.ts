/**
 * The pieces of the end-to-end script: a check list that prints one line per
 * check, the local `wrangler dev` it starts and always stops, the admin CLI,
 * and the two real MCP clients (2.x negotiating 2026-07-28, 1.x with initialize).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ROOT } from "./d1.ts";
import { freePort, waitForHealth, WRANGLER_JS, wranglerDevArgs, wranglerEnv } from "./dev-server.ts";
import { groupAlive, settle } from "./processes.ts";

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

/** `npm run admin -- …` against the temporary database; returns its one line of JSON. */
export async function admin(persistTo: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Record<string, string>> {
  const { stdout } = await run(process.execPath, ["--no-warnings", join(ROOT, "scripts", "admin.ts"), ...args, "--persist-to", persistTo], 120_000, { env });
  return JSON.parse(stdout.trim().split("\n").pop() as string);
}

/** The SQLite file of the local D1 database under a `--persist-to` directory. */
export function d1File(persistTo: string): string {
  const folder = join(persistTo, "v3", "d1", "miniflare-D1DatabaseObject");
  const file = readdirSync(folder).find((f) => /^[0-9a-f]{64}\.sqlite$/.test(f));
  if (!file) throw new Error(`no D1 database file in ${folder}`);
  return join(folder, file);
}

export async function applySchema(persistTo: string): Promise<void> {
  await run(process.execPath, [WRANGLER_JS, "d1", "execute", "taskgate", "--local", "--persist-to", persistTo, "--yes", "--file", join(ROOT, "schema.sql")], 120_000);
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

  private async attempt(persistTo: string, vars: Record<string, string>): Promise<void> {
    const port = await freePort();
    let inspectorPort = await freePort();
    while (inspectorPort === port) inspectorPort = await freePort();
    this.base = `http://127.0.0.1:${port}`;
    const args = wranglerDevArgs({ host: "127.0.0.1", port, persistTo, inspectorPort, vars });
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
}

export interface CallResult {
  isError: boolean;
  text: string;
  structured: Record<string, any>;
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
  return { isError: r.isError === true, text, structured: r.structuredContent ?? {} };
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
