import type { FC } from "hono/jsx";
import type { AppsPage as Data } from "../../../db/console.ts";
import { PROVIDER_NAMES, PROVIDERS } from "../../../domain/providers.ts";
import { claudeDesktopConfig, cursorConfig, vscodeConfig } from "../../../domain/client-config.ts";
import { clip, statusWord } from "../format.ts";
import { newFormId } from "../once.ts";
import { Act, AskFirst, Badge, Button, Empty, Field, Shell, When, Written, type View } from "../ui.tsx";
import { POLICY_PRESET_NAMES, POLICY_PRESETS } from "../../../catalog/policy.ts";
import { policyName, rulesOf } from "../policy.ts";
import { tokenPolicyPath } from "./policy.tsx";

/** A tg_ token or an app's OAuth grant, as list_tokens shows it. */
export interface TokenItem {
  id: string;
  source: "token" | "oauth";
  label: string;
  kind: "human" | "agent";
  scope: "read" | "write";
  agent: string | null;
  prefix: string | null;
  client: { id: string; name: string } | null;
  state: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}

const nameOf = (t: TokenItem) => clip(t.client?.name ?? t.label, 80).text;

export interface NewToken {
  secret: string;
  label: string;
  kind: "human" | "agent";
  scope: "read" | "write";
  agent: string | null;
  /** Its own policy's preset, when it has one. */
  policy?: string;
}

/** Where an app's access goes: the host of its redirect URI (what tells two apps of one name apart). */
function hostOf(uri: string | undefined): string | null {
  if (!uri) return null;
  try {
    return new URL(uri).host || uri;
  } catch {
    return uri;
  }
}

const TokenRows: FC<{ view: View; items: TokenItem[]; revocable: boolean; redirects: Map<string, string>; policies: Map<string, string> }> = ({ view, items, revocable, redirects, policies }) => (
  <div class="table">
    <table class="stack">
      <thead>
        <tr><th scope="col">Name</th><th scope="col">Acts as</th><th scope="col">Scope</th><th scope="col">Own policy</th><th scope="col">State</th><th scope="col">Created</th><th scope="col">Last used</th>{revocable ? <th scope="col"><span class="sr">Revoke</span></th> : null}</tr>
      </thead>
      <tbody>
        {items.map((t) => (
          <tr>
            <td data-label="Name">
              <Written text={t.client?.name ?? t.label} max={80} />
              <div class="hint">
                {t.source === "oauth" ? (
                  <>
                    app connected by URL{hostOf(redirects.get(t.id)) ? <>, sends access to <Written text={hostOf(redirects.get(t.id))} max={80} /></> : null}
                    {t.client ? <>; client <code title={t.client.id}>{clip(t.client.id, 12).text}</code></> : null}
                    , connected <When view={view} iso={t.created_at} />
                  </>
                ) : <>tg_ token{t.prefix ? <> <code>{t.prefix}</code></> : null}</>}
              </div>
            </td>
            <td data-label="Acts as">{t.kind === "agent" ? <>agent <strong>{t.agent}</strong></> : "you"}</td>
            <td data-label="Scope">{t.scope === "write" ? "read and write" : "read only"}</td>
            <td data-label="Own policy">
              {t.kind === "agent" ? (
                <a href={tokenPolicyPath(t.id)}>
                  {policies.has(t.id) ? policyName(rulesOf(policies.get(t.id) ?? null)) : "none"}<span class="sr"> (the own policy of {nameOf(t)})</span>
                </a>
              ) : <span class="muted">not an agent</span>}
            </td>
            <td data-label="State"><Badge status={t.state} /></td>
            <td data-label="Created"><When view={view} iso={t.created_at} /></td>
            <td data-label="Last used"><When view={view} iso={t.last_used_at} /></td>
            {revocable ? (
              <td>
                <AskFirst view={view} action="revoke" fields={{ token_id: t.id }}>
                  <Button kind="danger" label={`Revoke ${nameOf(t)}`}>Revoke</Button>
                </AskFirst>
              </td>
            ) : null}
          </tr>
        ))}
      </tbody>
    </table>
  </div>
);

