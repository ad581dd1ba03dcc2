/**
 * `npm start`'s supervisor (scripts/lib/supervise.ts), in Node: first around
 * a stand-in for wrangler dev that exits (test/browser/supervised-runtime.ts),
 * then around the real `npm start` whose workerd is killed.
 *
 * A runtime that exits after serving is started again, and again, until the
 * restarts in a row reach the most the policy allows: then it gives up with a
 * message and exit status 1, rather than restarting forever. A first start that
 * never served is not restarted. A stop while it waits to restart ends it.
 *
 * The real one: `npm start` on a free port with a temporary --persist-to
 * directory; every workerd below it is killed (wrangler stays, and nothing
 * answers on the port any more); the supervisor says the runtime stopped
 * answering, restarts wrangler dev, says it serves again once /health
 * answers, and SIGTERM still stops everything.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "../../scripts/lib/d1.ts";
import { freePort, wranglerEnv } from "../../scripts/lib/dev-server.ts";
import { alive, descendants, settle } from "../../scripts/lib/processes.ts";

interface Started {
  child: ChildProcess;
  out: () => string;
  err: () => string;
  exited: Promise<number | null>;
}

const started: Started[] = [];
const dirs: string[] = [];

function start(args: string[], env: NodeJS.ProcessEnv): Started {
  const child = spawn(process.execPath, ["--no-warnings", ...args], { cwd: ROOT, env: { ...wranglerEnv(), ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const s = { child, out: () => out, err: () => err, exited };
  started.push(s);
  return s;
}

/** Waits until `check()` holds, polling; fails with `what` and the output so far after `ms`. */
async function until(s: Started, what: string, check: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${what} within ${ms / 1000} s\n--- stdout\n${s.out().slice(-3000)}\n--- stderr\n${s.err().slice(-3000)}`);
}

const health = (port: number) =>
  fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(3000) }).then((r) => r.ok, () => false);

afterAll(async () => {
  // A failed check must not leave a server behind.
  for (const s of started) {
    for (const p of s.child.pid ? descendants(s.child.pid) : []) {
      try {
        process.kill(p.pid, "SIGKILL");
      } catch {
        /* gone */
      }
    }
    s.child.kill("SIGKILL");
  }
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const RUNTIME = join(ROOT, "test", "browser", "supervised-runtime.ts");

describe("npm start's supervisor, around a stand-in runtime", () => {
  it("restarts a runtime that exited after serving, backs off, and gives up after the restarts in a row the policy allows; a first start that never served is not restarted", async () => {
    const s = start([RUNTIME, "supervisor", "serve-then-exit"], { PORT: String(await freePort()) });
    expect(await s.exited).toBe(1);
    expect(s.out().trim().split("\n")).toEqual(["ready 0", "ready 1", "ready 2"]);
    expect(s.err()).toContain("npm start: the runtime exited (wrangler dev: exit code 3); restarting it…");
    expect(s.err()).toContain("npm start: the runtime exited (wrangler dev: exit code 3); restarting it (restart 2 in a row)…");
    expect(s.err()).toMatch(/npm start: the runtime exited \(wrangler dev: exit code 3\), after 2 restarts in a row; giving up\./);

    // wrangler's own message says what to fix (a syntax error, a bad configuration): it exits as wrangler did.
    const never = start([RUNTIME, "supervisor", "exit-at-once"], { PORT: String(await freePort()) });
    expect(await never.exited).toBe(7);
    expect(never.out()).toBe("");
    expect(never.err()).not.toContain("restarting");
  }, 60_000);

  it("a stop while it waits to restart ends it at once, with status 0", async () => {
    const s = start([RUNTIME, "supervisor", "serve-then-exit"], { PORT: String(await freePort()), BACKOFF_MS: "600000" });
    await until(s, "the first restart announced", () => s.err().includes("restarting it…"), 30_000);
    s.child.kill("SIGTERM");
    expect(await s.exited).toBe(0);
    expect(s.out().trim()).toBe("ready 0");
  }, 60_000);
});

describe("npm start, its workerd killed", () => {
  it("says the runtime stopped answering, restarts it, serves again once /health answers, and still stops on SIGTERM", async () => {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), "taskgate-restart-"));
    dirs.push(dir);
    const s = start([join(ROOT, "scripts", "start.ts"), "--persist-to", dir], { PORT: String(port) });
    await until(s, "npm start serving", () => s.out().includes("Taskgate is serving MCP"), 180_000);
    expect(await health(port)).toBe(true);

    const workerd = descendants(s.child.pid!).filter((p) => /(^|\/)workerd /.test(p.command));
    expect(workerd.length, "workerd below npm start").toBeGreaterThan(0);
    for (const p of workerd) process.kill(p.pid, "SIGKILL");

    await until(s, "the restart announced", () => /npm start: the runtime (stopped answering|exited)[^\n]*; restarting it…/.test(s.err()), 90_000);
    await until(s, "serving again", () => s.out().includes("Taskgate is serving again"), 180_000);
    expect(await health(port)).toBe(true);
    expect(s.out().match(/Taskgate is serving/g), "ready once per start").toHaveLength(2);
    // The probes' own lines are not printed.
    expect(s.out() + s.err()).not.toMatch(/HEAD \/health/);

    const below = descendants(s.child.pid!);
    s.child.kill("SIGTERM");
    expect(await s.exited).toBe(0);
    expect(await settle(() => below.filter((p) => alive(p.pid))), "left running").toEqual([]);
    expect(await health(port)).toBe(false);
  }, 420_000);
});
