/**
 * Inputs no tool takes, on every tool: a NUL (or another control character)
 * in any text field, a newline in a one-line field, and a date outside
 * 1970–2200. Each field of each tool's input schema (the detailed one the
 * registry checks against) gets the bad value; the answer is an isError that
 * names the field and says what to send, and nothing is written.
 */
import { describe, expect, it } from "vitest";
import { detailedInputSchema } from "../src/mcp/registry.ts";
import { TOOL_NAMES } from "../src/catalog/effects.ts";
import { MULTILINE_FIELDS } from "../src/mcp/argument-errors.ts";
import { connect, seedAccount, snapshotDb, type TestClient } from "./helpers.ts";

type Schema = Record<string, any>;
interface Leaf {
  path: (string | number)[];
  schema: Schema;
}

/** Every string field of a schema (through objects, lists and nullable unions), with its path. */
function stringFields(s: Schema | undefined, path: (string | number)[] = []): Leaf[] {
  if (!s || typeof s !== "object") return [];
  const branches = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (branches) {
    const found = branches.flatMap((b) => stringFields(b, path));
    return found.filter((f, i) => found.findIndex((g) => g.path.join(".") === f.path.join(".")) === i);
  }
  if (s.type === "string") return [{ path, schema: s }];
  if (s.type === "object") return Object.entries((s.properties ?? {}) as Record<string, Schema>).flatMap(([k, v]) => stringFields(v, [...path, k]));
  if (s.type === "array") return stringFields(s.items, [...path, 0]);
  return [];
}

/** Arguments with `value` at `path` and nothing else. */
function argsWith(path: (string | number)[], value: string): Record<string, unknown> {
  let v: unknown = value;
  for (let i = path.length - 1; i >= 0; i--) v = typeof path[i] === "number" ? [v] : { [path[i]]: v };
  return v as Record<string, unknown>;
}

/** Calls the tool as the person, or as the agent where only an agent may call it. */
async function callAs(human: TestClient, agent: TestClient, name: string, args: Record<string, unknown>) {
  const r = await human.call(name, args);
  if (r.isError && !r.text.startsWith("Invalid arguments")) return agent.call(name, args);
  return r;
}

const ALL = TOOL_NAMES.flatMap((name) => stringFields(detailedInputSchema(name)).map((f) => ({ name, ...f })));

describe("inputs no tool takes", () => {
  it("has fields to try: text, lists of text and dates on many tools", () => {
    expect(ALL.length).toBeGreaterThan(100);
    expect(ALL.filter((f) => f.schema.format === "date-time" || f.schema.format === "date").length).toBeGreaterThanOrEqual(12);
  });

  it("a NUL in any text field of any tool is refused, naming the field", async () => {
    const acc = await seedAccount();
    const human = await connect(acc.human);
    const agent = await connect(acc.agent);
    const before = await snapshotDb();
    const missed: string[] = [];
    for (const f of ALL) {
      const field = f.path.join(".");
      const r = await callAs(human, agent, f.name, argsWith(f.path, "ab\u0000cd"));
      if (!r.isError || !r.text.includes(`${field}: must not contain control characters, found U+0000 at character 3`)) missed.push(`${f.name} ${field}: ${r.text.slice(0, 160)}`);
    }
    expect(missed).toEqual([]);
    expect(await snapshotDb()).toBe(before);
    await human.close();
    await agent.close();
  });

  it("newlines and tabs are text in notes, comments, descriptions and the like, and refused in a one-line field", async () => {
    const acc = await seedAccount();
    const human = await connect(acc.human);
    expect(await human.fails("create_task", { title: "Two\nlines" })).toContain("title: must not contain control characters, found U+000A at character 4; remove it (it is one line of text");
    expect(await human.fails("create_task", { title: "Bell\u0007" })).toContain("title: must not contain control characters, found U+0007");
    expect(await human.fails("create_task", { title: "ok", notes: "a\u001bb" })).toContain("notes: must not contain control characters, found U+001B at character 2; remove it (newlines and tabs are fine)");
    const { task } = await human.ok("create_task", { title: "Plan", notes: "Line one\n\tindented\r\nline three" });
    expect(task.notes).toBe("Line one\n\tindented\r\nline three");
    await human.ok("comment_on_task", { task_id: task.id, body: "First\n\nSecond" });
    for (const f of ["body", "notes", "description", "question", "reason"]) expect(MULTILINE_FIELDS.has(f)).toBe(true);
    await human.close();
  });

  it("a date outside 1970–2200 in any date field of any tool is refused, naming the field and the range", async () => {
    const acc = await seedAccount();
    const human = await connect(acc.human);
    const agent = await connect(acc.agent);
    const before = await snapshotDb();
    const missed: string[] = [];
    for (const f of ALL.filter((x) => x.schema.format === "date-time" || x.schema.format === "date")) {
      const field = f.path.join(".");
      for (const bad of f.schema.format === "date" ? ["0000-01-01", "9999-12-31", "1969-12-31", "2201-01-01"] : ["0000-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "1969-12-31T23:59:59Z", "2201-01-01T02:00:00+01:00"]) {
        const r = await callAs(human, agent, f.name, argsWith(f.path, bad));
        if (!r.isError || !r.text.includes(`${field}: ${bad} is outside the years 1970–2200 (UTC)`)) missed.push(`${f.name} ${field} ${bad}: ${r.text.slice(0, 200)}`);
      }
    }
    expect(missed).toEqual([]);
    expect(await snapshotDb()).toBe(before);
    const { task } = await human.ok("create_task", { title: "Edge", due_at: "2200-12-31T12:00:00Z" });
    expect(task.due_at).toBe("2200-12-31T12:00:00.000Z");
    await human.ok("update_task", { task_id: task.id, due_at: "1970-01-01T00:00:00Z" });
    await human.close();
    await agent.close();
  });
});
