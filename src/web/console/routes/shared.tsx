/**
 * What every console route shares: the signed-in session, rendering a page
 * with the account's frame and the pending flash message, and the guard of
 * every POST (the form limit, this session's CSRF token and this origin).
 */
import { bodyLimit } from "hono/body-limit";
import { readFrame, type Frame } from "../../../db/console.ts";
import { envOf, type Session, type WebContext } from "../../context.ts";
import { page, redirect } from "../../render.ts";
import { accountMoving } from "../../errors.tsx";
import { csrfOk, currentSession, sameOrigin } from "../../session.ts";
import type { FormFields } from "../actions.ts";
import { takeFlash } from "../flash.ts";
import { MessagePage } from "../pages/message.tsx";
import type { Flash, View } from "../ui.tsx";

/** The signed-in session (requireSession ran first). */
export async function sessionOf(c: WebContext): Promise<Session> {
  return (await currentSession(c)) as Session;
}

/** Renders a page with the frame's data; takes (and clears) the pending flash message. */
export function render(
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

export function textOf(r: { content?: unknown }): string {
  const content = (r.content ?? []) as { type: string; text?: string }[];
  return content.filter((x) => x.type === "text").map((x) => x.text ?? "").join("\n");
}

async function formOf(c: WebContext): Promise<FormFields> {
  const body = await c.req.parseBody({ all: true });
  const out: FormFields = {};
  for (const [k, v] of Object.entries(body)) {
    out[k] = (Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === "string");
  }
  return out;
}

export const formLimit = bodyLimit({ maxSize: 256 * 1024, onError: (c) => c.text("The form is too large.", 413) });

/** A POST from this session's page on this origin, or the page that says nothing changed. */
export async function guardedForm(c: WebContext): Promise<{ s: Session; form: FormFields } | Response> {
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
