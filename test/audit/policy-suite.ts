import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Era } from "../helpers.ts";
import { fakeOutbound } from "./harness.ts";
import { auditPolicyTool, closePolicyAudit, openPolicyAudit, POLICY_TOOLS, type PolicyAudit, type PolicyVerdictRow } from "./policy-run.ts";
import { everyResultChecked } from "../output-check.ts";

declare module "vitest" {
  interface TaskMeta {
    /** The tool's row of the policy situations in one era, read by `npm run audit`. */
    policy?: PolicyVerdictRow;
  }
}

/** The policy situations of the consent audit in one protocol era: every write tool an agent may call, allowed, asked and denied. */
export function policyAudit(era: Era): void {
  describe(`consent audit: policy situations (${era})`, () => {
    let audit: PolicyAudit;
    beforeAll(async () => {
      fakeOutbound();
      audit = await openPolicyAudit(era);
    }, 60_000);
    afterAll(() => closePolicyAudit(audit));

    for (const tool of POLICY_TOOLS) {
      it(tool, async ({ task }) => {
        const verdict = await auditPolicyTool(audit, tool);
        task.meta.policy = verdict;
        expect(verdict.breaches).toEqual([]);
      }, 60_000);
    }
  });
  describe("consent audit: the policy situations' answers", () => everyResultChecked("the policy situations"));
}
