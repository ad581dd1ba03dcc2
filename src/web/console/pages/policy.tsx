import type { FC } from "hono/jsx";
import { TOOL_TITLES, type ToolName } from "../../../catalog/effects.ts";
import { decideAll, POLICY_DECISIONS, POLICY_EFFECTS, POLICY_PRESET_NAMES, POLICY_PRESETS, presetOf, type Policy, type PolicyRule } from "../../../catalog/policy.ts";
import { TOOLSETS } from "../../../catalog/toolsets.ts";
import type { AgentPolicyPage as AgentData, PolicyProject, TokenPolicyPage as TokenData } from "../../../db/policy-edits.ts";
import { newFormId } from "../once.ts";
import { AGENT_TOOLS, DECISION_LABELS, EFFECT_LABELS, policyName, ruleText, rulesOf, wasOf, withProjectNames } from "../policy.ts";
import { Badge, Button, Empty, Shell, typed, invalidField, Written, type View } from "../ui.tsx";

/** Where a policy's forms post. */
export const agentPolicyPath = (name: string) => `/agents/${encodeURIComponent(name)}/policy`;
export const tokenPolicyPath = (id: string) => `/apps/tokens/${encodeURIComponent(id)}/policy`;

/** The hidden fields every policy form carries: CSRF, its one-time key, and the rules the page showed. */
const Hidden: FC<{ view: View; op: string; was: string }> = ({ view, op, was }) => (
  <>
    <input type="hidden" name="csrf" value={view.csrf} />
    <input type="hidden" name="form_id" value={newFormId()} />
    <input type="hidden" name="was" value={was} />
    <input type="hidden" name="op" value={op} />
  </>
);

const DecisionBadge: FC<{ decision: string }> = ({ decision }) => <Badge status={decision} text={DECISION_LABELS[decision as keyof typeof DECISION_LABELS] ?? decision} />;

/** The rules of one list, in words, in order; each with a Remove button when the page may change them. */
const RuleList: FC<{ view: View; rules: PolicyRule[]; projects: PolicyProject[]; action: string | null; was: string; empty: string; label: string }> = (p) =>
  p.rules.length === 0 ? (
    <p class="hint">{p.empty}</p>
  ) : (
    <ol class="rules" aria-label={p.label}>
      {p.rules.map((r, i) => (
        <li>
          <DecisionBadge decision={r.decision} /> <span>{ruleText(r, p.projects)}</span>
          {p.action ? (
            <form method="post" action={p.action} class="inline" aria-label={`Remove rule ${i + 1}`}>
              <Hidden view={p.view} op="remove" was={p.was} />
              <input type="hidden" name="rule" value={String(i + 1)} />
              {" "}<Button kind="link" label={`Remove rule ${i + 1}: ${ruleText(r, p.projects)}`}>Remove</Button>
            </form>
          ) : null}
        </li>
      ))}
    </ol>
  );

/** The presets as radio buttons with their descriptions; the current one is checked. */
const PresetForm: FC<{ view: View; action: string; was: string; rules: PolicyRule[]; legend: string; hint: string }> = (p) => {
  const current = presetOf(p.rules);
  const chosen = typed(p.view, "preset") ?? current;
  return (
    <form method="post" action={p.action} aria-labelledby="h-preset">
      <Hidden view={p.view} op="preset" was={p.was} />
      <fieldset>
        <legend id="h-preset">{p.legend}</legend>
        {POLICY_PRESET_NAMES.map((n) => (
          <label for={`preset-${n}`} class="choice">
            <input type="radio" id={`preset-${n}`} name="preset" value={n} checked={chosen === n} aria-describedby={`preset-${n}-means`} />
            <span>
              <strong>{POLICY_PRESETS[n].title}</strong>
              <span class="hint" id={`preset-${n}-means`}>{POLICY_PRESETS[n].description}</span>
            </span>
          </label>
        ))}
      </fieldset>
      <p class="hint">{p.hint}</p>
      <div class="actions"><Button kind="primary">Save preset</Button></div>
    </form>
  );
};

