import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COLUMN_CLASSES } from "../src/domain/columns.ts";
import { HUMAN_TOOLS, TOOL_NAMES, WRITE_TOOLS, type ToolName } from "../src/catalog/effects.ts";
import { closeWorld, fakeOutbound, observePath, openWorld, type World } from "./audit/harness.ts";
import { diff, schemaTables } from "./audit/observe.ts";
import { call, change, observed, snapshot } from "./audit/self-check.ts";
import { READ_SCENARIOS } from "./audit/scenarios-read.ts";
import { MORE_SCENARIOS } from "./audit/scenarios-more.ts";
import { TASK_SCENARIOS } from "./audit/scenarios-tasks.ts";
import { populate } from "./audit/states.ts";
import { judge, type Verdict } from "./audit/verdicts.ts";
import { everyResultChecked } from "./output-check.ts";

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
  everyResultChecked("the effect audit");
});

describe("the audit's own verdicts", () => {
  const refusedBoth = (tool: ToolName) => ({
    refusedTo: [
      ...(HUMAN_TOOLS.has(tool) ? [{ who: "an agent", call: call({ isError: true }) }] : []),
      { who: "a read token", call: call({ isError: true }) },
    ],
  });
  const mismatches = (tool: ToolName, first: Parameters<typeof observed>[1], rest: Parameters<typeof observed>[2] = {}) =>
    judge(tool, [observed(tool, first, { ...(WRITE_TOOLS.has(tool) ? refusedBoth(tool) : {}), ...rest })]).mismatches;

  it("pass a tool that does what its hints say", () => {
    expect(mismatches("block_task", { changes: [change("lifecycle", "tasks", "status"), change("bookkeeping", "activity")] })).toEqual([]);
    expect(mismatches("get_task", { changes: [change("presence", "tokens", "last_used_at")] })).toEqual([]);
  });

  it("catch each kind of mismatch", () => {
    expect(mismatches("get_task", { changes: [change("bookkeeping", "activity")] })).toEqual([expect.stringMatching(/read, but the call changed/)]);
    expect(mismatches("block_task", { changes: [change("replaced", "tasks", "blocked_reason")] })).toEqual([expect.stringMatching(/not destructive, but the call did: replaced tasks.blocked_reason/)]);
    expect(mismatches("label_task", { changes: [change("removed", "task_labels", undefined, "delete")] })).toEqual([expect.stringMatching(/not destructive/)]);
    expect(mismatches("block_task", { changes: [change("lifecycle", "tasks", "status")] }, { repeat: call({ isError: true, text: "no" }) })).toEqual([
      expect.stringMatching(/convergent, but the repeat was an error/),
    ]);
    expect(mismatches("block_task", { changes: [change("lifecycle", "tasks", "status")] }, { repeat: call({ changes: [change("bookkeeping", "activity")], structured: { task: { id: "tsk_1" } } }) })).toEqual([
      expect.stringMatching(/convergent, but the repeat changed bookkeeping activity/),
    ]);
    expect(mismatches("block_task", { changes: [change("lifecycle", "tasks", "status")] }, { repeat: call({ structured: { task: { id: "tsk_2" } } }) })).toEqual([
      expect.stringMatching(/repeat answered differently: .task.id/),
    ]);
    expect(mismatches("block_task", { changes: [change("lifecycle", "tasks", "status")], fetches: 1 })).toEqual([expect.stringMatching(/closed world, but the call sent 1/)]);
    expect(mismatches("approve_task", { changes: [change("lifecycle", "tasks", "status")] }, { refusedTo: [{ who: "an agent", call: call() }, { who: "a read token", call: call({ isError: true }) }] })).toEqual([
      expect.stringMatching(/an agent's call was not refused/),
    ]);
    expect(mismatches("update_task", { changes: [change("filled", "tasks", "notes")] })).toEqual(["destructive, but no path removed, replaced or cleared anything"]);
    expect(mismatches("create_task", { changes: [change("added")] })).toEqual(["not convergent, but every repeat left the state of the first call"]);
    expect(mismatches("search_context", {})).toEqual(["open world, but no path reached a connected app"]);
    expect(mismatches("block_task", { isError: true, text: "refused" })).toEqual([expect.stringMatching(/the call was refused: refused/)]);
    expect(judge("block_task", []).mismatches).toContain("no scenario");
  });

  it("class each change by the column's class, claims, a block's end, a series' hand-on and removal markers", () => {
    const task = { id: "t", title: "A", notes: "", status: "blocked", blocked_reason: "vendor", assignee: "bot", claim_expires_at: "2030-01-01", series_id: "ser", recurrence: "R", trash_id: null, version: 1 };
    const effects = (after: Record<string, unknown>[]) =>
      diff(snapshot({ tasks: [task] }), snapshot({ tasks: after })).map((c) => `${c.column ?? "row"}:${c.effect}`).sort();
    expect(effects([{ ...task, title: "B", notes: "n", version: 2 }])).toEqual(["notes:filled", "title:replaced", "version:bookkeeping"]);
    expect(effects([{ ...task, blocked_reason: "legal" }])).toEqual(["blocked_reason:replaced"]);
    expect(effects([{ ...task, blocked_reason: null, status: "open" }])).toEqual(["blocked_reason:lifecycle", "status:lifecycle"]);
    expect(effects([{ ...task, blocked_reason: null }])).toEqual(["blocked_reason:cleared"]);
    expect(effects([{ ...task, assignee: "rival", claim_expires_at: "2030-01-02" }])).toEqual(["assignee:lifecycle", "claim_expires_at:lifecycle"]);
    expect(effects([{ ...task, claim_expires_at: "2030-01-02" }])).toEqual(["claim_expires_at:renewed"]);
    expect(effects([{ ...task, assignee: null, claim_expires_at: null }])).toEqual(["assignee:lifecycle", "claim_expires_at:lifecycle"]);
    expect(effects([{ ...task, recurrence: null }, { ...task, id: "next" }])).toEqual(["recurrence:lifecycle", "row:added"]);
    expect(effects([{ ...task, recurrence: null }])).toEqual(["recurrence:cleared"]);
    expect(effects([{ ...task, trash_id: "trs" }])).toEqual(["trash_id:removed"]);
    expect(effects([])).toEqual(["row:removed"]);
  });
});
