/**
 * The size of a tools/list answer, as the bench prints it and a test asserts
 * it: bytes of the JSON-encoded tool objects (their `_meta` counted apart),
 * for what a model reads (name, title, description, inputSchema: what a host
 * turns into the model's tool definitions; the hints are for the host, and
 * hosts hand the output schema to their validator, not to the model), and
 * for the `_meta` hosts and gateways read (what the server enforces, the
 * fingerprints), each part on its own.
 * Imports nothing of the server, so it measures whatever a client received.
 */

/**
 * Targets for a person's write token (the whole catalog), bytes a tool on
 * average. `model` allows the one sentence the consent tools say to the model
 * (that the call must come from the person); `meta` is never given to a model;
 * `total` is mostly the output schemas, which describe every answer whole.
 */
export const TOOL_BYTES_TARGETS = { total: 2000, model: 450, meta: 300 } as const;
/** What an agent's policy adds to each tool's `_meta` in its connection's list (the Careful preset), at most, in bytes a tool. */
export const POLICY_META_BYTES_TARGET = 150;

export interface ListedTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: unknown;
  outputSchema?: unknown;
  annotations?: unknown;
  [key: string]: unknown;
}

export interface ToolBytes {
  tools: number;
  /** JSON bytes of all tool objects, without their `_meta`. */
  total: number;
  /** JSON bytes of the model-readable part of all tool objects. */
  model: number;
  /** JSON bytes of the tools' `_meta`. */
  meta: number;
  perTool: { total: number; model: number; meta: number };
  /** JSON bytes of each part's values, summed over the tools. */
  parts: { namesAndTitles: number; descriptions: number; inputSchemas: number; annotations: number; outputSchemas: number };
  targets: typeof TOOL_BYTES_TARGETS;
  ok: { total: boolean; model: boolean; meta: boolean };
}

const MODEL_KEYS = ["name", "title", "description", "inputSchema"] as const;

const bytes = (value: unknown): number => (value === undefined ? 0 : new TextEncoder().encode(JSON.stringify(value)).length);

export function measureTools(tools: ListedTool[]): ToolBytes {
  let total = 0;
  let model = 0;
  let meta = 0;
  const parts = { namesAndTitles: 0, descriptions: 0, inputSchemas: 0, annotations: 0, outputSchemas: 0 };
  for (const t of tools) {
    const { _meta, ...definition } = t;
    total += bytes(definition);
    meta += bytes(_meta);
    model += bytes(Object.fromEntries(MODEL_KEYS.filter((k) => t[k] !== undefined).map((k) => [k, t[k]])));
    parts.namesAndTitles += bytes(t.name) + bytes(t.title);
    parts.descriptions += bytes(t.description);
    parts.inputSchemas += bytes(t.inputSchema);
    parts.annotations += bytes(t.annotations);
    parts.outputSchemas += bytes(t.outputSchema);
  }
  const n = Math.max(tools.length, 1);
  const perTool = { total: total / n, model: model / n, meta: meta / n };
  return {
    tools: tools.length,
    total,
    model,
    meta,
    perTool,
    parts,
    targets: TOOL_BYTES_TARGETS,
    ok: { total: perTool.total <= TOOL_BYTES_TARGETS.total, model: perTool.model <= TOOL_BYTES_TARGETS.model, meta: perTool.meta <= TOOL_BYTES_TARGETS.meta },
  };
}

const kb = (n: number) => `${(n / 1000).toFixed(1)} KB`;
const mark = (ok: boolean) => (ok ? "✓" : "✗");

/** The figures as a Markdown table, each average beside its target. */
export function formatToolBytes(b: ToolBytes): string {
  const per = (n: number) => (n / Math.max(b.tools, 1)).toFixed(0);
  return [
    `| tools/list for a person's write token (${b.tools} tools) | bytes | a tool | target |`,
    "|---|---:|---:|---|",
    `| all (JSON tool objects, without _meta) | ${kb(b.total)} | ${b.perTool.total.toFixed(0)} | ≤ ${b.targets.total} a tool ${mark(b.ok.total)} |`,
    `| what a model reads (name, title, description, input schema) | ${kb(b.model)} | ${b.perTool.model.toFixed(0)} | ≤ ${b.targets.model} a tool ${mark(b.ok.model)} |`,
    `| _meta for hosts and gateways (enforcement, trust, fingerprint) | ${kb(b.meta)} | ${b.perTool.meta.toFixed(0)} | ≤ ${b.targets.meta} a tool ${mark(b.ok.meta)} |`,
    `| names and titles | ${kb(b.parts.namesAndTitles)} | ${per(b.parts.namesAndTitles)} | |`,
    `| descriptions | ${kb(b.parts.descriptions)} | ${per(b.parts.descriptions)} | |`,
    `| input schemas | ${kb(b.parts.inputSchemas)} | ${per(b.parts.inputSchemas)} | |`,
    `| annotations | ${kb(b.parts.annotations)} | ${per(b.parts.annotations)} | |`,
    `| output schemas | ${kb(b.parts.outputSchemas)} | ${per(b.parts.outputSchemas)} | |`,
  ].join("\n");
}
