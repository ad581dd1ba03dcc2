import { ProtocolError, ProtocolErrorCode, type CallToolResult } from "@modelcontextprotocol/server";
import type { Principal } from "../domain/principal.ts";
import { inTrash, invalid, ToolError } from "../domain/errors.ts";
import { trashHolding } from "../db/trash.ts";
import { requestHash } from "../domain/canonical.ts";
import { findIdempotent, PENDING_RESULT } from "../db/idempotency.ts";
import type { TaskgateEvent } from "../domain/events.ts";
import { enqueueEvents } from "../webhooks/queue.ts";
import { consentFieldRefusal, consentFieldsIn } from "../domain/consent.ts";
import { IdempotentReplay, makeContext, type CallScope, type Idempotency } from "./engine.ts";
import { annotationsFor, TOOL_NAMES, WRITE_TOOLS, type ToolAnnotations, type ToolName } from "../catalog/effects.ts";
import { movingMessage, movingRefusal, principalClass, refusal, refusalRule } from "../catalog/permissions.ts";
import { isFenced } from "../db/move-account.ts";
import { isTransient } from "../db/transient.ts";
import { ALL_TOOLS_SELECTED, outsideSelection, type ToolSelection } from "../catalog/toolsets.ts";
import { argumentsNotObject, controlCharacters, describeIssues } from "./argument-errors.ts";
import type { AnyTool } from "../catalog/tool.ts";
import { announcedInput, announcedOutput, detailedSchema, type JsonObjectSchema } from "./json-schema.ts";
import { CATALOG_KEY, catalogFingerprint, describedFor, fingerprinted, toolMeta } from "../catalog/contract.ts";
import { decide, dependsOnProject, personVerdict, policyKey, policyOf, POLICY_KEY, toolPolicy, type Policy, type PolicyVerdict } from "../catalog/policy.ts";
import { projectsOf, rowsReached } from "../db/policy.ts";
import { approvedKey, askPerson, deniedByPolicy, runApproved, whatWouldChange } from "./pending-actions.ts";
import type { DryRun } from "../catalog/policy.ts";

export interface ToolDescriptor {
  name: ToolName;
  title: string;
  description: string;
  inputSchema: JsonObjectSchema;
  outputSchema: JsonObjectSchema;
  /** The four hints; the title is the tool's own `title` (hosts read that first), not repeated here. */
  annotations: Omit<ToolAnnotations, "title">;
  /** What the server enforces, the trust of the result and the fingerprint (src/catalog/contract.ts). */
  _meta: Record<string, unknown>;
}

/** A tools/list result: the tools and the fingerprint of the catalog they make. */
export type ToolList = {
  tools: ToolDescriptor[];
  _meta: { [CATALOG_KEY]: string };
};

let installed: readonly AnyTool[] | undefined;
let TOOLS = new Map<string, AnyTool>();

/**
 * Gives the registry its tools: the composition root (src/index.ts) passes
 * every tool (src/tools/index.ts), so the registry never imports a tool. Each
 * name of the catalog needs exactly one tool. Installing the same list again
 * changes nothing; a different list is refused, since the descriptions and
 * lists made from the first are kept for the isolate's life.
 */
export function installTools(tools: readonly AnyTool[]): void {
  if (installed === tools) return;
  if (installed) throw new Error("The registry's tools are already installed; an isolate serves one catalog.");
  const byToolName = new Map<string, AnyTool>(tools.map((t) => [t.name, t]));
  const missing = TOOL_NAMES.filter((n) => !byToolName.has(n));
  if (missing.length || byToolName.size !== tools.length || byToolName.size !== TOOL_NAMES.length) {
    throw new Error(`installTools needs one tool per catalog name (${TOOL_NAMES.length}); got ${tools.length}${missing.length ? `, missing ${missing.join(", ")}` : ""}.`);
  }
  installed = tools;
  TOOLS = byToolName;
}

