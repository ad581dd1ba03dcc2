import type { FC } from "hono/jsx";
import type { PushDevice } from "../../../db/push.ts";
import { DEFAULT_PUSH_EVENTS, PUSH_EVENT_LABELS, PUSH_EVENTS } from "../../../domain/push.ts";
import { absolute, relative } from "../format.ts";
import { AskFirst, Button, type View } from "../ui.tsx";

const When: FC<{ view: View; iso: string | null; never: string }> = ({ view, iso, never }) =>
  iso ? <time datetime={iso} title={absolute(iso, view.timeZone)}>{relative(iso, view.nowMs, view.timeZone)}</time> : <span class="muted">{never}</span>;

/** Settings → Notifications: "Notify this device" and the person's devices, each with its events, last delivery and failure. */
export const PushSection: FC<{ view: View; devices: PushDevice[]; publicKey: string | null; setupError: string | null }> = ({ view, devices, publicKey, setupError }) => (
  <section class="card" aria-labelledby="h-push">
    <h2 id="h-push">Notifications on your devices</h2>
    <p class="muted">
      A phone or browser added here is notified by Web Push when an agent asks you something, and, if you choose, when a claim lapses or a run
      goes stale. Tapping the notification opens the task's page, where you decide; a notification never decides by itself.
    </p>
    {setupError ? <p class="notice error" role="alert">Notifications are not set up on this server: {setupError}.</p> : null}
    <form method="post" action="/settings/push" id="push-subscribe" data-key={publicKey ?? ""} aria-label="Notify this device">
      <input type="hidden" name="csrf" value={view.csrf} />
      <input type="hidden" name="endpoint" value="" />
      <input type="hidden" name="p256dh" value="" />
      <input type="hidden" name="auth" value="" />
      <input type="hidden" name="events_shown" value="1" />
      <fieldset>
        <legend>Notify this device when</legend>
        {PUSH_EVENTS.map((e) => (
          <label class="check">
            <input type="checkbox" name="events" value={e} checked={DEFAULT_PUSH_EVENTS.includes(e)} /> {PUSH_EVENT_LABELS[e]}
          </label>
        ))}
      </fieldset>
      <Button kind="primary">Notify this device</Button>
      <p id="push-status" class="muted" role="status" aria-live="polite">
        <noscript>Adding a device needs JavaScript and a browser with Web Push; everything else here works without it.</noscript>
      </p>
    </form>
    <h3>Your devices</h3>
    {devices.length === 0 ? <p class="muted">No device is notified yet.</p> : (
      <ul class="facts devices">
        {devices.map((d) => (
          <li>
            <p>
              <strong>{d.label}</strong> <span class="muted">added <When view={view} iso={d.created_at} never="" /></span>
            </p>
            <p class="muted">
              Last delivery: <When view={view} iso={d.last_delivered_at} never="none yet" />
              {d.last_failure_at ? <> · Last failure: <When view={view} iso={d.last_failure_at} never="" /> ({d.last_error ?? "unknown"})</> : null}
            </p>
            <form method="post" action="/settings/push/events" aria-label={`What ${d.label} is notified of`} class="row">
              <input type="hidden" name="csrf" value={view.csrf} />
              <input type="hidden" name="device_id" value={d.id} />
              {PUSH_EVENTS.map((e) => (
                <label class="check">
                  <input type="checkbox" name="events" value={e} checked={d.events.includes(e)} /> {PUSH_EVENT_LABELS[e]}
                </label>
              ))}
              <Button>Save</Button>
            </form>
            <AskFirst view={view} action="remove_device" fields={{ device_id: d.id }} back="/settings" label={`Remove ${d.label}`}>
              <Button kind="danger">Remove</Button>
            </AskFirst>
          </li>
        ))}
      </ul>
    )}
  </section>
);
