/**
 * The console's policy editor: a person chooses a preset, adds a rule or
 * removes one, for an agent (agents.policy, all its connections) or for one of
 * its connections (tokens.policy, which only narrows the agent's). The form's
 * fields become rules here, checked by parseRules (src/catalog/policy.ts), and
 * are written in one batch with an activity row and the form's one-time key,
 * only if the rules are still those the page showed (src/db/policy-edits.ts).
 * Bad input is a message naming the field to fix; nothing is written then.
 */
import { HUMAN_TOOLS, TOOL_NAMES, type ToolName } from "../../catalog/effects.ts";
import {
  canonicalRules, isPolicyPreset, parseRules, POLICY_DECISIONS, POLICY_EFFECTS, POLICY_PRESETS, POLICY_TOOLSETS, presetOf, ruleWords, rulesText,
  storedRules, type PolicyDecision, type PolicyEffect, type PolicyPreset, type PolicyRule,
} from "../../catalog/policy.ts";
import { insertActivity } from "../../db/activity.ts";
import { insertIdempotent } from "../../db/idempotency.ts";
import { writeAgentPolicy, writeTokenPolicy, type PolicyProject, type PolicyWriteRefusal } from "../../db/policy-edits.ts";
import { forgetResolvedTokens } from "../../db/principals.ts";
import { SET_AGENT_POLICY, SET_CONNECTION_POLICY } from "../../db/summaries.ts";
import { ID_PREFIX, newId } from "../../domain/ids.ts";
import { actorName, type Principal } from "../../domain/principal.ts";
import { one, type FormFields } from "./actions.ts";
import { formOnce } from "./once.ts";

/** How a decision reads on the page and in a form's choice. */
export const DECISION_LABELS: Record<PolicyDecision, string> = { allow: "Allow", ask: "Ask me first", deny: "Deny" };

/** The effects a rule may name, as the form offers them. */
export const EFFECT_LABELS: Record<PolicyEffect, string> = {
  read: "Tools that only read",
  write: "Tools that change data",
  destructive: "Destructive tools (delete, purge, end for good)",
  open_world: "Tools that reach connected apps",
};

/** An agent's tools: what its policy decides (a person's own tools are never an agent's, whatever the rules say). */
export const AGENT_TOOLS: readonly ToolName[] = TOOL_NAMES.filter((t) => !HUMAN_TOOLS.has(t));

/** A rule in words, its project named as the person named it. */
export function ruleText(rule: PolicyRule, projects: readonly PolicyProject[]): string {
  const names = new Map(projects.map((p) => [p.id, p.name]));
  return withProjectNames(ruleWords(rule), names);
}

/** "… in project prj_…" with the project's name in quotes (its id when the account has no such project now). */
export function withProjectNames(text: string, names: ReadonlyMap<string, string>): string {
  return text.replace(/\bproject (prj_[A-Za-z0-9]+)/g, (whole, id: string) => (names.has(id) ? `project “${names.get(id)}”` : whole));
}

/** What the rules are, in one phrase: a preset's title, or how many rules of its own. */
export function policyName(rules: readonly PolicyRule[]): string {
  const preset = presetOf(rules);
  if (preset) return POLICY_PRESETS[preset].title;
  return `Custom (${rules.length} rule${rules.length === 1 ? "" : "s"})`;
}

/** The rules for the activity feed: the preset's title and each rule in words. */
function policyForFeed(rules: readonly PolicyRule[], projects: readonly PolicyProject[]): string {
  const preset = presetOf(rules);
  const words = rules.map((r) => ruleText(r, projects)).join("; ");
  if (preset) return `${POLICY_PRESETS[preset].title} (${words || "no rules"})`;
  return words;
}

type Edit = { rules: PolicyRule[]; said: string } | { error: string; field?: string };

const quoteAll = (xs: readonly string[]) => xs.join(", ");

