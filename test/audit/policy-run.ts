/**
 * The consent audit's policy situations: every write tool an agent may call,
 * by three connections of the same agent (no rules: allow; "ask before
 * writes"; "deny writes"), in one protocol era, judged by rows:
 *
 * - deny changes nothing, and the refusal names its rule;
 * - ask changes nothing but the pending action it records, and the same call
 *   again records no second one;
 * - the agent cannot decide its own pending action, by any of its connections;
 * - the person's approval applies the exact call once: the rows change as the
 *   allowed call changes them, and deciding again changes nothing more;
 * - a rejected action and an expired one apply nothing;
 * - no call, by anyone, changes a policy (only the console's person does).
 *
 * Each situation starts from the same rows (the account restored after each),
 * with the effect audit's own path for the tool (the one the agent takes).
 */
import { env } from "cloudflare:workers";
import { HUMAN_TOOLS, TOOL_NAMES, WRITE_TOOLS, type ToolName } from "../../src/catalog/effects.ts";
import { POLICY_KEY, rulesText, type PolicyRule } from "../../src/catalog/policy.ts";
import { asServer, connect, createToken, type Era, type TestClient, type ToolCallResult } from "../helpers.ts";
import { closeWorld, openWorld, type Path, type World } from "./harness.ts";
import { describeChange, diff, restoreAccount, snapshotAccount, substantive, type Change, type Snapshot } from "./observe.ts";
import { TASK_SCENARIOS } from "./scenarios-tasks.ts";
import { MORE_SCENARIOS } from "./scenarios-more.ts";

/** The `_meta` key of an asked call's pending action. */
export const PENDING_KEY = "dev.taskgate/pending_action";

/** The write tools an agent's token may call: what a policy decides. */
export const POLICY_TOOLS = TOOL_NAMES.filter((t) => WRITE_TOOLS.has(t) && !HUMAN_TOOLS.has(t));

const SCENARIOS = { ...TASK_SCENARIOS, ...MORE_SCENARIOS };

/** What a pending action itself writes, and the bookkeeping every call keeps: not the call's effect. */
const OF_THE_ASKING = new Set(["pending_actions", "activity", "idempotency_keys"]);

export const ASK_WRITES: PolicyRule[] = [{ decision: "ask", effect: "write" }];
export const DENY_WRITES: PolicyRule[] = [{ decision: "deny", effect: "write" }];

export interface PolicyVerdictRow {
  tool: ToolName;
  era: Era;
  calls: number;
  breaches: string[];
}

export interface PolicyAudit {
  era: Era;
  world: World;
  allow: TestClient;
  ask: TestClient;
  deny: TestClient;
  base: Snapshot;
  /** The policy columns as set: no call may change them. */
  policies: string;
}

async function policyColumns(accountId: string): Promise<string> {
  const [agents, tokens] = await env.DB.batch([
    env.DB.prepare("SELECT id, policy FROM agents WHERE account_id = ? ORDER BY id").bind(accountId),
    env.DB.prepare("SELECT id, policy FROM tokens WHERE account_id = ? ORDER BY id").bind(accountId),
  ]);
  return JSON.stringify([agents.results, tokens.results]);
}

/** The world, with the agent bot connected three ways in `era`. */
export async function openPolicyAudit(era: Era): Promise<PolicyAudit> {
  const world = await openWorld();
  const a = world.acc.accountId;
  const [allowTok, askTok, denyTok] = await Promise.all([0, 1, 2].map(() => createToken({ accountId: a, kind: "agent", scope: "write", agent: "bot" })));
  await env.DB.batch([
    env.DB.prepare("UPDATE tokens SET policy = ? WHERE id = ?").bind(rulesText(ASK_WRITES), askTok.id),
    env.DB.prepare("UPDATE tokens SET policy = ? WHERE id = ?").bind(rulesText(DENY_WRITES), denyTok.id),
  ]);
  const [allow, ask, deny] = await Promise.all([allowTok, askTok, denyTok].map((t) => connect(t.secret, era)));
  return { era, world, allow, ask, deny, base: await snapshotAccount(a), policies: await policyColumns(a) };
}

