/**
 * `npm start`'s supervisor. It runs a command (wrangler dev) in its own
 * process group and stops the whole group with it: wrangler dev starts
 * workerd (and esbuild), and a signal sent only to wrangler can leave them
 * running. SIGINT or SIGTERM to this process (Ctrl-C in the terminal, a
 * service manager, a container runtime) is forwarded to the group; this
 * process exits once the group is gone. A second signal (a moment later), or
 * a group still alive after the grace period, gets SIGKILL. The same stop
 * begins when the parent of this process goes away.
 *
 * Once the runtime has answered `GET /health`, the supervisor keeps asking
 * (HEAD /health, every 2 s; wrangler-noise.ts drops the lines wrangler prints
 * for them). When the command exits, or 3 probes in a row get no answer
 * (killing workerd can leave wrangler running and the port open, with
 * nothing behind it), it says why, stops the group and starts the command
 * again, and tells `onReady` once /health answers. Restarts back off (1, 2,
 * 5, 10, 30 s); after 5 restarts in a row that did not stay up a minute, it
 * gives up with a message and exits 1. A first start that exits before it
 * answers is not restarted: this process exits with its status, as wrangler's
 * own message usually says what to fix.
 */
import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";
import { constants } from "node:os";
import { createInterface } from "node:readline";

/** When the runtime counts as dead, and how restarts back off. */
export interface RestartPolicy {
  /** Between two probes of a serving runtime. */
  intervalMs: number;
  /** How long one probe waits for an answer. */
  timeoutMs: number;
  /** Probes in a row without an answer that make the runtime dead. */
  failures: number;
  /** How long a restarted runtime may take to answer /health. */
  startMs: number;
  /** The wait before the 1st, 2nd, … restart in a row (the last one repeats). */
  backoffMs: number[];
  /** Restarts in a row after which it gives up. */
  attempts: number;
  /** A runtime that served this long came back: the next restart is the first in a row again. */
  stableMs: number;
}

export const RESTART_POLICY: RestartPolicy = {
  intervalMs: 2000,
  timeoutMs: 5000,
  failures: 3,
  startMs: 120_000,
  backoffMs: [1000, 2000, 5000, 10_000, 30_000],
  attempts: 5,
  stableMs: 60_000,
};

export interface SuperviseOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Where the runtime answers `/health` (`http://127.0.0.1:8787`). */
  origin: string;
  /** Told each time /health answers after a start: 0 the first time, then how many restarts there were. */
  onReady: (restarts: number) => void;
  /** The supervisor's own lines (restarting, giving up): stderr. */
  say: (line: string) => void;
  /** How long the group may take to stop after the signal before it is killed. */
  graceMs?: number;
  /** Told when a stop begins (for a line on stderr). */
  onStopping?: (signal: NodeJS.Signals) => void;
  /** When given, the child's output goes through it line by line (one filter per stream and start); a false drops the line. */
  filter?: () => (line: string) => boolean;
  policy?: Partial<RestartPolicy>;
}

export interface Supervisor {
  /** Why the runtime cannot be asked anything now (it is starting, restarting or stopping), or null while it serves. */
  unavailable(): string | null;
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

/** A wait that keeps this process alive: between two starts nothing else may (no child, no pipe). */
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Resolves once no process of the child's group is left (or after `ms`). */
async function groupGone(child: ChildProcess, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!signalGroup(child, 0)) return true;
    await sleep(100);
  }
  return !signalGroup(child, 0);
}

/** SIGTERM to the group, SIGKILL to what is left after `graceMs`; resolves when it is gone. */
async function stopGroup(child: ChildProcess, graceMs: number): Promise<void> {
  signalGroup(child, "SIGTERM");
  if (await groupGone(child, graceMs)) return;
  signalGroup(child, "SIGKILL");
  await groupGone(child, 5000);
}

/** Null when GET/HEAD /health answers 2xx, else what went wrong. */
async function probe(origin: string, timeoutMs: number): Promise<string | null> {
  try {
    const res = await fetch(`${origin}/health`, { method: "HEAD", signal: AbortSignal.timeout(timeoutMs) });
    return res.ok ? null : `HTTP ${res.status}`;
  } catch (e) {
    const err = e as Error & { cause?: { code?: string } };
    if (err.name === "TimeoutError") return `no answer within ${Math.round(timeoutMs / 1000)} s`;
    return err.cause?.code ?? err.message;
  }
}

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

const exitWords = (e: Exit) => (e.signal ? `signal ${e.signal}` : `exit code ${e.code}`);

/** One start of the command: its process, and its exit once it has exited. */
interface Run {
  child: ChildProcess;
  exit: Exit | null;
  exited: Promise<Exit>;
}

