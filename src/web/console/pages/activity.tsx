import type { FC } from "hono/jsx";
import type { ActivityPage as Data } from "../../../db/console.ts";
import { TOOL_NAMES, WRITE_TOOLS } from "../../../catalog/effects.ts";
import { clip, personWord } from "../format.ts";
import { Empty, Field, Shell, When, type View } from "../ui.tsx";
import { Summary } from "../summary.tsx";

export interface ActivityQuery {
  actor: string;
  tool: string;
  target: string;
}

/** How a call reached Taskgate: the web console, an app connected through OAuth (by name), or a tg_ token. */
export function channelOf(e: { token_id: string; client?: string | null }, webPrefix: string): string {
  return e.token_id.startsWith(webPrefix) ? "web" : e.client ? `via ${e.client}` : "tg_ token";
}

const WRITE_TOOL_NAMES = TOOL_NAMES.filter((t) => WRITE_TOOLS.has(t)).sort();

export const ActivityPage: FC<{ view: View; data: Data; query: ActivityQuery; nextCursor: string | null; webPrefix: string }> = ({
  view, data, query, nextCursor, webPrefix,
}) => {
  const params = new URLSearchParams(Object.entries(query).filter(([, v]) => v));
  const named = new Map(data.named.map((n) => [n.id, n]));
  return (
    <Shell view={view} section="activity" title="Activity">
      <h1>Activity</h1>
      <p class="muted">Every change to the account: who made it, with which tool, and whether it came from the web console or an MCP client.</p>
      <form method="get" action="/activity" class="filters" role="search" aria-label="Filter activity">
        {query.target ? <input type="hidden" name="target" value={query.target} /> : null}
        <div class="row">
          <Field id="f-actor" label="Who">
            <select id="f-actor" name="actor">
              <option value="">Everyone</option>
              {data.actors.map((a) => <option value={a} selected={query.actor === a}>{a === "human" ? "People" : a}</option>)}
            </select>
          </Field>
          <Field id="f-tool" label="Tool">
            <select id="f-tool" name="tool">
              <option value="">Any</option>
              {WRITE_TOOL_NAMES.map((t) => <option value={t} selected={query.tool === t}>{t}</option>)}
              <option value="create_token" selected={query.tool === "create_token"}>create_token (web)</option>
            </select>
          </Field>
          <div class="buttons">
            <button type="submit" class="primary">Show</button>
            {query.actor || query.tool || query.target ? <a class="button" href="/activity">Clear</a> : null}
          </div>
        </div>
        {query.target ? <p class="hint">Only entries about <code>{query.target}</code>.</p> : null}
      </form>
      {data.items.length === 0 ? (
        <Empty>No activity matches.</Empty>
      ) : (
        <div class="table">
          <table class="stack">
            <thead>
              <tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">Tool</th><th scope="col">What</th></tr>
            </thead>
            <tbody>
              {data.items.map((e) => (
                <tr>
                  <td data-label="When"><When view={view} iso={e.created_at} /></td>
                  <td data-label="Who">{personWord(e.actor, e.person_id, e.person_name, view.session.personId)} <span class="badge">{clip(channelOf(e, webPrefix), 40).text}</span></td>
                  <td data-label="Tool"><code>{e.tool}</code></td>
                  <td data-label="What" class="body">
                    <Summary text={clip(e.summary, 300).text} tool={e.tool} actor={e.actor} target={e.target_id} named={named} />
                    {e.target_id?.startsWith("tsk_") ? <> · <a href={`/tasks/${e.target_id}`}>task</a></> : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {nextCursor ? (
        <nav class="pager" aria-label="More">
          <a class="button" href={`/activity?${new URLSearchParams([...params, ["cursor", nextCursor]])}`}>Older</a>
        </nav>
      ) : null}
    </Shell>
  );
};
