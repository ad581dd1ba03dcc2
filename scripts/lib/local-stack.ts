/**
 * A whole local Taskgate for the end-to-end script and the browser tests: a
 * temporary directory as wrangler's `--persist-to` state (with a generated
 * configuration when it serves several databases), schema.sql applied to its
 * first D1 database, `wrangler dev` on a free port, and the admin CLI against the same
 * directory. stop() ends every process it started and removes the directory;
 * if the caller's process exits first, a synchronous last resort does the same.
 */
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { admin, applySchema, d1File, DevServer, removeDir, stopCommands } from "./e2e-harness.ts";
import { writeShardConfig } from "./shard-config.ts";

export class LocalStack {
  readonly dir: string;
  readonly server = new DevServer();
  /** With several databases, the generated wrangler configuration in the directory (wrangler dev and the admin CLI both read it). */
  readonly config: string | undefined;
  private stopping: Promise<void> | null = null;
  private stopped = false;
  private readonly onExit = () => this.killNow();

  /** `databases`: 1 serves wrangler.toml as it is; more serves DB, DB_1, … from a configuration made for the run. */
  constructor(prefix = "taskgate-", o: { databases?: number } = {}) {
    this.dir = mkdtempSync(join(tmpdir(), prefix));
    process.on("exit", this.onExit);
    this.config = (o.databases ?? 1) > 1 ? writeShardConfig(this.dir, o.databases as number) : undefined;
  }

  /** The SQLite file of one of the databases (DB, DB_1). */
  file(database = "DB"): string {
    return d1File(this.dir, database);
  }

  /** `http://127.0.0.1:<port>` once started. */
  get base(): string {
    return this.server.base;
  }

  applySchema(): Promise<void> {
    return applySchema(this.dir);
  }

  /** Starts `wrangler dev` on this directory; a failure carries wrangler's last lines. */
  async start(vars: Record<string, string> = {}): Promise<void> {
    try {
      await this.server.start(this.dir, vars);
    } catch (e) {
      throw new Error(`${(e as Error).message}\n${this.server.tail()}`);
    }
  }

  /** `npm run admin -- …` on this directory; its one line of JSON. */
  admin(args: string[]): Promise<Record<string, string>> {
    return admin(this.dir, args);
  }

  /**
   * Holds a write transaction on this directory's D1 file from another
   * process for `ms` milliseconds, as a busy `wrangler dev` can; resolves once
   * the lock is taken, with a promise for its release.
   */
  async holdWriteLock(ms: number): Promise<{ released: Promise<void> }> {
    const script = `const { DatabaseSync } = await import("node:sqlite");
const db = new DatabaseSync(process.argv[1]);
db.exec("BEGIN IMMEDIATE");
console.log("locked");
setTimeout(() => { db.exec("COMMIT"); db.close(); }, Number(process.argv[2]));`;
    const child = spawn(process.execPath, ["--no-warnings", "--input-type=module", "-e", script, d1File(this.dir), String(ms)], { stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const released = new Promise<void>((resolve, reject) =>
      child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`the lock holder exited ${code}: ${stderr.trim()}`)))),
    );
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (d: Buffer) => d.toString().includes("locked") && resolve());
      released.catch(reject);
    });
    return { released };
  }

  /** Stops the admin commands still running and the server, then removes the directory. Every caller waits for the same run. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      try {
        stopCommands();
        await this.server.stop();
      } finally {
        removeDir(this.dir);
        this.stopped = true;
        process.off("exit", this.onExit);
      }
    })();
    return this.stopping;
  }

  /** Synchronous last resort while the process exits. */
  killNow(): void {
    if (this.stopped) return;
    stopCommands();
    this.server.killNow();
    try {
      removeDir(this.dir);
    } catch {
      /* the process is exiting; the directory is in the temporary folder */
    }
  }
}
