import type { FC } from "hono/jsx";
import { EVENT_TYPES } from "../../../domain/events.ts";
import { describeEvents, WEBHOOKS_PER_ACCOUNT } from "../../../domain/webhooks.ts";
import type { WebhookSummary } from "../../../db/webhooks-d1.ts";
import { clip } from "../format.ts";
import type { NewWebhook } from "../webhooks.ts";
import { newFormId } from "../once.ts";
import { Button, Empty, Field, Shell, When, Written, type View } from "../ui.tsx";

const EVENT_HINTS: Record<(typeof EVENT_TYPES)[number], string> = {
  "approval.requested": "an agent asks a person a question or to sign off, or asks to run a call its policy holds for approval",
  "approval.decided": "a person approved (the call ran) or rejected a call an agent's policy held for approval",
  "approval.answered": "a person answers an agent's question (yes or no)",
  "approval.withdrawn": "the agent that asked withdraws its question or sign-off before a person decides",
  "task.completed": "a task is done",
  "task.rejected": "a person sends a task back",
  "run.stale": "a running run has gone silent",
  "claim.lapsed": "an agent's claim on a task ran out",
  "task.handed_off": "the agent that held a task handed it to another agent",
};

const Created: FC<{ w: NewWebhook }> = ({ w }) => (
  <section class="card created" aria-labelledby="h-new-webhook">
    <h2 id="h-new-webhook">Your new webhook</h2>
    <p>
      <code>{w.url}</code> receives {w.events === "all" ? "all events, those added later too" : describeEvents(w.events)}. Copy its signing secret now: it is shown only once. Receivers verify each
      delivery with it as <a href="https://www.standardwebhooks.com/">Standard Webhooks</a> (the <code>webhook-signature</code> header).
    </p>
    <pre class="secret" aria-label="Signing secret">{w.secret}</pre>
  </section>
);

/** The last outcome of an endpoint's deliveries, from the stored records. */
const Deliveries: FC<{ view: View; w: WebhookSummary }> = ({ view, w }) => {
  const d = w.deliveries;
  if (d.delivered + d.pending + d.failed === 0) return <span class="muted">none yet</span>;
  return (
    <>
      {d.delivered} delivered, {d.pending} retrying, {d.failed} failed
      {w.last_failure ? (
        <div class="hint">
          {w.last_failure.retrying ? <>retrying after attempt {w.last_failure.attempts} failed</> : "last failure"} <When view={view} iso={w.last_failure.at} />:{" "}
          {w.last_failure.event_type}, <Written text={w.last_failure.last_error ?? "no answer"} max={200} />
        </div>
      ) : null}
    </>
  );
};

/** The account's endpoints, each with its events, its deliveries and a form that removes it. */
const Endpoints: FC<{ view: View; hooks: WebhookSummary[] }> = ({ view, hooks }) =>
  hooks.length ? (
    <div class="table">
      <table class="stack">
        <thead>
          <tr><th scope="col">URL</th><th scope="col">Events</th><th scope="col">Created</th><th scope="col">Deliveries</th><th scope="col"><span class="sr">Remove</span></th></tr>
        </thead>
        <tbody>
          {hooks.map((w) => (
            <tr>
              <td data-label="URL"><code title={w.url}><Written text={w.url} max={120} /></code><div class="hint">secret <code>{w.secret_prefix}</code></div></td>
              <td data-label="Events">{describeEvents(w.events)}</td>
              <td data-label="Created"><When view={view} iso={w.created_at} /></td>
              <td data-label="Deliveries"><Deliveries view={view} w={w} /></td>
              <td>
                <form method="post" action="/webhooks/remove" aria-label={`Remove ${clip(w.url, 80).text}`}>
                  <input type="hidden" name="csrf" value={view.csrf} />
                  <input type="hidden" name="webhook_id" value={w.id} />
                  <Button kind="danger" label={`Remove ${clip(w.url, 80).text}`}>Remove</Button>
                </form>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  ) : (
    <Empty>No webhooks yet.</Empty>
  );

/** The form that adds an endpoint (POST /webhooks, once per render), or why no more may be added. */
const AddWebhook: FC<{ view: View; hooks: WebhookSummary[]; httpAllowed: boolean }> = ({ view, hooks, httpAllowed }) => (
  <section class="card" aria-labelledby="h-add-webhook">
    <h2 id="h-add-webhook">Add a webhook</h2>
    {hooks.length >= WEBHOOKS_PER_ACCOUNT ? (
      <p class="notice">
        This account has {hooks.length} webhooks, the most it may have: remove one to add another.
      </p>
    ) : (
      <form method="post" action="/webhooks" aria-label="Add a webhook">
        <input type="hidden" name="csrf" value={view.csrf} />
        <input type="hidden" name="form_id" value={newFormId()} />
        <Field id="w-url" label="Endpoint URL" hint={httpAllowed ? "https:// (http:// too on this development server)" : "https:// only"}>
          <input type="url" id="w-url" name="url" required maxlength={2000} placeholder="https://example.com/hooks/taskgate" aria-describedby="w-url-hint" />
        </Field>
        <fieldset aria-describedby="w-events-hint">
          <legend>Events</legend>
          <p class="hint" id="w-events-hint">With every box ticked, the webhook receives all events, those added later too.</p>
          {EVENT_TYPES.map((t) => (
            <p>
              <label class="check">
                <input type="checkbox" name="events" value={t} checked={t !== "run.stale" && t !== "task.handed_off"} />
                <code>{t}</code>: {EVENT_HINTS[t]}
              </label>
            </p>
          ))}
        </fieldset>
        <Button kind="primary">Add webhook</Button>
      </form>
    )}
  </section>
);

export const WebhooksPage: FC<{ view: View; hooks: WebhookSummary[]; created: NewWebhook | null; setupError: string | null; httpAllowed: boolean }> = ({
  view, hooks, created, setupError, httpAllowed,
}) => (
  <Shell view={view} section="webhooks" title="Webhooks">
    <h1>Webhooks</h1>
    {created ? <Created w={created} /> : null}
    <p class="hint">
      Taskgate POSTs a signed JSON event to each endpoint subscribed to it. The admin CLI manages the same endpoints. An account has at most{" "}
      {WEBHOOKS_PER_ACCOUNT}; this one has {hooks.length}.
    </p>
    {setupError ? <p class="notice warn">{setupError}</p> : null}
    <Endpoints view={view} hooks={hooks} />
    <AddWebhook view={view} hooks={hooks} httpAllowed={httpAllowed} />
  </Shell>
);
