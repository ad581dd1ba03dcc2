import type { FC } from "hono/jsx";
import type { ApprovalKind } from "../../../db/approvals.ts";
import { Act, Button, type View } from "../ui.tsx";

/**
 * The answer to a question that offers choices or takes words: one radio
 * button per choice (in a fieldset whose legend asks), a box for words, and
 * one button that sends them (approve_task checks the answer fits).
 */
const Answer: FC<{
  view: View; taskId: string; id: string; choices: string[] | null; acceptsWords: boolean; picked: number | null; named: (verb: string) => string | undefined;
}> = (p) => {
  const wid = `words-${p.id}`;
  return (
    <Act view={p.view} action="answer_yes" fields={{ task_id: p.taskId }} class="answer" label="Your answer">
      {p.choices ? (
        <fieldset>
          <legend>Pick one{p.acceptsWords ? " (or answer in words below)" : ""}</legend>
          {p.choices.map((c, i) => (
            <label class="check">
              <input type="radio" name="choice" value={c} id={`choice-${p.id}-${i}`} required={!p.acceptsWords} checked={i === p.picked} />
              {c}
            </label>
          ))}
        </fieldset>
      ) : null}
      {p.acceptsWords ? (
        <>
          <label for={wid}>{p.choices ? "Or in words" : "Your answer"}</label>
          <textarea id={wid} name="answer" maxlength={2000} rows={2} required={!p.choices} placeholder="The agent reads your answer; the task stays where it is"></textarea>
        </>
      ) : null}
      <Button kind="primary" label={p.named("Send the answer to the question on")}>Send answer</Button>
    </Act>
  );
};

/**
 * What a person can do with a pending request, by its kind: a question is
 * answered (yes: go on, by choice or in words when it asks so; no: with the
 * reason) and leaves the task where it is; a sign-off is approved (the task
 * is done) or rejected (back to work).
 */
export const Decide: FC<{
  view: View; kind: ApprovalKind; taskId: string; id: string; name?: string; choices?: string[] | null; acceptsWords?: boolean; picked?: number | null;
}> = ({ view, kind, taskId, id, name, choices = null, acceptsWords = false, picked = null }) => {
  const rid = `reason-${id}`;
  const named = (verb: string) => (name ? `${verb} ${name}` : undefined);
  if (kind === "question") {
    return (
      <div class="actions">
        {choices || acceptsWords ? (
          <Answer view={view} taskId={taskId} id={id} choices={choices} acceptsWords={acceptsWords} picked={picked} named={named} />
        ) : (
          <Act view={view} action="answer_yes" fields={{ task_id: taskId }}>
            <Button kind="primary" label={named("Answer yes to the question on")}>Answer yes</Button>
          </Act>
        )}
        <Act view={view} action="answer_no" fields={{ task_id: taskId }} class="reject" label="Answer no">
          <label class="sr" for={rid}>Why not</label>
          <textarea id={rid} name="reason" required maxlength={2000} rows={1} placeholder="Why not (the agent reads your answer; the task stays where it is)"></textarea>
          <Button kind="danger" label={named("Answer no to the question on")}>Answer no</Button>
        </Act>
      </div>
    );
  }
  return (
    <div class="actions">
      <Act view={view} action="approve" fields={{ task_id: taskId }}>
        <Button kind="primary" label={named("Approve")}>Approve</Button>
      </Act>
      <Act view={view} action="reject" fields={{ task_id: taskId }} class="reject" label="Reject">
        <label class="sr" for={rid}>Reason for rejecting</label>
        <textarea id={rid} name="reason" required maxlength={2000} rows={1} placeholder="What must change (the agent reads it as a comment)"></textarea>
        <Button kind="danger" label={named("Reject")}>Reject</Button>
      </Act>
    </div>
  );
};

/** The heading of a pending request, by its kind. */
export const requestHeading = (kind: ApprovalKind) => (kind === "question" ? "A question for you" : "Waiting for your sign-off");
