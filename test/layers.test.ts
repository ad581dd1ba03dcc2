/// <reference types="vite/client" />
import { describe, expect, it } from "vitest";

/**
 * Imports run one way, top to bottom, with no exceptions: a file may import
 * its own layer and the layers below it, never one above. Read from the
 * source itself, so a new file is checked as soon as it exists (and must
 * belong to a layer).
 */
const SOURCES = import.meta.glob("../src/**/*.{ts,tsx}", { query: "?raw", import: "default", eager: true }) as Record<string, string>;

/** The layers, from the top down; a layer is the files under its paths (a folder ends with "/"). */
const LAYERS: { name: string; paths: string[] }[] = [
  // The composition root: the Worker's handlers, which wire everything together.
  { name: "root", paths: ["index.ts", "jobs.ts"] },
  // The consent page and the OAuth provider, which serves the pages and /mcp behind it.
  { name: "oauth", paths: ["oauth/"] },
  // The pages: sign-in, setup, the console.
  { name: "web", paths: ["web/"] },
  // The edge of /mcp: authentication, the tg_ token lane, Origin, toolset selection, limits.
  { name: "http", paths: ["http/"] },
  // The registry, the write engine, the MCP server.
  { name: "mcp", paths: ["mcp/"] },
  // One file a toolset: schemas and handlers.
  { name: "tools", paths: ["tools/"] },
  // What talks to the world outside after a write or for a tool: webhook delivery, connected apps.
  { name: "outbound", paths: ["webhooks/", "connectors/"] },
  // All SQL.
  { name: "db", paths: ["db/"] },
  // What each tool is: its definition, effects, permissions, toolsets and published contract.
  { name: "catalog", paths: ["catalog/"] },
  // The vocabulary and pure rules, and the bindings every layer is given.
  { name: "domain", paths: ["domain/", "env.ts"] },
];