function toolNamed(name: string): AnyTool | undefined {
  if (!installed) throw new Error("No tools installed in the registry: call installTools(ALL_TOOLS) first (src/index.ts does).");
  return TOOLS.get(name);
}

let descriptors: ToolDescriptor[] | undefined;

/**
 * Every tool described for tools/list: JSON Schemas, hints, `_meta` and
 * fingerprints computed once per isolate (this cache is safe to lose), so a
 * request only filters.
 */
export function describeAllTools(): ToolDescriptor[] {
  // In catalog order (src/catalog/effects.ts), whatever order the tool files register in: a stable list helps hosts' prompt caches.
  descriptors ??= TOOL_NAMES.map((name) => toolNamed(name) as AnyTool).map((t) => {
    const { title, ...annotations } = annotationsFor(t.name);
    return fingerprinted({
      name: t.name,
      title,
      description: describedFor(t.name, t.description),
      inputSchema: announcedInput(t.input),
      outputSchema: announcedOutput(t.output),
      annotations,
      _meta: toolMeta(t.name),
    });
  });
  return descriptors;
}

let catalog: ToolList | undefined;

/** The whole catalog with its fingerprint, as the well-known document publishes it. */
export function fullCatalog(): ToolList {
  catalog ??= { tools: describeAllTools(), _meta: { [CATALOG_KEY]: catalogFingerprint(describeAllTools()) } };
  return catalog;
}


const lists = new Map<string, ToolList>();

/**
 * The tools/list result of this principal among the tools the connection
 * selected, in catalog order, with the fingerprint of that list. One result
 * per principal class and selection, kept per isolate (safe to lose): a
 * request only looks it up.
 */
export function listResultFor(p: Principal, selection: ToolSelection = ALL_TOOLS_SELECTED): ToolList {
  const agent = p.kind === "agent";
  const key = `${principalClass(p)}|${selection.key}`;
  let list = lists.get(key);
  if (!list) {
    if (lists.size >= 1024) lists.clear();
    const policy = policyOf(p);
    const allowed = describeAllTools().filter((d) => selection.tools.has(d.name) && refusal(p, d.name) === null);
    // An agent's connection is told each tool's decision; a tool its policy denies wherever it reaches is not listed.
    const tools = agent ? withPolicy(allowed, policy) : allowed;
    list = { tools, _meta: { [CATALOG_KEY]: catalogFingerprint(tools, policyKey(policy)) } };
    lists.set(key, list);
  }
  return list;
}

/** The listed tools of an agent's connection: those its policy does not deny everywhere, each with its decision in `_meta`. */
function withPolicy(tools: ToolDescriptor[], policy: Policy): ToolDescriptor[] {
  const out: ToolDescriptor[] = [];
  for (const d of tools) {
    const told = toolPolicy(policy, d.name);
    if (told.decision === "deny") continue;
    const { source: _s, index: _i, ...shown } = told;
    out.push({ ...d, _meta: { ...d._meta, [POLICY_KEY]: shown } });
  }
  return out;
}

/**
 * The policy's decision for one call: where a project rule covers the tool,
 * the projects of the rows it names are read first (one query); otherwise
 * nothing is read.
 */
export async function policyVerdict(scope: CallScope, name: ToolName, args: Record<string, unknown>): Promise<PolicyVerdict> {
  const policy = policyOf(scope.principal);
  if (!dependsOnProject(policy, name)) return decide(policy, name);
  return decide(policy, name, projectsOf(await rowsReached(scope.env.DB, scope.principal.accountId, args)));
}

/** The tools this principal may call among those the connection selected (see listResultFor). */
export function listToolsFor(p: Principal, selection: ToolSelection = ALL_TOOLS_SELECTED): ToolDescriptor[] {
  return listResultFor(p, selection).tools;
}

let byName: Map<string, ToolDescriptor> | undefined;

