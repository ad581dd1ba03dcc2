/**
 * The person's web console: GET pages (one D1 batch each after the session
 * lookup) and POST actions (post/redirect/get, each one tool call through the
 * registry with the person's principal). Signed out, every page leads to
 * sign-in; every POST needs this session's CSRF token and this origin.
 */
import type { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { callTool } from "../../mcp/registry.ts";
import {
  readActivityPage, readAgentsPage, readAppsPage, readFrame, readTaskPage, readTasksPage, readTaskText, readTrashPage, type Frame,
} from "../../db/console.ts";
import { readInbox } from "../../db/inbox.ts";
import { page as pageOf } from "../../db/cursor.ts";
import { importConnectorKey } from "../../domain/crypto.ts";
import { staleRunMinutes } from "../../domain/stale-runs.ts";
import { envOf, originOf, type Session, type WebContext, type WebEnv } from "../context.ts";
import { page, redirect } from "../render.ts";
import { safeReturnTo } from "../return-to.ts";
import { accountMoving } from "../errors.tsx";
import { csrfOk, currentSession, requireSession, sameOrigin } from "../session.ts";
import { ACTIONS, personRefusal, type FormFields } from "./actions.ts";
import { flashCookie, takeFlash, typedValues } from "./flash.ts";
import { showOnNextPage, takeShown } from "./once.ts";
import { callScope, WEB_TOKEN_PREFIX, webPrincipal } from "./respond.ts";
import { activityFilter, safeCursor, taskQuery, tasksRead, TASKS_PAGE } from "./queries.ts";
import { createTokenFromForm } from "./tokens.ts";
import { addWebhookFromForm, removeWebhookFromForm, type NewWebhook } from "./webhooks.ts";
import { listWebhooks } from "../../db/webhooks-d1.ts";
import { httpAllowed } from "../../webhooks/deliver.ts";
import { WebhooksPage } from "./pages/webhooks.tsx";
import { MessagePage } from "./pages/message.tsx";
import { InboxPage, INBOX_LIMITS } from "./pages/inbox.tsx";
import { TasksPage } from "./pages/tasks.tsx";
import { TaskPage, TaskTextPage, TASK_LIMITS } from "./pages/task.tsx";
import { AgentsPage, AGENTS_PAGE } from "./pages/agents.tsx";
import { AppsPage, type NewToken, type TokenItem } from "./pages/apps.tsx";
import { TrashPage } from "./pages/trash.tsx";
import { ActivityPage } from "./pages/activity.tsx";
import { SettingsPage } from "./pages/settings.tsx";
import { listPushDevices } from "../../db/push.ts";
import { parseVapidKey } from "../../domain/push.ts";
import { addPushDeviceFromForm, removePushDeviceFromForm, setPushEventsFromForm } from "./push.ts";
import type { Flash, View } from "./ui.tsx";

const TRASH_PAGE = 30;
const TOKENS_PAGE = 40;

/** The signed-in session (requireSession ran first). */
async function sessionOf(c: WebContext): Promise<Session> {
  return (await currentSession(c)) as Session;
}

/** Renders a page with the frame's data; takes (and clears) the pending flash message. */
function render(
  c: WebContext, s: Session, frame: Frame, build: (view: View) => Parameters<typeof page>[0], status = 200, cookies: (string | null)[] = [],
  o: { notice?: Flash; scripts?: boolean } = {},
): Promise<Response> {
  const url = new URL(c.req.url);
  const taken = takeFlash(c);
  const { clear } = taken;
  const flash = o.notice ?? taken.flash;
  const view: View = {
    session: s,
    csrf: s.csrfToken,
    back: url.pathname + url.search,
    timeZone: frame.settings.time_zone || "UTC",
    nowMs: Date.now(),
    accountName: frame.settings.name,
    accountAutoOk: frame.settings.default_auto_ok === 1,
    pendingCount: frame.pendingCount,
    flash,
  };
  return page(build(view), { status, cookies: [clear, ...cookies], scripts: o.scripts ?? false });
}

function textOf(r: { content?: unknown }): string {
  const content = (r.content ?? []) as { type: string; text?: string }[];
  return content.filter((x) => x.type === "text").map((x) => x.text ?? "").join("\n");
}

/** A tool's refusal as the person reads it: a form sent again after an edit is told so in plain words. */
function refusalText(text: string, form: FormFields): string {
  const key = form.idempotency_key?.[0];
  if (key && text.startsWith(`idempotency_key "${key}" was already used`)) {
    return "This form was already sent and did its work then; nothing more was done. Reload the page for a fresh form to send another.";
  }
  return text;
}

async function formOf(c: WebContext): Promise<FormFields> {
  const body = await c.req.parseBody({ all: true });
  const out: FormFields = {};
  for (const [k, v] of Object.entries(body)) {
    out[k] = (Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === "string");
  }
  return out;
}

const formLimit = bodyLimit({ maxSize: 256 * 1024, onError: (c) => c.text("The form is too large.", 413) });

/** A POST from this session's page on this origin, or the page that says nothing changed. */
async function guardedForm(c: WebContext): Promise<{ s: Session; form: FormFields } | Response> {
  const s = await currentSession(c);
  if (!s) return redirect("/signin", { status: 303 });
  const form = await formOf(c);
  if (sameOrigin(c) && csrfOk(s, form.csrf?.[0])) return s.moving ? accountMoving(s) : { s, form };
  const frame = await readFrame(envOf(c).DB, s.accountId);
  return render(
    c, s, frame,
    (v) => (
      <MessagePage view={v} title="Nothing was changed">
        This form was not sent from your current session (its security token is missing or wrong), so nothing was changed. Go back, reload
        the page and try again.
      </MessagePage>
    ),
    403,
  );
}

export function consoleRoutes(web: Hono<WebEnv>): void {
  web.get("/", requireSession(), async (c) => {
    const s = await sessionOf(c);
    const pageNo = Math.min(Math.max(Number.parseInt(c.req.query("page") ?? "1", 10) || 1, 1), 1000);
    const inbox = await readInbox(envOf(c).DB, s.accountId, { ...INBOX_LIMITS, offset: (pageNo - 1) * INBOX_LIMITS.approvals });
    return render(c, s, inbox, (v) => <InboxPage view={v} inbox={inbox} page={pageNo} />);
  });

  web.get("/tasks", requireSession(), async (c) => {
    const s = await sessionOf(c);
    const query = taskQuery(c.req.query());
    const { problem, ...read } = tasksRead(query, c.req.query("cursor"), new Date().toISOString());
    const data = await readTasksPage(envOf(c).DB, s.accountId, read);
    let next: string | null = null;
    if (data.search) data.search = data.search.slice(0, TASKS_PAGE);
    else ({ items: data.tasks, next_cursor: next } = pageOf(data.tasks, TASKS_PAGE, (r) => ({ k: r.created_at, id: r.id })));
    const notice = problem ? { kind: "error" as const, text: problem } : undefined;
    return render(c, s, data, (v) => <TasksPage view={v} data={data} query={query} nextCursor={next} />, problem ? 400 : 200, [], { notice });
  });

  web.get("/tasks/:id", requireSession(), async (c) => {
    const s = await sessionOf(c);
    const id = c.req.param("id");
    const data = /^tsk_[0-9a-z]{16}$/.test(id) ? await readTaskPage(envOf(c).DB, s.accountId, id, TASK_LIMITS) : null;
    if (!data?.task) {
      const frame = data ?? (await readFrame(envOf(c).DB, s.accountId));
      return render(c, s, frame, (v) => (
        <MessagePage view={v} title="Task not found" section="tasks">
          There is no task {id} in this account. It may have been deleted (the Trash page lists what was); Tasks lists the others.
        </MessagePage>
      ), 404);
    }
    return render(c, s, data, (v) => <TaskPage view={v} data={data} />);
  });

  web.get("/tasks/:id/text/:part", requireSession(), async (c) => {
    const s = await sessionOf(c);
    const id = c.req.param("id");
    const part = c.req.param("part");
    const ok = /^tsk_[0-9a-z]{16}$/.test(id) && /^(notes|(cmt|stp|evt)_[0-9a-z]{16})$/.test(part);
    const data = ok ? await readTaskText(envOf(c).DB, s.accountId, id, part) : null;
    if (!data?.task || !data.text) {
      const frame = data ?? (await readFrame(envOf(c).DB, s.accountId));
      return render(c, s, frame, (v) => (
        <MessagePage view={v} title="Not found" section="tasks">There is no such text of a task {id} in this account.</MessagePage>
      ), 404);
    }
    const { task, text } = data;
    return render(c, s, data, (v) => <TaskTextPage view={v} task={task} text={text} />);
  });

  web.get("/agents", requireSession(), async (c) => {
    const s = await sessionOf(c);
    const minutes = staleRunMinutes(envOf(c));
    const now = Date.now();
    const after = c.req.query("after") ?? "";
    const afterName = /^[a-z0-9][a-z0-9_.-]{0,62}$/.test(after) ? after : "";
    const data = await readAgentsPage(envOf(c).DB, s.accountId, {
      now: new Date(now).toISOString(),
      staleBefore: new Date(now - minutes * 60_000).toISOString(),
      perAgent: AGENTS_PAGE.perAgent,
      afterName,
      limit: AGENTS_PAGE.agents,
    });
    const more = data.agents.length > AGENTS_PAGE.agents;
    data.agents = data.agents.slice(0, AGENTS_PAGE.agents);
    const nextAfter = more ? data.agents[data.agents.length - 1].name : null;
    return render(c, s, data, (v) => <AgentsPage view={v} data={data} staleMinutes={minutes} nextAfter={nextAfter} first={afterName === ""} />);
  });

  /** The apps page; its token list is list_tokens itself, one page at a time (revoked ones too with ?tokens=all); a token just made, once. */
  web.get("/apps", requireSession(), async (c) => {
    const s = await sessionOf(c);
    const created = await takeShown<NewToken>(c, "token");
    const all = c.req.query("tokens") === "all";
    const cursor = c.req.query("cursor");
    const args = { include_revoked: all, limit: TOKENS_PAGE, ...(cursor && cursor.length <= 500 ? { cursor } : {}) };
    const [data, listed, setupError] = await Promise.all([
      readAppsPage(envOf(c).DB, s.accountId),
      callTool(callScope(c, s), "list_tokens", args),
      importConnectorKey(envOf(c).CONNECTOR_KEY).then(() => null, (e: Error) => e.message),
    ]);
    const listing = listed.isError ? null : (listed.structuredContent as { items: TokenItem[]; next_cursor: string | null });
    const tokens = { items: listing?.items ?? [], next: listing?.next_cursor ?? null, all, error: listed.isError ? textOf(listed) : null };
    const mcpUrl = `${originOf(c)}/mcp`;
    return render(c, s, data, (v) => <AppsPage view={v} data={data} tokens={tokens} setupError={setupError} created={created.value} mcpUrl={mcpUrl} />, 200, [created.clear]);
  });

  /** The webhooks page; a new endpoint's signing secret only on the page right after adding it. */
  web.get("/webhooks", requireSession(), async (c) => {
    const s = await sessionOf(c);
    const created = await takeShown<NewWebhook>(c, "webhook");
    const [frame, hooks, setupError] = await Promise.all([
      readFrame(envOf(c).DB, s.accountId),
      listWebhooks(envOf(c).DB, s.accountId),
      importConnectorKey(envOf(c).CONNECTOR_KEY).then(() => null, (e: Error) => e.message),
    ]);
    return render(c, s, frame, (v) => <WebhooksPage view={v} hooks={hooks} created={created.value} setupError={setupError} httpAllowed={httpAllowed(envOf(c))} />, 200, [created.clear]);
  });

  web.get("/trash", requireSession(), async (c) => {
    const s = await sessionOf(c);
    const data = await readTrashPage(envOf(c).DB, s.accountId, safeCursor(c.req.query("cursor")), TRASH_PAGE);
    const paged = pageOf(data.items, TRASH_PAGE, (r) => ({ k: r.deleted_at, id: r.id }));
    data.items = paged.items;
    return render(c, s, data, (v) => <TrashPage view={v} data={data} nextCursor={paged.next_cursor} />);
  });

  web.get("/activity", requireSession(), async (c) => {
    const s = await sessionOf(c);
    const { query, filter } = activityFilter(c.req.query(), safeCursor(c.req.query("cursor")));
    const data = await readActivityPage(envOf(c).DB, s.accountId, filter);
    const paged = pageOf(data.items, filter.limit, (r) => ({ k: r.created_at, id: r.id }));
    data.items = paged.items;
    return render(c, s, data, (v) => <ActivityPage view={v} data={data} query={query} nextCursor={paged.next_cursor} webPrefix={WEB_TOKEN_PREFIX} />);
  });

  /** Settings, with the person's push devices; the one page that loads a script (its "Notify this device"). */
  web.get("/settings", requireSession(), async (c) => {
    const s = await sessionOf(c);
    const [frame, devices] = await Promise.all([readFrame(envOf(c).DB, s.accountId), listPushDevices(envOf(c).DB, s.personId)]);
    let publicKey: string | null = null;
    let setupError: string | null = null;
    try {
      publicKey = parseVapidKey(envOf(c).VAPID_KEY).publicKey;
    } catch (e) {
      setupError = (e as Error).message;
    }
    return render(c, s, frame, (v) => <SettingsPage view={v} settings={frame.settings} push={{ devices, publicKey, setupError }} />, 200, [], { scripts: true });
  });

  /** Settings → push devices: add this browser, change a device's events, remove one; each back to Settings with the outcome. */
  const pushForms = {
    "/settings/push": (c: WebContext, s: Session, form: FormFields) => addPushDeviceFromForm(envOf(c), s, form, originOf(c), c.req.header("user-agent")),
    "/settings/push/events": (c: WebContext, s: Session, form: FormFields) => setPushEventsFromForm(envOf(c), s, form),
    "/settings/push/remove": (c: WebContext, s: Session, form: FormFields) => removePushDeviceFromForm(envOf(c), s, form),
  };
  for (const [path, handle] of Object.entries(pushForms)) {
    web.post(path, formLimit, async (c) => {
      const g = await guardedForm(c);
      if (g instanceof Response) return g;
      const r = await handle(c, g.s, g.form);
      const flash = "error" in r ? { kind: "error" as const, text: r.error } : { kind: "ok" as const, text: r.ok };
      return redirect("/settings", { cookies: [flashCookie(c, flash)] });
    });
  }

  /** Every action: one tool call with the person's principal, then back to the page with the outcome. */
  web.post("/act/:action", formLimit, async (c) => {
    const g = await guardedForm(c);
    if (g instanceof Response) return g;
    const { s, form } = g;
    const back = safeReturnTo(form.back?.[0]);
    const name = c.req.param("action");
    const spec = Object.hasOwn(ACTIONS, name) ? ACTIONS[name] : undefined;
    if (!spec) return redirect(back, { cookies: [flashCookie(c, { kind: "error", text: `There is no action “${name}”; nothing was changed.` })] });
    const result = await callTool(callScope(c, s), spec.tool, spec.args(form));
    if (result.isError) {
      const said = personRefusal(refusalText(textOf(result), form), spec);
      return redirect(back, { cookies: [flashCookie(c, { kind: "error", text: said.text, ...(said.field ? { field: said.field } : {}), values: typedValues(form) })] });
    }
    const r = (result.structuredContent ?? {}) as Record<string, unknown>;
    return redirect(safeReturnTo(spec.after?.(r, form) ?? back), { cookies: [flashCookie(c, { kind: "ok", text: spec.done(r, form) })] });
  });

  /** Adding a webhook goes back to the page, which shows its secret once; a refusal goes back with the reason. */
  web.post("/webhooks", formLimit, async (c) => {
    const g = await guardedForm(c);
    if (g instanceof Response) return g;
    const made = await addWebhookFromForm(envOf(c), webPrincipal(g.s), g.form);
    if ("error" in made) return redirect("/webhooks", { cookies: [flashCookie(c, { kind: "error", text: made.error })] });
    return redirect("/webhooks", { cookies: [await showOnNextPage(c, "webhook", made)] });
  });

  web.post("/webhooks/remove", formLimit, async (c) => {
    const g = await guardedForm(c);
    if (g instanceof Response) return g;
    const r = await removeWebhookFromForm(envOf(c), g.s.accountId, g.form);
    const flash = "error" in r ? { kind: "error" as const, text: r.error } : { kind: "ok" as const, text: r.ok };
    return redirect("/webhooks", { cookies: [flashCookie(c, flash)] });
  });

  /** Creating a token goes back to the page, which shows the secret once: never stored, never in a URL, sealed to this session on its way. */
  web.post("/apps/tokens", formLimit, async (c) => {
    const g = await guardedForm(c);
    if (g instanceof Response) return g;
    const made = await createTokenFromForm(envOf(c).DB, webPrincipal(g.s), g.form, g.s.shard);
    if ("error" in made) return redirect("/apps", { cookies: [flashCookie(c, { kind: "error", text: made.error })] });
    return redirect("/apps", { cookies: [await showOnNextPage(c, "token", made.token)] });
  });
}
