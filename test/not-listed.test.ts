import { describe, expect, it } from "vitest";
import { HUMAN_TOOLS, TOOL_NAMES, WRITE_TOOLS, type ToolName } from "../src/catalog/effects.ts";
import { NAMED_UP_TO, notListed, type NotListedReason } from "../src/catalog/not-listed.ts";
import { refusal } from "../src/catalog/permissions.ts";
import { decide, policyOf, rulesText } from "../src/catalog/policy.ts";
import { ALL_TOOLS_SELECTED, outsideSelection, selectTools, TOOLSET_NAMES } from "../src/catalog/toolsets.ts";
import type { Principal } from "../src/domain/principal.ts";
import { listToolsFor } from "../src/mcp/registry.ts";
import { INSTRUCTIONS } from "../src/mcp/server.ts";
import { connect, ERAS, MCP_URL, seedAccount, type ConnectOptions } from "./helpers.ts";

/**
 * A tool a connection may not call is not listed; the server's instructions
 * and whoami say, in one line, which tools this connection lacks and why.
 */

const PEOPLE_ONLY = [...TOOL_NAMES].filter((n) => HUMAN_TOOLS.has(n));
const AGENT_WRITES = [...TOOL_NAMES].filter((n) => WRITE_TOOLS.has(n) && !HUMAN_TOOLS.has(n)).length;
const WRITES = [...TOOL_NAMES].filter((n) => WRITE_TOOLS.has(n)).length;
const PEOPLE_ONLY_PHRASE = `${PEOPLE_ONLY.length} people-only tools (only a person's token may call them: ${PEOPLE_ONLY.join(", ")})`;
const TAIL = ". Calling one of them is refused for the same reason.";
const NOTHING = `Not listed for this connection: nothing; all ${TOOL_NAMES.length} tools are listed.`;

const base: Principal = { tokenId: "tok_x", accountId: "acc_x", kind: "human", scope: "write", agentId: null, agentName: null, paused: false, label: "x", expiresAt: null, person: null };
const PRINCIPALS: Record<string, Principal> = {
  "person write": base,
  "person read": { ...base, scope: "read" },
  "agent write": { ...base, kind: "agent", agentId: "agt_x", agentName: "bot" },
  "agent read": { ...base, kind: "agent", scope: "read", agentId: "agt_x", agentName: "bot" },
  "agent paused": { ...base, kind: "agent", agentId: "agt_x", agentName: "bot", paused: true },
  "agent read paused": { ...base, kind: "agent", scope: "read", agentId: "agt_x", agentName: "bot", paused: true },
  "agent with a policy": {
    ...base, kind: "agent", agentId: "agt_x", agentName: "bot",
    policy: { agent: rulesText([{ decision: "deny", toolset: "calendar" }, { decision: "ask", effect: "destructive" }]), connection: rulesText([{ decision: "deny", tool: "delete_label" }]) },
  },
};
const SELECTIONS = [
  ALL_TOOLS_SELECTED,
  selectTools([], true),
  ...TOOLSET_NAMES.map((n) => selectTools([n], false)),
  ...TOOLSET_NAMES.map((n) => selectTools([n], true)),
  selectTools(["tasks,runs"], false),
  selectTools(["tasks,runs", "runs,agent"], true),
];

/** What a call of this tool on this connection answers, by the registry's order: the principal's rule, then the connection's. */
function refusedWith(p: Principal, selection: (typeof SELECTIONS)[number], name: ToolName): string | null {
  const denied = p.kind === "agent" ? decide(policyOf(p), name) : null;
  return refusal(p, name) ?? (selection.tools.has(name) ? null : outsideSelection(selection, name)) ?? (denied?.decision === "deny" ? denied.reason : null);
}