const Created: FC<{ t: NewToken; mcpUrl: string }> = ({ t, mcpUrl }) => (
  <section class="card created" aria-labelledby="h-new-token">
    <h2 id="h-new-token">Your new token</h2>
    <p>
      <strong><Written text={t.label} /></strong>: {t.kind === "agent" ? `agent ${t.agent}` : "you"}, {t.scope === "write" ? "read and write" : "read only"}{t.policy ? `, its own policy ${t.policy}` : ""}.
      Copy it now: it is shown only once and Taskgate keeps only its hash.
    </p>
    <pre class="secret" aria-label="Token">{t.secret}</pre>
    <p>MCP server: <code>{mcpUrl}</code>, header <code>Authorization: Bearer {t.secret}</code></p>
    <details open>
      <summary>Claude Desktop (claude_desktop_config.json)</summary>
      <pre class="secret">{claudeDesktopConfig(mcpUrl, t.secret)}</pre>
    </details>
    <details>
      <summary>Cursor (~/.cursor/mcp.json)</summary>
      <pre class="secret">{cursorConfig(mcpUrl, t.secret)}</pre>
    </details>
    <details>
      <summary>VS Code (.vscode/mcp.json)</summary>
      <pre class="secret">{vscodeConfig(mcpUrl, t.secret)}</pre>
    </details>
  </section>
);

export interface TokenListing {
  items: TokenItem[];
  next: string | null;
  /** Whether revoked and expired ones are listed too. */
  all: boolean;
  error: string | null;
}

/** The URL to give an app that connects itself (OAuth). */
const ConnectByUrl: FC<{ mcpUrl: string }> = ({ mcpUrl }) => (
  <section class="card" aria-labelledby="h-url">
    <h2 id="h-url">Connect an app by URL</h2>
    <p>
      Give Claude, ChatGPT, Cursor or VS Code this URL: <code>{mcpUrl}</code>. The app sends you to Taskgate to sign in, and you choose
      whether it acts as you or as one of your agents, and whether it may only read or also change things.
    </p>
  </section>
);

/** Each provider agents may search and read, connected or not. */
const Connectors: FC<{ view: View; data: Data; setupError: string | null }> = ({ view, data, setupError }) => (
  <>
    <h2>Connected apps</h2>
    <p class="hint">Apps agents may search and read for context. The operator connects them with the admin CLI.</p>
    {setupError ? <p class="notice warn">{setupError}</p> : null}
    <div class="grid">
      {PROVIDERS.map((p) => {
        const row = data.connectors.find((c) => c.provider === p);
        const status = row ? (row.status === "connected" ? "connected" : "auth_failed") : "not_connected";
        return (
          <article class="card" aria-labelledby={`c-${p}`}>
            <h3 id={`c-${p}`}>{PROVIDER_NAMES[p]} <Badge status={status} text={statusWord(status)} /></h3>
            {row ? <p class="hint">connected <When view={view} iso={row.created_at} /></p> : <p class="hint">Not connected.</p>}
            {row?.last_error ? <p class="body">Last error: <Written text={row.last_error} max={300} /></p> : null}
            {row ? (
              <Act view={view} action="disconnect" fields={{ provider: p }}>
                <Button kind="danger" label={`Disconnect ${PROVIDER_NAMES[p]}`}>Disconnect</Button>
              </Act>
            ) : null}
          </article>
        );
      })}
    </div>
  </>
);

/** This page of list_tokens: the working ones (revocable), then revoked and expired ones when asked for, and the way to more. */
const Tokens: FC<{ view: View; data: Data; tokens: TokenListing }> = ({ view, data, tokens }) => {
  const live = tokens.items.filter((t) => t.state === "active");
  const redirects = new Map(data.redirects.map((r) => [r.id, r.redirect_uri]));
  const policies = new Map(data.policies.map((r) => [r.id, r.policy]));
  const ended = tokens.items.filter((t) => t.state !== "active");
  const tokensHref = (cursor: string | null) => {
    const p = new URLSearchParams();
    if (tokens.all) p.set("tokens", "all");
    if (cursor) p.set("cursor", cursor);
    const q = p.toString();
    return q ? `/apps?${q}` : "/apps";
  };
  return (
    <>
      <h2>Connections and tokens</h2>
      <p class="hint">Everything that can call Taskgate for this account: apps you connected by URL (OAuth) and tg_ tokens. Revoking ends access at once.</p>
      <p class="hint">
        A connection that acts as an agent follows the agent's policy (Agents); its own policy can only narrow that, for this connection alone: an
        allow of its own never outweighs the agent's ask or deny.
      </p>
      {tokens.error ? <p class="notice error">{tokens.error}</p> : null}
      {live.length ? <TokenRows view={view} items={live} revocable={true} redirects={redirects} policies={policies} /> : <Empty>No working tokens or connections{tokens.next ? " on this page" : ""}.</Empty>}
      {ended.length ? (
        <>
          <h3>Revoked and expired</h3>
          <TokenRows view={view} items={ended} revocable={false} redirects={redirects} policies={policies} />
        </>
      ) : null}
      <nav class="pager" aria-label="More tokens">
        <a class="button" href={tokens.all ? "/apps" : "/apps?tokens=all"}>{tokens.all ? "Hide revoked and expired" : "Show revoked and expired too"}</a>
        {tokens.next ? <a class="button" href={tokensHref(tokens.next)}>More</a> : null}
      </nav>
    </>
  );
};

