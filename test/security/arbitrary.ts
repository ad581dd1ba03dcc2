import fc from "fast-check";

/**
 * fast-check arbitraries from a tool's detailed JSON input schema
 * (`detailedInputSchema`: ids, lengths and ranges included): mostly well-formed values, with ids drawn from real records
 * so that calls reach the handlers, and now and then a value that breaks the
 * schema so that validation is exercised too.
 */
export type Schema = Record<string, any>;

export interface IdPool {
  /** Real ids by prefix (`tsk`, `prj`, …), from the seeded account and from the other account. */
  byPrefix: Record<string, string[]>;
}

export interface GenOptions {
  /** Only values the schema accepts: no over-long strings, no blank required text, URLs for `format: uri`. */
  valid?: boolean;
}

const junk = fc.oneof(
  fc.constant(null),
  fc.integer(),
  fc.double(),
  fc.string({ maxLength: 20 }),
  fc.boolean(),
  fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 2 }),
);

function idArbitrary(prefix: string, pool: IdPool): fc.Arbitrary<string> {
  const known = pool.byPrefix[prefix] ?? [];
  const fresh = fc.stringMatching(/^[0-9a-z]{16}$/).map((s) => `${prefix}_${s}`);
  return known.length ? fc.oneof({ arbitrary: fc.constantFrom(...known), weight: 4 }, { arbitrary: fresh, weight: 1 }) : fresh;
}

function stringArbitrary(s: Schema, pool: IdPool, opts: GenOptions): fc.Arbitrary<string> {
  const pattern: string | undefined = s.pattern;
  const idMatch = pattern && /^\^([a-z]{3})_/.exec(pattern);
  if (idMatch) return idArbitrary(idMatch[1], pool);
  if (s.format === "date-time") {
    return fc
      .date({ min: new Date("2020-01-01T00:00:00Z"), max: new Date("2030-12-31T00:00:00Z"), noInvalidDate: true })
      .map((d) => d.toISOString());
  }
  if (pattern) return fc.stringMatching(new RegExp(pattern)).filter((v) => v.length <= (s.maxLength ?? 200));
  const min = s.minLength ?? 0;
  const max = Math.min(s.maxLength ?? 60, 60);
  if (opts.valid) {
    if (s.format === "uri") return fc.webUrl({ validSchemes: ["https"] }).filter((u) => u.length <= (s.maxLength ?? 2000));
    const text = fc.string({ minLength: Math.max(min, 1), maxLength: Math.max(min, max, 1) });
    return min > 0 ? text.filter((v) => v.trim().length >= min) : text;
  }
  const normal = fc.string({ minLength: min, maxLength: Math.max(min, max) });
  if (s.maxLength && s.maxLength <= 25_000) {
    return fc.oneof({ arbitrary: normal, weight: 9 }, { arbitrary: fc.constant("x".repeat(s.maxLength + 1)), weight: 1 });
  }
  return normal;
}

export function fromSchema(s: Schema, pool: IdPool, depth = 0, opts: GenOptions = {}): fc.Arbitrary<unknown> {
  if (depth > 4) return fc.constant(null);
  if (s.anyOf) return fc.oneof(...(s.anyOf as Schema[]).map((x) => fromSchema(x, pool, depth + 1, opts)));
  if (s.enum) return fc.constantFrom(...(s.enum as unknown[]));
  if (s.const !== undefined) return fc.constant(s.const);
  switch (s.type) {
    case "string":
      return stringArbitrary(s, pool, opts);
    case "integer":
      return fc.integer({ min: Math.max(s.minimum ?? -1000, -1e9), max: Math.min(s.maximum ?? 1000, 1e9) });
    case "number":
      return fc.double({ min: s.minimum ?? -1e6, max: s.maximum ?? 1e6, noNaN: true });
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "array":
      return fc.array(fromSchema(s.items ?? {}, pool, depth + 1, opts), {
        minLength: s.minItems ?? 0,
        maxLength: Math.min(s.maxItems ?? 5, 5),
      });
    case "object": {
      const props = (s.properties ?? {}) as Record<string, Schema>;
      const required: string[] = s.required ?? [];
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [k, v] of Object.entries(props)) model[k] = fromSchema(v, pool, depth + 1, opts);
      return fc.record(model, { requiredKeys: required.filter((k) => k in model) });
    }
    default:
      return junk;
  }
}

/** Arguments for one tool: 85% from its schema, 15% anything at all. */
export function argumentsFor(inputSchema: Schema, pool: IdPool): fc.Arbitrary<unknown> {
  return fc.oneof(
    { arbitrary: fromSchema(inputSchema, pool), weight: 17 },
    { arbitrary: fc.record({ extra: junk }), weight: 1 },
    { arbitrary: junk, weight: 2 },
  );
}