const IMPORT = /^\s*(?:import|export)\s(?:[^"';]*?\sfrom\s*)?["'](\.{1,2}\/[^"']+)["']|\bimport\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/gm;

/** The path under src/ ("mcp/registry.ts"), or null outside it. */
function underSrc(path: string): string | null {
  const m = /^(?:\.\.\/)?src\/(.+)$/.exec(path);
  return m ? m[1] : null;
}

function resolve(from: string, spec: string): string {
  const parts = from.split("/").slice(0, -1);
  for (const seg of spec.split("/")) {
    if (seg === "..") parts.pop();
    else if (seg !== ".") parts.push(seg);
  }
  return parts.join("/");
}

/** The relative imports of each file, resolved to paths in the same form as the keys. */
function importGraph(sources: Record<string, string>): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const [file, text] of Object.entries(sources)) {
    const targets = [...text.matchAll(IMPORT)].map((m) => resolve(file, m[1] ?? m[2]));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** The index of the layer a file under src/ belongs to (0 is the top), or -1 when none claims it. */
function layerIndex(rel: string): number {
  return LAYERS.findIndex((l) => l.paths.some((p) => (p.endsWith("/") ? rel.startsWith(p) : rel === p)));
}

/** Every import that goes up a layer or out of src/, and every file no layer claims. */
function againstTheFlow(sources: Record<string, string>): string[] {
  const against: string[] = [];
  for (const [file, targets] of importGraph(sources)) {
    const rel = underSrc(file) ?? file;
    const own = layerIndex(rel);
    if (own < 0) {
      against.push(`${rel} belongs to no layer`);
      continue;
    }
    for (const target of targets) {
      const to = underSrc(target);
      if (to === null) {
        against.push(`${rel} imports ${target} (outside src)`);
        continue;
      }
      const theirs = layerIndex(to);
      if (theirs < own) against.push(`${rel} (${LAYERS[own].name}) imports ${to} (${theirs < 0 ? "no layer" : LAYERS[theirs].name})`);
    }
  }
  return against;
}

/** The import cycles: strongly connected components (Tarjan) of more than one file, or of a file importing itself. */
function importCycles(sources: Record<string, string>): string[][] {
  const graph = importGraph(sources);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let next = 0;
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || graph.get(v)!.includes(v)) cycles.push(component.map((f) => underSrc(f) ?? f).sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

/** An SQL statement in a string: what must live in src/db only. */
const SQL = /\b(SELECT\s+[\w*(]|INSERT\s+(OR\s+\w+\s+)?INTO\s|UPDATE\s+\w+\s+SET\s|DELETE\s+FROM\s|CREATE\s+(TABLE|INDEX)\s)/;

describe("SQL", () => {
  it("every statement lives in src/db", () => {
    const outside = Object.entries(SOURCES)
      .filter(([path]) => !(underSrc(path) ?? "").startsWith("db/"))
      .flatMap(([path, text]) => text.split("\n").map((line, i) => [path, i + 1, line] as const))
      .filter(([, , line]) => SQL.test(line) && !/^\s*(\*|\/\/)/.test(line))
      .map(([path, n, line]) => `${path}:${n}: ${line.trim()}`);
    expect(outside).toEqual([]);
  });
});

describe("the request's env", () => {
  it("is replaced only by the edge's D1 metering (src/index.ts); a page names the account's database with accountEnv", () => {
    const assigning = Object.entries(SOURCES)
      .flatMap(([path, text]) => text.split("\n").map((line, i) => [underSrc(path) ?? path, i + 1, line] as const))
      .filter(([, , line]) => /\bc\.env\s*=(?!=)/.test(line) && !/^\s*(\*|\/\/)/.test(line))
      .map(([path, n]) => `${path}:${n}`);
    expect(assigning).toHaveLength(1);
    expect(assigning[0]).toMatch(/^index\.ts:\d+$/);
  });
});

describe("layers", () => {
  const files = Object.keys(SOURCES);

  it("reads the whole source tree", () => {
    expect(files.length).toBeGreaterThan(80);
    expect(files.some((f) => f.endsWith("src/mcp/registry.ts"))).toBe(true);
    expect(files.some((f) => f.endsWith("src/index.ts"))).toBe(true);
  });

  it("imports flow one way: every file is in a layer and imports nothing above it", () => {
    expect(againstTheFlow(SOURCES)).toEqual([]);
  });

  it("no files import each other in a cycle", () => {
    const cycles = importCycles(SOURCES);
    expect(cycles).toEqual([]);
    expect(cycles.length).toBe(0);
  });

  it("the checks see what they look for", () => {
    const made = {
      "../src/domain/a.ts": 'import type { X } from "../mcp/registry.ts";\nexport const a = 1;',
      "../src/mcp/registry.ts": 'import {\n  a,\n} from "../domain/a.ts";\nexport { b } from "./b.ts";',
      "../src/mcp/b.ts": 'export const b = 1;\nconst later = () => import("./registry.ts");',
      "../src/stray.ts": 'import "./domain/a.ts";',
      "../src/tools/c.ts": 'import { d } from "../../scripts/d.ts";',
    };
    expect(againstTheFlow(made)).toEqual([
      "domain/a.ts (domain) imports mcp/registry.ts (mcp)",
      "stray.ts belongs to no layer",
      "tools/c.ts imports ../scripts/d.ts (outside src)",
    ]);
    expect(importCycles(made)).toEqual([["domain/a.ts", "mcp/b.ts", "mcp/registry.ts"]]);
  });
});

/** A read of a batch's results by position: what a write reads, it reads by name (named(), readBatch). */
const POSITIONAL_RESULTS = /\browsOf\b|\bresults\s*\[|\bresults\.(slice|at)\(/;

/** The lines of the files under these folders of src/ that match `pattern`, comments aside. */
function linesMatching(sources: Record<string, string>, folders: string[], pattern: RegExp): string[] {
  return Object.entries(sources)
    .filter(([path]) => folders.some((f) => (underSrc(path) ?? "").startsWith(f)))
    .flatMap(([path, text]) => text.split("\n").map((line, i) => [underSrc(path) ?? path, i + 1, line] as const))
    .filter(([, , line]) => pattern.test(line) && !/^\s*(\*|\/\/)/.test(line))
    .map(([path, n, line]) => `${path}:${n}: ${line.trim()}`);
}

/**
 * A second path to a write's outcome: a handler that catches its own guard's
 * miss (or retries a read-then-write loop) instead of giving the engine one
 * outcome and its diagnosis (ctx.write).
 */
const DUAL_PATH = /\bfastOr\b|\boptimistic\s*\(|\bslowly\b|\b(e|err|error)\s*[!=]==\s*(miss|lost)\b/;

describe("write outcomes", () => {
  it("each is applied by the engine: no tool catches its own guard's miss to write a second way", () => {
    expect(linesMatching(SOURCES, ["tools/"], DUAL_PATH)).toEqual([]);
  });

  it("the check sees what it looks for", () => {
    const made = {
      "../src/tools/a.ts": [
        "return fastOr(async (miss) => commitUsual(miss), slowly);",
        "return optimistic(`task ${id}`, async (lost) => {",
        "if (e !== miss) throw e;",
        "return ctx.write({ subject, apply: (miss) => usual(miss), async diagnose() { return AGAIN; } });",
      ].join("\n"),
    };
    expect(linesMatching(made, ["tools/"], DUAL_PATH)).toEqual([
      "tools/a.ts:1: return fastOr(async (miss) => commitUsual(miss), slowly);",
      "tools/a.ts:2: return optimistic(`task ${id}`, async (lost) => {",
      "tools/a.ts:3: if (e !== miss) throw e;",
    ]);
  });
});

describe("batch results", () => {
  const READERS = ["tools/", "mcp/", "web/", "oauth/"];

  it("tools, the engine, the pages and OAuth read them by name, never by position", () => {
    expect(linesMatching(SOURCES, READERS, POSITIONAL_RESULTS)).toEqual([]);
  });

  it("the check sees what it looks for", () => {
    const made = {
      "../src/tools/a.ts": [
        "(results) => toTask(rowsOf<TaskRow>(results, -1)[0])",
        "const row = results[1].results[0];",
        "const rest = results.slice(1);",
        "const last = results.at(-1);",
        "(rows) => toTask(rows.task[0] as TaskRow)",
        "// results[0] in a comment",
      ].join("\n"),
      "../src/db/b.ts": "const row = results[0].results[0];",
    };
    expect(linesMatching(made, READERS, POSITIONAL_RESULTS)).toEqual([
      "tools/a.ts:1: (results) => toTask(rowsOf<TaskRow>(results, -1)[0])",
      "tools/a.ts:2: const row = results[1].results[0];",
      "tools/a.ts:3: const rest = results.slice(1);",
      "tools/a.ts:4: const last = results.at(-1);",
    ]);
  });
});

/** The top-level arguments of each `ctx.guard(…)` call in `text`, as written. */
function guardCalls(text: string): string[][] {
  const calls: string[][] = [];
  for (let at = text.indexOf("ctx.guard("); at >= 0; at = text.indexOf("ctx.guard(", at + 1)) {
    const args: string[] = [];
    let depth = 0;
    let quote: string | null = null;
    let start = at + "ctx.guard(".length;
    for (let i = start; i < text.length; i++) {
      const ch = text[i];
      if (quote) {
        if (ch === "\\") i++;
        else if (ch === quote) quote = null;
        continue;
      }
      if (ch === '"' || ch === "'" || ch === "`") quote = ch;
      else if ("([{".includes(ch)) depth++;
      else if (")]}".includes(ch) && depth > 0) depth--;
      else if ((ch === "," || ch === ")") && depth === 0) {
        args.push(text.slice(start, i).trim());
        start = i + 1;
        if (ch === ")") break;
      }
    }
    calls.push(args.filter((a) => a !== ""));
  }
  return calls;
}

/** Guard calls given SQL text and its binds apart: a bare constant or string, or a third argument. */
function positionalGuards(sources: Record<string, string>): string[] {
  return Object.entries(sources).flatMap(([path, text]) =>
    guardCalls(text)
      .filter((args) => args.length !== 2 || /^([A-Z][A-Z0-9_]*|["'`][\s\S]*)$/.test(args[0]))
      .map((args) => `${underSrc(path) ?? path}: ctx.guard(${args.join(", ")})`),
  );
}

describe("guards", () => {
  it("take one condition built in src/db with its own binds, never SQL text and a bind array", () => {
    expect(positionalGuards(SOURCES)).toEqual([]);
  });

  it("the check sees what it looks for", () => {
    const made = {
      "../src/tools/a.ts": [
        "ctx.guard(TASK_IS_LIVE, [id, a], miss);",
        "ctx.guard(`${X} AND ${Y}`, [id, a], miss);",
        "ctx.guard(liveProjectIs(where), [id, a, ...(w ?? [])], miss);",
        "ctx.guard(taskIsLive({ taskId: id, accountId: a }), miss);",
        "ctx.guard(liveStepsAre({ taskId, accountId, stepIds: [a, b] }), conflict(`no, ${a}`));",
        "ctx.guard(g, miss);",
      ].join("\n"),
    };
    expect(positionalGuards(made)).toEqual([
      "tools/a.ts: ctx.guard(TASK_IS_LIVE, [id, a], miss)",
      "tools/a.ts: ctx.guard(`${X} AND ${Y}`, [id, a], miss)",
      "tools/a.ts: ctx.guard(liveProjectIs(where), [id, a, ...(w ?? [])], miss)",
    ]);
  });
});

/**
 * A bind array above src/db: SQL text handed on with its binds apart (a
 * `binds` list, a `whereBinds`, a `setBinds`), in the order some statement
 * takes them. Every guard, change and summary is built in src/db as one
 * condition with its own binds.
 */
const LOOSE_BINDS = /\bbinds\b|\b\w+Binds\b/;

describe("SQL with its binds", () => {
  const ABOVE_DB = ["tools/", "mcp/", "web/", "oauth/", "http/"];

  it("nothing above src/db assembles a statement's binds", () => {
    expect(linesMatching(SOURCES, ABOVE_DB, LOOSE_BINDS)).toEqual([]);
  });

  it("the check sees what it looks for", () => {
    const made = {
      "../src/tools/a.ts": [
        "activity: { summarySql: { sql: movedTaskSummary, binds: [id, a] } },",
        "setLiveTask(ctx, miss, { where: BLOCKED, set: UNBLOCK_SET, setBinds: [ctx.now] }),",
        "liveProjectIs({ projectId, accountId, where: o.where, binds: o.whereBinds })",
        "setLiveTask(ctx, miss, { where: BLOCKED, set: unblockSet(ctx.now) }),",
        "// binds: in a comment",
      ].join("\n"),
      "../src/db/b.ts": "const c = { sql: 'x = ?', binds: [x] };",
    };
    expect(linesMatching(made, ABOVE_DB, LOOSE_BINDS)).toEqual([
      "tools/a.ts:1: activity: { summarySql: { sql: movedTaskSummary, binds: [id, a] } },",
      "tools/a.ts:2: setLiveTask(ctx, miss, { where: BLOCKED, set: UNBLOCK_SET, setBinds: [ctx.now] }),",
      "tools/a.ts:3: liveProjectIs({ projectId, accountId, where: o.where, binds: o.whereBinds })",
    ]);
  });
});
