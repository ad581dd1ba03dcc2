/**
 * `npm start` itself, end to end: it refuses a taken port before printing or
 * writing anything, and SIGTERM or SIGINT sent to its own process stops
 * wrangler and workerd before it exits; the minute cron it runs lapses a
 * claim lease (scripts/lib/e2e-crons.ts). Runs `npm start` (through the npm
 * that runs the e2e script) with --persist-to a temporary directory, so the
 * project's own local state is never touched.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { ROOT } from "./d1.ts";
import { alive } from "./processes.ts";
import { freePort, waitForHealth, wranglerEnv } from "./dev-server.ts";
import { assert, equal, type Checks } from "./e2e-harness.ts";
import { cronSchedule, dailyOnRequest, leaseLapsesUnderStart } from "./e2e-crons.ts";

const START = join(ROOT, "scripts", "start.ts");
/** The tools reference whose tables `npm run -s catalog` prints (from the project's root). */
const TOOLS_DOC = "docs/tools.md";

interface Started {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const started = new Set<ChildProcess>();

/**
 * `npm start -- --persist-to DIR` through the npm that runs this script (so a
 * signal goes to npm's own process, as a service manager sends it), or the
 * script itself when this was not started by npm.
 */
function startCommand(persistTo: string): string[] {
  const npm = process.env.npm_execpath;
  if (npm && /npm-cli\.js$/.test(npm)) return [npm, "start", "--silent", "--", "--persist-to", persistTo];
  return ["--no-warnings", START, "--persist-to", persistTo];
}

function startScript(port: number, persistTo: string): Started {
  const child = spawn(process.execPath, startCommand(persistTo), {
    cwd: ROOT,
    env: { ...wranglerEnv(), PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  started.add(child);
  let out = "";
  let err = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => {
      started.delete(child);
      resolve({ code, signal });
    }),
  );
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** Kills a started `npm start` and everything below it (a check that failed must not leave a server behind). */
function killTree(child: ChildProcess): void {
  if (!child.pid) return;
  for (const pid of descendants(child.pid)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      /* already gone */
    }
  }
  child.kill("SIGKILL");
}

/** Last resort when the e2e script stops early: nothing `npm start` started may outlive it. */
export function stopStartScripts(): void {
  for (const child of started) killTree(child);
}

/** Every process below `pid` (children, grandchildren, …), from `ps`. */
function descendants(pid: number): number[] {
  const table = execFileSync("ps", ["-A", "-o", "pid=", "-o", "ppid="], { encoding: "utf8" })
    .trim()
    .split("\n")
    .map((l) => l.trim().split(/\s+/).map(Number));
  const out: number[] = [];
  const walk = (parent: number) => {
    for (const [p, pp] of table) {
      if (pp === parent && !out.includes(p)) {
        out.push(p);
        walk(p);
      }
    }
  };
  walk(pid);
  return out;
}

function listen(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(port, "127.0.0.1", () => resolve(srv));
  });
}

const within = <T>(ms: number, p: Promise<T>, what: string) =>
  Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} within ${ms / 1000} s`)), ms))]);

export async function startScriptChecks(c: Checks, stateDir: string): Promise<void> {
  await c.run("npm start on a taken port: fails at once, prints no token and no configuration, writes nothing, names PORT=", async () => {
    const port = await freePort();
    const squatter = await listen(port);
    try {
      const s = startScript(port, stateDir);
      const { code } = await within(30_000, s.exited, "npm start did not exit");
      equal(code, 1, "exit status");
      equal(s.stdout(), "", "stdout");
      assert(!/tg_/.test(s.stderr()), "stderr shows a token");
      assert(s.stderr().includes(`port ${port} on 127.0.0.1 is already in use`), `stderr: ${s.stderr()}`);
      assert(/pick another port: PORT=\d+ npm start/.test(s.stderr()), `stderr names PORT=…: ${s.stderr()}`);
      assert(!existsSync(stateDir) || readdirSync(stateDir).length === 0, "it wrote into the state directory");
    } finally {
      await new Promise((r) => squatter.close(r));
    }
  });

  await c.run("npm start's cron schedule: the crons of wrangler.toml, matched by minute (UTC)", cronSchedule);
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    const port = await freePort();
    const s = startScript(port, stateDir);
    try {
      if (signal === "SIGTERM") {
        // The same server first shows the Cron Triggers running as deployed.
        await c.run("npm start runs the minute cron: an agent's one-minute claim lease lapses and claim.lapsed is delivered", async () => {
          await waitForHealth(`http://127.0.0.1:${port}`, 180_000, () => exitedWhy(s));
          await leaseLapsesUnderStart(port, stateDir);
        });
        await c.run("npm run -s scheduled -- daily runs the daily job on the npm start server now (and says so when none answers)", async () => dailyOnRequest(port, await freePort()));
      }
      await c.run(`npm start, then ${signal} to its own process: wrangler and workerd stop, then it exits`, () => stopsOn(signal, s, port));
    } finally {
      killTree(s.child);
    }
  }
}

/** Why the started `npm start` is gone (its exit and last words), or null while it runs. */
function exitedWhy(s: Started): string | null {
  return s.child.exitCode !== null || s.child.signalCode !== null ? `exit ${s.child.exitCode ?? s.child.signalCode}: ${s.stderr().slice(-500)}` : null;
}

/** Waits for the started server, sends `signal` to npm start, and checks that it and everything below it stopped. */
async function stopsOn(signal: NodeJS.Signals, s: Started, port: number): Promise<void> {
  await waitForHealth(`http://127.0.0.1:${port}`, 180_000, () => exitedWhy(s));
  assert(/Taskgate MCP server: http:\/\/127\.0\.0\.1:\d+\/mcp/.test(s.stdout()), "it printed the URL");
  const below = descendants(s.child.pid as number);
  assert(below.length >= 2, `expected wrangler and workerd below npm start, found ${below.length} processes`);
  s.child.kill(signal);
  const { code } = await within(30_000, s.exited, `npm start did not exit after ${signal}`);
  equal(code, 0, "exit status");
  const left = below.filter(alive);
  assert(left.length === 0, `still running after npm start exited: ${left.join(", ")}`);
  const answer = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(2000) }).then(() => "an answer", () => null);
  equal(answer, null, "the port after the stop");
}

/** `npm run -s catalog` prints exactly the tool tables docs/tools.md shows (so the tools reference agrees with tools/list). */
export async function catalogCheck(c: Checks): Promise<void> {
  await c.run("npm run -s catalog: its tables are docs/tools.md's, verbatim", async () => {
    const npm = process.env.npm_execpath;
    const args = npm && /npm-cli\.js$/.test(npm) ? [npm, "run", "-s", "catalog"] : ["--no-warnings", join(ROOT, "scripts", "lib", "catalog-table.ts")];
    const table = execFileSync(process.execPath, args, { cwd: ROOT, env: wranglerEnv(), encoding: "utf8" }).trim();
    assert(table.startsWith("**Tasks**"), `unexpected output: ${table.slice(0, 80)}`);
    assert(readFileSync(join(ROOT, TOOLS_DOC), "utf8").includes(table), `${TOOLS_DOC}'s tool tables differ from npm run -s catalog; paste its output into ${TOOLS_DOC}`);
  });
}
