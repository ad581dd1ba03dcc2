/**
 * The task page's edits of the task itself: one form for its fields (title,
 * notes, due time, priority, estimate, repeat), and a card for who holds it,
 * its snooze, its block and its project. Each form is one tool call; what
 * the tools refuse a person is said up front, in the words of their rules.
 */
import type { FC, PropsWithChildren } from "hono/jsx";
import type { TaskPage as Data, TaskMovePage } from "../../../../db/console.ts";
import { scheduleOf, type TaskRow } from "../../../../db/tasks.ts";
import { claimHolder, holderOf, lapsedHolder, PERSON_ASSIGNEE } from "../../../../domain/claims.ts";
import { scopeShown } from "../../../../domain/scopes.ts";
import { PRIORITIES } from "../../../../domain/vocabulary.ts";
import { asSubmitted, CUSTOM_REPEAT, localInput, REPEATS, textSum } from "../../actions/task-edit.ts";
import { clip, ruleWords } from "../../format.ts";
import { Act, Button, Field, invalidField, Shell, typed, When, Written, type View } from "../../ui.tsx";
import { REF_CLIP, TASK_LIMITS } from "./parts.tsx";

/** How much of a project's name the task page shows (as the task list's filter does), and the move page's choices. */
const PROJECT_CLIP = 40;
export const MOVE_CLIP = 80;

const finished = (t: TaskRow) => t.status === "done" || t.status === "cancelled";

/** The typed values of a refused form of this page (its `form` field), so only that form shows them again. */
function refusedForm(view: View, t: TaskRow, form: string) {
  const values = view.flash?.kind === "error" ? view.flash.values : undefined;
  const on = values?.form === form && values.task_id === t.id;
  return {
    on,
    was: (name: string) => (on ? typed(view, name) : undefined),
    bad: (...fields: string[]) => (on && fields.some((f) => invalidField(view, f)) ? ("true" as const) : undefined),
  };
}

/** Whether the signed-in person holds the task (a person's assignment names them; one made before people were named is theirs too). */
export const mine = (view: View, t: TaskRow) => t.assignee === PERSON_ASSIGNEE && (t.assignee_person_id === null || t.assignee_person_id === view.session.personId);

