import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { databaseIdsOf, isPlaceholder, sharedDatabaseIdProblem } from "../scripts/lib/database-ids.ts";

/**
 * Two D1 bindings with one database_id are one local SQLite file under two
 * names: `npm start`, the admin CLI (scripts/lib/d1.ts, through which migrate
 * and move-account read the databases) and `npm run deploy`
 * (scripts/lib/deploy-config.ts) refuse it with this check.
 */
const withDb1 = (id: string) => `${env.WRANGLER_TOML}\n[[d1_databases]]\nbinding = "DB_1"\ndatabase_name = "taskgate-1"\ndatabase_id = "${id}"\n`;

describe("each database binding has an id of its own", () => {
  it("refuses two bindings that share a database_id, naming both and what to write instead", () => {
    const problem = sharedDatabaseIdProblem(withDb1("00000000-0000-0000-0000-000000000000"));
    expect(problem).toContain("the D1 bindings DB and DB_1 the same database_id (00000000-0000-0000-0000-000000000000)");
    expect(problem).toContain("Give DB_1 an id of its own (a placeholder such as 00000000-0000-0000-0000-000000000001");
    const third = `${withDb1("00000000-0000-0000-0000-000000000001")}\n[[d1_databases]]\nbinding = "DB_2"\ndatabase_name = "taskgate-2"\ndatabase_id = "00000000-0000-0000-0000-000000000001"\n`;
    expect(sharedDatabaseIdProblem(third)).toContain("DB_1 and DB_2");
    expect(sharedDatabaseIdProblem(third)).toContain("00000000-0000-0000-0000-000000000002");
  });

  it("wrangler.toml as shipped, and with the block docs/deploy.md shows, is accepted; each documented id is a placeholder of its own", () => {
    expect(sharedDatabaseIdProblem(env.WRANGLER_TOML)).toBeNull();
    const blocks = [...env.DOCS_DEPLOY_MD.matchAll(/```toml\n([\s\S]*?)```/g)].map((m) => m[1]).filter((b) => b.includes("[[d1_databases]]"));
    expect(blocks.length).toBeGreaterThan(0);
    const config = `${env.WRANGLER_TOML}\n${blocks.join("\n")}`;
    expect(sharedDatabaseIdProblem(config)).toBeNull();
    const ids = databaseIdsOf(config);
    expect(ids.map((d) => d.binding)).toEqual(["DB", "DB_1"]);
    expect(new Set(ids.map((d) => d.id)).size).toBe(ids.length);
    // npm run deploy finds or creates a database for a placeholder id, never deploys with one.
    for (const d of ids) expect(isPlaceholder(d.id), d.binding).toBe(true);
    expect(isPlaceholder("3f1b2c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d")).toBe(false);
  });
});
