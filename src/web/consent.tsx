/**
 * The consent page: what consent-page.md says it must show — the app's name
 * (attacker-chosen, so escaped like everything else), its verified domain for
 * a Client ID Metadata Document client or a plain "not verified: it
 * registered itself", where the access goes (the redirect host, with a
 * warning for an app on this computer), and the choices: who the app acts as,
 * and what it may do.
 *
 * Nothing defaults to the person's standing: no "acts as" choice is checked
 * until the person picks one (the group is `required`, and the server refuses
 * a form without it), access starts at Read only, and the page says in plain
 * words what an app acting as the person may decide.
 */
import { shownClientName } from "../domain/client-registration.ts";
import { READ_SCOPE, WRITE_SCOPE } from "../domain/grants.ts";
import { PROVIDER_NAMES, PROVIDERS } from "../domain/providers.ts";
import { inWords } from "../domain/words.ts";
import { PRESETS, TOOLSETS } from "../catalog/toolsets.ts";
import { POLICY_PRESET_NAMES, POLICY_PRESETS, type PolicyPreset } from "../catalog/policy.ts";
import { HUMAN_TOOLS, TOOL_NAMES, TOOL_TITLES, WRITE_TOOLS, type ToolName } from "../catalog/effects.ts";
import { Layout, Notice } from "./layout.tsx";
import type { Session } from "./context.ts";

export interface ConsentFacts {
  clientName: string;
  clientDomain?: string;
  redirectHost: string;
  redirectIsLoopback: boolean;
  requested: string[];
}

export interface ConsentDefaults {
  /** Who the app acts as: null until the person chooses (the page never chooses for them). */
  actAs: "self" | "agent" | null;
  agentName: string;
  access: "read" | "write";
  /** Which tools the app sees: all, the agent preset, or the chosen toolsets. */
  tools: "all" | "agent" | "chosen";
  toolsets: string[];
  /** The policy of an app that acts as an agent: a preset (Trusted: its agent's rules alone, as before presets). */
  policy: PolicyPreset;
}

const AGENT_PRESET = PRESETS.find((p) => p.name === "agent");

/**
 * What only a person may do (HUMAN_TOOLS), in the words the consent page
 * uses; each phrase names the tools it stands for (test/oauth-consent.test.ts
 * holds the phrases to HUMAN_TOOLS, each tool once).
 */
export const PERSON_ONLY_POWERS: readonly { words: string; tools: readonly ToolName[] }[] = [
  { words: "approve or reject your agents' work and answer their questions", tools: ["approve_task", "reject_task"] },
  { words: "turn on auto-OK, so agents finish tasks without asking you", tools: ["set_auto_ok"] },
  { words: "pause and resume agents", tools: ["pause_agent", "resume_agent"] },
  { words: "revoke tokens and the access of connected apps", tools: ["revoke_token"] },
  { words: `disconnect ${inWords(PROVIDERS.map((p) => PROVIDER_NAMES[p]), "or")}`, tools: ["disconnect_connector"] },
  { words: "empty the trash for good", tools: ["empty_trash"] },
  { words: "change the account's settings", tools: ["update_account_settings"] },
];

/**
 * The phrases for what only a person may do, in order: every tool of
 * HUMAN_TOOLS is covered, by its phrase or else by its own title, so the page
 * never says less than a person's token allows.
 */
export function personOnlyPowers(): string[] {
  const covered = new Set(PERSON_ONLY_POWERS.flatMap((p) => p.tools));
  const phrases = PERSON_ONLY_POWERS.filter((p) => p.tools.some((t) => HUMAN_TOOLS.has(t))).map((p) => p.words);
  for (const t of HUMAN_TOOLS) if (!covered.has(t)) phrases.push(TOOL_TITLES[t].replace(/^./, (c) => c.toLowerCase()));
  return phrases;
}

/**
 * How many of these tools an app sees with each access: the page works
 * without script, so both counts are shown, each named by its choice.
 */
function Counts(props: { tools: readonly string[] }) {
  const read = props.tools.filter((t) => !WRITE_TOOLS.has(t as never)).length;
  return (
    <span class="muted">
      ({props.tools.length} tools with read and write; {read} with read only)
    </span>
  );
}

/** The OAuth scopes an app asked for, in words a person reads ("to read your tasks and to change your tasks"). */
export function askedFor(scopes: string[]): string {
  const words = scopes.map((s) => (s === READ_SCOPE ? "to read your tasks" : s === WRITE_SCOPE ? "to change your tasks" : `for “${s}”, which Taskgate does not offer`));
  if (words.length === 0) return "for no access in particular (you choose below)";
  return inWords(words);
}