/** The form that creates a tg_ token (POST /apps/tokens, once per render). */
const CreateToken: FC<{ view: View; data: Data }> = ({ view, data }) => (
  <section class="card" aria-labelledby="h-create">
    <h2 id="h-create">Create a tg_ token</h2>
    <p class="hint">For agents in CI, scripts and hosts that send a header. The token is shown once, with configurations to paste.</p>
    <form method="post" action="/apps/tokens" aria-label="Create a token">
      <input type="hidden" name="csrf" value={view.csrf} />
      <input type="hidden" name="form_id" value={newFormId()} />
      <div class="row top">
        <Field id="k-kind" label="Acts as">
          <select id="k-kind" name="kind">
            <option value="agent">An agent</option>
            <option value="human">You</option>
          </select>
        </Field>
        <Field id="k-agent" label="Agent name">
          <input type="text" id="k-agent" name="agent" list="k-agents" maxlength={63} pattern={"[a-z0-9][a-z0-9_.\\-]{0,62}"} aria-describedby="k-agent-hint" />
          <datalist id="k-agents">{data.agents.map((g) => <option value={g.name} />)}</datalist>
        </Field>
        <Field id="k-scope" label="May">
          <select id="k-scope" name="scope">
            <option value="write">Read and write</option>
            <option value="read">Read only</option>
          </select>
        </Field>
        <Field id="k-label" label="Label" class="grow">
          <input type="text" id="k-label" name="label" maxlength={100} placeholder="e.g. CI on main" />
        </Field>
      </div>
      <p class="hint" id="k-agent-hint">Agent name (for a token that acts as an agent): an existing agent or a new one, in lowercase letters, digits, _ . -</p>
      <fieldset>
        <legend>Its own policy (a token that acts as an agent)</legend>
        {POLICY_PRESET_NAMES.map((n) => (
          <label for={`k-policy-${n}`} class="choice">
            <input type="radio" id={`k-policy-${n}`} name="policy" value={n} checked={n === "trusted"} aria-describedby={`k-policy-${n}-means`} />
            <span>
              <strong>{POLICY_PRESETS[n].title}</strong>
              <span class="hint" id={`k-policy-${n}-means`}>{n === "trusted" ? "Its agent's policy alone decides: everything the token's scope and the agent's rules allow, without asking." : POLICY_PRESETS[n].description}</span>
            </span>
          </label>
        ))}
        <p class="hint">It only narrows the agent's policy, for this token alone; change it later on the token's policy page.</p>
      </fieldset>
      <div class="actions"><Button kind="primary">Create token</Button></div>
    </form>
  </section>
);

export const AppsPage: FC<{
  view: View; data: Data; tokens: TokenListing; setupError: string | null; created: NewToken | null; mcpUrl: string;
}> = ({ view, data, tokens, setupError, created, mcpUrl }) => (
  <Shell view={view} section="apps" title="Apps & tokens">
    <h1>Apps &amp; tokens</h1>
    {created ? <Created t={created} mcpUrl={mcpUrl} /> : null}
    <ConnectByUrl mcpUrl={mcpUrl} />
    <Connectors view={view} data={data} setupError={setupError} />
    <Tokens view={view} data={data} tokens={tokens} />
    <CreateToken view={view} data={data} />
  </Shell>
);
