/**
 * The consent page: what consent-page.md says it must show — the app's name
 * (attacker-chosen, so escaped like everything else), its verified domain for
 * a Client ID Metadata Document client or a plain "it registered itself", where
 * the access goes (the redirect host, with a warning for an app on this
 * computer), and the choices: who the app acts as, and what it may do.
 */
import { shownClientName } from "../domain/client-registration.ts";
import { READ_SCOPE, WRITE_SCOPE } from "../domain/grants.ts";
import { PRESETS, TOOLSETS } from "../catalog/toolsets.ts";
import { TOOL_NAMES, WRITE_TOOLS } from "../catalog/effects.ts";
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
  actAs: "self" | "agent";
  agentName: string;
  access: "read" | "write";
  /** Which tools the app sees: all, the agent preset, or the chosen toolsets. */
  tools: "all" | "agent" | "chosen";
  toolsets: string[];
}

const AGENT_PRESET = PRESETS.find((p) => p.name === "agent");

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
  return words.length === 1 ? words[0] : `${words.slice(0, -1).join(", ")} and ${words[words.length - 1]}`;
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
  return (
    <Layout title={`Connect ${name}`} session={props.session}>
      <section class="card">
        <h1>Allow <bdi class="u">{name}</bdi> to use your Taskgate account?</h1>
        <ul class="facts">
          <li>
            {facts.clientDomain ? (
              <>
                Published by <strong>{facts.clientDomain}</strong>.
              </>
            ) : (
              "This app registered itself; its name is not verified."
            )}
          </li>
          <li>
            Access will be sent to <strong>{facts.redirectHost}</strong>.
          </li>
          <li>It asked {askedFor(facts.requested)}.</li>
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
            <legend>The app acts as</legend>
            <label for="act_as_self">
              <input type="radio" id="act_as_self" name="act_as" value="self" checked={defaults.actAs === "self"} />
              Myself
            </label>
            <label for="act_as_agent">
              <input type="radio" id="act_as_agent" name="act_as" value="agent" checked={defaults.actAs === "agent"} />
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
          </fieldset>
          <fieldset>
            <legend>It may</legend>
            <label for="access_read">
              <input type="radio" id="access_read" name="access" value="read" checked={defaults.access === "read"} />
              Read only
            </label>
            <label for="access_write">
              <input type="radio" id="access_write" name="access" value="write" checked={defaults.access === "write"} />
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
            <button type="submit" name="decision" value="deny" class="secondary">Deny</button>
          </div>
        </form>
      </section>
    </Layout>
  );
}