function descriptorOf(name: string): ToolDescriptor | undefined {
  byName ??= new Map(describeAllTools().map((d) => [d.name, d]));
  return byName.get(name);
}

export function outputSchemaOf(name: string): Record<string, unknown> | undefined {
  return descriptorOf(name)?.outputSchema;
}

const detailedInputs = new Map<string, JsonObjectSchema>();

/**
 * A tool's input schema with every word and bound of its zod schema (id
 * formats, lengths, ranges): argument errors quote it, and tests build
 * arguments from it. tools/list announces the lean form (json-schema.ts).
 */
export function detailedInputSchema(name: string): JsonObjectSchema {
  const tool = toolNamed(name);
  if (!tool) return { type: "object" };
  let s = detailedInputs.get(name);
  if (!s) detailedInputs.set(name, (s = detailedSchema(tool.input, "input")));
  return s;
}

function errorResult(message: string): CallToolResult {
  return { content: [{ type: "text", text: message }], isError: true };
}

function successResult(result: Record<string, unknown>): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(result) }], structuredContent: result };
}

/**
 * What an earlier call with this key answers for this call: its result when
 * the arguments are the same (or the record predates argument hashes), a
 * refusal when the key was used for other arguments, null when it is new.
 */
async function replay(scope: CallScope, idem: Idempotency): Promise<CallToolResult | null> {
  let prior = await findIdempotent(scope.env.DB, idem.scope);
  if (!prior) return null;
  if (prior.request_hash !== null && prior.request_hash !== idem.requestHash) {
    return errorResult(
      `idempotency_key "${idem.scope.key}" was already used for other arguments to ${idem.scope.tool}, so this call was not run. ` +
        "A retry must repeat the first call's arguments exactly to get its result; a new call needs a new key.",
    );
  }
  // The first call committed and is recording the result its batch read: it lands within moments.
  for (let waited = 0; prior?.result === PENDING_RESULT && waited < REPLAY_WAIT_MS; waited += 25) {
    await new Promise((r) => setTimeout(r, 25));
    prior = await findIdempotent(scope.env.DB, idem.scope);
  }
  if (!prior) return null;
  if (prior.result === PENDING_RESULT) {
    return errorResult(`The first call with idempotency_key "${idem.scope.key}" is still being recorded; retry this call in a moment to get its result.`);
  }
  return successResult(JSON.parse(prior.result) as Record<string, unknown>);
}

const REPLAY_WAIT_MS = 2000;

/**
 * Would this call be allowed? The same checks a call meets, in its order
 * (the token's kind and scope, the connection's toolsets, the arguments, the
 * consent fields, the agent's policy), answered without running anything; for
 * a write, the rows its arguments name. whoami's dry run asks it.
 */
