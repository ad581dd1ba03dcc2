/**
 * The benchmark's one table (printed as Markdown) and its JSON form, with each
 * target beside the figure it judges.
 */
import type { Era } from "./mcp.ts";
import type { LoadResult } from "./load.ts";

export type RowKind = "route" | "list-tools" | "read" | "write" | "floor";

export interface Row {
  label: string;
  era: Era | null;
  kind: RowKind;
  /** A list or search: judged on how it scales from the small to the large account. */
  scaled: boolean;
  small: LoadResult | null;
  large: LoadResult | null;
  d1Warm: number | null;
  d1Cold: number | null;
  /** Median D1 time of single calls (Server-Timing) in the small and the large account, for the scaled rows. */
  d1MsSmall?: number | null;
  d1MsLarge?: number | null;
  /** A read call's floor: the same call through the edge, token lane and registry without the SDK (small account). */
  floor?: LoadResult | null;
  /** Why there are no figures (e.g. the tool is not built yet). */
  missing?: string;
}

export interface Bundle {
  rawKiB: number;
  gzipKiB: number;
  wranglerGzipKiB: number | null;
}

export interface Target {
  what: string;
  value: number | null;
  limit: number;
  ok: boolean | null;
}

export const LIMITS = {
  listToolsVsHealth: 1.2,
  readVsReady: 1.3,
  readVsFloor: 1.15,
  largeVsSmall: 2,
  d1Calls: 2,
  bundleGzipKiB: 400,
} as const;

const ratio = (a: number | undefined, b: number | undefined): number | null =>
  a !== undefined && b !== undefined && Number.isFinite(a) && Number.isFinite(b) && b > 0 ? a / b : null;

/** The large/small p50 ratio of a row divided by the same ratio of /health. */
export function scaled(row: Row, health: Row): number | null {
  const r = ratio(row.large?.p50, row.small?.p50);
  const h = ratio(health.large?.p50, health.small?.p50);
  return r === null || h === null ? null : r / h;
}

function check(what: string, value: number | null, limit: number): Target {
  return { what, value, limit, ok: value === null ? null : value <= limit };
}

export function targetsOf(row: Row, health: Row, ready: Row, scaleLabel: string): Target[] {
  if (row.missing) return [];
  const out: Target[] = [];
  if (row.kind === "list-tools") out.push(check("×health", ratio(row.small?.p50, health.small?.p50), LIMITS.listToolsVsHealth));
  if (row.kind === "read") out.push(check("×ready", ratio(row.small?.p50, ready.small?.p50), LIMITS.readVsReady));
  if (row.kind === "read" && row.floor) out.push(check("×floor", ratio(row.small?.p50, row.floor.p50), LIMITS.readVsFloor));
  // Judged against /health of the same phase: the phases run minutes apart on a shared machine whose load moves.
  if (row.scaled) out.push(check(`${scaleLabel} (÷/health)`, scaled(row, health), LIMITS.largeVsSmall));
  if (row.kind === "read" || row.kind === "write") {
    out.push(check("D1 warm", row.d1Warm, LIMITS.d1Calls));
    out.push(check("D1 cold", row.d1Cold, LIMITS.d1Calls));
  }
  return out;
}

const f = (n: number | null | undefined, digits = 2) => (n === null || n === undefined || !Number.isFinite(n) ? "—" : n.toFixed(digits));
const mark = (t: Target) => `${t.what} ≤ ${t.limit} ${t.ok === null ? "?" : t.ok ? "✓" : "✗"}`;

export interface Report {
  markdown: string;
  json: Record<string, unknown>;
  allOk: boolean;
}

