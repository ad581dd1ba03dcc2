import type { FC } from "hono/jsx";
import type { AccountSettingsRow } from "../../../db/account.ts";
import { ACTIVITY_RETENTION } from "../../../domain/retention.ts";
import type { PushDevice } from "../../../db/push.ts";
import { PUSH_SCRIPT_PATH } from "../../pwa.ts";
import { Act, Button, Field, invalidField, Shell, typed, Written, type View } from "../ui.tsx";
import { PushSection } from "./settings-push.tsx";
import { DISPLAY_NAME_MAX } from "../profile.ts";

export interface PushSettings {
  devices: PushDevice[];
  publicKey: string | null;
  setupError: string | null;
}

export const SettingsPage: FC<{ view: View; settings: AccountSettingsRow; push: PushSettings }> = ({ view, settings, push }) => (
  <Shell view={view} section="settings" title="Settings" script={PUSH_SCRIPT_PATH}>
    <h1>Settings</h1>
    <section class="card" aria-labelledby="h-you">
      <h2 id="h-you">You</h2>
      <form method="post" action="/settings/name" aria-label="Your name">
        <input type="hidden" name="csrf" value={view.csrf} />
        <div class="row top">
          <Field
            id="s-name" class="grow" label="Your name"
            hint={<>Shown for your decisions, claims and activity, to people and agents alike (1 to {DISPLAY_NAME_MAX} characters). Signed in as <Written text={view.session.email} />.</>}
          >
            <input
              type="text" id="s-name" name="display_name" value={typed(view, "display_name") ?? view.session.name} required maxlength={DISPLAY_NAME_MAX}
              aria-describedby="s-name-hint" aria-invalid={invalidField(view, "display_name")}
            />
          </Field>
        </div>
        <Button kind="primary">Save name</Button>
      </form>
    </section>
    <section class="card" aria-labelledby="h-account">
      <h2 id="h-account">{settings.name ? <Written text={settings.name} /> : "Account"}</h2>
      <Act view={view} action="settings" label="Account settings">
        <div class="row top">
          <Field id="s-tz" label="Time zone" hint="An IANA name, e.g. Europe/Berlin, America/New_York or UTC. Agendas and due windows use it." class="grow">
            <input type="text" id="s-tz" name="time_zone" value={typed(view, "time_zone") ?? settings.time_zone} required maxlength={64} aria-describedby="s-tz-hint" aria-invalid={invalidField(view, "time_zone")} />
          </Field>
          <Field id="s-retention" label="Trash retention (days)" hint="1 to 365; items already in the trash get the new purge time.">
            <input type="number" id="s-retention" name="trash_retention_days" value={typed(view, "trash_retention_days") ?? String(settings.trash_retention_days)} aria-invalid={invalidField(view, "trash_retention_days")} min={1} max={365} required aria-describedby="s-retention-hint" />
          </Field>
          <Field id="s-activity" label="Activity kept (days)" hint={`${ACTIVITY_RETENTION.min} to ${ACTIVITY_RETENTION.max}; older activity entries and run events are removed daily.`}>
            <input
              type="number" id="s-activity" name="activity_retention_days" value={typed(view, "activity_retention_days") ?? String(settings.activity_retention_days)} aria-invalid={invalidField(view, "activity_retention_days")}
              min={ACTIVITY_RETENTION.min} max={ACTIVITY_RETENTION.max} required aria-describedby="s-activity-hint"
            />
          </Field>
        </div>
        <p>
          <label class="check">
            <input type="checkbox" name="default_auto_ok" value="true" checked={settings.default_auto_ok === 1} />
            Auto-OK for new tasks by default (a project's own setting wins)
          </label>
        </p>
        <input type="hidden" name="default_auto_ok_shown" value="1" />
        <Button kind="primary">Save settings</Button>
      </Act>
    </section>
    <PushSection view={view} devices={push.devices} publicKey={push.publicKey} setupError={push.setupError} />
  </Shell>
);
