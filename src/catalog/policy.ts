/**
 * A per-agent policy: for each tool an agent's connection may call, allow,
 * ask the person first, or deny. Declared once here; the same evaluation
 * answers the connection's tools/list (`_meta` "dev.taskgate/policy"), whoami,
 * a dry run and the call itself, and every decision names the rule that made it.
 *
 * A policy is a list of rules. A rule names what it covers (one effect, one
 * toolset, one tool, or every tool) and, optionally, where: only calls in one
 * project, or only calls outside it. Rules are evaluated deny, then ask, then
 * allow (Claude Code's order); within a decision the most specific rule is the
 * one named (a tool before a toolset before an effect before every tool, a
 * rule about a project before one about anywhere). A tool no rule covers is
 * allowed: a token with no policy keeps exactly what its scope lets it do.
 *
 * An agent's policy holds for all its connections; a connection's own rules
 * are evaluated together with them, so they can only narrow it (an allow never
 * outweighs an ask or a deny). The person's own tools (HUMAN_TOOLS) and a
 * token's scope are not the policy's: refusalRule (permissions.ts) decides
 * those first, and no rule can give an agent what they keep from it.
 * A policy never changes a tool's hints: those are the tool's effects.
 */
import { DESTRUCTIVE_TOOLS, OPEN_WORLD_TOOLS, TOOL_NAMES, WRITE_TOOLS, isToolName, type ToolName } from "./effects.ts";
import { TOOLSETS } from "./toolsets.ts";
import type { Principal } from "../domain/principal.ts";

export { POLICY_KEY } from "./contract.ts";

export const POLICY_DECISIONS = ["allow", "ask", "deny"] as const;
export type PolicyDecision = (typeof POLICY_DECISIONS)[number];

/** The effects a rule may name: what tools/list's hints announce (read: no write; open_world: reaches outside Taskgate). */
export const POLICY_EFFECTS = ["read", "write", "destructive", "open_world"] as const;
export type PolicyEffect = (typeof POLICY_EFFECTS)[number];

/** The toolsets a rule may name (the catalog's groups, not the presets that span them). */
export const POLICY_TOOLSETS: readonly string[] = TOOLSETS.map((t) => t.name);

export interface PolicyRule {
  decision: PolicyDecision;
  /** At most one of effect, toolset and tool; none: every tool. */
  effect?: PolicyEffect;
  toolset?: string;
  tool?: ToolName;
  /** Only calls that reach a row of this project. */
  project?: string;
  /** Only calls that reach no row of this project (a call that names no project is outside every project). */
  outside_project?: string;
}

/** Whose rule: the agent's (all its connections), the connection's own, or none (allowed by default). */
export type RuleSource = "agent" | "connection" | "default";

/** A principal's policy: its agent's rules and its connection's own. */
export interface Policy {
  agent: readonly PolicyRule[];
  connection: readonly PolicyRule[];
}

export const NO_POLICY: Policy = { agent: [], connection: [] };

export interface PolicyVerdict {
  decision: PolicyDecision;
  /** The rule that made it, in words ("agent rule 2: ask before destructive tools"; "default: allowed"). */
  rule: string;
  source: RuleSource;
  /** The rule's position in its list (1-based; 0 for the default). */
  index: number;
  /** One line on why (verdictSentence names the tool). */
  reason: string;
}

/** A rule that applies only in, or only outside, a project: the list tells it beside the tool's decision. */
export interface ConditionalVerdict extends PolicyVerdict {
  project: string;
  outside: boolean;
}

/** What a connection's tools/list tells of a tool: its decision anywhere and, where a project rule makes it stricter, there. */
export interface ToolPolicy extends PolicyVerdict {
  where?: ConditionalVerdict[];
}

/** A row a call names, as a person recognises it (src/db/policy.ts reads them). */
export interface ReachedRow {
  kind: "project" | "task" | "step" | "comment" | "run" | "approval" | "label" | "calendar_link" | "trash_item";
  id: string;
  /** Its title, name or text (cut to 120 characters). */
  name: string;
  /** The project it lies in; null for a row in no project (a task in the inbox, a label). */
  project_id: string | null;
  project_name: string | null;
  /** A task's or step's status, a run's or an approval's; null otherwise. */
  status: string | null;
  /** For a task: its live subtasks (a delete or move takes them along). */
  subtasks: number | null;
}

