import { describe, expect, it } from "vitest";
import { HUMAN_TOOLS, isToolName, TOOL_NAMES } from "../src/catalog/effects.ts";
import { HUMAN_ONLY } from "../src/catalog/permissions.ts";
import { connect, seedAccount, snapshotDb } from "./helpers.ts";

const TOOL_WORD = new RegExp(`\\b(${TOOL_NAMES.join("|")})\\b`, "g");

describe("an agent refused a human-only tool is told what happens instead", () => {
  it("every human-only tool has its own refusal, naming what an agent can call instead", async () => {
    const acc = await seedAccount();
    const texts = new Map<string, string>();
    for (const secret of [acc.agent, acc.agentRead]) {
      const client = await connect(secret);
      const before = await snapshotDb();
      for (const name of HUMAN_TOOLS) {
        expect(HUMAN_ONLY[name], `${name} has an entry in HUMAN_ONLY`).toBeDefined();
        const text = await client.fails(name, {});
        expect(text.startsWith(`${name} `), text).toBe(true);
        expect(text).toContain("a person must do it");
        expect(text).toContain(HUMAN_ONLY[name]!.instead);
        const mentioned = [...text.matchAll(TOOL_WORD)].map((m) => m[1]).filter((t) => t !== name);
        expect(mentioned.length, `${name} names something to call instead`).toBeGreaterThan(0);
        for (const t of mentioned) expect(isToolName(t) && !HUMAN_TOOLS.has(t), `${name} points an agent to ${t}`).toBe(true);
        if (name === "approve_task" || name === "reject_task") expect(text).toContain("list_pending_approvals");
        else expect(text, name).not.toContain("list_pending_approvals");
        texts.set(name, text);
      }
      expect(await snapshotDb()).toBe(before);
      await client.close();
    }
    expect(new Set(texts.values()).size, "no two tools share a refusal").toBe(HUMAN_TOOLS.size);
  });
});
