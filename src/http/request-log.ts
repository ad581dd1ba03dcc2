/**
 * The request log: one JSON line a request (Workers Logs keeps them, and
 * `wrangler tail` streams them), with what the request cost in D1 and where
 * its queries ran: `served_by_primary` (true when the primary served every
 * query that says, false when a read replica served any, null when none
 * said) and `served_by_region` (the regions that served them). Nothing secret:
 * the path without its query, any segment that could carry a secret masked.
 * `REQUEST_LOG = "off"` turns it off (the Workers-runtime tests do).
 */
import type { D1Meter } from "../db/metered.ts";

export interface RequestLine {
  level: "info";
  where: "request";
  id: string;
  method: string;
  path: string;
  status: number;
  ms: number;
  d1_calls: number;
  d1_ms: number;
  served_by_primary: boolean | null;
  served_by_region: string | null;
}

/** A path segment that could be a secret: a token, or anything long and random. */
const SECRETLIKE = /^tg_|^[A-Za-z0-9_-]{32,}$/;

export function loggedPath(url: string): string {
  const path = new URL(url).pathname;
  return path
    .split("/")
    .map((s) => (SECRETLIKE.test(s) ? "…" : s))
    .join("/");
}

export function requestLine(request: Request, id: string, status: number, ms: number, meter: D1Meter): RequestLine {
  const said = meter.servedByPrimary + meter.servedByReplica;
  return {
    level: "info",
    where: "request",
    id,
    method: request.method,
    path: loggedPath(request.url),
    status,
    ms: Math.round(ms),
    d1_calls: meter.calls,
    d1_ms: Math.round(meter.ms * 10) / 10,
    served_by_primary: said ? meter.servedByReplica === 0 : null,
    served_by_region: meter.regions.size ? [...meter.regions].sort().join(",") : null,
  };
}