/** A rule made of choices: the decision, what it applies to, and where. */
const AddRuleForm: FC<{ view: View; action: string; was: string; projects: PolicyProject[] }> = ({ view, action, was, projects }) => {
  const t = (name: string) => typed(view, name);
  const applies = t("applies") ?? "every";
  const where = t("where") ?? "anywhere";
  return (
    <form method="post" action={action} aria-labelledby="h-add">
      <Hidden view={view} op="add" was={was} />
      <h3 id="h-add">Add a rule</h3>
      <div class="row top">
        <div>
          <label for="r-decision">Decision</label>
          <select id="r-decision" name="decision" aria-invalid={invalidField(view, "decision")}>
            {POLICY_DECISIONS.map((d) => <option value={d} selected={t("decision") === d}>{DECISION_LABELS[d]}</option>)}
          </select>
        </div>
      </div>
      <fieldset>
        <legend>Applies to</legend>
        <label for="r-every" class="choice"><input type="radio" id="r-every" name="applies" value="every" checked={applies === "every"} /> Every tool</label>
        <div class="pick">
          <label for="r-effect-on" class="choice"><input type="radio" id="r-effect-on" name="applies" value="effect" checked={applies === "effect"} /> An effect</label>
          <select id="r-effect" name="effect" aria-label="Effect" aria-invalid={invalidField(view, "effect")}>
            {POLICY_EFFECTS.map((e) => <option value={e} selected={t("effect") === e}>{EFFECT_LABELS[e]}</option>)}
          </select>
        </div>
        <div class="pick">
          <label for="r-toolset-on" class="choice"><input type="radio" id="r-toolset-on" name="applies" value="toolset" checked={applies === "toolset"} /> A toolset</label>
          <select id="r-toolset" name="toolset" aria-label="Toolset" aria-invalid={invalidField(view, "toolset")}>
            {TOOLSETS.map((s) => <option value={s.name} selected={t("toolset") === s.name}>{s.title}</option>)}
          </select>
        </div>
        <div class="pick">
          <label for="r-tool-on" class="choice"><input type="radio" id="r-tool-on" name="applies" value="tool" checked={applies === "tool"} /> One tool</label>
          <select id="r-tool" name="tool" aria-label="Tool" aria-invalid={invalidField(view, "tool")}>
            {AGENT_TOOLS.map((n) => <option value={n} selected={t("tool") === n}>{n}: {TOOL_TITLES[n]}</option>)}
          </select>
        </div>
      </fieldset>
      <fieldset>
        <legend>Where</legend>
        <label for="r-anywhere" class="choice"><input type="radio" id="r-anywhere" name="where" value="anywhere" checked={where === "anywhere"} /> Anywhere</label>
        <label for="r-in" class="choice"><input type="radio" id="r-in" name="where" value="in" checked={where === "in"} disabled={projects.length === 0} /> Only in the project below</label>
        <label for="r-outside" class="choice"><input type="radio" id="r-outside" name="where" value="outside" checked={where === "outside"} disabled={projects.length === 0} /> Only outside the project below</label>
        {projects.length ? (
          <div class="pick">
            <label for="r-project">Project</label>
            <select id="r-project" name="project" aria-invalid={invalidField(view, "project")}>
              {projects.map((p) => <option value={p.id} selected={t("project") === p.id}>{p.name}{p.archived ? " (archived)" : ""}</option>)}
            </select>
          </div>
        ) : <p class="hint">This account has no projects yet: a rule can only hold anywhere.</p>}
      </fieldset>
      <p class="hint">
        A call reaches a project when a task, step, comment or run it names lies in it; a call that names none is outside every project.
      </p>
      <div class="actions"><Button kind="primary">Add rule</Button></div>
    </form>
  );
};

