import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { FILLING_ROWS_SQL, roomiestOf, type DatabaseUse } from "../src/db/provisioning.ts";
import { connect, seedAccount } from "./helpers.ts";

/**
 * `npm run admin -- create-account` puts a new account in the database with the
 * most room. A local `wrangler d1 execute --json` reports no size, so the CLI
 * (scripts/lib/d1.ts, databaseUses) also counts the rows that fill each
 * database with FILLING_ROWS_SQL, one query apiece, and roomiestOf decides by
 * them when any size is missing: the choice is exercised locally, on real D1.
 */
async function useOf(name: "DB" | "DB_1", bytes: number | null): Promise<DatabaseUse> {
  const db = env[name];
  const row = await db.prepare(FILLING_ROWS_SQL.sql).first<{ rows: number }>();
  return { name, bytes, rows: row!.rows };
}

describe("the database with the most room", () => {
  it("without sizes (a local database), the one with fewer rows: DB_1 once DB holds more, DB again once DB_1 does", async () => {
    const busy = await seedAccount("Fills DB", "bot", "DB");
    const c = await connect(busy.human);
    for (let i = 0; i < 5; i++) await c.ok("create_task", { title: `Filler ${i}` });
    await c.close();
    const uses = [await useOf("DB", null), await useOf("DB_1", null)];
    expect(uses[0].rows).toBeGreaterThan(uses[1].rows);
    expect(roomiestOf(uses)).toBe("DB_1");

    const other = await seedAccount("Fills DB_1", "bot", "DB_1");
    const d = await connect(other.human);
    for (let i = 0; i < 20; i++) await d.ok("create_task", { title: `Filler ${i}` });
    await d.close();
    const again = [await useOf("DB", null), await useOf("DB_1", null)];
    expect(again[1].rows).toBeGreaterThan(again[0].rows);
    expect(roomiestOf(again)).toBe("DB");
  });

  it("with sizes (remote D1 reports them), the smaller; ties go to the first", () => {
    expect(roomiestOf([{ name: "DB", bytes: 9_000_000, rows: 10 }, { name: "DB_1", bytes: 4_000_000, rows: 900 }])).toBe("DB_1");
    expect(roomiestOf([{ name: "DB", bytes: 4_000_000, rows: 10 }, { name: "DB_1", bytes: 4_000_000, rows: 0 }])).toBe("DB");
    // A size missing in one: rows decide for all, never bytes against rows.
    expect(roomiestOf([{ name: "DB", bytes: 4_000_000, rows: 10 }, { name: "DB_1", bytes: null, rows: 20 }])).toBe("DB");
  });
});
