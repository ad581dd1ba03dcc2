/**
 * What `npm start` passes on of `wrangler dev`'s output: the lines that alarm
 * a newcomer and ask nothing (docs/testing.md) are dropped, everything else
 * (the banner, the bindings, requests, real warnings and errors) is kept.
 * The input is wrangler 4's output on a machine without internet access.
 */
import { describe, expect, it, vi } from "vitest";
import { createMcpHandler } from "@modelcontextprotocol/server";
import { appliedMigrations, migrationLines } from "../scripts/lib/migration-report.ts";
import { wranglerNoise } from "../scripts/lib/wrangler-noise.ts";

const WRANGLER = [
  " ⛅️ wrangler 4.164.0",
  "Your Worker has access to the following bindings:",
  "env.DB (taskgate)                                               D1 Database               local",
  "",
  "[wrangler:warn] Unable to fetch the `Request.cf` object! Falling back to a default placeholder...",
  "Error: getaddrinfo ENOTFOUND workers.cloudflare.com",
  "    at GetAddrInfoReqWrap.onlookupall [as oncomplete] (node:dns:122:26)",
  "    at GetAddrInfoReqWrap.callbackTrampoline (node:internal/async_hooks:130:17)",
  "\u001b[33m▲ \u001b[43;33m[\u001b[43;30mWARNING\u001b[43;33m]\u001b[0m \u001b[1mScheduled Workers are not automatically triggered during local development.\u001b[0m",
  "",
  "  To manually trigger a scheduled event, run:",
  '    curl "http://127.0.0.1:8797/cdn-cgi/local/scheduled"',
  "  For more details, see https://developers.cloudflare.com/workers/configuration/cron-triggers/#test-cron-triggers-locally",
  "",
  "",
  "⎔ Starting local server...",
  "[wrangler:warn] Something else worth reading",
  "Error: getaddrinfo ENOTFOUND hooks.example.com",
  "    at GetAddrInfoReqWrap.onlookupall [as oncomplete] (node:dns:122:26)",
  "[wrangler:info] Ready on http://127.0.0.1:8797",
  "[wrangler:info] GET /health 200 OK (6ms)",
  "\u001b[32m[wrangler:info]\u001b[39m HEAD /health \u001b[1m200\u001b[22m OK \u001b[90m(2ms)\u001b[39m",
  "[wrangler:info] HEAD /health 200 OK (3ms)",
  "[wrangler:info] HEAD /ready 200 OK (4ms)",
];

describe("npm start's view of wrangler dev", () => {
  it("drops the scheduled-workers warning, the offline Request.cf trace and npm start's own HEAD /health probes, keeps the rest", () => {
    const keep = wranglerNoise();
    expect(WRANGLER.filter(keep)).toEqual([
      " ⛅️ wrangler 4.164.0",
      "Your Worker has access to the following bindings:",
      "env.DB (taskgate)                                               D1 Database               local",
      "",
      "⎔ Starting local server...",
      "[wrangler:warn] Something else worth reading",
      "Error: getaddrinfo ENOTFOUND hooks.example.com",
      "    at GetAddrInfoReqWrap.onlookupall [as oncomplete] (node:dns:122:26)",
      "[wrangler:info] Ready on http://127.0.0.1:8797",
      "[wrangler:info] GET /health 200 OK (6ms)",
      "[wrangler:info] HEAD /ready 200 OK (4ms)",
    ]);
  });
});

describe("the Worker's own start", () => {
  it("prints no notice that JSON responses drop mid-call notifications (Taskgate sends none), though the SDK words one", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      vi.resetModules();
      await import("../src/mcp/server.ts");
      const said = () => warn.mock.calls.filter((c) => String(c[0]).startsWith("responseMode: 'json'"));
      expect(said()).toEqual([]);
      createMcpHandler(() => {
        throw new Error("not called");
      }, { responseMode: "json" } as never);
      expect(said()).toHaveLength(1);
    } finally {
      warn.mockRestore();
    }
  });
});

/** `wrangler d1 migrations apply` of two migrations (wrangler 4): the table of those to apply, then the table again after each one. */
const MIGRATIONS_APPLY = [
  "Migrations to be applied:",
  "┌────────────────────────────┐",
  "│ name                       │",
  "├────────────────────────────┤",
  "│ 0016_other.sql             │",
  "├────────────────────────────┤",
  "│ 0017_fill_consent_data.sql │",
  "└────────────────────────────┘",
  "┌────────────────────────────┬────────┐",
  "│ name                       │ status │",
  "├────────────────────────────┼────────┤",
  "│ 0016_other.sql             │ ✅     │",
  "├────────────────────────────┼────────┤",
  "│ 0017_fill_consent_data.sql │ 🕒️     │",
  "└────────────────────────────┴────────┘",
  "┌────────────────────────────┬────────┐",
  "│ name                       │ status │",
  "├────────────────────────────┼────────┤",
  "│ 0016_other.sql             │ ✅     │",
  "├────────────────────────────┼────────┤",
  "│ 0017_fill_consent_data.sql │ ✅     │",
  "└────────────────────────────┴────────┘",
].join("\n");

describe("what npm start and admin migrate say about migrations", () => {
  it("reads the migrations wrangler applied from its tables, coloured or not, and none from 'No migrations to apply!'", () => {
    expect(appliedMigrations(MIGRATIONS_APPLY)).toEqual(["0016_other.sql", "0017_fill_consent_data.sql"]);
    const coloured = MIGRATIONS_APPLY.replace(/│/g, "\u001b[90m│\u001b[39m");
    expect(appliedMigrations(coloured)).toEqual(["0016_other.sql", "0017_fill_consent_data.sql"]);
    expect(appliedMigrations("✅ No migrations to apply!")).toEqual([]);
  });

  it("says for each database which migrations it applied, by name, or that there were none", () => {
    expect(
      migrationLines([
        { database: "DB", applied: ["0016_other.sql", "0017_fill_consent_data.sql"] },
        { database: "DB_1", applied: ["0017_fill_consent_data.sql"] },
        { database: "DB_2", applied: [] },
      ]),
    ).toEqual([
      "Database DB: applied 2 migrations 0016_other.sql, 0017_fill_consent_data.sql.",
      "Database DB_1: applied the migration 0017_fill_consent_data.sql.",
      "Database DB_2: no new migrations.",
    ]);
  });
});