/** What the rules decide for each tool an agent may be given: allow, ask or deny, with the rule that says so. */
const DecisionTable: FC<{ policy: Policy; projects: PolicyProject[] }> = ({ policy, projects }) => {
  const names = new Map(projects.map((p) => [p.id, p.name]));
  const decided = [...decideAll(policy, AGENT_TOOLS)];
  const count = (d: string) => decided.filter(([, v]) => v.decision === d).length;
  return (
    <section aria-labelledby="h-decides">
      <h2 id="h-decides">What each tool decides</h2>
      <p class="hint">
        {count("allow")} allowed, {count("ask")} ask you first, {count("deny")} denied (a denied tool is not listed to the agent). A token's scope still
        decides first: a read-only token never gets a tool that changes data.
      </p>
      <div class="table">
        <table class="stack decides">
          <thead><tr><th scope="col">Tool</th><th scope="col">Decision</th><th scope="col">Why</th></tr></thead>
          <tbody>
            {decided.map(([tool, v]) => (
              <tr>
                <td data-label="Tool"><code>{tool}</code> <span class="hint">{TOOL_TITLES[tool as ToolName]}</span></td>
                <td data-label="Decision"><DecisionBadge decision={v.decision} /></td>
                <td data-label="Why">
                  {v.source === "default" ? <span class="muted">No rule covers it.</span> : withProjectNames(v.rule, names)}
                  {(v.where ?? []).map((w) => (
                    <div class="hint">
                      {w.outside ? "Outside" : "In"} project {names.has(w.project) ? `“${names.get(w.project)}”` : w.project}: <DecisionBadge decision={w.decision} /> ({withProjectNames(w.rule, names)})
                    </div>
                  ))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
};

const HOW_RULES_WORK =
  "Rules are checked deny first, then ask, then allow; of two rules that decide alike, the more specific one is named (one tool before a toolset before an effect before every tool, a rule about a project before one about anywhere). A tool no rule covers is allowed.";

export const AgentPolicyPage: FC<{ view: View; data: AgentData }> = ({ view, data }) => {
  const agent = data.agent;
  if (!agent) {
    return (
      <Shell view={view} section="agents" title="Policy">
        <h1>Policy</h1>
        <Empty>There is no such agent in this account. <a href="/agents">Agents</a> lists them.</Empty>
      </Shell>
    );
  }
  const rules = rulesOf(agent.policy);
  const was = wasOf(agent.policy);
  const action = agentPolicyPath(agent.name);
  return (
    <Shell view={view} section="agents" title={`Policy of ${agent.name}`}>
      <p class="hint"><a href="/agents">Agents</a> ›</p>
      <h1>Policy of <Written text={agent.name} /></h1>
      <p>
        What <Written text={agent.name} /> may do without asking you, what waits for your approval, and what it may not do at all. These rules hold for
        every connection of this agent (its tg_ tokens and the apps that act as it); a connection's own rules can only narrow them.
      </p>
      <section class="card" aria-labelledby="h-current">
        <h2 id="h-current">Now: {policyName(rules)}</h2>
        <RuleList view={view} rules={rules} projects={data.projects} action={action} was={was} label="Rules" empty="No rules: every tool its tokens' scope allows runs without asking you." />
        <p class="hint">{HOW_RULES_WORK}</p>
      </section>
      <section class="card">
        <PresetForm view={view} action={action} was={was} rules={rules} legend="Choose a preset" hint="A preset replaces all the rules above." />
      </section>
      <section class="card">
        <AddRuleForm view={view} action={action} was={was} projects={data.projects} />
      </section>
      {data.connections.length ? (
        <section class="card" aria-labelledby="h-connections">
          <h2 id="h-connections">Its connections</h2>
          <p class="hint">Each can have rules of its own, which only narrow these.</p>
          <ul>
            {data.connections.map((c) => (
              <li>
                <a href={tokenPolicyPath(c.id)}><Written text={c.client_name ?? c.label} max={80} /></a>{" "}
                <span class="hint">({c.scope === "write" ? "read and write" : "read only"}; own rules: {c.policy ? policyName(rulesOf(c.policy)) : "none"})</span>
              </li>
            ))}
          </ul>
        </section>
      ) : null}
      <DecisionTable policy={{ agent: rules, connection: [] }} projects={data.projects} />
    </Shell>
  );
};

export const TokenPolicyPage: FC<{ view: View; data: TokenData }> = ({ view, data }) => {
  const t = data.token;
  if (!t || t.kind !== "agent" || !t.agent_name) {
    return (
      <Shell view={view} section="apps" title="Connection policy">
        <p class="hint"><a href="/apps">Apps &amp; tokens</a> ›</p>
        <h1>Connection policy</h1>
        <Empty>
          {t ? "This token acts as you: a policy holds only for agents. " : "There is no such token or connection in this account. "}
          <a href="/apps">Apps &amp; tokens</a> lists them.
        </Empty>
      </Shell>
    );
  }
  const own = rulesOf(t.policy);
  const agentRules = rulesOf(t.agent_policy);
  const was = wasOf(t.policy);
  const live = t.revoked_at === null;
  const action = tokenPolicyPath(t.id);
  const name = t.client_name ?? t.label;
  return (
    <Shell view={view} section="apps" title={`Policy of ${name}`}>
      <p class="hint"><a href="/apps">Apps &amp; tokens</a> ›</p>
      <h1>Policy of <Written text={name} max={80} /></h1>
      <p>
        This connection acts as agent <a href={agentPolicyPath(t.agent_name)}><Written text={t.agent_name} /></a>, {t.scope === "write" ? "read and write" : "read only"}.
        Its own rules are checked together with the agent's: they can only narrow what the agent may do, never widen it (an allow here never
        outweighs the agent's ask or deny).
      </p>
      {live ? null : <p class="notice warn">This connection is revoked: its rules can no longer be changed.</p>}
      <section class="card" aria-labelledby="h-agent-rules">
        <h2 id="h-agent-rules">The agent's rules: {policyName(agentRules)}</h2>
        <RuleList view={view} rules={agentRules} projects={data.projects} action={null} was="" label="The agent's rules" empty="The agent has no rules." />
        <p class="hint">Change them on <a href={agentPolicyPath(t.agent_name)}>the agent's policy page</a>; they hold for all its connections.</p>
      </section>
      <section class="card" aria-labelledby="h-current">
        <h2 id="h-current">This connection's own rules: {own.length ? policyName(own) : "none"}</h2>
        <RuleList view={view} rules={own} projects={data.projects} action={live ? action : null} was={was} label="This connection's own rules" empty="None: it may do what the agent's rules allow." />
        <p class="hint">{HOW_RULES_WORK}</p>
      </section>
      {live ? (
        <>
          <section class="card">
            <PresetForm view={view} action={action} was={was} rules={own} legend="Choose a preset for this connection" hint="A preset replaces this connection's own rules; Trusted leaves it none, so the agent's rules alone decide." />
          </section>
          <section class="card">
            <AddRuleForm view={view} action={action} was={was} projects={data.projects} />
          </section>
        </>
      ) : null}
      <DecisionTable policy={{ agent: agentRules, connection: own }} projects={data.projects} />
    </Shell>
  );
};