export async function closePolicyAudit(p: PolicyAudit): Promise<void> {
  await Promise.all([p.allow.close(), p.ask.close(), p.deny.close()]);
  await closeWorld(p.world);
}

/** The path a policy situation replays: the first one the agent takes itself, else the first that is not a refusal. */
export function pathFor(tool: ToolName): Path {
  const paths = SCENARIOS[tool] ?? [];
  const found = paths.find((p) => p.by === "agent" && !p.refusal) ?? paths.find((p) => !p.refusal) ?? paths[0];
  if (!found) throw new Error(`${tool} has no scenario in the effect audit`);
  return found;
}

async function call(client: TestClient, tool: string, args: Record<string, unknown>): Promise<ToolCallResult> {
  try {
    return await client.call(tool, args);
  } catch (e) {
    return { isError: true, text: String((e as Error).message ?? e), structured: {}, meta: {} };
  }
}

/** A call and what it changed in the account's rows. */
async function observe(p: PolicyAudit, client: TestClient, tool: string, args: Record<string, unknown>) {
  const before = await snapshotAccount(p.world.acc.accountId);
  const r = await call(client, tool, args);
  const changes = substantive(diff(before, await snapshotAccount(p.world.acc.accountId)));
  return { r, changes };
}

/** The call's own effect: its changes but the pending action's and the bookkeeping every call keeps, as a sorted list of kinds. */
const effectOf = (changes: Change[]) =>
  changes
    .filter((c) => !OF_THE_ASKING.has(c.table))
    .map((c) => `${c.op} ${c.table}${c.column ? `.${c.column}` : ""}: ${c.effect}`)
    .sort();

const outside = (changes: Change[]) => changes.filter((c) => !OF_THE_ASKING.has(c.table));

/** Back to the rows as built, then the path's state built again: each decision starts from the same place. */
async function fresh(p: PolicyAudit, tool: ToolName): Promise<Record<string, unknown>> {
  await restoreAccount(p.world.acc.accountId, p.base);
  return pathFor(tool).setup(p.world);
}

