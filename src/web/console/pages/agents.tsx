import type { FC } from "hono/jsx";
import type { AgentsPage as Data } from "../../../db/console.ts";
import { clip } from "../format.ts";
import { Act, Badge, Button, Empty, Shell, When, Written, type View } from "../ui.tsx";
import { policyName, rulesOf } from "../policy.ts";
import { agentPolicyPath } from "./policy.tsx";

/** Agents per page, and runs and tasks of each kind shown per agent (totals say how many more). */
export const AGENTS_PAGE = { agents: 10, perAgent: 4 };
const TITLE_CLIP = 80;

export const AgentsPage: FC<{ view: View; data: Data; staleMinutes: number; nextAfter: string | null; first: boolean }> = ({ view, data, staleMinutes, nextAfter, first }) => {
  const tokens = new Map(data.tokens.map((t) => [t.id, t.active_tokens]));
  const policies = new Map(data.policies.map((p) => [p.name, p.policy]));
  return (
    <Shell view={view} section="agents" title="Agents">
      <h1>Agents</h1>
      <p class="muted">
        A paused agent's tokens may only read until you resume it. A run counts as stale after {staleMinutes} minutes without an event.
      </p>
      {data.agents.length === 0 ? <Empty>No agents yet. An agent appears when it gets its first token (Apps &amp; tokens).</Empty> : null}
      <div class="grid wide">
        {data.agents.map((g) => {
          const runs = data.runs.filter((r) => r.agent_id === g.id);
          const current = runs.filter((r) => r.stale !== 1);
          const stale = runs.filter((r) => r.stale === 1);
          const held = data.held.filter((t) => t.assignee === g.name);
          const heldTotal = held[0]?.total ?? 0;
          const paused = g.paused_at !== null;
          return (
            <article class="card stretch" aria-labelledby={`a-${g.id}`}>
              <div class="fill">
                <h2 id={`a-${g.id}`}>{g.name} <Badge status={paused ? "paused" : "active"} /></h2>
                <dl class="kv">
                  <dt>Last seen</dt><dd><When view={view} iso={g.last_seen_at} /></dd>
                  <dt>Working tokens</dt><dd>{tokens.get(g.id) ?? 0}</dd>
                  <dt>Policy</dt><dd><a href={agentPolicyPath(g.name)} aria-label={`Policy of ${g.name}: ${policyName(rulesOf(policies.get(g.name) ?? null))}`}>{policyName(rulesOf(policies.get(g.name) ?? null))}</a></dd>
                  {paused ? <><dt>Paused</dt><dd><When view={view} iso={g.paused_at} /> by {g.paused_by === "human" ? "you" : g.paused_by}</dd></> : null}
                </dl>
                <h3>Current runs{(runs.find((r) => r.stale !== 1)?.total ?? 0) > current.length ? ` (${current.length} of ${runs.find((r) => r.stale !== 1)?.total})` : ""}</h3>
                {current.length ? (
                  <ul>{current.map((r) => <li><a href={`/tasks/${r.task_id}`}><Written text={clip(r.task_title, TITLE_CLIP).text} /></a> <span class="when">last event <When view={view} iso={r.last_event_at} /></span></li>)}</ul>
                ) : <p class="hint">None.</p>}
                {stale.length ? (
                  <>
                    <h3>Stale runs{(stale[0]?.total ?? 0) > stale.length ? ` (${stale.length} of ${stale[0]?.total})` : ""}</h3>
                    <ul>{stale.map((r) => <li><a href={`/tasks/${r.task_id}`}><Written text={clip(r.task_title, TITLE_CLIP).text} /></a> <Badge status="blocked" text="stale" /> <span class="when">silent since <When view={view} iso={r.last_event_at} /></span></li>)}</ul>
                  </>
                ) : null}
                <h3>Tasks held{heldTotal > held.length ? <> ({held.length} of <a href={`/tasks?assignee=${encodeURIComponent(g.name)}&status=unfinished`}>{heldTotal}</a>)</> : ""}</h3>
                {held.length ? (
                  <ul>
                    {held.map((t) => (
                      <li>
                        <a href={`/tasks/${t.id}`}><Written text={clip(t.title, TITLE_CLIP).text} /></a> <Badge status={t.status} />
                        {t.claim_expires_at && Date.parse(t.claim_expires_at) <= view.nowMs ? <> <Badge status="expired" text="claim lapsed" /> <span class="when"><When view={view} iso={t.claim_expires_at} /></span></> : null}
                      </li>
                    ))}
                  </ul>
                ) : <p class="hint">None.</p>}
                {heldTotal > held.length ? <p class="hint"><a href={`/tasks?assignee=${encodeURIComponent(g.name)}&status=unfinished`}>All {heldTotal} tasks {g.name} holds</a></p> : null}
              </div>
              <div class="actions">
                {paused ? (
                  <Act view={view} action="resume" fields={{ agent: g.name }}><Button kind="primary" label={`Resume ${g.name}`}>Resume</Button></Act>
                ) : (
                  <Act view={view} action="pause" fields={{ agent: g.name }}><Button kind="danger" label={`Pause ${g.name}`}>Pause</Button></Act>
                )}
              </div>
            </article>
          );
        })}
      </div>
      {!first || nextAfter ? (
        <nav class="pager" aria-label="More agents">
          {!first ? <a class="button" href="/agents">First agents</a> : null}
          {nextAfter ? <a class="button" href={`/agents?after=${encodeURIComponent(nextAfter)}`}>More agents</a> : null}
        </nav>
      ) : null}
    </Shell>
  );
};
