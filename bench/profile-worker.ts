/**
 * A CPU profile of the Worker itself under load: `wrangler dev` with its
 * inspector, the V8 sampling profiler over the DevTools protocol while one
 * request is sent over and over (10 at a time), then the functions that took
 * the time, grouped by where they live (Taskgate's src, the MCP SDK, the OAuth
 * provider, zod, Hono, the runtime). One profile each for GET /health,
 * GET /ready, tools/list and read tools/calls: the functions with their own
 * time, and the files with the time of everything that runs under them.
 * Run: npm run -s bench:profile -- --worker [--only get_task,tools/list] [--top N]
 */
import { createWriteStream, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { applySchemaFile } from "../scripts/lib/d1.ts";
import { admin, freePort, ROOT, startDev } from "./worker.ts";
import { callOk, floorRequest, mcpRequest, get, type HttpRequest } from "./mcp.ts";

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number }; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

async function inspector(port: number): Promise<(method: string, params?: unknown) => Promise<any>> {
  const deadline = Date.now() + 20_000;
  let url: string | undefined;
  while (!url && Date.now() < deadline) {
    try {
      const list = (await (await fetch(`http://127.0.0.1:${port}/json`)).json()) as { webSocketDebuggerUrl: string; title?: string }[];
      url = list.find((t) => !/internal/i.test(t.title ?? ""))?.webSocketDebuggerUrl ?? list[0]?.webSocketDebuggerUrl;
    } catch {
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  if (!url) throw new Error("no inspector target");
  // wrangler's inspector proxy admits the DevTools origin only.
  const ws = new WebSocket(url, { headers: { origin: "https://devtools.devprod.cloudflare.dev" } } as unknown as string[]);
  await new Promise((resolve, reject) => ((ws.onopen = resolve), (ws.onerror = reject)));
  let next = 1;
  const waiting = new Map<number, (v: any) => void>();
  ws.onmessage = (e) => {
    const m = JSON.parse(String(e.data));
    if (m.id && waiting.has(m.id)) (waiting.get(m.id) as (v: any) => void)(m.result ?? m.error);
  };
  return (method, params = {}) =>
    new Promise((resolve) => {
      const id = next++;
      waiting.set(id, resolve);
      ws.send(JSON.stringify({ id, method, params }));
    });
}

/** Base64 VLQ, as source maps write their mappings. */
const B64 = new Map([..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"].map((ch, i) => [ch, i]));

/** For each generated line, the [column, source] pairs of a source map, to tell which source file a profiled line came from. */
function readMap(path: string): { sources: string[]; lines: [number, number, number][][] } | null {
  if (!existsSync(path)) return null;
  const map = JSON.parse(readFileSync(path, "utf8")) as { sources: string[]; mappings: string };
  const lines: [number, number, number][][] = [];
  let source = 0;
  let sourceLine = 0;
  for (const line of map.mappings.split(";")) {
    const segs: [number, number, number][] = [];
    let col = 0;
    for (const seg of line.split(",")) {
      if (!seg) continue;
      const fields: number[] = [];
      let value = 0;
      let shift = 0;
      for (const ch of seg) {
        const d = B64.get(ch) as number;
        value += (d & 31) << shift;
        if (d & 32) shift += 5;
        else {
          fields.push(value & 1 ? -(value >>> 1) : value >>> 1);
          value = 0;
          shift = 0;
        }
      }
      col += fields[0];
      if (fields.length > 1) {
        source += fields[1];
        sourceLine += fields[2];
      }
      segs.push([col, source, sourceLine]);
    }
    lines.push(segs);
  }
  return { sources: map.sources, lines };
}

const maps = new Map<string, ReturnType<typeof readMap>>();

/** The bundle wrangler dev serves: the newest .wrangler/tmp/…/index.js. */
function devBundle(): string | null {
  const tmpDir = join(ROOT, ".wrangler", "tmp");
  if (!existsSync(tmpDir)) return null;
  const found = readdirSync(tmpDir)
    .map((d) => join(tmpDir, d, "index.js"))
    .filter((f) => existsSync(f) && existsSync(`${f}.map`))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  return found[0] ?? null;
}

/** The original file and line of a generated position, when the source map knows it. */
function originOf(url: string, line: number, column: number): { source: string; line: number } | null {
  if (/^(cloudflare|node|workerd)[-:]/.test(url)) return null;
  let path = url.replace(/^file:\/\//, "");
  if (!existsSync(`${path}.map`)) path = devBundle() ?? path;
  if (!maps.has(path)) maps.set(path, readMap(`${path}.map`));
  const map = maps.get(path);
  const segs = map?.lines[line];
  if (!map || !segs?.length) return null;
  let hit = segs[0];
  for (const s of segs) if (s[0] <= column) hit = s;
  return map.sources[hit[1]] ? { source: map.sources[hit[1]], line: hit[2] + 1 } : null;
}

function sourceOf(url: string, line: number, column: number): string | null {
  return originOf(url, line, column)?.source ?? null;
}

/** The source file of a frame, relative to the project (node_modules packages by name). */
function fileOf(url: string, line = 0, column = 0): string {
  if (!url) return "runtime";
  url = sourceOf(url, line, column) ?? url;
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1];
  const s = /\/(src\/.+)$/.exec(url);
  return s ? s[1] : url.split("/").pop() ?? url;
}

function where(url: string, line = 0, column = 0): string {
  if (!url) return "runtime";
  url = sourceOf(url, line, column) ?? url;
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1];
  const s = /\/src\/([^/]+)/.exec(url);
  return s ? `src/${s[1]}` : url.split("/").pop() ?? url;
}

function summarize(p: CpuProfile, rate: number): string[] {
  const self = new Map<number, number>();
  p.samples.forEach((s, i) => self.set(s, (self.get(s) ?? 0) + p.timeDeltas[i]));
  const nodes = new Map(p.nodes.map((n) => [n.id, n]));
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const byPlace = new Map<string, number>();
  const byFn = new Map<string, number>();
  for (const [id, t] of self) {
    const f = (nodes.get(id) as CpuProfile["nodes"][number]).callFrame;
    if (f.functionName === "(idle)" || f.functionName === "(program)") continue;
    const place = where(f.url, f.lineNumber, f.columnNumber);
    byPlace.set(place, (byPlace.get(place) ?? 0) + t);
    const origin = originOf(f.url, f.lineNumber, f.columnNumber);
    const fn = `${f.functionName || "(anonymous)"} ${origin ? `${fileOf(f.url, f.lineNumber, f.columnNumber)}:${origin.line}` : `${place}:${f.lineNumber + 1}`}`;
    byFn.set(fn, (byFn.get(fn) ?? 0) + t);
  }
  const busy = [...byPlace.values()].reduce((a, b) => a + b, 0);
  const pct = (t: number) => `${((t / total) * 100).toFixed(1)}%`;
  // Inclusive time by file: a sample counts once for every file on its stack (what runs under that file's code).
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const fileOfNode = new Map<number, string>();
  const nodeFile = (id: number) => {
    let f = fileOfNode.get(id);
    if (f === undefined) {
      const frame = (nodes.get(id) as CpuProfile["nodes"][number]).callFrame;
      f = frame.functionName === "(root)" || frame.functionName === "(idle)" || frame.functionName === "(program)" ? "" : fileOf(frame.url, frame.lineNumber, frame.columnNumber);
      fileOfNode.set(id, f);
    }
    return f;
  };
  const inclusive = new Map<string, number>();
  for (const [id, t] of self) {
    const files = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) files.add(nodeFile(at));
    files.delete("");
    for (const f of files) inclusive.set(f, (inclusive.get(f) ?? 0) + t);
  }
  return [
    `busy ${pct(busy)} of the sampled time: ${(busy / 1000 / ((rate * total) / 1e6)).toFixed(2)} ms of the isolate's thread a request`,
    "inclusive by file: " + [...inclusive].filter(([f]) => f !== "runtime").sort((a, b) => b[1] - a[1]).slice(0, TOP).map(([k, v]) => `${k} ${pct(v)}`).join(", "),
    `busy ${pct(busy)} of the sampled time`,
    "by place: " + [...byPlace].sort((a, b) => b[1] - a[1]).slice(0, 8).map(([k, v]) => `${k} ${pct(v)}`).join(", "),
    "top functions: " + [...byFn].sort((a, b) => b[1] - a[1]).slice(0, TOP).map(([k, v]) => `${k} ${pct(v)}`).join("; "),
  ];
}

async function hammer(base: string, req: HttpRequest, seconds: number): Promise<number> {
  const end = Date.now() + seconds * 1000;
  let n = 0;
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (Date.now() < end) {
        const res = await fetch(base + req.path, { method: req.method, headers: req.headers, body: req.body });
        await res.arrayBuffer();
        n++;
      }
    }),
  );
  return n / seconds;
}

