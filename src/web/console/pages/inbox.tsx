import type { FC } from "hono/jsx";
import type { Inbox, InboxComment, InboxEvent, InboxRun } from "../../../db/inbox.ts";
import type { PendingApprovalRow } from "../../../db/approvals.ts";
import { actorWord, clip, personWord, plural } from "../format.ts";
import { Badge, Empty, Shell, When, Written, type View } from "../ui.tsx";
import { Decide } from "./decide.tsx";
import { ActionCard } from "./action.tsx";

export const INBOX_LIMITS = { approvals: 8, runsPerTask: 5, eventsPerRun: 6, commentsPerTask: 2, clip: 240 };
const QUESTION_CLIP = 800;
const TITLE_CLIP = 200;

const RunLog: FC<{ view: View; run: InboxRun; events: InboxEvent[] }> = ({ view, run, events }) => {
  const earlier = run.event_count - events.length;
  return (
    <div>
      <h4 class="hint">
        Run by {run.agent} <Badge status={run.status} /> started <When view={view} iso={run.started_at} />
        {run.finished_at ? <> · finished <When view={view} iso={run.finished_at} /></> : null}
      </h4>
      {run.summary ? <p class="body"><Written text={clip(run.summary, INBOX_LIMITS.clip).text} /></p> : null}
      {events.length ? (
        <ol class="log" aria-label="Run log">
          {earlier > 0 ? <li class="muted">{plural(earlier, "earlier event")}</li> : null}
          {events.map((e) => (
            <li>
              <When view={view} iso={e.created_at} /> <span class="badge">{e.kind}</span> <span class="body"><Written text={clip(e.message, INBOX_LIMITS.clip).text} /></span>
              {e.url ? <> · <a href={e.url} rel="noreferrer noopener">link</a></> : null}
            </li>
          ))}
        </ol>
      ) : (
        <p class="hint">No events logged.</p>
      )}
    </div>
  );
};

/** The runs of a request's task, each with its latest log, and how many earlier ones the task lists. */
const Runs: FC<{ view: View; a: PendingApprovalRow; runs: InboxRun[]; events: InboxEvent[] }> = ({ view, a, runs, events }) => {
  const earlierRuns = (runs[0]?.run_total ?? 0) - runs.length;
  return runs.length ? (
    <section aria-label="Runs">
      {runs.map((run) => <RunLog view={view} run={run} events={events.filter((e) => e.run_id === run.id)} />)}
      {earlierRuns > 0 ? <p class="hint">{plural(earlierRuns, "earlier run")}: <a href={`/tasks/${a.task_id}`}>the task</a> lists them.</p> : null}
    </section>
  ) : (
    <p class="hint">No run was recorded for this task.</p>
  );
};

/** The task's latest comments, folded; nothing when it has none. */
const LatestComments: FC<{ view: View; comments: InboxComment[] }> = ({ view, comments }) =>
  comments.length ? (
    <details>
      <summary>Latest {plural(comments.length, "comment")}</summary>
      <ul class="comments">
        {comments.map((c) => (
          <li>
            <strong>{actorWord(c.author)}</strong> <When view={view} iso={c.created_at} />
            <div class="body"><Written text={clip(c.body, INBOX_LIMITS.clip).text} /></div>
          </li>
        ))}
      </ul>
    </details>
  ) : null;

/** One waiting request: its task and the question, what the agent did (runs, comments), and the answer to give. */
const Approval: FC<{ view: View; a: PendingApprovalRow; runs: InboxRun[]; events: InboxEvent[]; comments: InboxComment[] }> = ({ view, a, runs, events, comments }) => {
  const notes = clip(a.task_notes ?? "", INBOX_LIMITS.clip);
  const question = clip(a.question, QUESTION_CLIP);
  const short = clip(a.task_title, 60).text;
  return (
    <article class="card" aria-labelledby={`t-${a.id}`}>
      <h2 id={`t-${a.id}`}>
        <a href={`/tasks/${a.task_id}`}><Written text={a.task_title} max={TITLE_CLIP} /></a>
      </h2>
      <p class="meta">
        <span><Badge status={a.kind} text={a.kind === "question" ? "question" : "sign-off"} /></span>
        <span><Badge status={a.task_status} /></span>
        <span>{a.kind === "question" ? "asked" : "reported done"} by <strong>{actorWord(a.requested_by)}</strong> <When view={view} iso={a.created_at} /></span>
        {a.project_name ? <span>in <Written text={a.project_name} max={80} /></span> : null}
        {a.task_assignee ? <span>held by {personWord(a.task_assignee, a.task_assignee_person_id, a.task_assignee_person_name, view.session.personId)}</span> : null}
      </p>
      <p class="q"><Written text={question.text} />{question.cut ? <> <a href={`/tasks/${a.task_id}`}>Read all</a></> : null}</p>
      {notes.text ? <p class="body muted"><Written text={notes.text} /></p> : null}
      <Runs view={view} a={a} runs={runs} events={events} />
      <LatestComments view={view} comments={comments} />
      <Decide view={view} kind={a.kind} taskId={a.task_id} id={a.id} name={short} choices={a.choices} acceptsWords={a.accepts_words} />
    </article>
  );
};

/** Newer and older pages of requests, when there are more than one page. */
const Pager: FC<{ page: number; more: boolean }> = ({ page, more }) =>
  page > 1 || more ? (
    <nav class="pager" aria-label="More approvals">
      {page > 1 ? <a class="button" href={page === 2 ? "/" : `/?page=${page - 1}`}>Newer</a> : null}
      {more ? <a class="button" href={`/?page=${page + 1}`}>Older</a> : null}
    </nav>
  ) : null;

export const InboxPage: FC<{ view: View; inbox: Inbox; page: number }> = ({ view, inbox, page }) => {
  const shownFrom = (page - 1) * INBOX_LIMITS.approvals;
  const more = inbox.approvalCount > shownFrom + inbox.approvals.length;
  return (
    <Shell view={view} section="inbox" title="Inbox">
      <h1>Inbox</h1>
      <p class="muted">
        {inbox.pendingCount === 0
          ? "Nothing waits for you."
          : `${plural(inbox.pendingCount, "request")} waiting for you, newest first: a question is answered yes or no (or by its choices, or in words) and leaves the task where it is; a sign-off's approval completes it.`}
      </p>
      {inbox.approvals.length === 0 && inbox.pendingCount === 0 ? (
        <Empty>When an agent asks you a question, or finishes a task that needs your sign-off, it shows up here.</Empty>
      ) : null}
      {inbox.actions.length ? (
        <section aria-label="Actions waiting for your approval">
          <h2>{plural(inbox.actions.length, "action")} waiting for your approval</h2>
          <p class="muted">An agent's policy holds these calls for you: approved, one runs once, as the agent; rejected or left to expire, nothing runs.</p>
          {inbox.actions.map((row) => <ActionCard view={view} row={row} />)}
        </section>
      ) : null}
      {inbox.approvals.map((a) => (
        <Approval
          view={view}
          a={a}
          runs={inbox.runs.filter((r) => r.task_id === a.task_id)}
          events={inbox.events}
          comments={inbox.comments.filter((c) => c.task_id === a.task_id)}
        />
      ))}
      <Pager page={page} more={more} />
    </Shell>
  );
};
