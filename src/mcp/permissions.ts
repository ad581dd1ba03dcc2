import type { Principal } from "../domain/principal.ts";
import { HUMAN_TOOLS, WRITE_TOOLS, type ToolName } from "./effects.ts";

/**
 * Why this principal may not call this tool, or null when it may. The one
 * permission rule: tools/list filters with it and tools/call enforces it.
 */
export function refusal(p: Principal, name: ToolName): string | null {
  if (HUMAN_TOOLS.has(name) && p.kind !== "human") {
    return `${name} gives or takes away consent, so a person must do it with a human token; an agent's token can never call it. Ask a person (list_pending_approvals shows what waits for them).`;
  }
  if (WRITE_TOOLS.has(name)) {
    if (p.scope !== "write") {
      return `${name} changes data and needs a token with scope write; this token has scope read and may only call read tools.`;
    }
    if (p.paused) {
      return `${name} changes data, but agent ${p.agentName} is paused by a person: its tokens may only read until resume_agent.`;
    }
  }
  return null;
}