/** The task's fields, in one form to update_task at the version the page shows (a stale edit is refused). */
export const EditTask: FC<{ view: View; data: Data; t: TaskRow }> = ({ view, data, t }) => {
  const r = refusedForm(view, t, "task-edit");
  const tz = view.timeZone;
  // Notes longer than the page shows are edited on their own page, where they are whole.
  const notesCut = t.notes.length > TASK_LIMITS.notesClip;
  const rule = t.recurrence ? scheduleOf(t.recurrence).rule : "";
  const preset = rule === "" ? "" : REPEATS.some((p) => p.rule === rule) ? rule : CUSTOM_REPEAT;
  const repeat = r.was("repeat") ?? preset;
  const dueWas = localInput(t.due_at, tz);
  const priority = r.was("priority") ?? PRIORITIES[t.priority] ?? "normal";
  const agent = claimHolder(t, new Date(view.nowMs).toISOString());
  const scope = scopeShown(t.scope).join("\n");
  return (
    <details class="card edit" open={r.on}>
      <summary>Edit the task</summary>
      {agent ? (
        <p class="hint">
          Agent <strong>{agent}</strong> holds this task; you may still change every field here (only other agents may not). <a href="#h-handling">Who holds it</a> says more.
        </p>
      ) : null}
      <Act
        view={view}
        action="edit_task"
        label="Edit the task"
        fields={{ task_id: t.id, form: "task-edit", expected_version: String(t.version), time_zone: tz, due_was: dueWas, priority_was: PRIORITIES[t.priority] ?? "normal", estimate_was: t.estimate_minutes === null ? "" : String(t.estimate_minutes), recurrence_was: rule, scope_was: scope, ...(notesCut ? {} : { notes_sum: textSum(asSubmitted(t.notes)) }) }}
      >
        <Field id="te-title" label="Title">
          <input type="text" id="te-title" name="title" required maxlength={500} value={r.was("title") ?? t.title} aria-invalid={r.bad("title")} />
        </Field>
        {notesCut ? (
          <p class="hint">Notes this long are left as they are here: <a href={`/tasks/${t.id}/text/notes`}>edit the whole notes on their own page</a>.</p>
        ) : (
          <NotesField view={view} notes={r.was("notes") ?? t.notes} bad={r.bad("notes")} />
        )}
        <div class="row top">
          <Field id="te-due" label="Due" class="grow" hint={`Your account's time zone, ${tz}. Empty: no due time.`}>
            <input type="datetime-local" id="te-due" name="due" value={r.was("due") ?? dueWas} aria-describedby="te-due-hint" aria-invalid={r.bad("due_at")} />
          </Field>
          <Field id="te-priority" label="Priority">
            <select id="te-priority" name="priority" aria-invalid={r.bad("priority")}>
              {PRIORITIES.map((p) => <option value={p} selected={priority === p}>{p}</option>)}
            </select>
          </Field>
          <Field id="te-estimate" label="Estimate (minutes)" hint="Empty: none.">
            <input
              type="number" id="te-estimate" name="estimate_minutes" min={1} max={100000}
              value={r.was("estimate_minutes") ?? (t.estimate_minutes === null ? "" : String(t.estimate_minutes))}
              aria-describedby="te-estimate-hint" aria-invalid={r.bad("estimate_minutes")}
            />
          </Field>
        </div>
        <div class="row top">
          <Field id="te-repeat" label="Repeats" hint="From the due time, which it needs. Completing it creates the next.">
            <select id="te-repeat" name="repeat" aria-describedby="te-repeat-hint" aria-invalid={r.bad("recurrence")}>
              <option value="" selected={repeat === ""}>Does not repeat</option>
              {REPEATS.map((p) => <option value={p.rule} selected={repeat === p.rule}>{p.words}</option>)}
              <option value={CUSTOM_REPEAT} selected={repeat === CUSTOM_REPEAT}>Another rule, written below</option>
            </select>
          </Field>
          <Field id="te-rule" label="Rule (for another rule)" class="grow" hint={<>An RRULE, e.g. <code>FREQ=WEEKLY;BYDAY=MO,TH</code>.</>}>
            <input
              type="text" id="te-rule" name="rule" maxlength={300} spellcheck={false} autocomplete="off"
              value={r.was("rule") ?? (preset === CUSTOM_REPEAT ? rule : "")} aria-describedby="te-rule-hint" aria-invalid={r.bad("recurrence")}
            />
          </Field>
        </div>
        {rule ? <p class="hint">Now: repeats {ruleWords(rule)}.</p> : null}
        <Field id="te-scope" label="Scope" hint={<>The areas it works in, one a line: a path, a glob (<code>src/db/**</code>) or a name. While an agent holds it, other agents may not claim a task whose scope overlaps.</>}>
          <textarea id="te-scope" name="scope" rows={2} maxlength={4200} spellcheck={false} aria-describedby="te-scope-hint" aria-invalid={r.bad("scope")}>{"\n" + (r.was("scope") ?? scope)}</textarea>
        </Field>
        <div class="actions"><Button kind="primary">Save changes</Button></div>
      </Act>
    </details>
  );
};

/** The notes' textarea: its first newline is the one the HTML parser drops, so notes that start with a line break keep it. */
const NotesField: FC<{ view: View; notes: string; bad: "true" | undefined; id?: string }> = ({ notes, bad, id = "te-notes" }) => (
  <Field id={id} label="Notes">
    <textarea id={id} name="notes" maxlength={20000} aria-invalid={bad}>{"\n" + notes}</textarea>
  </Field>
);

/** The whole notes, edited on their own page (the task page's form leaves notes longer than it shows as they are). */
export const EditNotes: FC<{ view: View; task: { id: string; title: string; version: number }; notes: string }> = ({ view, task, notes }) => {
  const values = view.flash?.kind === "error" ? view.flash.values : undefined;
  const on = values?.form === "task-notes" && values.task_id === task.id;
  return (
    <details class="card edit" open={on}>
      <summary>Edit the notes</summary>
      <Act view={view} action="edit_task" label="Edit the notes" fields={{ task_id: task.id, form: "task-notes", expected_version: String(task.version), notes_sum: textSum(asSubmitted(notes)) }}>
        <NotesField view={view} id="tn-notes" notes={(on ? typed(view, "notes") : undefined) ?? notes} bad={on ? invalidField(view, "notes") : undefined} />
        <div class="actions"><Button kind="primary">Save notes</Button></div>
      </Act>
    </details>
  );
};

/** Another action of the form it is in (`/act/…`), sent without the form's checks, for its tool takes only the task. */
const Also: FC<PropsWithChildren<{ action: string }>> = ({ action, children }) => (
  <button type="submit" formaction={`/act/${action}`} formnovalidate>{children}</button>
);

/** Who holds the task, in words, and what the person may still do when an agent does. */
const Holder: FC<{ view: View; t: TaskRow }> = ({ view, t }) => {
  const now = new Date(view.nowMs).toISOString();
  const holder = holderOf(t, now);
  const lapsed = lapsedHolder(t, now);
  if (t.assignee === null) return <p>Nobody holds this task.</p>;
  if (t.assignee === PERSON_ASSIGNEE) {
    return mine(view, t) ? <p>You hold this task.</p> : <p><strong><Written text={t.assignee_person_name ?? "A person"} max={REF_CLIP} /></strong> holds this task.</p>;
  }
  if (lapsed) {
    return (
      <p>
        Agent <strong>{lapsed}</strong> claimed this task, but its claim lapsed <When view={view} iso={t.claim_expires_at} />: it holds nothing now. Take it myself takes the task over (its running run ends as stale).
      </p>
    );
  }
  if (holder === null) return <p>Assigned to agent <strong>{t.assignee}</strong>, which has not started it.</p>;
  const state = t.status === "blocked" ? "it is blocked" : t.status === "awaiting_approval" ? "its completion awaits your sign-off" : "it is in progress";
  return (
    <div class="held">
      <p>
        Agent <strong>{holder}</strong> holds this task: {state} and assigned to it
        {t.claim_expires_at ? <>; its claim lapses <When view={view} iso={t.claim_expires_at} /> unless it keeps working</> : null}.
      </p>
      <p class="hint">
        While it holds the task, other agents may not change it. You still may: edit every field, snooze, block or move it, and give it to someone else under Assignee
        (which ends {holder}'s running runs). Take it myself is refused while {holder}'s claim is live: choose Me under Assignee to take the task over. Comments stay open to everyone.
      </p>
    </div>
  );
};

/** Who holds the task and what changes that, its snooze, its block, and its project. */
export const Handling: FC<{ view: View; data: Data; t: TaskRow }> = ({ view, data, t }) => {
  const now = new Date(view.nowMs).toISOString();
  const snoozed = t.snoozed_until !== null && t.snoozed_until > now;
  const snooze = refusedForm(view, t, "task-snooze");
  const block = refusedForm(view, t, "task-block");
  const assignee = t.assignee === null ? "" : t.assignee;
  const tz = { time_zone: view.timeZone };
  return (
    <section class="card" aria-labelledby="h-handling">
      <h2 id="h-handling">Who holds it</h2>
      <Holder view={view} t={t} />
      <Act view={view} action="assign_task" fields={{ task_id: t.id }} label="Change the assignee">
        <div class="row">
          <Field id="th-assignee" label="Assignee" class="grow">
            <select id="th-assignee" name="assignee">
              <option value="" selected={assignee === ""}>Nobody</option>
              <option value={PERSON_ASSIGNEE} selected={assignee === PERSON_ASSIGNEE}>Me ({clip(view.session.name, 60).text})</option>
              {/* An option's value is its text unless it says more. */}
              {data.agents.map((a) => (a.paused ? <option value={a.name} selected={assignee === a.name}>{a.name} (paused)</option> : <option selected={assignee === a.name}>{a.name}</option>))}
              {assignee && assignee !== PERSON_ASSIGNEE && !data.agents.some((a) => a.name === assignee) ? <option value={assignee} selected>{assignee}</option> : null}
            </select>
          </Field>
          <Button>Assign</Button>
        </div>
        {/* The same form's other actions: their tools take the task alone. */}
        <div class="actions">
          {mine(view, t) ? <Also action="release_task">Let it go</Also> : <Also action="take_task">Take it myself</Also>}
        </div>
      </Act>

      <h3>Snooze</h3>
      {snoozed ? <p>Snoozed until <When view={view} iso={t.snoozed_until} />: open lists leave it out until then.</p> : null}
      <Act view={view} action="snooze_task" fields={{ task_id: t.id, form: "task-snooze", ...tz }} label="Snooze the task">
        <div class="row">
          <Field id="th-until" label="Snooze until" class="grow" hint={`Your account's time zone, ${view.timeZone}.`}>
            <input type="datetime-local" id="th-until" name="until" required value={snooze.was("until") ?? ""} aria-describedby="th-until-hint" aria-invalid={snooze.bad("until")} />
          </Field>
          <Button>{snoozed ? "Snooze until then" : "Snooze"}</Button>
          {snoozed ? <Also action="wake_task">Wake it</Also> : null}
        </div>
      </Act>

      <h3>Block</h3>
      {t.status === "blocked" ? (
        <div class="row">
          <p>Blocked, waiting for <Written text={t.blocked_reason ?? "no reason given"} max={200} />.</p>
          <Act view={view} action="unblock_task" fields={{ task_id: t.id }}><Button>Unblock</Button></Act>
        </div>
      ) : finished(t) ? (
        <p class="hint">A {t.status} task has nothing to block; reopen it first.</p>
      ) : (
        <Act view={view} action="block_task" fields={{ task_id: t.id, form: "task-block" }} label="Block the task">
          <div class="row">
            <Field id="th-reason" label="Waiting for" class="grow">
              <input type="text" id="th-reason" name="reason" required maxlength={2000} value={block.was("reason") ?? ""} aria-invalid={block.bad("reason")} />
            </Field>
            <Button>Block</Button>
          </div>
        </Act>
      )}

      <h3>Project</h3>
      {t.parent_id ? (
        <p class="hint">
          A subtask lives in its parent's project: move {data.parent ? <a href={`/tasks/${data.parent.id}`}><Written text={data.parent.title} max={60} /></a> : "its top-level task"} and its subtasks move with it.
        </p>
      ) : (
        <p>{data.project ? <>In <Written text={data.project.name} max={PROJECT_CLIP} />. </> : "In no project. "}<a href={`/tasks/${t.id}/move`}>Move it</a></p>
      )}
    </section>
  );
};

/** A top-level task's move to another project or none: a page of its own, for the account's projects would weigh on the task page. */
export const MovePage: FC<{ view: View; data: TaskMovePage }> = ({ view, data }) => {
  const t = data.task as NonNullable<TaskMovePage["task"]>;
  return (
    <Shell view={view} section="tasks" title={`Move · ${clip(t.title, 60).text}`}>
      <p class="hint"><a href={`/tasks/${t.id}`}>Back to <Written text={t.title} max={80} /></a></p>
      <h1>Move the task</h1>
      <section class="card">
        {t.parent_id ? (
          <p>This is a subtask: it lives in its parent's project. <a href={`/tasks/${t.parent_id}`}>Its parent</a> moves, and its subtasks with it.</p>
        ) : (
          <Act view={view} action="move_task" fields={{ task_id: t.id }} label="Move the task">
            <p class="hint">Its subtasks move with it.</p>
            <div class="row">
              <Field id="mv-project" label="Project" class="grow">
                <select id="mv-project" name="project_id">
                  <option value="" selected={t.project_id === null}>No project</option>
                  {data.projects.map((p) => {
                    const name = clip(p.name, MOVE_CLIP).text;
                    // The choice carries the project's name after its id, for the message that says where it went.
                    return <option value={`${p.id} ${name}`} selected={t.project_id === p.id}>{name}</option>;
                  })}
                </select>
              </Field>
              <Button kind="primary">Move</Button>
            </div>
          </Act>
        )}
      </section>
    </Shell>
  );
};