export async function auditPolicyTool(p: PolicyAudit, tool: ToolName): Promise<PolicyVerdictRow> {
  const v: PolicyVerdictRow = { tool, era: p.era, calls: 0, breaches: [] };
  const breach = (what: string) => v.breaches.push(what);
  const person = p.world.person;
  const seen = async (client: TestClient, name: string, args: Record<string, unknown>) => {
    v.calls++;
    return observe(p, client, name, args);
  };

  // Allowed: the call as it runs without a policy, the reference for what an approval applies.
  const allowed = await seen(p.allow, tool, await fresh(p, tool));
  const expected = effectOf(allowed.changes);

  // Denied: refused, naming its rule, and nothing changes.
  const denied = await seen(p.deny, tool, await fresh(p, tool));
  if (!denied.r.isError) breach("deny: the call ran");
  if (denied.r.meta[POLICY_KEY]?.decision !== "deny") breach(`deny: the refusal does not carry the policy's decision (${JSON.stringify(denied.r.meta[POLICY_KEY])})`);
  for (const c of denied.changes) breach(`deny: ${describeChange(c)}`);

  // Asked: nothing but the pending action; the same call again is the same action.
  const args = await fresh(p, tool);
  const asked = await seen(p.ask, tool, args);
  const pending = asked.r.meta[PENDING_KEY] as { outcome?: string; approval_id?: string } | undefined;
  if (!asked.r.isError) breach("ask: the call ran");
  if (asked.r.meta[POLICY_KEY]?.decision !== "ask") breach("ask: the answer does not carry the policy's decision");
  if (pending?.outcome !== "awaiting_approval" || !pending.approval_id) breach(`ask: no pending action in the answer (${asked.r.text.slice(0, 200)})`);
  for (const c of outside(asked.changes)) breach(`ask: ${describeChange(c)}`);
  if (!asked.changes.some((c) => c.table === "pending_actions" && c.op === "insert")) breach("ask: no pending action was recorded");
  const again = await seen(p.ask, tool, args);
  if ((again.r.meta[PENDING_KEY] as { approval_id?: string } | undefined)?.approval_id !== pending?.approval_id) breach("ask: the same call again made another pending action");
  for (const c of outside(again.changes)) breach(`ask again: ${describeChange(c)}`);
  if (!pending?.approval_id) return v;
  const approval_id = pending.approval_id;

  // The agent decides nothing of its own, by any connection.
  for (const [who, client] of [["its asking connection", p.ask], ["its other connection", p.allow]] as const) {
    const self = await seen(client, "approve_task", { approval_id });
    if (!self.r.isError) breach(`an agent approved its own pending action through ${who}`);
    for (const c of self.changes) breach(`an agent's approve_task through ${who}: ${describeChange(c)}`);
  }

  // The person approves: the exact call, applied once.
  const approved = await seen(person, "approve_task", { approval_id });
  if (approved.r.isError) breach(`the person's approval was refused: ${approved.r.text.slice(0, 200)}`);
  const applied = effectOf(approved.changes);
  if (JSON.stringify(applied) !== JSON.stringify(expected)) {
    breach(`the approval applied ${JSON.stringify(applied)}, the allowed call ${JSON.stringify(expected)}`);
  }
  if (!approved.changes.some((c) => c.table === "pending_actions" && c.column === "status" && c.to === "approved")) breach("the approval did not mark the action approved");
  const twice = await seen(person, "approve_task", { approval_id });
  for (const c of outside(twice.changes)) breach(`deciding again: ${describeChange(c)}`);
  const resultOf = (r: ToolCallResult) => JSON.stringify((r.structured.approval as { action?: { result?: unknown } } | undefined)?.action?.result ?? null);
  if (twice.r.isError || twice.r.structured.changed !== false) breach(`deciding again did not answer "nothing changed": ${twice.r.text.slice(0, 200)}`);
  if (resultOf(twice.r) !== resultOf(approved.r) || resultOf(approved.r) === "null") breach("deciding again did not answer with the kept result of the one run");

  // Rejected, and expired: nothing runs.
  const rejectArgs = await fresh(p, tool);
  const toReject = ((await seen(p.ask, tool, rejectArgs)).r.meta[PENDING_KEY] as { approval_id?: string } | undefined)?.approval_id;
  if (toReject) {
    const rejected = await seen(person, "reject_task", { approval_id: toReject, reason: "Not now" });
    if (rejected.r.isError) breach(`the person's rejection was refused: ${rejected.r.text.slice(0, 200)}`);
    for (const c of outside(rejected.changes)) breach(`reject: ${describeChange(c)}`);
  } else breach("reject: no pending action to reject");
  const expireArgs = await fresh(p, tool);
  const toExpire = ((await seen(p.ask, tool, expireArgs)).r.meta[PENDING_KEY] as { approval_id?: string } | undefined)?.approval_id;
  if (toExpire) {
    await asServer(env.DB, env.DB.prepare("UPDATE pending_actions SET expires_at = ? WHERE id = ?").bind(new Date(Date.now() - 1000).toISOString(), toExpire));
    const late = await seen(person, "approve_task", { approval_id: toExpire });
    if (!late.r.isError) breach("an expired action was approved");
    for (const c of outside(late.changes)) breach(`approving an expired action: ${describeChange(c)}`);
  } else breach("expire: no pending action to let expire");

  // No route changed a policy.
  if ((await policyColumns(p.world.acc.accountId)) !== p.policies) breach("a policy changed");
  await restoreAccount(p.world.acc.accountId, p.base);
  return v;
}
