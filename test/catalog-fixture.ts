import { env } from "cloudflare:workers";
import { CATALOG_CALLS, type Call, type Fixture } from "../bench/catalog-calls.ts";
import { TOOL_NAMES } from "../src/catalog/effects.ts";
import { createToken, type SeededAccount, type TestClient } from "./helpers.ts";

export const asCall = (c: TestClient): Call => (name, args) => c.ok(name, args);

/** The catalog's fixture for an account whose person and agent are these clients, its spare tokens made in `db`. */
export function catalogFixture(acc: SeededAccount, human: TestClient, agent: TestClient, db: D1Database = env.DB): Fixture {
  return {
    human: asCall(human),
    agent: asCall(agent),
    agentName: acc.agentName,
    searchWord: "quarterly",
    spareTokenId: async () => (await createToken({ accountId: acc.accountId, kind: "human", scope: "read" }, db)).id,
    connectors: true,
  };
}

/** Every tool of the catalog called once, each by its caller; what failed, with why. */
export async function callCatalog(human: TestClient, agent: TestClient, f: Fixture): Promise<string[]> {
  const failed: string[] = [];
  for (const name of TOOL_NAMES) {
    const spec = CATALOG_CALLS[name];
    const args = await spec.prepare(f);
    const r = await (spec.who === "agent" ? agent : human).call(name, args);
    if (r.isError) failed.push(`${name}: ${r.text}`);
    await spec.after?.(f);
  }
  return failed;
}
