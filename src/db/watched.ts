/**
 * A view of a D1 database or session whose every execution (a prepared
 * statement's first, all, run or raw, or a batch) runs through `around`, told
 * the SQL it runs (null for a statement prepared elsewhere). Statements stay
 * the real D1 objects underneath: a batch receives the originals. `own`
 * answers the properties it names instead of the target. Used to meter a
 * request's D1 calls (src/db/metered.ts) and to note a session's writes
 * (src/db/read-sessions.ts).
 */
export type Around = <R>(sql: readonly (string | null)[], run: () => Promise<R>) => Promise<R>;

export function watched<T extends D1Database | D1DatabaseSession>(target: T, around: Around, own: Record<string, unknown> = {}): T {
  const originals = new WeakMap<object, { real: D1PreparedStatement; sql: string }>();
  const wrap = (real: D1PreparedStatement, sql: string): D1PreparedStatement => {
    const proxy = new Proxy(real, {
      get(t, prop) {
        if (prop === "bind") return (...values: unknown[]) => wrap(t.bind(...values), sql);
        if (prop === "first" || prop === "all" || prop === "run" || prop === "raw") {
          const fn = (t[prop] as (...a: unknown[]) => Promise<unknown>).bind(t);
          return (...a: unknown[]) => around([sql], () => fn(...a));
        }
        const value = Reflect.get(t, prop, t);
        return typeof value === "function" ? value.bind(t) : value;
      },
    });
    originals.set(proxy, { real, sql });
    return proxy;
  };
  return new Proxy(target, {
    get(t, prop) {
      if (typeof prop === "string" && Object.hasOwn(own, prop)) return own[prop];
      if (prop === "prepare") return (sql: string) => wrap(t.prepare(sql), sql);
      if (prop === "batch") {
        return (statements: D1PreparedStatement[]) =>
          around(
            statements.map((s) => originals.get(s)?.sql ?? null),
            () => t.batch(statements.map((s) => originals.get(s)?.real ?? s)),
          );
      }
      const value = Reflect.get(t, prop, t);
      return typeof value === "function" ? value.bind(t) : value;
    },
  });
}
