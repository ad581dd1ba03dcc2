/** The task page's calendar links: each event with its times in the account's zone and its remove button, and the form that links one. */
import type { FC } from "hono/jsx";
import type { TaskPage as Data } from "../../../../db/console.ts";
import type { TaskRow } from "../../../../db/tasks.ts";
import { spanWords } from "../../actions/task-parts.ts";
import { clip } from "../../format.ts";
import { Act, Button, Field, invalidField, typed, Written, type View } from "../../ui.tsx";
import { TASK_LIMITS } from "./parts.tsx";

const NAME_CLIP = 60;

/** The task's calendar links; changing them (`?edit=calendar`) shows a remove button on each and the form that links another. */
export const CalendarLinks: FC<{ view: View; data: Data; t: TaskRow; edit: string | null }> = ({ view, data, t, edit }) => {
  const here = `/tasks/${t.id}`;
  const links = data.links.slice(0, TASK_LIMITS.links);
  // A refused link form comes back open with what was typed.
  const back = typed(view, "event_id") !== undefined || typed(view, "starts_at") !== undefined;
  const editing = edit === "calendar" || back;
  const v = (name: string) => (back ? typed(view, name) : undefined);
  const bad = (name: string) => (back ? invalidField(view, name) : undefined);
  return (
    <section class="card parts" aria-labelledby="h-cal">
      <h2 id="h-cal">Calendar</h2>
      {links.length ? (
        <ul class="plain links">
          {links.map((l) => (
            <li>
              <strong><Written text={l.title} max={200} /></strong>
              <div class="meta">
                <span><time datetime={l.starts_at}>{spanWords(l.starts_at, l.ends_at, view.timeZone)}</time></span>
                <span class="hint"><Written text={l.provider} /> · <Written text={l.event_id} max={NAME_CLIP} /></span>
                {l.url ? <span><a href={l.url} rel="noreferrer noopener">Open the event</a></span> : null}
                {editing ? (
                  <Act view={view} action="unlink_event" class="inline" fields={{ task_id: t.id, link_id: l.id }}>
                    <Button kind="link" label={`Remove calendar link ${clip(l.title, NAME_CLIP).text}`}>Remove</Button>
                  </Act>
                ) : null}
              </div>
            </li>
          ))}
        </ul>
      ) : <p class="hint">No calendar events are linked.</p>}
      {data.links.length > links.length ? <p class="hint">More are linked than shown; list_calendar_links lists them all.</p> : null}
      {editing ? (
        <div>
          <Act view={view} action="link_event" once fields={{ task_id: t.id, time_zone: view.timeZone }} label="Link a calendar event">
            <div class="row">
              <Field id="cal-title" label="Title" class="grow">
                <input type="text" id="cal-title" name="title" required maxlength={500} value={v("title")} aria-invalid={bad("title")} />
              </Field>
            </div>
            <div class="row">
              <Field id="cal-start" label="Starts" class="grow">
                <input type="datetime-local" id="cal-start" name="starts_at" required value={v("starts_at")} aria-invalid={bad("starts_at")} aria-describedby="cal-zone" />
              </Field>
              <Field id="cal-end" label="Ends" class="grow">
                <input type="datetime-local" id="cal-end" name="ends_at" required value={v("ends_at")} aria-invalid={bad("ends_at")} aria-describedby="cal-zone" />
              </Field>
            </div>
            <p class="hint" id="cal-zone">Times in the account's time zone, {view.timeZone}.</p>
            <div class="row">
              <Field id="cal-provider" label="Calendar" class="grow" hint="A short lowercase word: google, outlook, ical…">
                <input type="text" id="cal-provider" name="provider" required maxlength={20} value={v("provider") ?? "google"} aria-invalid={bad("provider")} aria-describedby="cal-provider-hint" />
              </Field>
              <Field id="cal-event" label="Event id" class="grow" hint="The event's id in that calendar.">
                <input type="text" id="cal-event" name="event_id" required maxlength={1024} value={v("event_id")} aria-invalid={bad("event_id")} aria-describedby="cal-event-hint" />
              </Field>
            </div>
            <div class="row">
              <Field id="cal-url" label="Link (optional)" class="grow">
                <input type="url" id="cal-url" name="url" maxlength={2048} value={v("url")} aria-invalid={bad("url")} placeholder="https://" />
              </Field>
            </div>
            <div class="actions"><Button kind="primary">Link the event</Button></div>
          </Act>
        <p class="hint"><a href={`${here}#h-cal`}>Done changing calendar links</a></p>
        </div>
      ) : <p class="hint"><a href="?edit=calendar#h-cal">Change calendar links</a></p>}
    </section>
  );
};
