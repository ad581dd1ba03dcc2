import type { FC } from "hono/jsx";
import type { ReachedRow } from "../../../catalog/policy.ts";
import { actionApproval, type ActionApproval, type PendingActionWithTask } from "../../../db/pending-actions.ts";
import { actorWord, clip, plural } from "../format.ts";
import { Act, Badge, Button, Shell, When, Written, type View } from "../ui.tsx";

/**
 * A pending action as a person decides it: the call an agent's policy held
 * (the tool's title, the arguments in words, the rows it would touch as they
 * were when it asked), why the policy asked, until when, and the two answers.
 * The inbox shows one card per action; /approvals/:id shows one whole, with
 * its arguments exactly as they would run and, once run, its result.
 */

const Touches: FC<{ rows: ReachedRow[] }> = ({ rows }) =>
  rows.length ? (
    <ul class="touches" aria-label="What it would touch">
      {rows.map((r) => (
        <li>
          {r.kind.replace("_", " ")} {r.kind === "task" ? <a href={`/tasks/${r.id}`}><Written text={r.name} max={120} /></a> : <Written text={r.name} max={120} />}
          {r.status ? <> <Badge status={r.status} /></> : null}
          {r.project_name ? <> in <Written text={r.project_name} max={80} /></> : null}
          {r.subtasks ? <> · with {plural(r.subtasks, "subtask")}</> : null}
        </li>
      ))}
    </ul>
  ) : (
    <p class="hint">It names no existing record.</p>
  );

/** Approve (the call runs once, as the agent) or reject (nothing runs; the agent reads the reason). */
export const DecideAction: FC<{ view: View; a: ActionApproval }> = ({ view, a }) => {
  const rid = `reason-${a.id}`;
  const name = clip(a.action.title, 60).text;
  return (
    <div class="actions">
      <Act view={view} action="approve_action" fields={{ approval_id: a.id }}>
        <Button kind="primary" label={`Approve and run ${name}`}>Approve and run</Button>
      </Act>
      <Act view={view} action="reject_action" fields={{ approval_id: a.id }} class="reject" label="Reject">
        <label class="sr" for={rid}>Reason for rejecting</label>
        <textarea id={rid} name="reason" required maxlength={2000} rows={1} placeholder="Why not (the agent reads it; nothing runs)"></textarea>
        <Button kind="danger" label={`Reject ${name}`}>Reject</Button>
      </Act>
    </div>
  );
};

const Meta: FC<{ view: View; a: ActionApproval }> = ({ view, a }) => (
  <p class="meta">
    <span><Badge status="action" text="action" /></span>
    <span><Badge status={a.status} /></span>
    <span>asked by <strong>{actorWord(a.requested_by)}</strong> <When view={view} iso={a.created_at} /></span>
    {a.status === "pending" ? <span>expires <When view={view} iso={a.action.expires_at} /></span> : null}
    {a.decided_by ? <span>{a.status} by {actorWord(a.decided_by)} <When view={view} iso={a.decided_at} /></span> : null}
  </p>
);

/** One pending action in the inbox. */
export const ActionCard: FC<{ view: View; row: PendingActionWithTask }> = ({ view, row }) => {
  const a = actionApproval(row, new Date(view.nowMs).toISOString());
  return (
    <article class="card" aria-labelledby={`t-${a.id}`}>
      <h2 id={`t-${a.id}`}>
        <a href={`/approvals/${a.id}`}>{actorWord(a.requested_by)} asks to run: <Written text={a.action.title} max={120} /></a>
      </h2>
      <Meta view={view} a={a} />
      <p class="q"><Written text={a.action.arguments_in_words} max={800} /></p>
      <Touches rows={a.action.touches} />
      <p class="hint"><Written text={a.action.reason} max={400} /></p>
      {a.status === "pending" ? <DecideAction view={view} a={a} /> : null}
    </article>
  );
};

/** The decide page of one pending action. */
export const ActionPage: FC<{ view: View; row: PendingActionWithTask }> = ({ view, row }) => {
  const a = actionApproval(row, new Date(view.nowMs).toISOString());
  const result = a.action.result;
  return (
    <Shell view={view} section="inbox" title={`Approve ${a.action.title}?`}>
      <h1>{actorWord(a.requested_by)} asks to run: <Written text={a.action.title} max={120} /></h1>
      <Meta view={view} a={a} />
      <section class="card" aria-label="What would happen">
        <h2>What would happen</h2>
        <p class="q"><Written text={a.action.arguments_in_words} /></p>
        <h3>It would touch</h3>
        <Touches rows={a.action.touches} />
        {a.task_id && a.task_title ? <p>Its task: <a href={`/tasks/${a.task_id}`}><Written text={a.task_title} max={200} /></a></p> : null}
        <details>
          <summary>The call exactly as it would run</summary>
          <pre class="body"><Written text={`${a.action.tool} ${a.action.arguments}`} /></pre>
        </details>
        <p class="hint">Why it waits for you: <Written text={a.action.reason} /> ({a.action.rule})</p>
      </section>
      {a.status === "pending" ? (
        <>
          <p class="muted">Approved, it runs once, as {actorWord(a.requested_by)}, with every rule checked then. Rejected, nothing runs. Undecided, it expires <When view={view} iso={a.action.expires_at} /> and nothing runs.</p>
          <DecideAction view={view} a={a} />
        </>
      ) : (
        <section class="card" aria-label="Outcome">
          <h2>Outcome</h2>
          <p>
            {a.status === "approved" ? "Approved" : a.status === "rejected" ? "Rejected" : a.status === "expired" ? "Expired: nobody decided in time, nothing ran." : "Withdrawn by the agent: nothing ran."}
            {a.reason ? <> — <Written text={a.reason} /></> : null}
          </p>
          {result ? (
            <p>
              {result.is_error ? "It was refused when it ran: " : "It ran: "}
              <Written text={result.text} max={2000} />
            </p>
          ) : a.status === "approved" ? <p class="hint">It is running; its result shows here once kept.</p> : null}
        </section>
      )}
      <p><a href="/">Back to the inbox</a></p>
    </Shell>
  );
};
