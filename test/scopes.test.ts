/**
 * The scope overlap rule of src/domain/scopes.ts: the cases docs/approvals-and-claims.md
 * states, in JS and in the SQL the claim batches run (real D1), which must agree.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { overlaps, parseScope, scopeColumn, toArea } from "../src/domain/scopes.ts";
import { overlapSql } from "../src/db/scopes-sql.ts";

const CASES: [string, string, boolean][] = [
  ["src/db/**", "src/db/tasks.ts", true],
  ["src/db/**", "src/**", true],
  ["src/db/**", "src/web/app.ts", false],
  ["src/db", "src/db/tasks.ts", true],
  ["src/db", "src/dbx/tasks.ts", false],
  ["docs/a.md", "docs/a.md", true],
  ["docs/a.md", "docs/**", true],
  ["docs/a.md", "docs/*.md", true],
  ["docs/a.md", "docs/b.md", false],
  ["docs/a.md", "docs/*.txt", false],
  ["docs/a.md", "*.md", false],
  ["docs/sub/a.md", "docs/*.md", false],
  ["docs/sub/a.md", "docs/**/*.md", true],
  ["src/a.ts", "src/**/*.ts", true],
  ["src/a.md", "src/**/*.ts", false],
  ["docs/*.md", "docs/*.txt", true],
  ["src/", "src/x/y.ts", true],
  ["./src/db/x.ts", "/src/db/x.ts", true],
  ["Docs/a.md", "docs/a.md", false],
  ["billing", "Billing", true],
  ["billing", "payments", false],
  ["billing", "billing/**", false],
  ["billing", "billing.md", false],
];

describe("scope overlap", () => {
  it.each(CASES)("%s and %s: %s, both ways", (a, b, want) => {
    expect(overlaps(toArea(a), toArea(b))).toBe(want);
    expect(overlaps(toArea(b), toArea(a))).toBe(want);
  });

  it("the SQL says the same as the JS for every case, both ways", async () => {
    const stmt = (a: string, b: string) =>
      env.DB.prepare(`SELECT ${overlapSql("?1", "?2")} AS o`).bind(scopeColumn([toArea(a)]), scopeColumn([toArea(b)]));
    const rows = await env.DB.batch(CASES.flatMap(([a, b]) => [stmt(a, b), stmt(b, a)]));
    const got = rows.map((r) => Boolean((r.results[0] as { o: number }).o));
    expect(got).toEqual(CASES.flatMap(([, , want]) => [want, want]));
  });

  it("validates: at most 20 areas, none empty, no `..`, no other wildcards; normalizes and drops repeats", () => {
    expect(parseScope(Array.from({ length: 21 }, (_, i) => `a${i}`))).toEqual({ problem: "scope: at most 20 areas (got 21)" });
    expect(parseScope(["ok", " "])).toMatchObject({ problem: expect.stringMatching(/^scope\.1: must not be empty/) });
    expect(parseScope(["../etc/passwd"])).toMatchObject({ problem: expect.stringMatching(/^scope\.0: must not contain `\.\.`/) });
    expect(parseScope(["src/?.ts"])).toMatchObject({ problem: expect.stringMatching(/not `\?`/) });
    expect(parseScope(["x".repeat(201)])).toMatchObject({ problem: expect.stringMatching(/at most 200 characters/) });
    const r = parseScope(["./src//db/", "Billing", "billing", "src/db/**"]);
    expect("areas" in r && r.areas.map((x) => x.a)).toEqual(["src/db/**", "billing"]);
  });
});
