/**
 * A per-request view of D1 that counts executions (prepare→first/all/run/raw
 * and batch) and their time, for the Server-Timing header. Statements stay the
 * real D1 objects underneath; a batch receives the unwrapped originals.
 */
export interface D1Meter {
  db: D1Database;
  calls: number;
  ms: number;
}

/** `shared`: count into another database's meter (a request's calls to every shard make one count); the result's `db` is this one. */
export function meterD1(real: D1Database, shared?: D1Meter): D1Meter {
  const counts: D1Meter = shared ?? { db: real, calls: 0, ms: 0 };
  const meter: D1Meter = shared ? { db: real, calls: 0, ms: 0 } : counts;
  const originals = new WeakMap<object, D1PreparedStatement>();

  async function timed<T>(run: () => Promise<T>): Promise<T> {
    counts.calls++;
    const start = performance.now();
    try {
      return await run();
    } finally {
      counts.ms += performance.now() - start;
    }
  }

  function wrap(stmt: D1PreparedStatement): D1PreparedStatement {
    const proxy = new Proxy(stmt, {
      get(target, prop) {
        if (prop === "bind") return (...values: unknown[]) => wrap(target.bind(...values));
        if (prop === "first" || prop === "all" || prop === "run" || prop === "raw") {
          const fn = (target[prop] as (...a: unknown[]) => Promise<unknown>).bind(target);
          return (...a: unknown[]) => timed(() => fn(...a));
        }
        const value = Reflect.get(target, prop, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    originals.set(proxy, stmt);
    return proxy;
  }

  meter.db = new Proxy(real, {
    get(target, prop) {
      if (prop === "prepare") return (sql: string) => wrap(target.prepare(sql));
      if (prop === "batch") {
        return (statements: D1PreparedStatement[]) =>
          timed(() => target.batch(statements.map((s) => originals.get(s) ?? s)));
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return meter;
}

export function serverTiming(meter: D1Meter): string {
  return `d1;dur=${meter.ms.toFixed(1)};desc="${meter.calls} D1 calls"`;
}