/** The rule the "add a rule" form describes, or what to fix. */
export function ruleFromForm(form: FormFields, projects: readonly PolicyProject[]): { rule: PolicyRule } | { error: string; field: string } {
  const decision = one(form, "decision");
  if (!decision || !POLICY_DECISIONS.includes(decision as PolicyDecision)) {
    return { error: `Decision: choose ${Object.values(DECISION_LABELS).join(", ")}.`, field: "decision" };
  }
  const rule: PolicyRule = { decision: decision as PolicyDecision };
  const applies = one(form, "applies") ?? "every";
  if (applies === "effect") {
    const effect = one(form, "effect");
    if (!effect || !POLICY_EFFECTS.includes(effect as PolicyEffect)) return { error: "Effect: choose which kind of tool the rule is about.", field: "effect" };
    rule.effect = effect as PolicyEffect;
  } else if (applies === "toolset") {
    const toolset = one(form, "toolset");
    if (!toolset || !POLICY_TOOLSETS.includes(toolset)) return { error: `Toolset: choose one of ${quoteAll(POLICY_TOOLSETS)}.`, field: "toolset" };
    rule.toolset = toolset;
  } else if (applies === "tool") {
    const tool = one(form, "tool");
    if (!tool || !(AGENT_TOOLS as readonly string[]).includes(tool)) return { error: "Tool: choose the one tool the rule is about.", field: "tool" };
    rule.tool = tool as ToolName;
  } else if (applies !== "every") {
    return { error: "Applies to: choose every tool, an effect, a toolset or one tool.", field: "applies" };
  }
  const where = one(form, "where") ?? "anywhere";
  if (where === "in" || where === "outside") {
    const project = one(form, "project");
    if (!project) return { error: "Project: choose the project the rule is about, or choose Anywhere.", field: "project" };
    if (!projects.some((p) => p.id === project)) return { error: "Project: choose one of this account's projects from the list.", field: "project" };
    if (where === "in") rule.project = project;
    else rule.outside_project = project;
  } else if (where !== "anywhere") {
    return { error: "Where: choose anywhere, only in a project, or only outside a project.", field: "where" };
  }
  return { rule };
}

/** The rules after the form's change (a preset, a rule added, a rule removed) to the rules the page showed, or what to fix. */
export function editedRules(shown: readonly PolicyRule[], form: FormFields, projects: readonly PolicyProject[]): Edit {
  const op = one(form, "op");
  if (op === "preset") {
    const preset = one(form, "preset");
    if (!preset || !isPolicyPreset(preset)) return { error: `Preset: choose ${POLICY_PRESET_TITLES}.`, field: "preset" };
    const rules = POLICY_PRESETS[preset].rules.map((r) => ({ ...r }));
    return { rules, said: `${POLICY_PRESETS[preset as PolicyPreset].title}. ${POLICY_PRESETS[preset].description}` };
  }
  if (op === "add") {
    const made = ruleFromForm(form, projects);
    if ("error" in made) return made;
    const text = canonicalRules([made.rule]);
    if (shown.some((r) => canonicalRules([r]) === text)) return { error: `That rule (${ruleText(made.rule, projects)}) is already in this policy; nothing was changed.` };
    return { rules: [...shown, made.rule], said: `added the rule “${ruleText(made.rule, projects)}”` };
  }
  if (op === "remove") {
    const n = Number(one(form, "rule"));
    if (!Number.isInteger(n) || n < 1 || n > shown.length) return { error: `There is no rule ${String(one(form, "rule") ?? "").slice(0, 10)} in this policy; reload the page and choose one of its rules.` };
    return { rules: shown.filter((_, i) => i !== n - 1), said: `removed the rule “${ruleText(shown[n - 1], projects)}”` };
  }
  return { error: "This policy form says neither preset, add nor remove; nothing was changed. Reload the page and try again." };
}

const POLICY_PRESET_TITLES = Object.values(POLICY_PRESETS).map((p) => p.title).join(", ");

