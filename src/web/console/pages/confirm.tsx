import type { FC } from "hono/jsx";
import type { ConfirmSubject } from "../../../db/confirm.ts";
import type { ConfirmWords, Said } from "../action-spec.ts";
import { CONFIRMED, type ConfirmStep } from "../confirm.ts";
import { Button, Shell, Written, type Section, type View } from "../ui.tsx";

const SECTION: Record<ConfirmSubject, Section> = {
  task: "tasks", project: "tasks", token: "apps", trash_item: "trash", trash_all: "trash", push_device: "settings",
};

const WHAT: Record<ConfirmSubject, string> = {
  task: "task", project: "project", token: "token or connection", trash_item: "item in the trash", trash_all: "trash", push_device: "device of yours",
};

/** Words with the text someone wrote printed isolated (and broken anywhere). */
const Words: FC<{ said: Said; max?: number }> = ({ said, max }) => (
  <>{said.map((part) => (typeof part === "string" ? part : <Written text={part.written} max={max} />))}</>
);

/** The words as plain text, for the page's title. */
const plain = (said: Said, max: number) => said.map((p) => (typeof p === "string" ? p : p.written.length > max ? `${p.written.slice(0, max)}…` : p.written)).join("");

/** The step: what will happen, as a short list, then the danger button that does it and Cancel, which goes back and changes nothing. */
export const ConfirmPage: FC<{ view: View; step: ConfirmStep; words: ConfirmWords; fields: Record<string, string>; back: string }> = ({ view, step, words, fields, back }) => (
  <Shell view={view} section={SECTION[step.subject]} title={plain(words.heading, 60)}>
    <h1 class="confirm-heading"><Words said={words.heading} max={200} /></h1>
    <section class="card confirm" aria-labelledby="h-will">
      <h2 id="h-will">What will happen</h2>
      <ul class="facts">
        {words.facts.map((f) => <li><Words said={f} max={200} /></li>)}
      </ul>
      <form method="post" action={step.post} aria-label="Confirm">
        <input type="hidden" name="csrf" value={view.csrf} />
        <input type="hidden" name="back" value={back} />
        {Object.entries(fields).map(([name, value]) => <input type="hidden" name={name} value={value} />)}
        <input type="hidden" name={CONFIRMED} value="yes" />
        <div class="actions">
          <Button kind="danger">{words.button}</Button>
          <a class="button" href={back}>Cancel</a>
        </div>
      </form>
      <p class="hint">Nothing has changed yet. Cancel, or leaving this page, changes nothing.</p>
    </section>
  </Shell>
);

/** The step of a thing that is not there (deleted already, or never was): only the way back. */
export const NothingToConfirm: FC<{ view: View; subject: ConfirmSubject; back: string }> = ({ view, subject, back }) => (
  <Shell view={view} section={SECTION[subject]} title="Nothing to confirm">
    <h1>Nothing to confirm</h1>
    <p class="card">There is no such {WHAT[subject]} here any more (it may be gone already); nothing was changed.</p>
    <p><a class="button" href={back}>Back</a></p>
  </Shell>
);
