import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import type { Env } from "../src/env.ts";
import type { Principal } from "../src/domain/principal.ts";
import { callTool, describeAllTools } from "../src/mcp/registry.ts";
import { connect, ERAS, seedAccount } from "./helpers.ts";

/**
 * An input field takes null only where null says something that leaving the
 * field out does not (clear a due time, unassign, follow the account's
 * default): everywhere else the field is optional, and null is refused with
 * the field's name. Strict validators (the Inspector's) warn on every nullable
 * type, and a model reading `["string", "null"]` cannot tell what null does.
 */

/** Each input field where null has its own meaning, with the words of its description that say what null does. */
const NULL_MEANS: Record<string, string> = {
  "assign_task.assignee": "null unassigns",
  "move_task.project_id": "null: none",
  "snooze_task.until": "null wakes it",
  "update_project.default_auto_ok": "null: the account's default",
  "update_task.due_at": "null clears it",
  "update_task.estimate_minutes": "null clears it",
  "update_task.recurrence": "null stops repeating",
};

type Schema = Record<string, any>;

function allowsNull(s: Schema): boolean {
  if (s.type === "null" || (Array.isArray(s.type) && s.type.includes("null"))) return true;
  if (s.const === null || (Array.isArray(s.enum) && s.enum.includes(null))) return true;
  return ["anyOf", "oneOf"].some((k) => Array.isArray(s[k]) && (s[k] as Schema[]).some(allowsNull));
}

/** Every field of a schema that takes null, by its path (list items as []), through objects, lists and unions. */
function nullableFields(s: Schema, path: string[] = [], out: Map<string, Schema> = new Map()): Map<string, Schema> {
  if (path.length && allowsNull(s)) out.set(path.join("."), s);
  return fieldsInside(s, path, out);
}

function fieldsInside(s: Schema, path: string[], out: Map<string, Schema>): Map<string, Schema> {
  for (const [k, v] of Object.entries((s.properties ?? {}) as Record<string, Schema>)) nullableFields(v, [...path, k], out);
  if (s.items) nullableFields(s.items, [...path, "[]"], out);
  for (const k of ["anyOf", "oneOf"]) for (const branch of (s[k] ?? []) as Schema[]) fieldsInside(branch, path, out);
  return out;
}

const PERSON: Principal = { tokenId: "tok_nulls", accountId: "acc_nulls", kind: "human", scope: "write", agentId: null, agentName: null, paused: false, label: "nulls", expiresAt: null, person: null };
const scope = { env: env as unknown as Env, principal: PERSON, requestId: "req_nulls", waitUntil: () => {} };

describe("null in an input means something, or is refused", () => {
  it("every nullable input field of every tool is one where null has its own meaning, and its description says what null does", () => {
    const found = new Map<string, Schema>();
    for (const d of describeAllTools()) for (const [path, s] of nullableFields(d.inputSchema)) found.set(`${d.name}.${path}`, s);
    expect([...found.keys()].sort()).toEqual(Object.keys(NULL_MEANS).sort());
    for (const [field, words] of Object.entries(NULL_MEANS)) {
      expect(found.get(field)?.description, field).toContain(words);
    }
  });

  it("null for any other field of any tool is an argument error that names the field and says to leave it out or what to send", async () => {
    let checked = 0;
    for (const d of describeAllTools()) {
      const required = new Set((d.inputSchema.required ?? []) as string[]);
      for (const field of Object.keys(d.inputSchema.properties ?? {})) {
        if (NULL_MEANS[`${d.name}.${field}`]) continue;
        const r = await callTool(scope, d.name, { [field]: null });
        const text = (r.content[0] as { text: string }).text;
        expect(r.isError, `${d.name}.${field}`).toBe(true);
        expect(text, `${d.name}.${field}`).toMatch(new RegExp(`(^|[ .;])${field}: must not be null; ${required.has(field) ? "send " : "leave it out, or send "}`));
        expect(text, `${d.name}.${field}`).not.toMatch(/received null/);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(200);
    // Inside a list too.
    const nested = await callTool(scope, "decompose_task", { task_id: "tsk_0000000000000000", subtasks: [{ title: "a", notes: null }] });
    expect((nested.content[0] as { text: string }).text).toBe(
      "Invalid arguments for decompose_task. subtasks.0.notes: must not be null; leave it out, or send a string. Fix this field and call again (tools/list has the input schema).",
    );
  });

  for (const era of ERAS) {
    it(`${era}: link_calendar_event's url is left out for none; null is refused by name, and a linked event's repeat without url is the same link`, async () => {
      const acc = await seedAccount(`Null url ${era}`);
      const client = await connect(acc.human, era);
      const task = (await client.ok("create_task", { title: "Has an event" })).task.id;
      const event = { task_id: task, provider: "google", event_id: "ev_null", title: "Call", starts_at: "2026-05-04T07:00:00Z", ends_at: "2026-05-04T08:00:00Z" };
      expect(await client.fails("link_calendar_event", { ...event, url: null })).toBe(
        "Invalid arguments for link_calendar_event. url: must not be null; leave it out, or send a string (https link to the event). Fix this field and call again (tools/list has the input schema).",
      );
      const first = await client.ok("link_calendar_event", event);
      expect(first.link.url).toBeNull();
      expect(await client.ok("link_calendar_event", event)).toEqual({ ...first, created: false, changed: false });
      // A field where null means something takes it: null unassigns.
      expect((await client.ok("assign_task", { task_id: task, assignee: "human" })).task.assignee).toBe("human");
      expect((await client.ok("assign_task", { task_id: task, assignee: null })).task.assignee).toBeNull();
      await client.close();
    });
  }
});
