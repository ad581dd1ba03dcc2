/**
 * A per-request view of D1 that counts executions (prepare→first/all/run/raw
 * and batch), their time and where they ran, for the Server-Timing header and
 * the request log (src/db/watched.ts holds the view).
 */
import { watched } from "./watched.ts";

export interface D1Meter {
  db: D1Database;
  calls: number;
  ms: number;
  /** Of the calls whose result says where it ran: how many the primary served, and the regions that served any. */
  servedByPrimary: number;
  servedByReplica: number;
  regions: Set<string>;
}

/** The real database under each metered view: for work a response does not wait for (unmetered). */
const underneath = new WeakMap<object, D1Database>();

/** The database under a metered view (itself when it is none): for what runs after the response, which Server-Timing does not count. */
export function unmetered(db: D1Database): D1Database {
  return underneath.get(db) ?? db;
}

/** `shared`: count into another database's meter (a request's calls to every shard make one count); the result's `db` is this one. */
export function meterD1(real: D1Database, shared?: D1Meter): D1Meter {
  const fresh = (): D1Meter => ({ db: real, calls: 0, ms: 0, servedByPrimary: 0, servedByReplica: 0, regions: new Set() });
  const counts: D1Meter = shared ?? fresh();
  const meter: D1Meter = shared ? fresh() : counts;

  async function timed<T>(run: () => Promise<T>): Promise<T> {
    counts.calls++;
    const start = performance.now();
    try {
      const out = await run();
      for (const r of Array.isArray(out) ? out : [out]) noteServed((r as D1Result | null)?.meta);
      return out;
    } finally {
      counts.ms += performance.now() - start;
    }
  }

  function noteServed(meta: D1Meta | undefined): void {
    if (!meta || typeof meta.served_by_primary !== "boolean") return;
    if (meta.served_by_primary) counts.servedByPrimary++;
    else counts.servedByReplica++;
    if (meta.served_by_region) counts.regions.add(meta.served_by_region);
  }

  function metered<T extends D1Database | D1DatabaseSession>(target: T): T {
    // A session of the database (src/db/read-sessions.ts) is counted with it.
    const view = watched(target, (_sql, run) => timed(run), {
      withSession: (constraint?: string) => metered((target as D1Database).withSession(constraint)),
    });
    underneath.set(view, target as D1Database);
    return view;
  }

  meter.db = metered(real);
  return meter;
}

export function serverTiming(meter: D1Meter): string {
  return `d1;dur=${meter.ms.toFixed(1)};desc="${meter.calls} D1 calls"`;
}