/** A dry run's answer: would this call be allowed, by which rule, what would change it, and what it would reach. */
export interface DryRun {
  tool: string;
  decision: PolicyDecision;
  rule: string;
  reason: string;
  would_change: string;
  /** Whether the arguments pass the tool's input schema; when not, what to fix. */
  arguments_valid: boolean;
  problem: string | null;
  writes: boolean;
  /** For a write: the rows its arguments name, with their project (nothing is written). */
  touches: ReachedRow[];
}

/** Presets offered at consent, at token creation and in the console. */
export const POLICY_PRESETS = {
  trusted: {
    title: "Trusted",
    description: "Everything the token's scope allows, without asking.",
    rules: [] as PolicyRule[],
  },
  careful: {
    title: "Careful",
    description: "Asks you before anything destructive and before anything that reaches a connected app.",
    rules: [
      { decision: "ask", effect: "destructive" },
      { decision: "ask", effect: "open_world" },
    ] as PolicyRule[],
  },
  read_only: {
    title: "Read only",
    description: "Reads only: every tool that changes data is denied.",
    rules: [{ decision: "deny", effect: "write" }] as PolicyRule[],
  },
} as const;
export type PolicyPreset = keyof typeof POLICY_PRESETS;
export const POLICY_PRESET_NAMES = Object.keys(POLICY_PRESETS) as PolicyPreset[];

export function isPolicyPreset(name: string): name is PolicyPreset {
  return Object.hasOwn(POLICY_PRESETS, name);
}

/** The preset these rules are, or null when they are a policy of their own. */
export function presetOf(rules: readonly PolicyRule[]): PolicyPreset | null {
  const text = canonicalRules(rules);
  return POLICY_PRESET_NAMES.find((n) => canonicalRules(POLICY_PRESETS[n].rules) === text) ?? null;
}

const EFFECT_WORDS: Record<PolicyEffect, string> = {
  read: "tools that only read",
  write: "tools that change data",
  destructive: "destructive tools",
  open_world: "tools that reach connected apps",
};

const DECISION_WORDS: Record<PolicyDecision, string> = { allow: "allow", ask: "ask the person before", deny: "deny" };

function toolsetOfTool(): Map<ToolName, string> {
  const m = new Map<ToolName, string>();
  for (const t of TOOLSETS) for (const n of t.tools) m.set(n, t.name);
  return m;
}
const TOOLSET_OF = toolsetOfTool();

/** Whether the rule covers the tool (wherever the call reaches). */
export function covers(rule: PolicyRule, tool: ToolName): boolean {
  if (rule.tool) return rule.tool === tool;
  if (rule.toolset) return TOOLSET_OF.get(tool) === rule.toolset;
  switch (rule.effect) {
    case undefined:
      return true;
    case "read":
      return !WRITE_TOOLS.has(tool);
    case "write":
      return WRITE_TOOLS.has(tool);
    case "destructive":
      return DESTRUCTIVE_TOOLS.has(tool);
    case "open_world":
      return OPEN_WORLD_TOOLS.has(tool);
  }
}

/** How specific a rule is: a tool, a toolset, an effect, every tool; a rule about a project outranks one about anywhere. */
function specificity(rule: PolicyRule): number {
  const what = rule.tool ? 3 : rule.toolset ? 2 : rule.effect ? 1 : 0;
  return what * 2 + (rule.project || rule.outside_project ? 1 : 0);
}

/** The rule in words: "ask the person before destructive tools in project prj_…". */
export function ruleWords(rule: PolicyRule): string {
  const what = rule.tool ? rule.tool : rule.toolset ? `the ${rule.toolset} tools` : rule.effect ? EFFECT_WORDS[rule.effect] : "every tool";
  const where = rule.project ? ` in project ${rule.project}` : rule.outside_project ? ` outside project ${rule.outside_project}` : "";
  return `${DECISION_WORDS[rule.decision]} ${what}${where}`;
}

interface Candidate {
  rule: PolicyRule;
  source: Exclude<RuleSource, "default">;
  index: number;
}

function candidates(policy: Policy): Candidate[] {
  return [
    ...policy.agent.map((rule, i) => ({ rule, source: "agent" as const, index: i + 1 })),
    ...policy.connection.map((rule, i) => ({ rule, source: "connection" as const, index: i + 1 })),
  ];
}

const ORDER: readonly PolicyDecision[] = ["deny", "ask", "allow"];

function verdictOf(c: Candidate | null, tool: ToolName): PolicyVerdict {
  if (!c) return { decision: "allow", rule: "default", source: "default", index: 0, reason: "No rule of the policy covers it." };
  const owner = c.source === "agent" ? "the agent's policy" : "this connection's policy";
  const rule = `${c.source} rule ${c.index}: ${ruleWords(c.rule)}`;
  const reason =
    c.rule.decision === "allow"
      ? `Allowed by ${owner}.`
      : c.rule.decision === "ask"
        ? `Each call waits for the person's approval (${owner}).`
        : `Denied by ${owner}.`;
  return { decision: c.rule.decision, rule, source: c.source, index: c.index, reason };
}

