/**
 * The events a person can subscribe a webhook to, and their bodies. An event
 * carries ids and the fields a receiver needs to act, never a token or a
 * credential. Writes return their events with the batch (`Write.events`) and
 * the registry enqueues them once the batch has committed; other code calls
 * `enqueueEvents` (src/webhooks/queue.ts) after its own write.
 */
import { ID_PREFIX, newId } from "./ids.ts";
import type { PersonRef } from "./principal.ts";

export const EVENT_TYPES = ["approval.requested", "approval.answered", "approval.withdrawn", "approval.decided", "task.completed", "task.rejected", "run.stale", "claim.lapsed", "task.handed_off"] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export function isEventType(s: string): s is EventType {
  return (EVENT_TYPES as readonly string[]).includes(s);
}

/** The task an event is about, as it is after the write. */
export interface EventTask {
  id: string;
  title: string;
  status: string;
  project_id: string | null;
  assignee: string | null;
  due_at: string | null;
}

export interface EventData {
  /**
   * An agent asks: a question, a sign-off, or a pending action (a call its
   * policy asks about, which names its tool in `action`; its task is null
   * when the call names none). A question's `choices` (null: yes/no) and
   * `accepts_words` (whether it takes an answer in words) come with it.
   */
  "approval.requested": {
    task: EventTask | null;
    approval: { id: string; kind: "question" | "signoff" | "action"; question: string; requested_by: string; choices: string[] | null; accepts_words: boolean };
    action?: { tool: string; title: string; arguments_in_words: string; expires_at: string };
  };
  /** A person decided a pending action: approved (the call ran once, as the agent; `result` is its answer) or rejected (nothing ran). */
  "approval.decided": {
    task: EventTask | null;
    approval: { id: string; kind: "action"; requested_by: string; tool: string; title: string };
    decision: "approved" | "rejected";
    decided_by: string;
    note: string | null;
    /** The call's answer: for a success, its text is the JSON of the tool's result. */
    result: { is_error: boolean; text: string } | null;
  };
  /**
   * A person answered an agent's question: yes (go on) or no (with the
   * reason); the task stays where it was. A yes may carry the choice the
   * person picked and their answer in words (each null when not given).
   */
  "approval.answered": {
    task: EventTask;
    approval: { id: string; question: string; requested_by: string };
    answer: "yes" | "no";
    reason: string | null;
    answered_by: string;
    /** Which person answered (`{ id, name }`); null when no person is known (a person's token that names none). */
    answered_by_person: PersonRef | null;
    choice: string | null;
    words: string | null;
  };
  /** The agent that asked withdrew its request before a person decided it. */
  "approval.withdrawn": {
    task: EventTask;
    approval: { id: string; kind: "question" | "signoff"; question: string; requested_by: string };
    reason: string | null;
  };
  "task.completed": {
    task: EventTask;
    completed_by: string;
    /** Which person completed or approved it, when completed_by is `human`; null for an agent, or when no person is known. */
    completed_by_person: PersonRef | null;
    approval_id: string | null;
    next_occurrence: { id: string; due_at: string | null } | null;
  };
  "task.rejected": {
    task: EventTask;
    approval_id: string | null;
    rejected_by: string;
    /** Which person rejected it; null when no person is known. */
    rejected_by_person: PersonRef | null;
    reason: string;
    comment_id: string;
  };
  "run.stale": {
    run: { id: string; task_id: string; agent: string; started_at: string; last_event_at: string };
    task: { id: string; title: string };
    stale_after_minutes: number;
  };
  "claim.lapsed": {
    task: EventTask;
    /** The agent whose claim ran out. */
    holder: string;
    lease_expired_at: string;
    /** The agent that took the task over, if one did. */
    taken_over_by: string | null;
    /** The old holder's run, marked stale. */
    stale_run_id: string | null;
  };
  /** The agent that held a task gave it to another agent (assign_task), which holds it now with a new lease. */
  "task.handed_off": {
    task: EventTask;
    /** The agent that held it and gave it away. */
    from: string;
    /** The agent that holds it now. */
    to: string;
    /** When the receiver's new lease lapses unless renewed. */
    claim_expires_at: string | null;
    /** The giver's running runs on the task, ended as cancelled. */
    runs_ended: string[];
  };
}

/** One delivery's body: `id` is unique per event (receivers de-duplicate by it). */
export interface TaskgateEvent<T extends EventType = EventType> {
  id: string;
  type: T;
  created_at: string;
  account_id: string;
  data: EventData[T];
}

export function newEvent<T extends EventType>(type: T, accountId: string, now: string, data: EventData[T]): TaskgateEvent<T> {
  return { id: newId(ID_PREFIX.webhookEvent), type, created_at: now, account_id: accountId, data };
}

export function eventTask(t: EventTask): EventTask {
  return { id: t.id, title: t.title, status: t.status, project_id: t.project_id, assignee: t.assignee, due_at: t.due_at };
}

/** The event of a claim whose lease ran out (the claim-lease change returns it with its write). */
export function claimLapsedEvent(accountId: string, now: string, data: EventData["claim.lapsed"]): TaskgateEvent<"claim.lapsed"> {
  return newEvent("claim.lapsed", accountId, now, data);
}
