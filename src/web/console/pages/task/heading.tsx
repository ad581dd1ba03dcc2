/** The top of the task page: where it sits, its title and facts, its recurrence, what the person may do with it, and the request waiting on it. */
import type { FC } from "hono/jsx";
import type { TaskPage as Data } from "../../../../db/console.ts";
import type { TaskRow } from "../../../../db/tasks.ts";
import { PRIORITIES } from "../../../../domain/vocabulary.ts";
import { scopeShown } from "../../../../domain/scopes.ts";
import { describeRecurrence } from "../../../../tools/series.ts";
import { actorWord, personWord, ruleWords } from "../../format.ts";
import { Act, AskFirst, Badge, Button, When, Written, type View } from "../../ui.tsx";
import { Decide, requestHeading } from "../decide.tsx";
import { REF_CLIP, TASK_LIMITS } from "./parts.tsx";

const finished = (t: TaskRow) => t.status === "done" || t.status === "cancelled";
const lapsed = (t: TaskRow, view: View) => t.claim_expires_at !== null && Date.parse(t.claim_expires_at) <= view.nowMs;

/** The trail to the task (its project, its parent), its title, and its facts in one line. */
export const Heading: FC<{ view: View; data: Data; t: TaskRow }> = ({ view, data, t }) => (
  <>
    <p class="hint"><a href="/tasks">Tasks</a>{data.project ? <> › <a href={`/tasks?project=${data.project.id}`}><Written text={data.project.name} max={REF_CLIP} /></a></> : null}{data.parent ? <> › <a href={`/tasks/${data.parent.id}`}><Written text={data.parent.title} max={60} /></a></> : null}</p>
    <h1 class="body"><Written text={t.title} /></h1>
    <p class="meta">
      <span><Badge status={t.status} /></span>
      <span>priority {PRIORITIES[t.priority] ?? "normal"}</span>
      {finished(t) ? null : <span>{t.assignee ? <>held by <strong>{personWord(t.assignee, t.assignee_person_id, t.assignee_person_name, view.session.personId)}</strong>{lapsed(t, view) ? " (claim lapsed)" : null}</> : "unassigned"}</span>}
      {t.due_at ? <span>due <When view={view} iso={t.due_at} /></span> : null}
      <span>created by {actorWord(t.created_by)} <When view={view} iso={t.created_at} /></span>
      {t.blocked_reason && t.status === "blocked" ? <span>blocked: <Written text={t.blocked_reason} max={TASK_LIMITS.lineClip} /></span> : null}
      {t.scope ? <span>scope: <Written text={scopeShown(t.scope).join(", ")} max={TASK_LIMITS.lineClip} /></span> : null}
    </p>
  </>
);

/** A recurring task's rule in words, and when its next occurrence falls due if this one is completed now. */
export const Repeats: FC<{ view: View; t: TaskRow }> = ({ view, t }) => {
  const r = describeRecurrence(t, view.timeZone, view.nowMs);
  if (!r) return null;
  return (
    <p class="repeats">
      Repeats {ruleWords(r.rule)} (occurrence {r.occurrence}, <code>{r.rule}</code>).{" "}
      {r.next_due_at ? <>Completing it creates the next occurrence, due <When view={view} iso={r.next_due_at} />.</> : "The series ends with this occurrence."}
    </p>
  );
};

export const Lifecycle: FC<{ view: View; t: TaskRow }> = ({ view, t }) => {
  const finished = t.status === "done" || t.status === "cancelled";
  return (
    <div class="actions">
      {!finished ? (
        <Act view={view} action="complete" fields={{ task_id: t.id }}><Button kind="primary">Complete</Button></Act>
      ) : null}
      {finished || t.status === "awaiting_approval" ? (
        <Act view={view} action="reopen" fields={{ task_id: t.id }}><Button>Reopen</Button></Act>
      ) : null}
      <AskFirst view={view} action="delete" fields={{ task_id: t.id }}><Button kind="danger">Delete</Button></AskFirst>
    </div>
  );
};

/** The question or sign-off waiting on the task, with the person's answer to give; nothing when none waits. */
export const Approval: FC<{ view: View; data: Data; t: TaskRow; picked?: number | null }> = ({ view, data, t, picked = null }) => {
  const approval = data.approval;
  if (!approval) return null;
  return (
    <section class="card" aria-labelledby="h-approval">
      <h2 id="h-approval">{requestHeading(approval.kind)}</h2>
      <p class="meta"><span>asked by <strong>{actorWord(approval.requested_by)}</strong> <When view={view} iso={approval.created_at} /></span></p>
      <p class="q"><Written text={approval.question} /></p>
      <Decide view={view} kind={approval.kind} taskId={t.id} id={approval.id} choices={approval.choices} acceptsWords={approval.accepts_words} picked={picked} />
    </section>
  );
};
