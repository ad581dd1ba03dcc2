/**
 * Running the Worker locally with `wrangler dev`, shared by `npm start` and the
 * end-to-end script. Wrangler runs under the same Node as the caller (the
 * node@22 devDependency when started through npm), not whatever `node` is first
 * on PATH.
 */
import { createServer } from "node:net";
import { delimiter, dirname, join } from "node:path";
import { ROOT } from "./d1.ts";

export const WRANGLER_JS = join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js");

/** The MCP Inspector's web UI, so that it can call a local server straight from the browser. */
export const INSPECTOR_ORIGINS = ["http://localhost:6274", "http://127.0.0.1:6274"];

export interface DevOptions {
  host: string;
  port: number;
  /** Local state directory (D1 and the rest); wrangler's default `.wrangler/state` when left out. */
  persistTo?: string;
  /** A wrangler configuration other than wrangler.toml (a local deployment of several databases). */
  config?: string;
  inspectorPort?: number;
  vars?: Record<string, string>;
}

/** Arguments after `node wrangler.js`. */
export function wranglerDevArgs(o: DevOptions): string[] {
  const args = ["dev", "--ip", o.host, "--port", String(o.port)];
  if (o.persistTo) args.push("--persist-to", o.persistTo);
  if (o.config) args.push("--config", o.config);
  if (o.inspectorPort) args.push("--inspector-port", String(o.inspectorPort));
  // No request log line locally (src/http/request-log.ts): wrangler dev prints its own line for each request, and
  // relaying the Worker's costs it about 2 ms a request; a deployed Worker keeps them in Workers Logs.
  for (const [k, v] of Object.entries({ REQUEST_LOG: "off", ...o.vars })) args.push("--var", `${k}:${v}`);
  return args;
}

/** The environment for wrangler and the admin CLI: this Node first on PATH (wrangler needs Node 22), no metrics. */
export function wranglerEnv(): NodeJS.ProcessEnv {
  const path = [dirname(process.execPath), process.env.PATH ?? ""].filter(Boolean).join(delimiter);
  return { ...process.env, PATH: path, WRANGLER_SEND_METRICS: "false" };
}

/** Whether `port` on `host` can be listened on now: null when it can, else why not (in use, not allowed). */
export function portProblem(host: string, port: number): Promise<string | null> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.unref();
    srv.once("error", (e: NodeJS.ErrnoException) => {
      if (e.code === "EADDRINUSE") resolve(`port ${port} on ${host} is already in use (another npm start or wrangler dev?)`);
      else if (e.code === "EACCES") resolve(`port ${port} on ${host} needs privileges this user does not have`);
      else resolve(`port ${port} on ${host} cannot be used: ${e.message}`);
    });
    srv.listen({ port, host, exclusive: true }, () => srv.close(() => resolve(null)));
  });
}

/** The first port after `port` that is free on `host` (up to 50 tried), for a suggestion. */
export async function nextFreePort(host: string, port: number): Promise<number | null> {
  for (let p = port + 1; p <= Math.min(port + 50, 65535); p++) if ((await portProblem(host, p)) === null) return p;
  return null;
}

/** A TCP port nobody listens on right now, on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      const port = typeof address === "object" && address ? address.port : 0;
      srv.close(() => (port ? resolve(port) : reject(new Error("no free port"))));
    });
  });
}

/** Polls GET /health until it answers 200, the deadline passes, or `stopped()` says the server died. */
export async function waitForHealth(base: string, timeoutMs: number, stopped: () => string | null): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "no answer yet";
  while (Date.now() < deadline) {
    const why = stopped();
    if (why) throw new Error(`wrangler dev stopped before it served: ${why}`);
    try {
      const res = await fetch(`${base}/health`, { signal: AbortSignal.timeout(2000) });
      if (res.ok) return;
      last = `HTTP ${res.status}`;
    } catch (e) {
      last = (e as Error).message;
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`wrangler dev did not answer ${base}/health within ${Math.round(timeoutMs / 1000)} s (${last})`);
}