const { values: opts } = parseArgs({ options: { only: { type: "string", default: "" }, top: { type: "string", default: "8" }, worker: { type: "boolean" } } });
/** How many files and functions each profile lists. */
const TOP = Math.max(1, Number(opts.top) || 8);
const ONLY = opts.only.split(",").map((s) => s.trim()).filter(Boolean);

const tmp = mkdtempSync(join(tmpdir(), "taskgate-profile-"));
const persist = join(tmp, "state");
applySchemaFile({ remote: false, persistTo: persist }, join(ROOT, "schema.sql"));
const account = admin(persist, ["create-account", "--name", "Profile"]);
const human = admin(persist, ["create-token", "--account", account.id, "--kind", "human", "--scope", "write", "--label", "profile"]);
const inspectorPort = await freePort();
const dev = await startDev(persist, createWriteStream(join(tmp, "dev.log")), ["--inspector-port", String(inspectorPort), "--var", "BENCH_FLOOR:1"]);
try {
  // A task like an agent's: a few steps and a comment, so get_task reads something.
  const { task } = await callOk(dev.base, human.token, "create_task", { title: "Profile get_task", notes: "What the profile reads." });
  await callOk(dev.base, human.token, "add_steps", { task_id: task.id, steps: ["one", "two", "three"] });
  await callOk(dev.base, human.token, "comment_on_task", { task_id: task.id, body: "A comment." });
  const taskId: string = task.id;
  const send = await inspector(inspectorPort);
  await send("Profiler.enable");
  await send("Profiler.setSamplingInterval", { interval: 100 });
  const cases: [string, HttpRequest][] = [
    ["GET /health", get("/health")],
    ["GET /ready", get("/ready")],
    ["tools/list (2026-07-28)", mcpRequest("modern", human.token, "tools/list")],
    ["tools/list (legacy)", mcpRequest("legacy", human.token, "tools/list")],
    ["tools/call whoami (2026-07-28)", mcpRequest("modern", human.token, "tools/call", "whoami", {})],
    ["tools/call whoami (legacy)", mcpRequest("legacy", human.token, "tools/call", "whoami", {})],
    ["tools/call list_tasks (2026-07-28)", mcpRequest("modern", human.token, "tools/call", "list_tasks", {})],
    ["tools/call get_task (2026-07-28)", mcpRequest("modern", human.token, "tools/call", "get_task", { task_id: taskId })],
    ["tools/call get_task (legacy)", mcpRequest("legacy", human.token, "tools/call", "get_task", { task_id: taskId })],
    ["floor whoami (no SDK)", floorRequest(human.token, "whoami", {})],
    ["floor get_task (no SDK)", floorRequest(human.token, "get_task", { task_id: taskId })],
  ];
  for (const [label, req] of cases) {
    if (ONLY.length && !label.startsWith("GET") && !ONLY.some((o) => label.includes(o))) continue;
    await hammer(dev.base, req, 1);
    await send("Profiler.start");
    const rate = await hammer(dev.base, req, 4);
    const { profile } = (await send("Profiler.stop")) as { profile: CpuProfile };
    console.log(`\n${label}: ${rate.toFixed(0)} req/s`);
    for (const line of summarize(profile, rate)) console.log(`  ${line}`);
  }
} finally {
  await dev.stop();
  rmSync(tmp, { recursive: true, force: true });
}
