/**
 * What each tool publishes about itself beyond its hints, in `_meta`, all of
 * it derived from the effect sets (effects.ts) that the registry enforces:
 *
 * - `dev.taskgate/enforcement`: the OAuth scope a call needs, whether only a
 *   person may make it, whether another agent's claim refuses it, and its
 *   effect classes. The server refuses exactly what this says it refuses.
 * - `dev.taskgate/trust`: whether the result may carry text an agent or an
 *   outsider wrote, and whether it carries the account's private data (the
 *   vocabulary of the trust-and-sensitivity proposal, SEP-1913).
 * - `anthropic/requiresUserInteraction` on the consent tools, so a host asks
 *   the person at every call rather than letting its model decide.
 * - `ui.resourceUri` (and `ui/resourceUri`) on the tools whose results the
 *   approvals view shows (served by src/mcp/app-view.ts).
 * - `dev.taskgate/fingerprint`: SHA-256 over the tool's canonical JSON, and
 *   `dev.taskgate/catalog` on the list: what a host pins.
 */
import { canonicalJson } from "../domain/canonical.ts";
import { READ_SCOPE, WRITE_SCOPE } from "../domain/grants.ts";
import { sha256HexSync } from "../domain/sha256.ts";
import {
  CLAIM_GUARDED_TOOLS, CONVERGENT_TOOLS, DESTRUCTIVE_TOOLS, HUMAN_TOOLS, OPEN_WORLD_TOOLS, PRIVATE_DATA_TOOLS,
  UNTRUSTED_CONTENT_TOOLS, WRITE_TOOLS, type ToolName,
} from "./effects.ts";
import { RESOURCE_URI_META_KEY } from "@modelcontextprotocol/ext-apps/server";

export const ENFORCEMENT_KEY = "dev.taskgate/enforcement";
export const TRUST_KEY = "dev.taskgate/trust";
export const FINGERPRINT_KEY = "dev.taskgate/fingerprint";
export const CATALOG_KEY = "dev.taskgate/catalog";
/** A connection's policy decision for a tool (src/catalog/policy.ts): told beside the tool, never in its hints. */
export const POLICY_KEY = "dev.taskgate/policy";
/** A call the policy asks about: the pending action it became (outcome, approval id, decide link, expiry), beside an isError answer. */
export const PENDING_ACTION_KEY = "dev.taskgate/pending_action";
export const USER_INTERACTION_KEY = "anthropic/requiresUserInteraction";

/** The one `ui://` resource: the approvals view (MCP Apps). */
export const APPROVALS_VIEW_URI = "ui://taskgate/approvals";

/** The tools whose results the approvals view shows. */
export const VIEW_TOOLS: ReadonlySet<ToolName> = new Set<ToolName>(["list_pending_approvals", "get_approval", "complete_task", "request_approval"]);

/** The `_meta` that links a tool to the view (empty for the others). */
export function viewMetaOf(name: ToolName): Record<string, unknown> {
  return VIEW_TOOLS.has(name) ? { ui: { resourceUri: APPROVALS_VIEW_URI }, [RESOURCE_URI_META_KEY]: APPROVALS_VIEW_URI } : {};
}

/** The effect classes as the effect audit checks them. */
export type Effect = "read" | "write" | "destructive" | "convergent" | "open_world";

export interface Enforcement {
  scope: typeof READ_SCOPE | typeof WRITE_SCOPE;
  human_only: boolean;
  claim_guarded: boolean;
  effects: Effect[];
}

export interface Trust {
  untrustedContentHint: boolean;
  privateHint: boolean;
}

export function enforcementOf(name: ToolName): Enforcement {
  const write = WRITE_TOOLS.has(name);
  const effects: Effect[] = [write ? "write" : "read"];
  if (DESTRUCTIVE_TOOLS.has(name)) effects.push("destructive");
  if (CONVERGENT_TOOLS.has(name)) effects.push("convergent");
  if (OPEN_WORLD_TOOLS.has(name)) effects.push("open_world");
  return { scope: write ? WRITE_SCOPE : READ_SCOPE, human_only: HUMAN_TOOLS.has(name), claim_guarded: CLAIM_GUARDED_TOOLS.has(name), effects };
}

export function trustOf(name: ToolName): Trust {
  return { untrustedContentHint: UNTRUSTED_CONTENT_TOOLS.has(name), privateHint: PRIVATE_DATA_TOOLS.has(name) };
}

/** Said once at the end of every consent tool's description, so the model knows to wait for the person. */
export const HUMAN_ONLY_NOTE = "Only on the person's explicit instruction.";

export function describedFor(name: ToolName, description: string): string {
  return HUMAN_TOOLS.has(name) ? `${description} ${HUMAN_ONLY_NOTE}` : description;
}

/** A tool's `_meta` before its fingerprint. */
export function toolMeta(name: ToolName): Record<string, unknown> {
  return {
    [ENFORCEMENT_KEY]: enforcementOf(name),
    [TRUST_KEY]: trustOf(name),
    ...(HUMAN_TOOLS.has(name) ? { [USER_INTERACTION_KEY]: true } : {}),
    ...viewMetaOf(name),
  };
}

interface Described {
  _meta: Record<string, unknown>;
}

/** The tool as hashed: everything it publishes but its own fingerprint and one connection's policy (which the list's fingerprint covers). */
function withoutFingerprint<T extends Described>(tool: T): T {
  const { [FINGERPRINT_KEY]: _own, [POLICY_KEY]: _policy, ...meta } = tool._meta;
  return { ...tool, _meta: meta };
}

/** The canonical JSON of each fingerprinted tool as hashed, so that every list's catalog fingerprint reuses it. */
const hashedText = new WeakMap<object, string>();

function canonicalText(tool: Described): string {
  return hashedText.get(tool) ?? canonicalJson(withoutFingerprint(tool));
}

/** SHA-256 (hex) of the tool's canonical JSON (sorted keys, no whitespace), its own fingerprint left out. */
export function fingerprintOf(tool: Described): string {
  return sha256HexSync(canonicalText(tool));
}

/** The tool with its fingerprint last in its `_meta`. */
export function fingerprinted<T extends Described>(tool: T): T {
  const text = canonicalText(tool);
  const out = { ...tool, _meta: { ...tool._meta, [FINGERPRINT_KEY]: sha256HexSync(text) } };
  hashedText.set(out, text);
  return out;
}

/**
 * SHA-256 (hex) of the canonical JSON of the listed tools, in order, each
 * without its fingerprint: the canonical JSON of an array is its members'
 * joined by commas in brackets, so each tool's text is made once.
 */
export function catalogFingerprint(tools: readonly Described[], policy = ""): string {
  return sha256HexSync(`[${tools.map(canonicalText).join(",")}]${policy ? `|${policy}` : ""}`);
}