export async function dryRun(scope: CallScope, name: string, rawArgs: unknown): Promise<DryRun> {
  const tool = toolNamed(name);
  if (!tool) throw invalid(`dry_run.tool: no tool is named ${JSON.stringify(name)}; tools/list names the tools this connection offers.`);
  const p = scope.principal;
  const writes = WRITE_TOOLS.has(tool.name);
  const selection = scope.toolsets ?? ALL_TOOLS_SELECTED;
  const base = { tool: tool.name, writes, arguments_valid: true, problem: null as string | null, touches: [] as DryRun["touches"] };
  const refused = refusalRule(p, tool.name);
  const kept = refusal(p, tool.name) ?? (selection.tools.has(tool.name) ? null : outsideSelection(selection, tool.name)) ?? movingRefusal(p, tool.name);
  if (kept) {
    const rule = refused ? `token: ${refused}` : selection.tools.has(tool.name) ? "account: moving" : "connection: toolsets";
    const change = refused === "human_only" ? "Nothing an agent can do: only a person calls it." : refused === "read_scope" ? "A token with scope write." : refused === "paused" ? "A person resuming the agent (resume_agent)." : "Connecting with the toolset that holds it, or waiting for the move to end.";
    return { ...base, decision: "deny", rule, reason: kept, would_change: change };
  }
  const args = rawArgs && typeof rawArgs === "object" && !Array.isArray(rawArgs) ? rawArgs : {};
  const parsed = tool.input.safeParse(args);
  const problem = parsed.success ? null : describeIssues(name, parsed.error, args, detailedInputSchema(tool.name));
  const valid = (parsed.success ? parsed.data : args) as Record<string, unknown>;
  const fields = p.kind === "agent" && writes ? consentFieldsIn(valid) : [];
  if (fields.length) return { ...base, decision: "deny", rule: "consent fields", reason: consentFieldRefusal(tool.name, fields), would_change: "Leaving those fields out: they are a person's.", arguments_valid: parsed.success, problem };
  const policy = policyOf(p);
  const rows = writes || dependsOnProject(policy, tool.name) ? await rowsReached(scope.env.DB, p.accountId, valid) : [];
  const verdict = p.kind === "agent" ? decide(policy, tool.name, dependsOnProject(policy, tool.name) ? projectsOf(rows) : undefined) : null;
  const told = verdict ?? personVerdict(tool.name);
  return {
    ...base,
    decision: told.decision,
    rule: told.rule,
    reason: told.reason,
    would_change: whatWouldChange(told),
    arguments_valid: parsed.success,
    problem,
    touches: writes ? rows : [],
  };
}

/**
 * Tools whose handler acts outside D1 before it commits (a connected app): a
 * retry with a known key must not run them, so their key is looked up first.
 * Every other keyed call runs straight to its batch, whose idempotency record
 * (primary key) refuses a second write and sends the call to the replay.
 */
const LOOK_UP_KEY_FIRST = new Set<string>(["save_context"]);

/** How long a read waits before it runs again after a passing fault (a busy or briefly unreachable D1). */
const READ_AGAIN_MS = 100;

async function readAgainOnce<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (e) {
    if (!isTransient(e)) throw e;
    await new Promise((resolve) => setTimeout(resolve, READ_AGAIN_MS));
    return read();
  }
}

/**
 * tools/call, in one place: a name outside the catalog → protocol error; not
 * allowed → isError naming the missing scope or kind; outside the connection's
 * toolsets or read-only view → isError saying how to get it; invalid
 * arguments → isError naming the field; a caller's mistake (ToolError) → isError with how to recover; a
 * bug or fault → logged, generic isError. Success → structuredContent + text.
 * The webhook events of committed batches are enqueued after the response.
 */
export type { CallScope };