/** A decision in one sentence naming the tool: how a refusal or a pending action tells it. */
export function verdictSentence(tool: string, v: PolicyVerdict): string {
  switch (v.decision) {
    case "allow":
      return `${tool} is allowed (${v.rule}).`;
    case "ask":
      return `${tool} waits for the person's approval: ${v.rule}.`;
    case "deny":
      return `${tool} is denied: ${v.rule}.`;
  }
}

/** A person's call: no policy binds it. */
export function personVerdict(tool: ToolName): PolicyVerdict {
  return { decision: "allow", rule: "person: no policy", source: "default", index: 0, reason: `${tool} is a person's to call; a policy binds agents only.` };
}

/** The first rule by decision (deny, ask, allow), the most specific first; ties go to the agent's rule, then the earlier one. */
function pick(found: Candidate[]): Candidate | null {
  for (const d of ORDER) {
    const of = found.filter((c) => c.rule.decision === d);
    if (of.length) return of.reduce((best, c) => (specificity(c.rule) > specificity(best.rule) ? c : best));
  }
  return null;
}

/** Whether a project condition holds for a call that reaches these projects (null: the call names no project). */
function whereHolds(rule: PolicyRule, projects: readonly (string | null)[]): boolean {
  if (rule.project) return projects.includes(rule.project);
  if (rule.outside_project) return projects.length === 0 || projects.some((p) => p !== rule.outside_project);
  return true;
}

/**
 * The decision for one call: `projects` are the projects of the rows the call
 * reaches (null for a row in no project; empty when it names none). Without
 * them (undefined), only rules about anywhere count: what the list tells.
 */
export function decide(policy: Policy, tool: ToolName, projects?: readonly (string | null)[]): PolicyVerdict {
  const found = candidates(policy).filter(
    (c) => covers(c.rule, tool) && (projects === undefined ? !c.rule.project && !c.rule.outside_project : whereHolds(c.rule, projects)),
  );
  return verdictOf(pick(found), tool);
}

/** Whether the decision for this tool may depend on where the call reaches (a project rule covers it). */
export function dependsOnProject(policy: Policy, tool: ToolName): boolean {
  return candidates(policy).some((c) => (c.rule.project || c.rule.outside_project) && covers(c.rule, tool));
}

const STRICTNESS: Record<PolicyDecision, number> = { allow: 0, ask: 1, deny: 2 };

/** What the list tells of a tool: its decision anywhere, and each project rule that makes it stricter there. */
export function toolPolicy(policy: Policy, tool: ToolName): ToolPolicy {
  const anywhere = decide(policy, tool);
  const where: ConditionalVerdict[] = [];
  for (const c of candidates(policy)) {
    const project = c.rule.project ?? c.rule.outside_project;
    if (!project || !covers(c.rule, tool) || STRICTNESS[c.rule.decision] <= STRICTNESS[anywhere.decision]) continue;
    where.push({ ...verdictOf(c, tool), project, outside: !c.rule.project });
  }
  return where.length ? { ...anywhere, where } : anywhere;
}

/** Denied wherever the call reaches: such a tool is not listed. */
export function deniedEverywhere(policy: Policy, tool: ToolName): boolean {
  return decide(policy, tool).decision === "deny";
}

/** Whether a policy has any rule at all (a token without one is decided by scope alone). */
export function hasRules(policy: Policy): boolean {
  return policy.agent.length > 0 || policy.connection.length > 0;
}

/** A stable text of rules (key order fixed): for storage, for comparing and for the list cache's key. */
export function canonicalRules(rules: readonly PolicyRule[]): string {
  return JSON.stringify(
    rules.map((r) => {
      const out: Record<string, string> = { decision: r.decision };
      for (const k of ["effect", "toolset", "tool", "project", "outside_project"] as const) if (r[k]) out[k] = r[k] as string;
      return out;
    }),
  );
}

/** The key of a policy for caches: equal keys, equal decisions. */
export function policyKey(policy: Policy): string {
  return hasRules(policy) ? `${canonicalRules(policy.agent)}|${canonicalRules(policy.connection)}` : "";
}

/** At most this many rules in one list: a policy a person can read. */
export const MAX_RULES = 50;

