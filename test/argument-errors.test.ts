import { describe, expect, it } from "vitest";
import { describeAllTools } from "../src/mcp/registry.ts";
import { connect, ERAS, MCP_URL, seedAccount, snapshotDb, workerFetch } from "./helpers.ts";

const TOOLS = describeAllTools();
const requiredOf = (d: (typeof TOOLS)[number]) => (d.inputSchema.required ?? []) as string[];

describe("argument errors read like each other", () => {
  for (const era of ERAS) {
    it(`${era}: arguments that are not an object name \`arguments\`, say it must be an object and what to send, for every tool`, async () => {
      const acc = await seedAccount();
      const client = await connect(acc.human, era);
      const before = await snapshotDb();
      for (const d of TOOLS) {
        for (const [bad, got] of [[["x"], "an array"], ["title", "a string"], [42, "a number"]] as const) {
          const r = await client.call(d.name, bad as never);
          expect(r.isError, `${d.name} with ${JSON.stringify(bad)}`).toBe(true);
          expect(r.text).toContain(`Invalid arguments for ${d.name}. arguments: must be an object of named fields, got ${got}. Send e.g. {`);
          for (const field of requiredOf(d)) expect(r.text, d.name).toContain(`"${field}": `);
          expect(r.text).not.toMatch(/expected record|"code"|invalid_type/);
        }
      }
      expect(await snapshotDb()).toBe(before);
      await client.close();
    });
  }

  it("a missing required field is named as required, with what to send, on every tool that has one", async () => {
    const acc = await seedAccount();
    const client = await connect(acc.human);
    for (const d of TOOLS.filter((t) => requiredOf(t).length > 0)) {
      const text = await client.fails(d.name, {});
      for (const field of requiredOf(d)) expect(text, d.name).toMatch(new RegExp(`(^|[ .;])${field}: required; send `));
      expect(text, d.name).not.toMatch(/received undefined/);
      expect(text, d.name).toMatch(/Fix th(is|ese) fields? and call again/);
    }
    expect(await client.fails("create_task", {})).toBe(
      "Invalid arguments for create_task. title: required; send a string. Fix this field and call again (tools/list has the input schema).",
    );
    expect(await client.fails("comment_on_task", { body: "hi" })).toContain("task_id: required; send a string (task id (tsk_…))");
    expect(await client.fails("decompose_task", { task_id: "tsk_0000000000000000", subtasks: [{}] })).toContain("subtasks.0.title: required; send a string");
    expect(await client.fails("set_step_status", { step_id: "stp_0000000000000000" })).toContain("status: required; send one of pending, in_progress, done, skipped");
    await client.close();
  });

  it("over raw JSON-RPC: null arguments mean no arguments, an array is an argument error with the request id", async () => {
    const acc = await seedAccount();
    for (const [args, isError] of [[null, false], [[], true]] as const) {
      const res = await workerFetch(MCP_URL, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          authorization: `Bearer ${acc.human}`,
          "mcp-protocol-version": "2025-06-18",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "whoami", arguments: args } }),
      });
      const text = await res.text();
      const message = JSON.parse(text.startsWith("event:") ? text.split("data: ")[1] : text);
      expect(message.id).toBe(7);
      expect(message.result?.isError === true, text).toBe(isError);
    }
  });
});
