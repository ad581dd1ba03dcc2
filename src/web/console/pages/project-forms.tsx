import type { FC } from "hono/jsx";
import type { CountedProjectRow } from "../../../db/projects.ts";
import { Act, Button, Field, invalidField, typed, Written, type View } from "../ui.tsx";

type Choice = "account" | "on" | "off";

const choiceOf = (v: number | null | undefined): Choice => (v === null || v === undefined ? "account" : v === 1 ? "on" : "off");

/** What a project's new tasks start with, said as the person's own choice or as the account's default they follow. */
export function autoOkSaid(project: { default_auto_ok: number | null }, accountDefault: number): string {
  const c = choiceOf(project.default_auto_ok);
  if (c === "account") return `New tasks follow the account's default (Settings): auto-OK ${accountDefault === 1 ? "on" : "off"}.`;
  return `New tasks start with auto-OK ${c}: your choice for this project.`;
}

/** The auto-OK choice of a project form, with the account's current default named in its first option. */
const AutoOkSelect: FC<{ view: View; id: string; value: Choice }> = ({ view, id, value: chosen }) => {
  const account = view.accountAutoOk ? "on" : "off";
  return (
    <Field id={id} label="Auto-OK for new tasks" hint="With auto-OK an agent may complete a task alone; without it, its completion waits for your approval.">
      <select id={id} name="default_auto_ok" aria-describedby={`${id}-hint`}>
        <option value="account" selected={chosen === "account"}>The account's default (now {account})</option>
        <option value="on" selected={chosen === "on"}>On for this project</option>
        <option value="off" selected={chosen === "off"}>Off for this project</option>
      </select>
    </Field>
  );
};

/** Creating a project, and editing the one shown: each a tool call with the person's principal, like every console form. */
export const ProjectForms: FC<{ view: View; current: CountedProjectRow | undefined }> = ({ view, current }) => {
  const refused = view.flash?.kind === "error" ? view.flash.values : undefined;
  const editing = Boolean(current && refused?.project_id === current.id);
  const creating = refused?.form === "new-project";
  const was = (on: boolean, name: string) => (on ? typed(view, name) : undefined);
  const bad = (on: boolean, name: string) => (on ? invalidField(view, name) : undefined);
  return (
  <>
    {current ? (
      <details class="card" open={editing}>
        <summary>Edit the project <Written text={current.name} max={60} /></summary>
        <p class="hint">{autoOkSaid(current, view.accountAutoOk ? 1 : 0)}</p>
        <Act view={view} action="update_project" label="Edit the project" fields={{ project_id: current.id }}>
          <div class="row top">
            <Field id="e-name" label="Name" class="grow">
              <input type="text" id="e-name" name="name" required maxlength={200} value={was(editing, "name") ?? current.name} aria-invalid={bad(editing, "name")} />
            </Field>
            <AutoOkSelect view={view} id="e-auto" value={(was(editing, "default_auto_ok") as Choice | undefined) ?? choiceOf(current.default_auto_ok)} />
          </div>
          <Field id="e-description" label="Description">
            <textarea id="e-description" name="description" maxlength={20000} aria-invalid={bad(editing, "description")}>
              {was(editing, "description") ?? current.description}
            </textarea>
          </Field>
          <div class="actions"><Button kind="primary">Save project</Button></div>
        </Act>
      </details>
    ) : null}
    <details class="card" open={creating}>
      <summary>New project</summary>
      <Act view={view} action="create_project" once label="New project" fields={{ form: "new-project" }}>
        <div class="row top">
          <Field id="p-name" label="Name" class="grow">
            <input type="text" id="p-name" name="name" required maxlength={200} value={was(creating, "name")} aria-invalid={bad(creating, "name")} />
          </Field>
          <AutoOkSelect view={view} id="p-auto" value={(was(creating, "default_auto_ok") as Choice | undefined) ?? "account"} />
        </div>
        <Field id="p-description" label="Description">
          <textarea id="p-description" name="description" maxlength={20000} aria-invalid={bad(creating, "description")}>{was(creating, "description") ?? ""}</textarea>
        </Field>
        <div class="actions"><Button kind="primary">Create project</Button></div>
      </Act>
    </details>
  </>
  );
};
