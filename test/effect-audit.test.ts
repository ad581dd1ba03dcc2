import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COLUMN_CLASSES } from "../src/domain/columns.ts";
import { TOOL_NAMES, WRITE_TOOLS } from "../src/mcp/effects.ts";
import { closeWorld, fakeOutbound, observePath, openWorld, type World } from "./audit/harness.ts";
import { schemaTables } from "./audit/observe.ts";
import { READ_SCENARIOS } from "./audit/scenarios-read.ts";
import { MORE_SCENARIOS } from "./audit/scenarios-more.ts";
import { TASK_SCENARIOS } from "./audit/scenarios-tasks.ts";
import { populate } from "./audit/states.ts";
import { judge, type Verdict } from "./audit/verdicts.ts";

declare module "vitest" {
  interface TaskMeta {
    /** The tool's row of the audit, read by `npm run audit` (scripts/effect-audit.ts). */
    audit?: Verdict;
  }
}

const SCENARIOS = { ...READ_SCENARIOS, ...TASK_SCENARIOS, ...MORE_SCENARIOS };

describe("column classes", () => {
  it("every column of every table of the database has one class, and every class names a real column", async () => {
    const tables = await schemaTables();
    const actual = Object.fromEntries(tables.map((t) => [t.name, [...t.columns].sort()]));
    const classified = Object.fromEntries(Object.entries(COLUMN_CLASSES).map(([t, cols]) => [t, Object.keys(cols).sort()]));
    expect(tables.map((t) => t.name)).toContain("tasks");
    expect(tables.some((t) => t.name.startsWith("task_fts"))).toBe(false);
    expect(classified).toEqual(actual);
  });
});

describe("effect audit: every tool against its hints", () => {
  let populated: World;
  beforeAll(async () => {
    fakeOutbound();
    populated = await openWorld();
    await populate(populated);
  }, 60_000);
  afterAll(() => closeWorld(populated));

  it("every tool has a scenario, and every scenario is a tool", () => {
    expect(TOOL_NAMES.filter((t) => !SCENARIOS[t]?.length)).toEqual([]);
    expect(Object.keys(SCENARIOS).sort()).toEqual([...TOOL_NAMES].sort());
  });

  for (const tool of TOOL_NAMES) {
    it(tool, async ({ task }) => {
      const world = WRITE_TOOLS.has(tool) ? await openWorld() : populated;
      try {
        const observed = [];
        for (const path of SCENARIOS[tool] ?? []) observed.push(await observePath(world, tool, path));
        const verdict = judge(tool, observed);
        task.meta.audit = verdict;
        expect(verdict.mismatches).toEqual([]);
      } finally {
        if (world !== populated) await closeWorld(world);
      }
    });
  }
});
