/**
 * The supervisor of `npm start` (scripts/lib/supervise.ts) around a stand-in
 * for wrangler dev, for test/browser/supervise.test.ts. Run with Node:
 *
 *   node supervised-runtime.ts supervisor MODE   the supervisor, with quick
 *       probes and at most two restarts in a row, waiting BACKOFF_MS before each
 *       (100 unless given), over `node supervised-runtime.ts runtime MODE`; it
 *       prints `ready N` each time the runtime answers
 *   node supervised-runtime.ts runtime MODE      the stand-in: serves /health
 *       on PORT, then
 *         serve-then-exit: exits (status 3) once it has answered a second
 *           HEAD /health (the first is the supervisor's check that it serves);
 *         exit-at-once: exits (status 7) without serving.
 */
import { createServer } from "node:http";
import { fileURLToPath } from "node:url";
import { supervise } from "../../scripts/lib/supervise.ts";

const [role, mode] = process.argv.slice(2);
const port = Number(process.env.PORT);

if (role === "runtime") {
  if (mode === "exit-at-once") process.exit(7);
  let probes = 0;
  const server = createServer((req, res) => {
    res.writeHead(req.url === "/health" ? 200 : 404).end();
    if (req.method === "HEAD" && mode === "serve-then-exit" && ++probes === 2) setTimeout(() => process.exit(3), 50);
  });
  server.listen(port, "127.0.0.1");
} else {
  supervise(process.execPath, ["--no-warnings", fileURLToPath(import.meta.url), "runtime", mode], {
    cwd: process.cwd(),
    env: process.env,
    origin: `http://127.0.0.1:${port}`,
    graceMs: 2000,
    onReady: (restarts) => console.log(`ready ${restarts}`),
    say: (line) => console.error(line),
    onStopping: (signal) => console.error(`${signal}: stopping`),
    policy: { intervalMs: 100, timeoutMs: 2000, startMs: 20_000, backoffMs: [Number(process.env.BACKOFF_MS ?? 100)], attempts: 2, stableMs: 60_000 },
  });
}