export function buildReport(rows: Row[], bundle: Bundle | null, settings: Record<string, unknown>, smallCount: number, largeCount: number): Report {
  const health = rows.find((r) => r.kind === "route" && r.label === "GET /health") as Row;
  const ready = rows.find((r) => r.kind === "route" && r.label === "GET /ready") as Row;
  const count = (n: number) => (n >= 1000 && n % 1000 === 0 ? `${n / 1000}k` : String(n));
  const largeLabel = count(largeCount);
  const smallLabel = count(smallCount);
  const header = [
    "measurement", "era", "req/s", "p50 ms", "p99 ms", "×/health", "×/ready", "×floor", "D1 calls warm/cold", `${largeLabel} p50 ms`, `${largeLabel}/${smallLabel}`,
    `${largeLabel}/${smallLabel} ÷/health`, `D1 ms ${smallLabel} → ${largeLabel}`, "targets",
  ];
  const lines = [`| ${header.join(" | ")} |`, `|${header.map(() => "---").join("|")}|`];
  const jsonRows: unknown[] = [];
  const allTargets: Target[] = [];

  for (const row of rows) {
    const targets = targetsOf(row, health, ready, `${largeLabel}/${smallLabel}`);
    allTargets.push(...targets);
    const era = row.era === null ? "—" : row.era === "modern" ? "2026-07-28" : "legacy";
    if (row.missing) {
      lines.push(`| ${row.label} | ${era} | ${row.missing} |  |  |  |  |  |  |  |  |  |  |  |`);
    } else {
      const d1 = row.d1Warm === null && row.d1Cold === null ? "—" : `${row.d1Warm ?? "—"} / ${row.d1Cold ?? "—"}`;
      lines.push(
        `| ${[
          row.label,
          era,
          f(row.small?.rps, 0),
          f(row.small?.p50),
          f(row.small?.p99),
          f(ratio(row.small?.p50, health.small?.p50)),
          f(ratio(row.small?.p50, ready.small?.p50)),
          row.floor ? f(ratio(row.small?.p50, row.floor.p50)) : "",
          d1,
          f(row.large?.p50),
          f(ratio(row.large?.p50, row.small?.p50)),
          row.scaled ? f(scaled(row, health)) : "",
          row.d1MsSmall != null || row.d1MsLarge != null ? `${f(row.d1MsSmall)} → ${f(row.d1MsLarge)}` : "",
          targets.map(mark).join(", "),
        ].join(" | ")} |`,
      );
    }
    jsonRows.push({
      measurement: row.label,
      era: row.era,
      missing: row.missing ?? null,
      small: row.small,
      large: row.large,
      ratio_to_health: ratio(row.small?.p50, health.small?.p50),
      ratio_to_ready: ratio(row.small?.p50, ready.small?.p50),
      ratio_to_floor: row.floor ? ratio(row.small?.p50, row.floor.p50) : null,
      ratio_large_to_small: ratio(row.large?.p50, row.small?.p50),
      ratio_large_to_small_per_health: row.scaled ? scaled(row, health) : null,
      d1_ms_small: row.d1MsSmall ?? null,
      d1_ms_large: row.d1MsLarge ?? null,
      d1_calls_warm: row.d1Warm,
      d1_calls_cold: row.d1Cold,
      targets,
    });
  }

  let bundleTarget: Target | null = null;
  if (bundle) {
    bundleTarget = check("gzip KiB", bundle.gzipKiB, LIMITS.bundleGzipKiB);
    allTargets.push(bundleTarget);
    lines.push(`| bundle (wrangler deploy --dry-run) | — | ${f(bundle.rawKiB, 1)} KiB raw | ${f(bundle.gzipKiB, 1)} KiB gzip |  |  |  |  |  |  |  |  |  | ${mark(bundleTarget)} |`);
  }

  const allOk = allTargets.every((t) => t.ok !== false);
  return {
    markdown: lines.join("\n"),
    allOk,
    json: {
      generated_at: new Date().toISOString(),
      settings,
      limits: LIMITS,
      rows: jsonRows,
      bundle: bundle ? { raw_kib: bundle.rawKiB, gzip_kib: bundle.gzipKiB, wrangler_gzip_kib: bundle.wranglerGzipKiB, target: bundleTarget } : null,
      all_targets_met: allOk,
    },
  };
}
