import type { FC } from "hono/jsx";
import type { ApprovalKind } from "../../../db/approvals.ts";
import { Act, Button, type View } from "../ui.tsx";

/**
 * What a person can do with a pending request, by its kind: a question is
 * answered (yes: go on; no: with the reason) and leaves the task where it is;
 * a sign-off is approved (the task is done) or rejected (back to work).
 */
export const Decide: FC<{ view: View; kind: ApprovalKind; taskId: string; id: string; name?: string }> = ({ view, kind, taskId, id, name }) => {
  const rid = `reason-${id}`;
  const named = (verb: string) => (name ? `${verb} ${name}` : undefined);
  if (kind === "question") {
    return (
      <div class="actions">
        <Act view={view} action="answer_yes" fields={{ task_id: taskId }}>
          <Button kind="primary" label={named("Answer yes to the question on")}>Answer yes</Button>
        </Act>
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
