/**
 * `npm test`'s last two parts side by side: the browser tests and the
 * end-to-end check each start a `wrangler dev` of their own on a free port and
 * spend most of their time waiting on it (a minute cron, a lease that lapses,
 * a page that loads), so together they take little more than the longer one.
 * Each line of their output is printed as it comes, after the part's name;
 * the run fails if either fails. Ctrl-C (or SIGTERM) stops both, and each
 * stops what it started, as when it runs alone.
 *
 *   npm run -s test:after        (what npm test runs after vitest)
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";

const PARTS = [
  { name: "browser tests", tag: "browser", script: "test:browser" },
  { name: "end-to-end check", tag: "e2e", script: "e2e" },
] as const;
const WIDTH = Math.max(...PARTS.map((p) => p.tag.length));

interface Ended {
  name: string;
  code: number;
  seconds: number;
}

const children: ChildProcess[] = [];
let stopping = false;

function run(name: string, tag: string, script: string): Promise<Ended> {
  const started = Date.now();
  // Its own process group, so a stop reaches everything it started.
  const child = spawn("npm", ["run", "-s", script], { stdio: ["ignore", "pipe", "pipe"], detached: true, env: { ...process.env, FORCE_COLOR: process.env.FORCE_COLOR ?? "0" } });
  children.push(child);
  const prefix = `${tag.padEnd(WIDTH)} │ `;
  for (const stream of [child.stdout, child.stderr]) {
    if (stream) createInterface({ input: stream, crlfDelay: Infinity }).on("line", (line) => process.stdout.write(prefix + line + "\n"));
  }
  return new Promise((resolve) => {
    child.on("close", (code, signal) => {
      const seconds = Math.round((Date.now() - started) / 1000);
      process.stdout.write(`${prefix}${name} (npm run ${script}): ${code === 0 ? "passed" : `failed (${signal ?? `exit ${code}`})`} in ${seconds} s\n`);
      resolve({ name, code: code ?? 1, seconds });
    });
  });
}

function stop(signal: NodeJS.Signals): void {
  if (stopping) {
    for (const c of children) if (c.pid) try { process.kill(-c.pid, "SIGKILL"); } catch { /* gone */ }
    return;
  }
  stopping = true;
  for (const c of children) if (c.pid) try { process.kill(-c.pid, signal); } catch { /* gone */ }
}
process.on("SIGINT", () => stop("SIGINT"));
process.on("SIGTERM", () => stop("SIGTERM"));

const ended = await Promise.all(PARTS.map((p) => run(p.name, p.tag, p.script)));
process.stdout.write(`\n${ended.map((e) => `${e.name}: ${e.code === 0 ? "passed" : "FAILED"} in ${e.seconds} s`).join("\n")}\n`);
process.exit(ended.every((e) => e.code === 0) ? 0 : 1);