/**
 * Rules as stored (JSON text, or null for none), checked: what a stored policy
 * holds, or a message saying what to fix. Used for input (the console's forms)
 * and for reading a stored column (whose text this module wrote).
 */
export function parseRules(input: unknown): { rules: PolicyRule[] } | { error: string } {
  let value = input;
  if (value === null || value === undefined || value === "") return { rules: [] };
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch {
      return { error: "policy: not JSON; give a list of rules." };
    }
  }
  if (!Array.isArray(value)) return { error: "policy: give a list of rules." };
  if (value.length > MAX_RULES) return { error: `policy: at most ${MAX_RULES} rules; this one has ${value.length}.` };
  const rules: PolicyRule[] = [];
  for (const [i, raw] of value.entries()) {
    const at = `policy rule ${i + 1}`;
    if (!raw || typeof raw !== "object" || Array.isArray(raw)) return { error: `${at}: give an object with a decision.` };
    const r = raw as Record<string, unknown>;
    const unknownKeys = Object.keys(r).filter((k) => !["decision", "effect", "toolset", "tool", "project", "outside_project"].includes(k));
    if (unknownKeys.length) return { error: `${at}: unknown field ${unknownKeys[0]}; a rule has decision and at most one of effect, toolset and tool, and project or outside_project.` };
    if (!POLICY_DECISIONS.includes(r.decision as PolicyDecision)) return { error: `${at}: decision must be one of ${POLICY_DECISIONS.join(", ")}.` };
    const whats = (["effect", "toolset", "tool"] as const).filter((k) => r[k] !== undefined && r[k] !== null && r[k] !== "");
    if (whats.length > 1) return { error: `${at}: name at most one of effect, toolset and tool (it names ${whats.join(" and ")}).` };
    const rule: PolicyRule = { decision: r.decision as PolicyDecision };
    if (whats[0] === "effect") {
      if (!POLICY_EFFECTS.includes(r.effect as PolicyEffect)) return { error: `${at}: effect must be one of ${POLICY_EFFECTS.join(", ")}.` };
      rule.effect = r.effect as PolicyEffect;
    } else if (whats[0] === "toolset") {
      if (!POLICY_TOOLSETS.includes(r.toolset as string)) return { error: `${at}: toolset must be one of ${POLICY_TOOLSETS.join(", ")}.` };
      rule.toolset = r.toolset as string;
    } else if (whats[0] === "tool") {
      if (typeof r.tool !== "string" || !isToolName(r.tool)) return { error: `${at}: no tool is named ${JSON.stringify(r.tool)}; tools/list names them.` };
      rule.tool = r.tool;
    }
    const project = r.project || null;
    const outside = r.outside_project || null;
    if (project && outside) return { error: `${at}: name project or outside_project, not both.` };
    for (const [k, v] of [["project", project], ["outside_project", outside]] as const) {
      if (v === null) continue;
      if (typeof v !== "string" || !/^prj_[A-Za-z0-9]{1,40}$/.test(v)) return { error: `${at}: ${k} must be a project id (prj_…).` };
      rule[k] = v;
    }
    rules.push(rule);
  }
  return { rules };
}

/** Stored rules, read back: a column this module wrote. A text it cannot read denies everything rather than allowing it. */
export function storedRules(text: string | null | undefined): PolicyRule[] {
  if (!text) return [];
  const parsed = parseRules(text);
  return "rules" in parsed ? parsed.rules : [{ decision: "deny" }];
}

/** The rules as stored: null for none (the column's "no policy"). */
export function rulesText(rules: readonly PolicyRule[]): string | null {
  return rules.length ? canonicalRules(rules) : null;
}

/** Every tool an agent could be told about, decided: for whoami and the console's table. */
export function decideAll(policy: Policy, tools: readonly ToolName[] = TOOL_NAMES): Map<ToolName, ToolPolicy> {
  return new Map(tools.map((t) => [t, toolPolicy(policy, t)]));
}

const parsed = new Map<string, Policy>();

/**
 * A principal's policy: an agent's (its agent's rules and its connection's
 * own); a person has none. Read once per stored text and isolate: every
 * request asks it, on tools/list and on every call.
 */
export function policyOf(p: Principal): Policy {
  if (p.kind !== "agent" || !p.policy) return NO_POLICY;
  const key = `${p.policy.agent ?? ""}|${p.policy.connection ?? ""}`;
  let policy = parsed.get(key);
  if (!policy) {
    if (parsed.size >= 1024) parsed.clear();
    policy = { agent: storedRules(p.policy.agent), connection: storedRules(p.policy.connection) };
    parsed.set(key, policy);
  }
  return policy;
}
