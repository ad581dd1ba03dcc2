/**
 * The processes the benchmark starts: `wrangler dev` on a free local port with
 * a temporary --persist-to directory, the admin CLI, and `wrangler d1 execute`.
 * Everything started here is stopped by `stopAll()` (also on Ctrl-C or a crash).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";
import { ROOT } from "../scripts/lib/d1.ts";

export { ROOT };
export const WRANGLER = join(ROOT, "node_modules", ".bin", "wrangler");
export const QUIET_ENV = { ...process.env, WRANGLER_SEND_METRICS: "false", NO_D1_WARNING: "true", CI: "1" };

const running = new Set<ChildProcess>();
/** Synchronous clean-ups to run on exit and signals as well (e.g. removing a checkout the bench made). */
const cleanups = new Set<() => void>();

/** Runs `fn` when the process exits or is interrupted, unless the returned function is called first (which runs it now). */
export function atExit(fn: () => void): () => void {
  cleanups.add(fn);
  return () => {
    if (cleanups.delete(fn)) fn();
  };
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      /* already gone */
    }
  }
}

/** Synchronous last resort: used on exit and signals. */
export function stopAllNow(): void {
  for (const child of running) killGroup(child, "SIGKILL");
  running.clear();
  for (const fn of cleanups) {
    try {
      fn();
    } catch {
      /* best effort */
    }
  }
  cleanups.clear();
}

process.on("exit", stopAllNow);
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    console.error(`\n${signal}: stopping the processes the benchmark started.`);
    stopAllNow();
    process.exit(130);
  });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface DevServer {
  base: string;
  stop(): Promise<void>;
}

/** `wrangler dev` in its own process group (of the checkout at `root`, this one by default); resolves once GET /health answers. */
export async function startDev(persistTo: string, logFile: { write(s: string): void }, extraArgs: string[] = [], root = ROOT): Promise<DevServer> {
  const port = await freePort();
  const child = spawn(
    WRANGLER,
    // No request log line (as every local run, scripts/lib/dev-server.ts): relaying it costs wrangler dev about 2 ms a request.
    ["dev", "--ip", "127.0.0.1", "--port", String(port), "--persist-to", persistTo, "--log-level", "warn", "--show-interactive-dev-session=false", "--var", "REQUEST_LOG:off", ...extraArgs],
    { cwd: root, env: QUIET_ENV, detached: true, stdio: ["ignore", "pipe", "pipe"] },
  );
  running.add(child);
  child.stdout?.on("data", (d: Buffer) => logFile.write(d.toString()));
  child.stderr?.on("data", (d: Buffer) => logFile.write(d.toString()));
  const base = `http://127.0.0.1:${port}`;

  const stop = async () => {
    if (!running.has(child)) return;
    const exited = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once("exit", () => resolve());
    });
    killGroup(child, "SIGTERM");
    const timer = setTimeout(() => killGroup(child, "SIGKILL"), 5000);
    await exited;
    clearTimeout(timer);
    running.delete(child);
  };

  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    try {
      const res = await fetch(`${base}/health`);
      if (res.ok) {
        await res.text();
        return { base, stop };
      }
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  await stop();
  throw new Error(`wrangler dev did not answer /health within 60 s (exit code ${child.exitCode}); see the log file.`);
}

/** `npm run admin -- <args> --persist-to DIR`, parsed from its one line of JSON. */
export function admin(persistTo: string, args: string[]): Record<string, string> {
  const res = spawnSync(process.execPath, ["--no-warnings", join(ROOT, "scripts", "admin.ts"), ...args, "--persist-to", persistTo], {
    cwd: ROOT,
    env: QUIET_ENV,
    encoding: "utf8",
  });
  if (res.status !== 0) throw new Error(`admin ${args[0]} failed (exit ${res.status}): ${res.stderr.trim().split("\n").slice(0, 3).join(" ")}`);
  return JSON.parse(res.stdout.trim().split("\n").pop() ?? "{}") as Record<string, string>;
}

/** Runs a command to completion, returning stdout; throws with the tail of its output on failure. */
export function runQuiet(cmd: string, args: string[]): string {
  const res = spawnSync(cmd, args, { cwd: ROOT, env: QUIET_ENV, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (res.status !== 0) {
    throw new Error(`${[cmd, ...args].join(" ")} failed (exit ${res.status}):\n${(res.stderr || res.stdout).split("\n").slice(-8).join("\n")}`);
  }
  return res.stdout + res.stderr;
}
