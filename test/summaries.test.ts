/// <reference types="vite/client" />
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { SUMMARIES, sqlLiteral, summary, type SqlPart } from "../src/db/summaries.ts";

/**
 * Each activity summary is one template rendered two ways: as text (a write
 * that read first) and as SQL (its one-batch form). Both must give the same
 * bytes, whatever the values hold.
 */

const SAMPLES = [
  "plain",
  "it's a \"quoted\" 'title'",
  "a || b",
  "what? ?1 ?",
  "100% _done_ %s",
  "naïve – 日本語 ✓ 🚀",
  "",
  "'); DROP TABLE tasks; --",
];

async function evaluate(expr: { sql: string; binds: unknown[] }): Promise<string> {
  const row = await env.DB.prepare(`SELECT ${expr.sql} AS s`).bind(...expr.binds).first<{ s: string }>();
  return row!.s;
}

describe("summary templates", () => {
  const names = Object.keys(SUMMARIES);

  it("lists templates", () => {
    expect(names.length).toBeGreaterThan(30);
  });

  type Loose = { slots: string[]; text(v: Record<string, string>): string; sql(s: Record<string, SqlPart>, v?: Record<string, string>): { sql: string; binds: unknown[] } };
  for (const [name, tpl] of Object.entries(SUMMARIES as unknown as Record<string, Loose>)) {
    it(`${name}: text and SQL agree, values bound or slots as SQL`, async () => {
      for (const [i, sample] of SAMPLES.entries()) {
        const values = Object.fromEntries(tpl.slots.map((s, j) => [s, j % 2 ? `${sample}${j}` : sample]));
        const text = tpl.text(values);
        // Every slot a bound value.
        const bound = tpl.sql({}, values);
        expect(bound.sql).not.toContain(sample || "\u0000");
        expect(await evaluate(bound)).toBe(text);
        // Every slot an SQL expression: a literal, or a bound parameter inside an expression.
        const asSql = Object.fromEntries(
          tpl.slots.map((s, j): [string, SqlPart] => [s, (i + j) % 2 ? sqlLiteral(values[s]) : { sql: "substr(?, 1)", binds: [values[s]] }]),
        );
        expect(await evaluate(tpl.sql(asSql))).toBe(text);
        // Half and half.
        const some = Object.fromEntries(tpl.slots.filter((_, j) => j % 2 === 0).map((s) => [s, asSql[s]]));
        const rest = Object.fromEntries(tpl.slots.filter((_, j) => j % 2 === 1).map((s) => [s, values[s]]));
        expect(await evaluate(tpl.sql(some, rest))).toBe(text);
      }
    });
  }

  it("numbers render alike", async () => {
    const t = summary("{n} task(s)");
    expect(t.text({ n: 3 })).toBe("3 task(s)");
    expect(await evaluate(t.sql({}, { n: 3 }))).toBe("3 task(s)");
    expect(t.sql({}, { n: 3 }).binds).toEqual(["3"]);
  });

  it("escapes the template's own quotes and binds every value", () => {
    const t = summary("a person's {x}");
    expect(t.sql({}, { x: "it's" })).toEqual({ sql: "'a person''s ' || ?", binds: ["it's"] });
    expect(t.sql({ x: { sql: "n - 1" } })).toEqual({ sql: "'a person''s ' || (n - 1)", binds: [] });
    expect(summary("{x}").sql({}, { x: "y" })).toEqual({ sql: "?", binds: ["y"] });
    expect(() => t.text({} as { x: string })).toThrow(/no value for \{x\}/);
  });
});

describe("one source for every summary", () => {
  const SOURCES = import.meta.glob("../src/{db,tools}/**/*.ts", { query: "?raw", import: "default", eager: true }) as Record<string, string>;

  it("no summary is written as SQL text outside the templates (no *_SUMMARY constants)", () => {
    const found = Object.entries(SOURCES)
      .filter(([path]) => !path.endsWith("/summaries.ts"))
      .flatMap(([path, text]) => [...text.matchAll(/\b[A-Z_]+_SUMMARY\b/g)].map((m) => `${path}: ${m[0]}`));
    expect(found).toEqual([]);
  });

  it("no activity summary is written as a string of its own (a template literal or a quoted text) outside the templates", () => {
    const all = import.meta.glob("../src/**/*.{ts,tsx}", { query: "?raw", import: "default", eager: true }) as Record<string, string>;
    const found = Object.entries(all)
      .filter(([path]) => !path.endsWith("/summaries.ts"))
      .flatMap(([path, text]) => text.split("\n").map((line, i) => [path, i + 1, line] as const))
      .filter(([, , line]) => /\bsummary\s*(?::|\+?=)\s*(`|"[^"]|'[^'])/.test(line) && !/^\s*(\*|\/\/)/.test(line))
      .map(([path, n, line]) => `${path}:${n}: ${line.trim()}`);
    expect(found).toEqual([]);
  });

  it("every exported template is in the list the test renders", async () => {
    const mod = (await import("../src/db/summaries.ts")) as Record<string, unknown>;
    const templates = Object.entries(mod).filter(([, v]) => v && typeof v === "object" && "template" in v && "sql" in v);
    const counted = Object.entries(mod).filter(([, v]) => v && typeof v === "object" && "summary" in v);
    const listed = new Set(Object.values(SUMMARIES));
    for (const [name, t] of templates) expect(listed.has(t as never), name).toBe(true);
    for (const [name, c] of counted) expect(listed.has((c as { summary: never }).summary), name).toBe(true);
  });
});
