/**
 * Writes test/snapshots/tools-list.json: the whole tools/list of a person's
 * write token (every tool, in order, with its schemas and hints), which
 * test/tools-list.test.ts compares with what the server announces in both
 * protocol eras. After a change to a tool's schemas, description or hints,
 * run `npm run -s snapshot:tools` and commit the file: the change is then a
 * diff to review. Check it: `npm run -s snapshot:tools -- --check`.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ROOT } from "./lib/d1.ts";

// Imported by path, not by name: the registry is Worker code, which the scripts' type check (Node types) does not cover.
const registry = pathToFileURL(join(ROOT, "src", "mcp", "registry.ts")).href;
const tools = pathToFileURL(join(ROOT, "src", "tools", "index.ts")).href;
const { describeAllTools, installTools } = (await import(registry)) as { describeAllTools(): unknown[]; installTools(tools: unknown): void };
installTools(((await import(tools)) as { ALL_TOOLS: unknown }).ALL_TOOLS);

const file = join(ROOT, "test", "snapshots", "tools-list.json");
const text = JSON.stringify(describeAllTools(), null, 2) + "\n";
if (process.argv.includes("--check")) {
  let old = "";
  try {
    old = readFileSync(file, "utf8");
  } catch {
    /* no snapshot yet */
  }
  if (old !== text) {
    console.error(`${file} is out of date: run npm run -s snapshot:tools`);
    process.exit(1);
  }
  console.log(`${file} is up to date`);
} else {
  writeFileSync(file, text);
  console.log(`wrote ${file} (${describeAllTools().length} tools, ${text.length} bytes)`);
}
