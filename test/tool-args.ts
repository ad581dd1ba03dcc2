/**
 * Arguments for any tool, built from its detailed JSON input schema
 * (`detailedInputSchema`: ids, lengths and ranges included): every required field gets a plain valid value, ids come from
 * a pool of real records, so a loop over the registry can reach each handler.
 */
export type Schema = Record<string, any>;

/** Real ids by prefix (`tsk`, `prj`, `run`, …). */
export type IdPool = Record<string, string[]>;

/** A property's schema without the `anyOf: [X, {type: null}]` of a nullable field. */
export function nonNull(s: Schema): Schema {
  if (!s.anyOf) return s;
  return (s.anyOf as Schema[]).find((x) => x.type !== "null") ?? s;
}

/** A field of a tool's input, with its path (`due_at`, `subtasks[].title`). */
export interface Field {
  path: string;
  schema: Schema;
}

/** Every field of an input schema, nested ones included, that `match` picks. */
export function fieldsOf(schema: Schema, match: (name: string, s: Schema) => boolean, prefix = ""): Field[] {
  const out: Field[] = [];
  const s = nonNull(schema);
  for (const [name, raw] of Object.entries((s.properties ?? {}) as Record<string, Schema>)) {
    const prop = nonNull(raw);
    const path = prefix ? `${prefix}.${name}` : name;
    if (match(name, prop)) out.push({ path, schema: prop });
    if (prop.type === "object") out.push(...fieldsOf(prop, match, path));
    if (prop.type === "array" && prop.items?.type === "object") out.push(...fieldsOf(prop.items, match, `${path}[]`));
  }
  return out;
}

function stringFor(name: string, s: Schema, pool: IdPool, variant: number): string {
  const id = typeof s.pattern === "string" ? /^\^([a-z]{3})_/.exec(s.pattern) : null;
  if (id) {
    const known = pool[id[1]];
    if (!known?.length) throw new Error(`no ${id[1]}_ id in the pool for ${name}`);
    return known[variant % known.length];
  }
  if (s.format === "date-time") return new Date(Date.UTC(2090, 0, 1 + variant, 9)).toISOString();
  if (s.format === "date") return `2090-01-${String(1 + (variant % 28)).padStart(2, "0")}`;
  if (s.format === "uri") return `https://example.com/${variant}`;
  if (s.pattern) {
    const re = new RegExp(s.pattern);
    const fit = [`example${variant}`, `example-${variant}`, `ex${variant}`, `${variant}`].find((c) => re.test(c));
    if (!fit) throw new Error(`no example for ${name} (pattern ${s.pattern})`);
    return fit;
  }
  const text = `Example ${name} ${variant}`;
  return s.maxLength && text.length > s.maxLength ? text.slice(0, s.maxLength) : text;
}

/** A valid value for one schema; `variant` changes every string so two variants differ. */
export function exampleValue(name: string, raw: Schema, pool: IdPool, variant = 0): unknown {
  const s = nonNull(raw);
  if (s.enum) return s.enum[0];
  if (s.const !== undefined) return s.const;
  switch (s.type) {
    case "string":
      return stringFor(name, s, pool, variant);
    case "integer":
    case "number":
      return (s.minimum ?? 1) + variant;
    case "boolean":
      return variant % 2 === 1;
    case "array":
      return Array.from({ length: Math.max(1, s.minItems ?? 1) }, (_, i) => exampleValue(name, s.items ?? {}, pool, variant + i));
    case "object":
      return exampleArgs(s, pool, variant);
    default:
      throw new Error(`no example for ${name} (${JSON.stringify(s).slice(0, 80)})`);
  }
}

/** The required fields of an input schema, each with a valid value. */
export function exampleArgs(schema: Schema, pool: IdPool, variant = 0): Record<string, unknown> {
  const props = (schema.properties ?? {}) as Record<string, Schema>;
  const out: Record<string, unknown> = {};
  for (const name of (schema.required ?? []) as string[]) out[name] = exampleValue(name, props[name], pool, variant);
  return out;
}
