/// <reference types="vite/client" />
import { describe, expect, it } from "vitest";

/**
 * Imports run one way: the edge and the pages (http, oauth, web) → mcp →
 * tools → db and domain. Read from the source itself, so a new file is checked
 * as soon as it exists.
 */
const SOURCES = import.meta.glob("../src/**/*.{ts,tsx}", { query: "?raw", import: "default", eager: true }) as Record<string, string>;

/** What each layer may import, besides itself. */
const MAY_IMPORT: Record<string, string[]> = {
  domain: [],
  catalog: ["domain"],
  db: ["domain"],
  connectors: ["db", "domain"],
  tools: ["db", "domain", "connectors", "catalog", "webhooks"],
  // Delivery of events after a write commits: infrastructure below the registry, like connectors.
  webhooks: ["db", "domain", "connectors"],
  mcp: ["catalog", "db", "domain", "webhooks"],
  http: ["catalog", "mcp", "db", "domain"],
  oauth: ["catalog", "http", "web", "mcp", "db", "domain"],
  web: ["catalog", "http", "mcp", "tools", "db", "domain", "connectors", "webhooks"],
};

function layerOf(path: string): string {
  const rest = path.replace(/^(\.\.\/)?src\//, "");
  return rest.includes("/") ? rest.slice(0, rest.indexOf("/")) : rest;
}

function resolve(from: string, spec: string): string {
  const parts = from.split("/").slice(0, -1);
  for (const seg of spec.split("/")) {
    if (seg === "..") parts.pop();
    else if (seg !== ".") parts.push(seg);
  }
  return parts.join("/");
}

/** An SQL statement in a string: what must live in src/db only. */
const SQL = /\b(SELECT\s+[\w*(]|INSERT\s+(OR\s+\w+\s+)?INTO\s|UPDATE\s+\w+\s+SET\s|DELETE\s+FROM\s|CREATE\s+(TABLE|INDEX)\s)/;

describe("SQL", () => {
  it("every statement lives in src/db", () => {
    const outside = Object.entries(SOURCES)
      .filter(([path]) => layerOf(path) !== "db")
      .flatMap(([path, text]) => text.split("\n").map((line, i) => [path, i + 1, line] as const))
      .filter(([, , line]) => SQL.test(line) && !/^\s*(\*|\/\/)/.test(line))
      .map(([path, n, line]) => `${path}:${n}: ${line.trim()}`);
    expect(outside).toEqual([]);
  });
});

describe("layers", () => {
  const files = Object.keys(SOURCES);

  it("reads the whole source tree", () => {
    expect(files.length).toBeGreaterThan(80);
    expect(files.some((f) => f.endsWith("src/mcp/registry.ts"))).toBe(true);
  });

  it("imports flow one way: no file imports a layer above its own", () => {
    const against: string[] = [];
    for (const file of files) {
      const layer = layerOf(file);
      const allowed = MAY_IMPORT[layer];
      if (!allowed) continue; // src/index.ts, src/jobs.ts and src/env.ts wire everything together
      for (const m of SOURCES[file].matchAll(/^\s*(?:import|export)\s(?:[^"';]*?\sfrom\s*)?["'](\.{1,2}\/[^"']+)["']/gm)) {
        const target = resolve(file, m[1]);
        if (!/(^|\/)src\//.test(target)) {
          against.push(`${file} imports ${m[1]} (outside src)`);
          continue;
        }
        const targetLayer = layerOf(target);
        if (targetLayer === layer || targetLayer === "env.ts") continue;
        const rel = target.replace(/^(\.\.\/)?src\//, "");
        if (!allowed.some((a) => rel === a || rel.startsWith(`${a}/`) || (a === targetLayer && !a.includes(".")))) {
          against.push(`${file} (${layer}) imports ${rel}`);
        }
      }
    }
    expect(against).toEqual([]);
  });
});
