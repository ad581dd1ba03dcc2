/**
 * A stand-in for a D1 database with read replication on, for the Workers
 * runtime where local D1 has no replicas: a primary (a real local D1) and
 * read replicas (real local D1s of their own) that are copies kept behind on
 * purpose. Every write batch the primary commits is logged; a replica holds
 * the log up to its own position and moves on only when told to
 * (`catchUp`), or when a session's bookmark asks for a newer state than it
 * has, as D1 routes such a session to a replica that has caught up.
 *
 * Sessions follow D1's Sessions API: `withSession("first-primary")` sends
 * its first query to the primary; `"first-unconstrained"` to the nearest
 * replica, as it is; a bookmark, to a replica at least that new. A write
 * always runs on the primary, and a session's bookmark is the newest state
 * it read or wrote. Outside a session every query goes to the primary.
 *
 * `dropBookmarks` makes the stand-in forget every bookmark it is given (each
 * session starts unconstrained): what a Worker that kept none would get.
 */

type Values = unknown[];
type Mode = "first" | "all" | "run" | "raw";

const WRITE = /^\s*(?:INSERT|UPDATE|DELETE|REPLACE|CREATE|DROP|ALTER)\b|^\s*WITH\b[\s\S]*\b(?:INSERT|UPDATE|DELETE|REPLACE)\b/i;

/** A position in the log as a D1 bookmark (fixed-width hex, so its text orders as the log does). */
export const bookmarkAt = (position: number): string => `00000000-${position.toString(16).padStart(8, "0")}-00000000-${"0".repeat(32)}`;
const positionOf = (bookmark: string): number => parseInt(bookmark.split("-")[1], 16);

interface Replica {
  name: string;
  db: D1Database;
  /** How many of the log's batches it holds (or is replaying, in order, on `chain`). */
  at: number;
  chain: Promise<unknown>;
}

class Statement {
  readonly owner: Reader;
  readonly sql: string;
  readonly values: Values;
  constructor(owner: Reader, sql: string, values: Values = []) {
    this.owner = owner;
    this.sql = sql;
    this.values = values;
  }
  bind(...values: Values): Statement {
    return new Statement(this.owner, this.sql, values);
  }
  first<T>(column?: string): Promise<T | null> {
    return this.owner.one(this, "first", column) as Promise<T | null>;
  }
  all<T>(): Promise<D1Result<T>> {
    return this.owner.one(this, "all") as Promise<D1Result<T>>;
  }
  run<T>(): Promise<D1Result<T>> {
    return this.owner.one(this, "run") as Promise<D1Result<T>>;
  }
  raw<T>(options?: { columnNames?: boolean }): Promise<T[]> {
    return this.owner.one(this, "raw", options) as Promise<T[]>;
  }
}

/** The database as a Worker sees it (outside a session), or one session of it. */
class Reader {
  /** The session's bookmark: the newest state it read or wrote (null before its first query, unconstrained). */
  bookmark: string | null;
  private asked = false;
  readonly lag: LaggingD1;
  readonly constraint: string | null;
  constructor(lag: LaggingD1, constraint: string | null) {
    this.lag = lag;
    this.constraint = constraint;
    this.bookmark = constraint && constraint !== "first-primary" && constraint !== "first-unconstrained" ? constraint : null;
  }
  prepare(sql: string): Statement {
    return new Statement(this, sql);
  }
  getBookmark(): string | null {
    return this.bookmark;
  }
  withSession(constraint?: string): Reader {
    return new Reader(this.lag, this.lag.dropBookmarks ? "first-unconstrained" : (constraint ?? "first-unconstrained"));
  }
  /** Where a query goes: the primary for writes, outside a session, and a first-primary session's first query; else a replica. */
  private async target(writes: boolean): Promise<Replica | null> {
    const first = !this.asked;
    this.asked = true;
    if (writes || this.constraint === null || (first && this.constraint === "first-primary")) return null;
    const replica = this.lag.nearest;
    await this.lag.catchUp(this.bookmark ? positionOf(this.bookmark) : 0, replica);
    return replica;
  }
  private served(replica: Replica | null): void {
    const at = replica ? replica.at : this.lag.log.length;
    if (this.constraint === null) return;
    if (!this.bookmark || positionOf(this.bookmark) < at) this.bookmark = bookmarkAt(at);
  }
  async one(s: Statement, mode: Mode, arg?: unknown): Promise<unknown> {
    const writes = WRITE.test(s.sql);
    const replica = await this.target(writes);
    const db = replica?.db ?? this.lag.primary;
    const real = db.prepare(s.sql).bind(...s.values);
    const out = await (mode === "first" ? (arg === undefined ? real.first() : real.first(arg as string)) : mode === "raw" ? real.raw(arg as { columnNames: true }) : real[mode]());
    if (writes) this.lag.log.push([s]);
    this.served(replica);
    return mode === "all" || mode === "run" ? this.lag.stamp(out as D1Result, replica) : out;
  }
  async batch<T>(statements: Statement[]): Promise<D1Result<T>[]> {
    const writes = statements.some((s) => WRITE.test(s.sql));
    const replica = await this.target(writes);
    const db = replica?.db ?? this.lag.primary;
    const out = await db.batch<T>(statements.map((s) => db.prepare(s.sql).bind(...s.values)));
    if (writes) this.lag.log.push(statements);
    this.served(replica);
    return out.map((r) => this.lag.stamp(r, replica));
  }
}

export class LaggingD1 {
  /** Every write batch the primary committed, in order: what the replicas replay. */
  readonly log: Statement[][] = [];
  readonly replicas: Replica[];
  nearest: Replica;
  dropBookmarks = false;
  /** Reads each replica served, and the primary's queries (writes and reads outside a replica). */
  readonly served = { primary: 0, replica: 0 };

  readonly primary: D1Database;
  constructor(primary: D1Database, replicas: Record<string, D1Database>) {
    this.primary = primary;
    this.replicas = Object.entries(replicas).map(([name, db]) => ({ name, db, at: 0, chain: Promise.resolve() }));
    this.nearest = this.replicas[0];
  }

  /** The binding the Worker is given in place of `DB`. */
  binding(): D1Database {
    return new Reader(this, null) as unknown as D1Database;
  }

  /** The primary's newest state. */
  head(): number {
    return this.log.length;
  }

  /** Brings a replica (every one by default) up to `position` (the primary's newest state by default), replaying the log in order. */
  async catchUp(position = this.log.length, only?: Replica): Promise<void> {
    for (const r of only ? [only] : this.replicas) {
      while (r.at < Math.min(position, this.log.length)) {
        const batch = this.log[r.at++];
        r.chain = r.chain.then(() => r.db.batch(batch.map((s) => r.db.prepare(s.sql).bind(...s.values))));
      }
    }
    await Promise.all((only ? [only] : this.replicas).map((r) => r.chain));
  }

  /** Makes the named replica the nearest, which serves the reads of sessions. */
  serveFrom(name: string): void {
    const r = this.replicas.find((x) => x.name === name);
    if (!r) throw new Error(`no replica ${name}`);
    this.nearest = r;
  }

  /** A result as D1 reports it: served by the primary or by a replica, and where. */
  stamp<R extends D1Result>(r: R, replica: Replica | null): R {
    if (replica) this.served.replica++;
    else this.served.primary++;
    Object.assign(r.meta, { served_by_primary: !replica, served_by_region: replica ? replica.name : "PRIMARY" });
    return r;
  }
}
