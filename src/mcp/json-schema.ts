import { z } from "zod";

/**
 * The JSON Schemas of a tool, from its zod schemas, in two forms:
 *
 * - detailed: everything zod knows, with the `detail` words of shared pieces
 *   (`task id (tsk_…)`, `ISO 8601 time, e.g. …`) as descriptions. Argument
 *   errors speak in these words: a caller who got a field wrong reads them once.
 * - announced: what tools/list says, which every conversation pays for. The
 *   input gives types, enums, formats, defaults and what is required, and the
 *   descriptions that say more than a field's name; what holds for every tool
 *   (id formats, lengths, ranges, no unknown fields) is said once in the
 *   server's instructions and checked by the server. The output is one level
 *   deep, each nested record an `object` and each list an `array` (the server
 *   checks results against the full zod schema in tests).
 */

export type JsonSchema = { [key: string]: unknown };
export type JsonObjectSchema = { type: "object"; [key: string]: unknown };

/** A key of `.meta()`: words for argument errors only, never announced. */
export const DETAIL = "detail";

/** Keys whose values are data, not schemas. */
const VALUES = new Set(["default", "const", "enum", "examples", "required"]);

/** Every schema node of a JSON Schema, innermost first, through `visit` (which may change it). */
function walk(node: unknown, visit: (n: JsonSchema) => JsonSchema): unknown {
  if (Array.isArray(node)) return node.map((n) => walk(n, visit));
  if (!node || typeof node !== "object") return node;
  const out: JsonSchema = {};
  for (const [k, v] of Object.entries(node)) {
    out[k] = VALUES.has(k) ? v : k === "properties" || k === "$defs" ? mapValues(v as JsonSchema, (p) => walk(p, visit)) : walk(v, visit);
  }
  return visit(out);
}

function mapValues(o: JsonSchema, f: (v: unknown) => unknown): JsonSchema {
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, f(v)]));
}

/** Bounds that only restate a JSON number's range say nothing. */
function withoutSafeBounds(n: JsonSchema): JsonSchema {
  if (n.maximum === Number.MAX_SAFE_INTEGER) delete n.maximum;
  if (n.minimum === Number.MIN_SAFE_INTEGER) delete n.minimum;
  return n;
}

function raw(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  const json = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as JsonSchema;
  delete json.$schema;
  return json;
}

/** Everything the zod schema says, `detail` words as descriptions (for argument errors). */
export function detailedSchema(schema: z.ZodType, io: "input" | "output"): JsonObjectSchema {
  return walk(raw(schema, io), (n) => {
    withoutSafeBounds(n);
    if (typeof n[DETAIL] === "string" && n.description === undefined) n.description = n[DETAIL];
    delete n[DETAIL];
    return n;
  }) as JsonObjectSchema;
}

/** `^tsk_[0-9a-z]{16}$`, `^(trs|tsk)_[0-9a-z]{16}$`: the format of an id, which a caller copies from a result and never makes up. */
const ID_PATTERN = /^\^(?:[a-z]{3}|\([a-z]{3}(?:\|[a-z]{3})*\))_\[0-9a-z\]\{16\}\$$/;

/**
 * Said once for every tool (the server's instructions and docs/limits-and-errors.md), or in
 * the tool's description where it matters (a window of 1–90 days), and always
 * checked by the server, whose error names the field and the limit: text
 * lengths, list sizes, number ranges, the id format, and that unknown fields
 * are refused.
 */
const SAID_ONCE = ["minLength", "maxLength", "minItems", "maxItems", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"];

/**
 * The input schema tools/list announces: types, enums, formats, defaults and
 * what is required, and the descriptions that add to a field's name.
 */
export function announcedInput(schema: z.ZodType): JsonObjectSchema {
  return walk(raw(schema, "input"), (n) => {
    delete n[DETAIL];
    for (const k of SAID_ONCE) delete n[k];
    if (n.additionalProperties === false) delete n.additionalProperties;
    if (typeof n.pattern === "string" && ID_PATTERN.test(n.pattern)) delete n.pattern;
    return n;
  }) as JsonObjectSchema;
}

const TYPE_ORDER = ["string", "number", "integer", "boolean", "object", "array", "null"];

/** The JSON types a (detailed) schema allows: `anyOf` branches and type lists merged; empty when any value goes. */
function typesOf(s: JsonSchema): string[] {
  const found = new Set<string>();
  const add = (x: JsonSchema): boolean => {
    if (Array.isArray(x.anyOf) || Array.isArray(x.oneOf)) return ((x.anyOf ?? x.oneOf) as JsonSchema[]).every(add);
    if (typeof x.type === "string") found.add(x.type);
    else if (Array.isArray(x.type)) for (const t of x.type) found.add(t as string);
    else if (x.const !== undefined) found.add(x.const === null ? "null" : typeof x.const);
    else if (Array.isArray(x.enum)) for (const v of x.enum) found.add(v === null ? "null" : typeof v);
    else return false;
    return true;
  };
  if (!add(s)) return [];
  // An integer is a number: one word does for both.
  if (found.has("integer") && found.has("number")) found.delete("integer");
  return [...found].sort((a, b) => TYPE_ORDER.indexOf(a) - TYPE_ORDER.indexOf(b));
}

/** One result field, one level deep: its JSON types. */
function briefField(s: JsonSchema): JsonSchema {
  const types = typesOf(s);
  if (types.length === 0) return {};
  return { type: types.length === 1 ? types[0] : types };
}

/**
 * The output schema tools/list announces: the result's own fields with their
 * JSON types, nested records and lists as `object` and `array`. Every field
 * of every result is always there (null when empty; test/output-schemas.test.ts
 * holds every tool to it), so the schema does not list them again under
 * `required`. A structuredContent that satisfies the detailed schema
 * satisfies this one.
 */
export function announcedOutput(schema: z.ZodType): JsonObjectSchema {
  const full = raw(schema, "output");
  const props = (full.properties ?? {}) as Record<string, JsonSchema>;
  return { type: "object", properties: mapValues(props, (p) => briefField(p as JsonSchema)) };
}

/** The fields of a tool's result that are not always there (the catalog has none; a test holds it to that). */
export function optionalOutputFields(schema: z.ZodType): string[] {
  const full = raw(schema, "output");
  const required = new Set((full.required ?? []) as string[]);
  return Object.keys((full.properties ?? {}) as object).filter((k) => !required.has(k));
}
