import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeOutbound } from "./harness.ts";
import { AUDITED_TOOLS, auditTool, closeAudit, enforcementMismatch, openAudit, type Audit, type ConsentVerdict } from "./consent-run.ts";
import type { StateName } from "./consent-situations.ts";
import { everyResultChecked } from "../output-check.ts";

declare module "vitest" {
  interface TaskMeta {
    /** The tool's row of the consent audit in one situation, read by `npm run audit`. */
    consent?: ConsentVerdict;
  }
}

/** The consent audit over some situations: each built once, every write tool observed in it by every caller. */
export function consentAudit(states: StateName[], o: { checkPublished?: boolean } = {}): void {
  const reaching = new Map<string, string[]>();
  for (const state of states) {
    describe(`consent audit: ${state}`, () => {
      let audit: Audit;
      beforeAll(async () => {
        fakeOutbound();
        audit = await openAudit(state);
      }, 60_000);
      afterAll(() => closeAudit(audit));

      for (const tool of AUDITED_TOOLS) {
        it(tool, async ({ task }) => {
          const verdict = await auditTool(audit, tool);
          task.meta.consent = verdict;
          reaching.set(tool, [...(reaching.get(tool) ?? []), ...verdict.reaching.map((r) => `${state}: ${r}`)]);
          expect(verdict.breaches).toEqual([]);
        }, 60_000);
      }
    });
  }
  if (o.checkPublished) {
    describe("consent audit: what each tool publishes", () => {
      it("claim_guarded is true exactly for the tools that reach a held task's rows (by its holder or a person, in some held state)", () => {
        expect(reaching.size).toBe(AUDITED_TOOLS.length);
        const mismatches = AUDITED_TOOLS.map((t) => enforcementMismatch(t, reaching.get(t) ?? [])).filter(Boolean);
        expect(mismatches, mismatches.join("\n")).toEqual([]);
      });
    });
  }
  describe("consent audit: the answers", () => everyResultChecked("the consent audit"));
}