describe("the line of what a connection does not list, over the whole registry", () => {
  it("every tool the list leaves out is in exactly one group, whose reason is what a call of it is refused with; listed tools are in none", () => {
    const words: Record<NotListedReason, RegExp> = {
      human_only: /^\S+ .* a person must do it/,
      read_scope: /needs a token with scope write/,
      paused: /is paused by a person/,
      toolsets: /is outside this connection's toolsets/,
      readonly_connection: /^\S+ writes, and this connection is read-only/,
      policy: /^Denied by (the agent's|this connection's) policy\.$/,
    };
    for (const [who, p] of Object.entries(PRINCIPALS)) {
      for (const selection of SELECTIONS) {
        const label = `${who} on ${selection.key}`;
        const { groups, line } = notListed(p, selection);
        const listed = new Set(listToolsFor(p, selection).map((d) => d.name));
        const grouped = groups.flatMap((g) => g.tools);
        expect(new Set(grouped).size, `${label}: no tool in two groups`).toBe(grouped.length);
        expect([...grouped].sort(), label).toEqual(TOOL_NAMES.filter((n) => !listed.has(n)).sort());
        for (const g of groups) {
          expect(g.tools.length, label).toBeGreaterThan(0);
          expect(g.tools, `${label}: catalog order`).toEqual(TOOL_NAMES.filter((n) => g.tools.includes(n)));
          for (const name of g.tools) expect(refusedWith(p, selection, name), `${label}: ${name}`).toMatch(words[g.reason]);
          // The line counts each group, and names its tools when there are few.
          expect(line, label).toMatch(new RegExp(`(: |; )${g.tools.length} `));
          if (g.tools.length <= NAMED_UP_TO) expect(line, label).toContain(g.tools.join(", "));
        }
        expect(line, label).not.toContain("\n");
        expect(line.startsWith("Not listed for this connection: "), label).toBe(true);
        if (groups.length === 0) expect(line, label).toBe(NOTHING);
        // Kept per principal class and selection: tools/list and every token's resolution may ask for it.
        expect(notListed({ ...p, tokenId: "tok_other", accountId: "acc_other" }, selection), label).toBe(notListed(p, selection));
      }
    }
  });
});

/** The line a connection's instructions end with, and whoami's not_listed, through a real client. */
async function seen(secret: string, era: (typeof ERAS)[number], opts: ConnectOptions = {}) {
  const client = await connect(secret, era, opts);
  const whoami = (await client.ok("whoami")).not_listed as string;
  const instructions = client.instructions ?? "";
  await client.close();
  return { whoami, instructions };
}

describe("instructions and whoami say what this connection does not list", () => {
  for (const era of ERAS) {
    it(`${era}: a read token, an agent, a paused agent, a toolset-restricted connection and a person's full token`, async () => {
      const acc = await seedAccount(`Not listed ${era}`, "bot");
      const expected: [string, string, ConnectOptions | undefined, string][] = [
        ["a person's read token", acc.humanRead, undefined, `Not listed for this connection: ${WRITES} write tools (this token has scope read)${TAIL}`],
        ["an agent's write token", acc.agent, undefined, `Not listed for this connection: ${PEOPLE_ONLY_PHRASE}${TAIL}`],
        ["an agent's read token", acc.agentRead, undefined, `Not listed for this connection: ${PEOPLE_ONLY_PHRASE}; ${AGENT_WRITES} write tools (this token has scope read)${TAIL}`],
        [
          "a person on /mcp/x/approvals,digest/readonly",
          acc.human,
          { url: `${MCP_URL}/x/approvals,digest/readonly` },
          `Not listed for this connection: ${TOOL_NAMES.length - 5 - 3} tools outside this connection's toolsets (approvals,digest); ` +
            `3 write tools (this connection is read-only: request_approval, approve_task, reject_task)${TAIL}`,
        ],
        [
          "an agent with the agent preset",
          acc.agent,
          { headers: { "X-MCP-Toolsets": "agent" } },
          `Not listed for this connection: ${PEOPLE_ONLY_PHRASE}; ${TOOL_NAMES.length - PEOPLE_ONLY.length - 20} tools outside this connection's toolsets (agent)${TAIL}`,
        ],
      ];
      for (const [who, secret, opts, line] of expected) {
        const { whoami, instructions } = await seen(secret, era, opts);
        expect(whoami, who).toBe(line);
        expect(instructions, who).toBe(`${INSTRUCTIONS}\n${line}`);
      }

      // A person's full token lacks nothing: whoami says so, and the instructions carry no such line.
      const person = await seen(acc.human, era);
      expect(person.whoami).toBe(NOTHING);
      expect(person.instructions).toBe(INSTRUCTIONS);

      // A paused agent: its writes are not listed, for as long as the pause lasts.
      const human = await connect(acc.human, era);
      await human.ok("pause_agent", { agent: "bot" });
      const paused = await seen(acc.agent, era);
      const pausedLine =
        `Not listed for this connection: ${PEOPLE_ONLY_PHRASE}; ${AGENT_WRITES} write tools ` +
        `(a person paused this agent: its tokens only read until a person's resume_agent)${TAIL}`;
      expect(paused.whoami).toBe(pausedLine);
      expect(paused.instructions).toBe(`${INSTRUCTIONS}\n${pausedLine}`);
      await human.ok("resume_agent", { agent: "bot" });
      expect((await seen(acc.agent, era)).whoami).toBe(`Not listed for this connection: ${PEOPLE_ONLY_PHRASE}${TAIL}`);
      await human.close();
    });
  }
});
