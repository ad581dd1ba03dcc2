/**
 * The confirmation step of what cannot wait: every action whose spec has a
 * `confirm` part (and removing a push device, which is not a tool), by name.
 * A start button is a GET form to /confirm/:name (which changes nothing); the
 * step's POST form carries `confirmed`; a POST that arrives without it is sent
 * to the step instead of acting, so a stale or hand-made form cannot skip it.
 */
import type { ConfirmSubject } from "../../db/confirm.ts";
import type { ConfirmSpec, FormFields } from "./action-spec.ts";
import { ACTIONS } from "./actions.ts";
import { REMOVE_DEVICE_CONFIRM } from "./push.ts";

export interface ConfirmStep extends ConfirmSpec {
  /** Where the confirmed form posts. */
  post: string;
}

const OTHER_STEPS: Record<string, ConfirmStep> = {
  remove_device: { ...REMOVE_DEVICE_CONFIRM, post: "/settings/push/remove" },
};

/** The step of action `name`, if it has one. */
export function confirmStep(name: string): ConfirmStep | undefined {
  if (Object.hasOwn(ACTIONS, name)) {
    const c = ACTIONS[name].confirm;
    return c ? { ...c, post: `/act/${name}` } : undefined;
  }
  return Object.hasOwn(OTHER_STEPS, name) ? OTHER_STEPS[name] : undefined;
}

/** The field a confirmed form carries. */
export const CONFIRMED = "confirmed";

/** Whether a form of an action that needs confirming was confirmed on its step. */
export const confirmed = (form: FormFields) => form[CONFIRMED]?.[0] === "yes";

/** The step's address for a form's fields: the thing it names and the way back. */
export function confirmPath(name: string, step: ConfirmSpec, form: FormFields, back: string): string {
  const q = new URLSearchParams();
  const id = step.field ? form[step.field]?.[0] : undefined;
  if (step.field && id !== undefined) q.set(step.field, id.slice(0, 100));
  q.set("back", back);
  return `/confirm/${name}?${q}`;
}

/** What an id the step reads looks like, per subject (anything else names nothing, and is not looked up). */
export const SUBJECT_ID: Record<ConfirmSubject, RegExp> = {
  task: /^tsk_[0-9a-z]{16}$/,
  project: /^prj_[0-9a-z]{16}$/,
  token: /^tok_[0-9a-z]{4,40}$/,
  trash_item: /^trs_[0-9a-z]{16}$/,
  trash_all: /^$/,
  push_device: /^psh_[0-9a-z]{16}$/,
};
