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
 *   server's instructions and checked by the server. The output is the whole
 *   answer, every key required and every object closed, for the clients'
 *   validators and typed clients (hosts do not hand it to the model).
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
    return oneTypeEach(n);
  }) as JsonObjectSchema;
}

/** What describes a field as a whole, kept beside its branches; everything else belongs to its one non-null type. */
const WHOLE_FIELD = new Set(["description", "default"]);

/**
 * A type written as a list (`["string", "null"]`) as branches of one type
 * each (`anyOf: [{type: "string"}, {type: "null"}]`): the list is legal JSON
 * Schema, but several MCP clients read `type` as one string and reject the
 * tool or drop the rule (the Inspector warns on it). The same values pass.
 */
function oneTypeEach(n: JsonSchema): JsonSchema {
  if (!Array.isArray(n.type)) return n;
  const whole: JsonSchema = {};
  const own: JsonSchema = {};
  for (const [k, v] of Object.entries(n)) if (k !== "type") (WHOLE_FIELD.has(k) ? whole : own)[k] = v;
  const branches = (n.type as string[]).map((t) => {
    if (t === "null") return { type: "null" };
    const branch: JsonSchema = { type: t, ...own };
    if (Array.isArray(branch.enum)) branch.enum = branch.enum.filter((v) => v !== null);
    return branch;
  });
  return { anyOf: branches, ...whole };
}

/**
 * The output schema tools/list announces: the whole answer, from the same zod
 * schema the handler's result is checked against in tests. Every field is
 * `required` (always there, null when empty), every object closed
 * (`additionalProperties: false`), every list with its `items`, every nested
 * record with its fields, enums and nullability as zod says. A typed client
 * (the SDKs' validators, a client that turns the schema into its own types)
 * can rely on each key. A shape that comes back more than once in one answer
 * (the tasks a task waits on and those it blocks) is said once under `$defs`
 * and referenced (`#/$defs/…`), which every JSON Schema validator resolves;
 * input schemas, which models read, stay inline.
 */
export function announcedOutput(schema: z.ZodType): JsonObjectSchema {
  const full = walk(raw(schema, "output"), (n) => {
    withoutSafeBounds(n);
    delete n[DETAIL];
    return oneTypeEach(n);
  }) as JsonObjectSchema;
  return sharedShapes(full);
}

/** A `$ref` costs about this many bytes: a shape smaller than this is cheaper said again. */
const REF_BYTES = 40;

/** The schema's text for comparing shapes: its own description (said where it is used) left out. */
function shapeKey(n: JsonSchema): string {
  const { description: _said, ...shape } = n;
  return JSON.stringify(shape);
}

/**
 * Each object shape that occurs more than once in `schema` (largest first),
 * moved to `$defs` under the name of the field where it first occurs and
 * referenced from every place it occurred, its description kept beside the `$ref`.
 */
function sharedShapes(schema: JsonObjectSchema): JsonObjectSchema {
  const defs: Record<string, JsonSchema> = {};
  for (;;) {
    const found = new Map<string, { count: number; name: string; node: JsonSchema }>();
    const visit = (n: unknown, name: string, top: boolean): void => {
      if (Array.isArray(n)) return n.forEach((x) => visit(x, name, false));
      if (!n || typeof n !== "object") return;
      const node = n as JsonSchema;
      if (!top && node.type === "object" && node.properties) {
        const key = shapeKey(node);
        const seen = found.get(key);
        if (seen) seen.count++;
        else found.set(key, { count: 1, name, node });
      }
      for (const [k, v] of Object.entries(node)) {
        if (VALUES.has(k)) continue;
        if (k === "properties" || k === "$defs") for (const [field, p] of Object.entries(v as JsonSchema)) visit(p, field, false);
        else visit(v, name, false);
      }
    };
    visit(schema, "answer", true);
    for (const d of Object.entries(defs)) visit(d[1], d[0], true);
    const repeated = [...found.entries()].filter(([key, f]) => f.count > 1 && key.length > REF_BYTES).sort((a, b) => b[0].length - a[0].length);
    if (!repeated.length) break;
    const [key, { name: field }] = repeated[0];
    let name = field;
    for (let i = 2; name in defs; i++) name = `${field}_${i}`;
    const ref = `#/$defs/${name}`;
    const replace = (n: unknown): unknown => {
      if (Array.isArray(n)) return n.map(replace);
      if (!n || typeof n !== "object") return n;
      const node = n as JsonSchema;
      if (node.type === "object" && node.properties && shapeKey(node) === key) {
        defs[name] ??= (({ description: _d, ...shape }) => shape)(node);
        return node.description === undefined ? { $ref: ref } : { $ref: ref, description: node.description };
      }
      return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, VALUES.has(k) ? v : replace(v)]));
    };
    const top = schema;
    schema = { ...(Object.fromEntries(Object.entries(top).map(([k, v]) => [k, k === "$defs" ? v : replace(v)])) as JsonObjectSchema) };
    for (const [k, v] of Object.entries(defs)) if (k !== name) defs[k] = replace(v) as JsonSchema;
  }
  return Object.keys(defs).length ? { ...schema, $defs: defs } : schema;
}

/** The fields of a tool's result that are not always there (the catalog has none; a test holds it to that). */
export function optionalOutputFields(schema: z.ZodType): string[] {
  const full = raw(schema, "output");
  const required = new Set((full.required ?? []) as string[]);
  return Object.keys((full.properties ?? {}) as object).filter((k) => !required.has(k));
}
