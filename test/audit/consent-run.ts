import { HUMAN_TOOLS, TOOL_NAMES, WRITE_TOOLS, type ToolName } from "../../src/catalog/effects.ts";
import { toolMeta } from "../../src/catalog/contract.ts";
import { connect, createToken, type TestClient, type ToolCallResult } from "../helpers.ts";
import { closeWorld, RIVAL } from "./harness.ts";
import { diff, restoreAccount, snapshotAccount } from "./observe.ts";
import { buildSituation, type Situation, type StateName } from "./consent-situations.ts";
import { judge, judgeAnswer, type Caller } from "./consent-judge.ts";
import { routesOf } from "./consent-routes.ts";
import { heldTasks, judgeShown, readShown, type HeldTask, type Shown } from "./consent-shows.ts";

/** One tool's row of the consent audit in one situation, read by `npm run -s audit` (scripts/effect-audit.ts). */
export interface ConsentVerdict {
  tool: ToolName;
  state: StateName;
  routes: number;
  calls: number;
  breaches: string[];
  /** Routes on which the person's or the holder's call changed the held task's rows. */
  reaching: string[];
}

/** What each tool publishes as claim-guarded, as tools/list carries it (`_meta["dev.taskgate/enforcement"]`). */
const CLAIM_GUARDED = new Set(TOOL_NAMES.filter((t) => (toolMeta(t)["dev.taskgate/enforcement"] as { claim_guarded: boolean }).claim_guarded));

/** The write tools, each observed in every situation. */
export const AUDITED_TOOLS = TOOL_NAMES.filter((t) => WRITE_TOOLS.has(t));

interface Callers {
  holder: TestClient; // the agent bot, modern era
  rival: TestClient; // the agent rival, modern era
  rivalLegacy: TestClient; // the agent rival, legacy era
  reader: TestClient; // the person's read token, legacy era
  person: TestClient; // modern era
}

export interface Audit {
  sit: Situation;
  callers: Callers;
  /** Whether the account's rows are as built (nothing changed since the last restore). */
  clean: boolean;
  /** The situation's held tasks, and what each shows its holder as built: read once, since every call starts from the rows as built. */
  held: HeldTask[];
  shown: Map<string, Shown>;
}

export async function openAudit(state: StateName): Promise<Audit> {
  const sit = await buildSituation(state);
  const rivalModern = await createToken({ accountId: sit.world.acc.accountId, kind: "agent", scope: "write", agent: RIVAL });
  const callers: Callers = {
    holder: sit.world.agent,
    rival: await connect(rivalModern.secret, "modern"),
    rivalLegacy: sit.world.rival,
    reader: sit.world.reader,
    person: sit.world.person,
  };
  // Tokens made after the snapshot: take it again so restoring keeps them.
  sit.base = await snapshotAccount(sit.world.acc.accountId);
  const held = heldTasks(sit.base);
  const shown = new Map<string, Shown>();
  for (const h of held) shown.set(h.id, await readShown(readerOf(callers, h), h.id));
  return { sit, callers, clean: true, held, shown };
}

/** A held task is read as its holder reads it: the agent bot through its own client, the person through theirs. */
function readerOf(callers: Callers, h: HeldTask): TestClient {
  if (h.holder === "human") return callers.person;
  if (h.holder === "bot") return callers.holder;
  throw new Error(`the audit has no client for ${h.holder}, who holds ${h.id}`);
}

export async function closeAudit(a: Audit): Promise<void> {
  await a.callers.rival.close();
  await closeWorld(a.sit.world);
}

async function call(client: TestClient, tool: ToolName, args: Record<string, unknown>): Promise<ToolCallResult> {
  try {
    return await client.call(tool, args);
  } catch (e) {
    return { isError: true, text: String((e as Error).message ?? e), structured: {}, meta: {} };
  }
}

