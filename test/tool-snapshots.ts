/// <reference types="vite/client" />
import order from "./snapshots/tools-order.json";

/**
 * The committed tools/list, one file a tool (test/snapshots/tools/<name>.json)
 * in the catalog's order (test/snapshots/tools-order.json), so that a change to
 * one tool is a diff of its own file. `npm run -s snapshot:tools` writes them.
 */
const FILES = import.meta.glob("./snapshots/tools/*.json", { eager: true, import: "default" }) as Record<string, { name: string }>;

export const snapshotOrder: string[] = order;

/** Names of the per-tool files, whether or not the order lists them. */
export const snapshotFileNames: string[] = Object.keys(FILES).map((f) => f.replace(/^.*\/(.+)\.json$/, "$1"));

/** The whole list as a host receives it; a tool the order names without a file is an error that says what to run. */
export const snapshot = order.map((name) => {
  const tool = FILES[`./snapshots/tools/${name}.json`];
  if (!tool) throw new Error(`test/snapshots/tools/${name}.json is missing: run npm run -s snapshot:tools`);
  return tool;
}) as any[];
