import { describe, expect, it } from "vitest";
import { connect, ERAS, seedAccount, workerFetch } from "./helpers.ts";

describe("both protocol eras", () => {
  for (const era of ERAS) {
    it(`${era}: lists and calls tools`, async () => {
      const acc = await seedAccount();
      const client = await connect(acc.human, era);
      if (era === "modern") expect(client.protocolVersion).toBe("2026-07-28");
      else expect(client.protocolVersion).toMatch(/^2025-/);
      const tools = await client.listTools();
      expect(tools.map((t) => t.name)).toContain("create_task");
      const { task } = await client.ok("create_task", { title: "Write the report" });
      expect(task.title).toBe("Write the report");
      const got = await client.ok("get_task", { task_id: task.id });
      expect(got.task).toEqual(task);
      await client.close();
    });
  }
});

describe("http edges", () => {
  it("health", async () => {
    const res = await workerFetch("http://x/health");
    expect(await res.json()).toMatchObject({ ok: true });
  });
});