/**
 * Every route of `tool` in the audit's situation, by every caller that
 * applies: the holder and the rival (modern era) on every route; the rival
 * in the legacy era and the person's read token on every route of the
 * claimed state and the first route of the others; the person on every
 * route of the claimed state (where what it reaches shows the route is live).
 */
export async function auditTool(a: Audit, tool: ToolName): Promise<ConsentVerdict> {
  const { sit } = a;
  const routes = routesOf(tool, sit);
  const verdict: ConsentVerdict = { tool, state: sit.state, routes: routes.length, calls: 0, breaches: [], reaching: [] };
  const claimed = sit.state === "claimed";
  for (const [i, route] of routes.entries()) {
    const everyRoute = claimed || i === 0;
    const plan: [keyof Callers, Caller][] = [
      ["holder", { kind: "agent", name: "bot" }],
      ["rival", { kind: "agent", name: RIVAL }],
      ...(everyRoute ? ([["rivalLegacy", { kind: "agent", name: RIVAL }], ["reader", { kind: "reader", name: "human" }]] as [keyof Callers, Caller][]) : []),
      ...(claimed ? ([["person", { kind: "human", name: "human" }]] as [keyof Callers, Caller][]) : []),
    ];
    for (const [who, caller] of plan) {
      if (!a.clean) {
        await restoreAccount(sit.world.acc.accountId, sit.base);
        a.clean = true;
      }
      const answer = await call(a.callers[who], tool, route.args);
      verdict.calls++;
      const after = await snapshotAccount(sit.world.acc.accountId);
      const changes = diff(sit.base, after);
      const changed = changes.some((c) => c.effect !== "presence");
      if (changed) a.clean = false;
      const judged = judge(sit.state, sit.ids, caller, sit.base, after, changes);
      const breaches = [...judged.breaches, ...judgeAnswer(tool, caller, route.args, answer, a.held, sit.base)];
      // What each held task shows its holder, read again only when some row of the account changed and the caller is not
      // its holder (its holder and a person may change anything it shows; what nothing changed shows as built).
      const others = changed && caller.kind === "agent" ? a.held.filter((h) => h.holder !== caller.name) : [];
      const linksMoved = changes.some((c) => c.table === "calendar_links");
      const shown = await Promise.all(others.map((h) => readShown(readerOf(a.callers, h), h.id, linksMoved || a.shown.get(h.id)!.missing ? undefined : a.shown.get(h.id)!.links)));
      others.forEach((h, i) => breaches.push(...judgeShown(caller, h, a.shown.get(h.id)!, shown[i], after)));
      for (const b of breaches) verdict.breaches.push(`${who} ${route.name || "(no record named)"}: ${b}`);
      if ((who === "person" || who === "holder") && judged.reachedX) verdict.reaching.push(route.name);
    }
  }
  return verdict;
}

/**
 * What the server publishes against what the audit saw: a tool whose
 * person's call reaches a held task's rows must be published claim-guarded
 * (`_meta["dev.taskgate/enforcement"].claim_guarded`), and one that reaches
 * none must not. People-only tools are refused to agents outright.
 */
export function enforcementMismatch(tool: ToolName, reaching: string[]): string | null {
  // Only a person or the holder reaches; whether anyone else is refused there is the breaches' part.
  if (HUMAN_TOOLS.has(tool)) return null;
  // Comments stay open to everyone (C1): the holder's comment renews its lease, anyone else's changes nothing of the task.
  if (tool === "comment_on_task") return CLAIM_GUARDED.has(tool) ? `${tool} is published claim-guarded, but comments stay open to everyone` : null;
  const reaches = reaching.length > 0;
  const published = CLAIM_GUARDED.has(tool);
  if (reaches === published) return null;
  return reaches
    ? `${tool} reaches a held task's rows (${reaching.slice(0, 3).join("; ")}) but is not published claim-guarded`
    : `${tool} is published claim-guarded but no route reached a held task's rows`;
}