/** Whose policy a form changes: an agent's, or one of its connections' own. */
export type PolicyTarget =
  | { kind: "agent"; id: string; agent: string }
  | { kind: "connection"; id: string; agent: string; label: string };

export type Saved = { ok: string } | { error: string; field?: string };

const REFUSED: Record<PolicyWriteRefusal, string> = {
  form_used: "This form was already sent and did its work then; nothing more was changed. The page shows the policy as it is now.",
  changed: "This policy changed after the page showed it (in another tab, or by someone else); nothing was changed. The page shows it as it is now: make your change again.",
};

/**
 * Applies the form to the rules the page showed (the form's `was`) and writes
 * them, with the activity row and the form's key, in one batch: only if they
 * are still the stored ones. A change to nothing writes nothing.
 */
export async function savePolicyFromForm(db: D1Database, p: Principal, target: PolicyTarget, form: FormFields, projects: readonly PolicyProject[]): Promise<Saved> {
  const tool = target.kind === "agent" ? "set_agent_policy" : "set_connection_policy";
  const once = formOnce(p, form, tool);
  if (!once) return { error: "This policy form is from an older page: nothing was changed. Make the change again below." };
  const wasText = form.was?.[0] ?? "";
  const parsedWas = parseRules(wasText);
  if ("error" in parsedWas) return { error: "This policy form is damaged (its record of the rules it showed); nothing was changed. Reload the page and try again." };
  const edit = editedRules(parsedWas.rules, form, projects);
  if ("error" in edit) return edit;
  const checked = parseRules(edit.rules);
  if ("error" in checked) return { error: `${checked.error.replace(/^policy/, "Policy")} Nothing was changed.` };
  const whose = target.kind === "agent" ? `${target.agent}'s policy` : `this connection's own rules`;
  const rules = rulesText(checked.rules);
  const was = wasText === "" ? null : wasText;
  if (rules === rulesText(parsedWas.rules)) {
    return { ok: `Nothing was changed: that is already ${whose} (${policyName(checked.rules)}).` };
  }
  const now = new Date().toISOString();
  const feed = policyForFeed(checked.rules, projects) || "no rules";
  const activity = insertActivity(db, {
    id: newId(ID_PREFIX.activity),
    accountId: p.accountId,
    tokenId: p.tokenId,
    actor: actorName(p),
    tool,
    targetId: target.id,
    personId: p.person?.id ?? null,
    summary:
      target.kind === "agent"
        ? SET_AGENT_POLICY.text({ agent: target.agent, policy: feed })
        : SET_CONNECTION_POLICY.text({ token: target.id, label: target.label, agent: target.agent, policy: feed }),
    now,
  });
  const write = { accountId: p.accountId, id: target.id, rules, was, activity, once: insertIdempotent(db, once, "", JSON.stringify({ id: target.id }), now) };
  const refused = target.kind === "agent" ? await writeAgentPolicy(db, write) : await writeTokenPolicy(db, write);
  if (refused) return { error: REFUSED[refused] };
  // Tokens resolved in this isolate carry the rules they were read with: the next call reads the new ones.
  forgetResolvedTokens();
  if (one(form, "op") === "preset") return { ok: `Saved ${whose}: ${edit.said}` };
  const count = checked.rules.length ? `${checked.rules.length} rule${checked.rules.length === 1 ? "" : "s"}` : "no rules";
  return { ok: `Saved ${whose}: ${edit.said}. It now has ${count}${presetOf(checked.rules) ? `, the same as ${policyName(checked.rules)}` : ""}.` };
}

/** The stored rules of a row, read back (a text this module wrote). */
export function rulesOf(stored: string | null): PolicyRule[] {
  return storedRules(stored);
}

/** The text of the stored rules as the forms carry them (`was`): "" for none. */
export function wasOf(stored: string | null): string {
  return stored ?? "";
}

/** A refused form's fields worth showing again: the choices, not the record of the rules it showed. */
export function formShown(form: FormFields): FormFields {
  const { was: _was, op: _op, rule: _rule, ...rest } = form;
  return rest;
}