/** Starts `file args` in its own group, watches it and starts it again when it dies; exits this process when it has stopped. */
export function supervise(file: string, args: string[], o: SuperviseOptions): Supervisor {
  const grace = o.graceMs ?? 10_000;
  const policy: RestartPolicy = { ...RESTART_POLICY, ...o.policy };
  let current: Run | null = null;
  let state: "starting" | "serving" | "restarting" | "stopping" = "starting";
  let stopping: NodeJS.Signals | null = null;
  let stoppingAt = 0;
  let onStop: () => void = () => {};
  const stopped = new Promise<void>((r) => (onStop = r));

  const start = (): Run => {
    const options: SpawnOptions = { cwd: o.cwd, env: o.env, detached: true, stdio: ["ignore", o.filter ? "pipe" : "inherit", o.filter ? "pipe" : "inherit"] };
    const child = spawn(file, args, options);
    if (o.filter && child.stdout && child.stderr) {
      filtered(child.stdout, process.stdout, o.filter());
      filtered(child.stderr, process.stderr, o.filter());
    }
    child.on("error", (e) => {
      console.error(`Could not start ${file}: ${e.message}`);
      process.exit(1);
    });
    const run: Run = { child, exit: null, exited: Promise.resolve({ code: null, signal: null }) };
    run.exited = new Promise((resolve) =>
      child.on("exit", (code, signal) => {
        run.exit = { code, signal };
        resolve(run.exit);
      }),
    );
    return run;
  };

  /** Resolves when /health answers (null) or the run exits or the deadline passes (why not). */
  const untilServing = async (run: Run, deadline: number): Promise<string | null> => {
    while (!stopping) {
      if (run.exit) return `the runtime exited (wrangler dev: ${exitWords(run.exit)})`;
      if (Date.now() > deadline) return `the runtime did not answer /health within ${Math.round(policy.startMs / 1000)} s`;
      if ((await probe(o.origin, policy.timeoutMs)) === null && !run.exit) return null;
      await Promise.race([sleep(300), run.exited, stopped]);
    }
    return "stopping";
  };

  /** Resolves with why the serving runtime is dead: it exited, or `failures` probes in a row got no answer. */
  const untilDead = async (run: Run): Promise<string> => {
    let failed = 0;
    let last = "";
    while (!stopping) {
      await Promise.race([sleep(policy.intervalMs), run.exited, stopped]);
      if (stopping) break;
      if (run.exit) return `the runtime exited (wrangler dev: ${exitWords(run.exit)})`;
      const why = await probe(o.origin, policy.timeoutMs);
      if (why === null) {
        failed = 0;
        continue;
      }
      failed++;
      last = why;
      if (failed >= policy.failures) return `the runtime stopped answering (${failed} probes of /health in a row: ${last})`;
    }
    return "stopping";
  };

  const loop = async () => {
    let restarts = 0;
    let inARow = 0;
    for (;;) {
      if (stopping) return;
      const run = start();
      current = run;
      const first = restarts === 0;
      const notServing = await untilServing(run, first ? Infinity : Date.now() + policy.startMs);
      if (stopping) return;
      let why: string;
      if (notServing === null) {
        state = "serving";
        const since = Date.now();
        o.onReady(restarts);
        why = await untilDead(run);
        if (stopping) return;
        if (Date.now() - since >= policy.stableMs) inARow = 0;
      } else if (first) {
        // Never served: wrangler's own output says why; exit as it did.
        const exit = await run.exited;
        await groupGone(run.child, 3000);
        process.exit(exit.code ?? (exit.signal ? 128 + (constants.signals[exit.signal] ?? 0) : 1));
      } else why = notServing;
      state = "restarting";
      inARow++;
      if (inARow > policy.attempts) {
        o.say(`npm start: ${why}, after ${policy.attempts} restarts in a row; giving up. What wrangler printed above may say why; npm start starts it again.`);
        await stopGroup(run.child, grace);
        process.exit(1);
      }
      o.say(`npm start: ${why}; restarting it${inARow > 1 ? ` (restart ${inARow} in a row)` : ""}…`);
      await stopGroup(run.child, grace);
      if (stopping) return;
      await Promise.race([sleep(policy.backoffMs[Math.min(inARow, policy.backoffMs.length) - 1] ?? 0), stopped]);
      restarts++;
    }
  };

  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      // Ctrl-C reaches this process twice at once (from the terminal and forwarded by npm): only a later one forces.
      if (Date.now() - stoppingAt > 1000 && current) signalGroup(current.child, "SIGKILL");
      return;
    }
    stopping = signal;
    stoppingAt = Date.now();
    state = "stopping";
    onStop();
    o.onStopping?.(signal);
    const run = current;
    if (!run) process.exit(0);
    signalGroup(run.child, signal);
    setTimeout(() => signalGroup(run.child, "SIGKILL"), grace).unref();
    void (async () => {
      // The leader first; what it started may still be stopping.
      await run.exited;
      if (!(await groupGone(run.child, 3000))) {
        signalGroup(run.child, "SIGTERM");
        if (!(await groupGone(run.child, 3000))) signalGroup(run.child, "SIGKILL");
      }
      process.exit(0);
    })();
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
  process.on("exit", () => {
    if (current) signalGroup(current.child, "SIGKILL");
  });

  void loop();
  return {
    unavailable: () =>
      state === "serving" ? null : state === "starting" ? "the runtime is starting" : state === "restarting" ? "the runtime restarts" : "npm start is stopping",
  };
}
