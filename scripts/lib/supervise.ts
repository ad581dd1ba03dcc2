/**
 * Runs a command in its own process group and stops the whole group with it:
 * wrangler dev starts workerd (and esbuild), and a signal sent only to
 * wrangler can leave them running. SIGINT or SIGTERM to this process (Ctrl-C
 * in the terminal, a service manager, a container runtime) is forwarded to
 * the group; this process exits once the group is gone. A second signal (a
 * moment later), or a group still alive after the grace period, gets SIGKILL.
 * The same stop begins when the parent of this process goes away.
 */
import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";
import { constants } from "node:os";
import { createInterface } from "node:readline";

export interface SuperviseOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** How long the group may take to stop after the signal before it is killed. */
  graceMs?: number;
  /** Told when a stop begins (for a line on stderr). */
  onStopping?: (signal: NodeJS.Signals) => void;
  /** When given, the child's output goes through it line by line (one filter per stream); a false drops the line. */
  filter?: () => (line: string) => boolean;
}

/** Copies `from` to `to` line by line, keeping the lines `keep` says to. */
function filtered(from: NodeJS.ReadableStream, to: NodeJS.WritableStream, keep: (line: string) => boolean): void {
  createInterface({ input: from, crlfDelay: Infinity }).on("line", (line) => {
    if (keep(line)) to.write(`${line}\n`);
  });
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals | 0): boolean {
  if (!child.pid) return false;
  try {
    process.kill(-child.pid, signal);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ESRCH") return false;
    if (signal !== 0) child.kill(signal);
    return true;
  }
}

/** Resolves once no process of the child's group is left (or after `ms`). */
async function groupGone(child: ChildProcess, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!signalGroup(child, 0)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return !signalGroup(child, 0);
}

/** Starts `file args` in its own group and exits this process when it has stopped. Never returns control after that. */
export function supervise(file: string, args: string[], o: SuperviseOptions): ChildProcess {
  const grace = o.graceMs ?? 10_000;
  const options: SpawnOptions = { cwd: o.cwd, env: o.env, detached: true, stdio: ["ignore", o.filter ? "pipe" : "inherit", o.filter ? "pipe" : "inherit"] };
  const child = spawn(file, args, options);
  if (o.filter && child.stdout && child.stderr) {
    filtered(child.stdout, process.stdout, o.filter());
    filtered(child.stderr, process.stderr, o.filter());
  }
  let stopping: NodeJS.Signals | null = null;
  let stoppingAt = 0;

  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      // Ctrl-C reaches this process twice at once (from the terminal and forwarded by npm): only a later one forces.
      if (Date.now() - stoppingAt > 1000) signalGroup(child, "SIGKILL");
      return;
    }
    stopping = signal;
    stoppingAt = Date.now();
    o.onStopping?.(signal);
    signalGroup(child, signal);
    setTimeout(() => signalGroup(child, "SIGKILL"), grace).unref();
  };
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGHUP", () => stop("SIGHUP"));
  // A parent that dies without passing the signal on (a shell between npm and this process) must not leave the server running.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) stop("SIGTERM");
  }, 1000).unref();
  // Whatever ends this process, the group does not outlive it.
  process.on("exit", () => signalGroup(child, "SIGKILL"));

  child.on("error", (e) => {
    console.error(`Could not start ${file}: ${e.message}`);
    process.exit(1);
  });
  child.on("exit", async (code, signal) => {
    // The leader is gone; what it started may still be stopping.
    if (!(await groupGone(child, 3000))) {
      signalGroup(child, "SIGTERM");
      if (!(await groupGone(child, 3000))) signalGroup(child, "SIGKILL");
    }
    if (stopping) process.exit(0);
    process.exit(code ?? (signal ? 128 + (constants.signals[signal] ?? 0) : 1));
  });
  return child;
}
