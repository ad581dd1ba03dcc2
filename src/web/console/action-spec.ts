/**
 * What a console action is, as data (ActionSpec), and the small readers its
 * specs share: a submitted form's fields, one field, an optional argument.
 * The actions themselves are in actions.ts and actions/ (one file an area).
 */
import type { ToolName } from "../../catalog/effects.ts";
import type { ConfirmFacts, ConfirmSubject } from "../../db/confirm.ts";

/** A submitted form: each field's values (repeated fields keep all of them). */
export type FormFields = Record<string, string[]>;

export const one = (f: FormFields, name: string): string | undefined => {
  const v = f[name]?.[0]?.trim();
  return v ? v : undefined;
};

export type Result = Record<string, any>;

export interface ActionSpec {
  tool: ToolName;
  args(f: FormFields): Record<string, unknown>;
  done(r: Result, f: FormFields): string;
  /** Where to go after success when it is not back to the page the form was on. */
  after?(r: Result, f: FormFields): string | null;
  /** The form's label of each tool argument it fills, so a refusal names the field the person sees. */
  labels?: Record<string, string>;
  /** A refusal of the tool's said in the form's words (and the field it names), when its own words are for an MCP caller; null: as usual. */
  refused?(text: string, f: FormFields): { text: string; field?: string } | null;
  /** An action that cannot wait (a delete, a revoke, a purge) first shows a confirmation step; it acts only once confirmed. */
  confirm?: ConfirmSpec;
}

/** Words of a confirmation step: plain strings, and text someone wrote (a title, a name), which the page prints isolated. */
export type Said = (string | { written: string })[];

/** Text someone wrote, in quotes: “…”. */
export const written = (text: string | null | undefined): Said => ["“", { written: text ?? "" }, "”"];

/** What a confirmation step says, from what it read. */
export interface ConfirmWords {
  /** "Delete “X”?" */
  heading: Said;
  /** What will happen: what, how many, and whether (and how long) the trash can bring it back. */
  facts: Said[];
  /** The confirm button's words, naming the action: "Delete the task and its 2 subtasks". */
  button: string;
}

/**
 * The confirmation step of an action: the thing it reads (named by the form
 * field `field`, none for the whole trash) and its words from what was read.
 * `facts` is null when there is no such thing: the step says so and offers
 * only the way back.
 */
export interface ConfirmSpec {
  subject: ConfirmSubject;
  field?: string;
  /** `retentionDays`: how long the trash keeps what is deleted (the account's trash_retention_days). */
  say(facts: ConfirmFacts, retentionDays: number): ConfirmWords | null;
}

export const quote = (s: unknown) => `“${String(s ?? "")}”`;

/** An argument passed only when the field was filled in, so the tool's own rules decide about the rest. */
export const opt = (f: FormFields, name: string, as = name) => {
  const v = one(f, name);
  return v === undefined ? {} : { [as]: v };
};

export const bool = (v: string | undefined): boolean | string | undefined =>
  v === "true" || v === "on" ? true : v === "false" || v === "off" ? false : v;

/** "2026-12-07 09:00 UTC": a time in a message made before the page that shows it. */
export const utcWords = (iso: unknown) => (typeof iso === "string" ? `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC` : "later");

export const statusText = (status: unknown) => (status === "in_progress" ? "in progress" : String(status ?? ""));

/** What the trash does with what a delete moves there, in `days` (the account's trash_retention_days). */
export const trashKeeps = (days: number, it: "it" | "them"): Said => [
  `The trash keeps ${it} for ${days === 1 ? "1 day" : `${days} days`} (Settings); until then, Restore on the Trash page brings ${it} back exactly as before. After that ${it === "it" ? "it is" : "they are"} purged for good.`,
];