export async function callTool(scope: CallScope, name: string, rawArgs: unknown): Promise<CallToolResult> {
  const tool = toolNamed(name);
  if (!tool) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}. tools/list names the tools this connection offers.`);
  const selection = scope.toolsets ?? ALL_TOOLS_SELECTED;
  // What the token may not do comes first: no other connection would let it.
  const why =
    refusal(scope.principal, tool.name) ?? (selection.tools.has(tool.name) ? null : outsideSelection(selection, tool.name)) ?? movingRefusal(scope.principal, tool.name);
  if (why) return errorResult(why);

  const inputSchema = detailedInputSchema(tool.name);
  if (rawArgs !== undefined && rawArgs !== null && (typeof rawArgs !== "object" || Array.isArray(rawArgs))) {
    return errorResult(argumentsNotObject(name, rawArgs, inputSchema));
  }
  const controls = controlCharacters(name, rawArgs ?? {});
  if (controls) return errorResult(controls);
  const parsed = tool.input.safeParse(rawArgs ?? {});
  if (!parsed.success) return errorResult(describeIssues(name, parsed.error, rawArgs ?? {}, inputSchema));
  const args = parsed.data as Record<string, unknown>;
  // C2: consent fields are the person's, whatever the tool; the rows' own rule (schema.sql) holds the same.
  const consentFields = scope.principal.kind === "agent" && WRITE_TOOLS.has(tool.name) ? consentFieldsIn(args) : [];
  if (consentFields.length) return errorResult(consentFieldRefusal(tool.name, consentFields));
  // The agent's policy: denied, nothing runs; asked, the call waits as a pending action the person decides.
  // A pending action a person approved runs without asking again, unless the policy denies it by now.
  if (scope.principal.kind === "agent") {
    const verdict = await policyVerdict(scope, tool.name, args);
    if (verdict.decision === "deny") return deniedByPolicy(tool.name, verdict);
    if (verdict.decision === "ask" && !scope.approved) return askPerson(scope, tool.name, args, verdict);
  }

  // An approved pending action runs under a key of its approval: a second run (a second approve, a retry after a crash) replays the first.
  const key = !WRITE_TOOLS.has(tool.name) ? null : scope.approved ? approvedKey(scope.approved.approvalId) : typeof args.idempotency_key === "string" ? args.idempotency_key : null;
  const p = scope.principal;
  const idem: Idempotency | null = key
    ? { scope: { accountId: p.accountId, tokenId: p.tokenId, tool: name, key }, requestHash: await requestHash(args) }
    : null;
  try {
    if (idem && LOOK_UP_KEY_FIRST.has(name)) {
      const earlier = await replay(scope, idem);
      if (earlier) return earlier;
    }
    const committed: TaskgateEvent[] = [];
    const ctx = makeContext(scope, tool.name, args, idem, committed, {
      dryRun: (t, a) => dryRun(scope, t, a),
      runApproved: (action) => runApproved(scope, action, callTool),
    });
    let result: Record<string, unknown>;
    try {
      // A read that met a passing fault wrote nothing: it runs once more before the caller hears of it.
      result = (await (WRITE_TOOLS.has(tool.name) ? tool.handler(ctx, args) : readAgainOnce(() => tool.handler(ctx, args)))) as Record<string, unknown>;
    } finally {
      // After the batch, never inside it: a receiver hears only of writes that happened.
      if (committed.length) scope.waitUntil(enqueueEvents(scope.env, committed));
    }
    if (idem && !ctx.committedOnce) {
      // A call that raced the first one with the same key found the work done: it answers with the first result.
      const earlier = await replay(scope, idem);
      if (earlier) return earlier;
    }
    if (scope.env.VALIDATE_OUTPUT) {
      const checked = tool.output.safeParse(result);
      if (!checked.success) throw new Error(`${name} returned a result that breaks its output schema: ${checked.error.message}`);
    }
    return successResult(result);
  } catch (e) {
    // A retry that raced the first call with its key (and lost on the key, or on a guard the first call tripped) gets the first call's answer.
    if ((e instanceof IdempotentReplay || e instanceof ToolError) && idem) {
      const earlier = await replay(scope, idem);
      if (earlier) return earlier;
    }
    if (e instanceof ToolError) {
      // A record that is gone because it is in the trash says so, with the item that brings it back (as a task does).
      // (A list's filter stays one round trip: it answers as it was refused.)
      const filter = !WRITE_TOOLS.has(tool.name) && /^(list|search)_/.test(tool.name);
      const held = e.code === "not_found" && e.subject && !filter ? await trashHolding(scope.env.DB, p.accountId, e.subject.kind, e.subject.id) : null;
      return errorResult(held && e.subject ? inTrash(e.subject.kind, e.subject.id, held).message : e.message);
    }
    // The databases' fence refused the batch: the account was marked as moving after this call's token was resolved.
    if (isFenced(e)) return errorResult(movingMessage(name));
    if (isTransient(e)) return errorResult(`The database was briefly unavailable while running ${name}; try again in a moment.`);
    console.error(JSON.stringify({ level: "error", requestId: scope.requestId, tool: name, error: e instanceof Error ? e.stack ?? e.message : String(e) }));
    return errorResult(`Internal error while running ${name}. Try again; if it persists, report request id ${scope.requestId}.`);
  }
}