export function ConsentPage(props: {
  facts: ConsentFacts;
  handle: string;
  session: Session;
  agents: { name: string; paused: boolean }[];
  defaults: ConsentDefaults;
  error?: string;
}) {
  const { facts, defaults } = props;
  const name = shownClientName(facts.clientName);
  const verified = Boolean(facts.clientDomain);
  return (
    <Layout title={`Connect ${name}`} session={props.session}>
      <section class="card">
        {verified ? (
          <h1>
            Allow <bdi class="u">{name}</bdi> to use your Taskgate account?
          </h1>
        ) : (
          <h1>
            Allow the app that calls itself “<bdi class="u">{name}</bdi>” to use your Taskgate account?
          </h1>
        )}
        {verified ? null : (
          <Notice kind="warn">
            <strong>Not verified.</strong> This app registered itself, as any app can; Taskgate has not verified who made it. Its name, “
            <bdi class="u">{name}</bdi>”, is one it chose for itself.
          </Notice>
        )}
        <ul class="facts">
          {verified ? (
            <li>
              Published by <strong>{facts.clientDomain}</strong>: Taskgate fetched its description from there.
            </li>
          ) : null}
          <li>
            Access will be sent to <strong>{facts.redirectHost}</strong>.
          </li>
          <li>It asked {askedFor(facts.requested)}; you choose below what it gets.</li>
        </ul>
        {facts.redirectIsLoopback ? (
          <Notice kind="warn">
            This sends access to an app on your computer. Any program there could be listening under this name: continue only if you just started
            connecting from it.
          </Notice>
        ) : null}
        {props.error ? <Notice kind="error">{props.error}</Notice> : null}
        <form method="post" action="/authorize">
          <input type="hidden" name="handle" value={props.handle} />
          <input type="hidden" name="csrf" value={props.session.csrfToken} />
          <fieldset>
            <legend>The app acts as (choose one)</legend>
            <label for="act_as_agent">
              <input type="radio" id="act_as_agent" name="act_as" value="agent" required checked={defaults.actAs === "agent"} />
              One of my agents
            </label>
            <label for="agent_name" class="field">
              Agent name
            </label>
            <input id="agent_name" name="agent_name" list="agent_names" value={defaults.agentName} placeholder="e.g. claude-code" autocomplete="off" />
            <datalist id="agent_names">
              {props.agents.map((a) => (
                <option value={a.name}>{a.paused ? `${a.name} (paused: may only read)` : a.name}</option>
              ))}
            </datalist>
            <p class="muted">
              An agent is named in the audit feed, holds its own tasks, and can never approve its own work. A new name creates the agent.
            </p>
            <label for="act_as_self">
              <input type="radio" id="act_as_self" name="act_as" value="self" required aria-describedby="act_as_self_means" checked={defaults.actAs === "self"} />
              Myself
            </label>
            <div class="means" id="act_as_self_means">
              <p>Acting as you with read and write, the app can do everything you can, including what only you may:</p>
              <ul>
                {personOnlyPowers().map((words) => (
                  <li>{words}</li>
                ))}
              </ul>
              <p>
                <strong>If an agent sent you this link, choose One of my agents:</strong> acting as you, it could approve its own work. Choose Myself only
                for an app you use yourself.
              </p>
            </div>
          </fieldset>
          <fieldset>
            <legend>If it acts as an agent, it works</legend>
            {POLICY_PRESET_NAMES.map((n) => (
              <label for={`policy_${n}`}>
                <input type="radio" id={`policy_${n}`} name="policy" value={n} checked={defaults.policy === n} aria-describedby={`policy_${n}_means`} />
                <span>
                  <strong>{POLICY_PRESETS[n].title}</strong>: <span id={`policy_${n}_means`}>{n === "trusted" ? "everything its access and the agent's own rules allow, without asking you." : POLICY_PRESETS[n].description.replace(/^./, (c) => c.toLowerCase())}</span>
                </span>
              </label>
            ))}
            <p class="muted">
              This holds for this app's connection only, on top of the agent's own rules, which you set on the agent's page of your console; it can
              narrow them, never widen them. Acting as you, an app is limited by what it may do (below) alone.
            </p>
          </fieldset>
          <fieldset>
            <legend>It may</legend>
            <label for="access_read">
              <input type="radio" id="access_read" name="access" value="read" required checked={defaults.access === "read"} />
              Read only
            </label>
            <label for="access_write">
              <input type="radio" id="access_write" name="access" value="write" required checked={defaults.access === "write"} />
              Read and write
            </label>
            <p class="muted">
              Read only lets it look at your tasks, projects and activity; read and write also lets it create, change and complete them. You can
              revoke its access any time on the Apps &amp; tokens page of your console.
            </p>
          </fieldset>
          <fieldset>
            <legend>It sees these tools</legend>
            <label for="tools_all">
              <input type="radio" id="tools_all" name="tools" value="all" checked={defaults.tools === "all"} />
              Every tool its access allows <Counts tools={TOOL_NAMES} />
            </label>
            {AGENT_PRESET ? (
              <label for="tools_agent">
                <input type="radio" id="tools_agent" name="tools" value="agent" checked={defaults.tools === "agent"} />
                An agent's working loop (its tasks, steps, runs, comments, complete, ask for approval) <Counts tools={AGENT_PRESET.tools} />
              </label>
            ) : null}
            <label for="tools_chosen">
              <input type="radio" id="tools_chosen" name="tools" value="chosen" checked={defaults.tools === "chosen"} />
              Only these toolsets:
            </label>
            <div class="toolsets">
              {TOOLSETS.map((t) => (
                <label for={`toolset_${t.name}`}>
                  <input type="checkbox" id={`toolset_${t.name}`} name="toolset" value={t.name} checked={defaults.toolsets.includes(t.name)} />
                  {t.title} <Counts tools={t.tools} />
                </label>
              ))}
            </div>
            <p class="muted">
              Fewer tools leave the app's model more room; some apps (Cursor, VS Code) limit how many they use. What the app may do is still decided by its
              access above.
            </p>
          </fieldset>
          <div class="actions">
            <button type="submit" name="decision" value="allow">Allow</button>
            <button type="submit" name="decision" value="deny" class="secondary" formnovalidate>
              Deny
            </button>
          </div>
        </form>
      </section>
    </Layout>
  );
}
