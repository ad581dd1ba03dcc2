/**
 * Fixed-concurrency load with autocannon. Latencies are taken from its
 * `response` events (sub-millisecond floats) rather than its integer
 * histogram, so ratios of fast routes stay meaningful. A measurement is split
 * into rounds that interleave all requests, so background noise on a shared
 * machine falls on every row alike instead of on one.
 */
import { createRequire } from "node:module";
import type { HttpRequest } from "./mcp.ts";

interface AutocannonOptions {
  url: string;
  connections: number;
  duration?: number;
  /** Stop after this many requests in all (instead of after `duration`). */
  amount?: number;
  method: string;
  headers: Record<string, string>;
  body?: string;
  /** Each connection sends these in turn (instead of one request). */
  requests?: { method: string; path: string; headers: Record<string, string>; body?: string }[];
}
interface AutocannonResult {
  non2xx: number;
  errors: number;
  timeouts: number;
}
interface AutocannonInstance {
  on(event: "response", listener: (client: unknown, statusCode: number, resBytes: number, responseTime: number) => void): void;
  on(event: "done", listener: (result: AutocannonResult) => void): void;
  on(event: "error", listener: (error: Error) => void): void;
  stop(): void;
}
type Autocannon = (opts: AutocannonOptions) => AutocannonInstance;

const autocannon = createRequire(import.meta.url)("autocannon") as Autocannon;

export interface LoadSettings {
  connections: number;
  /** Total measured seconds per request, spread over `rounds` interleaved rounds. */
  seconds: number;
  warmupSeconds: number;
  rounds: number;
}

export interface LoadResult {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  failed: number;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

/** One request, or several that each connection sends in turn (the same call spread over accounts' tokens). */
export type Load = HttpRequest | HttpRequest[];

/** Seconds to load for, or `{ amount }`: that many requests in all (autocannon rounds a duration up to whole seconds, an amount it does not). */
export type Span = number | { amount: number };

function once(base: string, load: Load, connections: number, span: Span, record: boolean): Promise<{ latencies: number[]; failed: number; ms: number }> {
  return new Promise((resolve, reject) => {
    const latencies: number[] = [];
    let failed = 0;
    const started = performance.now();
    const req = Array.isArray(load) ? load[0] : load;
    const instance = autocannon({
      url: base + req.path,
      connections,
      ...(typeof span === "number" ? { duration: span } : { amount: span.amount }),
      method: req.method,
      headers: req.headers,
      body: req.body,
      ...(Array.isArray(load) ? { requests: load.map((r) => ({ method: r.method, path: r.path, headers: r.headers, body: r.body })) } : {}),
    });
    instance.on("response", (_client, status, _bytes, ms) => {
      if (!record) return;
      if (status >= 200 && status < 300) latencies.push(ms);
      else failed++;
    });
    instance.on("error", reject);
    instance.on("done", (r) => resolve({ latencies, failed: failed + r.errors + r.timeouts, ms: performance.now() - started }));
  });
}

/** Latencies (ms) of the 2xx answers of one run, and how many requests failed. */
export interface Samples {
  latencies: number[];
  failed: number;
  ms: number;
}

export function emptySamples(): Samples {
  return { latencies: [], failed: 0, ms: 0 };
}

/** Optionally warm up, then load for `span` (seconds, or a number of requests) and add what was measured to `into`. */
export async function measureInto(into: Samples, base: string, req: Load, connections: number, span: Span, warmupSeconds: number): Promise<void> {
  if (warmupSeconds > 0) await once(base, req, connections, warmupSeconds, false);
  const { latencies, failed, ms } = await once(base, req, connections, span, true);
  for (const l of latencies) into.latencies.push(l);
  into.failed += failed;
  into.ms += ms;
}

/** requests/s, p50 and p99 (ms) over everything measured for one request. */
export function summarize(s: Samples): LoadResult {
  const sorted = Float64Array.from(s.latencies).sort();
  return {
    requests: sorted.length,
    rps: s.ms > 0 ? sorted.length / (s.ms / 1000) : 0,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    failed: s.failed,
  };
}
