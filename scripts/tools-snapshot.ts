/**
 * Writes the committed tools/list of a person's write token: one file a tool
 * (test/snapshots/tools/<name>.json, with its schemas and hints) and the
 * catalog's order (test/snapshots/tools-order.json), which
 * test/tools-list.test.ts compares with what the server announces in both
 * protocol eras. After a change to a tool's schemas, description or hints,
 * run `npm run -s snapshot:tools` and commit the files: the change is then a
 * diff of that tool's file to review. Check them: `npm run -s snapshot:tools -- --check`.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ROOT } from "./lib/d1.ts";

// Imported by path, not by name: the registry is Worker code, which the scripts' type check (Node types) does not cover.
const registry = pathToFileURL(join(ROOT, "src", "mcp", "registry.ts")).href;
const toolsModule = pathToFileURL(join(ROOT, "src", "tools", "index.ts")).href;
const { describeAllTools, installTools } = (await import(registry)) as { describeAllTools(): { name: string }[]; installTools(tools: unknown): void };
installTools(((await import(toolsModule)) as { ALL_TOOLS: unknown }).ALL_TOOLS);

const dir = join(ROOT, "test", "snapshots", "tools");
const orderFile = join(ROOT, "test", "snapshots", "tools-order.json");
const tools = describeAllTools();
const wanted = new Map<string, string>([
  [orderFile, JSON.stringify(tools.map((t) => t.name), null, 2) + "\n"],
  ...tools.map((t) => [join(dir, `${t.name}.json`), JSON.stringify(t, null, 2) + "\n"] as [string, string]),
]);

function read(file: string): string | null {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return null;
  }
}

let present: string[] = [];
try {
  present = readdirSync(dir).map((f) => join(dir, f));
} catch {
  /* no snapshot yet */
}
const stale = present.filter((f) => !wanted.has(f));
const differ = [...wanted].filter(([file, text]) => read(file) !== text).map(([file]) => file);

if (process.argv.includes("--check")) {
  if (differ.length || stale.length) {
    const rel = (f: string) => f.slice(ROOT.length + 1);
    console.error(`out of date: ${[...differ.map(rel), ...stale.map((f) => `${rel(f)} (no such tool)`)].join(", ")}; run npm run -s snapshot:tools`);
    process.exit(1);
  }
  console.log(`test/snapshots: ${tools.length} tools, up to date`);
} else {
  mkdirSync(dir, { recursive: true });
  for (const file of differ) writeFileSync(file, wanted.get(file) as string);
  for (const file of stale) rmSync(file);
  console.log(`test/snapshots: ${tools.length} tools; ${differ.length} files written, ${stale.length} removed`);
}
