/** Settings: the account's settings and the person's push devices (add this browser, change a device's events, remove one). */
import { Hono } from "hono";
import { readFrame } from "../../../db/console.ts";
import { listPushDevices } from "../../../db/push.ts";
import { parseVapidKey } from "../../../domain/push.ts";
import { envOf, originOf, type Session, type WebContext, type WebEnv } from "../../context.ts";
import { redirect } from "../../render.ts";
import { requireSession } from "../../session.ts";
import type { FormFields } from "../actions.ts";
import { flashCookie } from "../flash.ts";
import { addPushDeviceFromForm, REMOVE_DEVICE_CONFIRM, removePushDeviceFromForm, setPushEventsFromForm } from "../push.ts";
import { confirmed, confirmPath } from "../confirm.ts";
import { setDisplayNameFromForm } from "../profile.ts";
import { SettingsPage } from "../pages/settings.tsx";
import { formLimit, guardedForm, render, sessionOf } from "./shared.tsx";

export const settingsRoutes = new Hono<WebEnv>();

/** Settings, with the person's push devices; the one page that loads a script (its "Notify this device"). */
settingsRoutes.get("/", requireSession(), async (c) => {
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

/** Settings → your name: saved, or refused with what to fix (the typed name shown again); back to Settings either way. */
settingsRoutes.post("/name", formLimit, async (c) => {
  const g = await guardedForm(c);
  if (g instanceof Response) return g;
  const r = await setDisplayNameFromForm(envOf(c).DB, g.s, g.form);
  const flash = "error" in r ? { kind: "error" as const, text: r.error, field: r.field, values: r.values } : { kind: "ok" as const, text: r.ok };
  return redirect("/settings", { cookies: [flashCookie(c, flash)] });
});

/** Settings → push devices: add this browser, change a device's events, remove one; each back to Settings with the outcome. */
const pushForms = {
  "/push": (c: WebContext, s: Session, form: FormFields) => addPushDeviceFromForm(envOf(c), s, form, originOf(c), c.req.header("user-agent")),
  "/push/events": (c: WebContext, s: Session, form: FormFields) => setPushEventsFromForm(envOf(c), s, form),
  "/push/remove": (c: WebContext, s: Session, form: FormFields) => removePushDeviceFromForm(envOf(c), s, form),
};
for (const [path, handle] of Object.entries(pushForms)) {
  settingsRoutes.post(path, formLimit, async (c) => {
    const g = await guardedForm(c);
    if (g instanceof Response) return g;
    // Removing a device acts only once confirmed on its step; without that, the step is shown instead.
    if (path === "/push/remove" && !confirmed(g.form)) return redirect(confirmPath("remove_device", REMOVE_DEVICE_CONFIRM, g.form, "/settings"));
    const r = await handle(c, g.s, g.form);
    const flash = "error" in r ? { kind: "error" as const, text: r.error } : { kind: "ok" as const, text: r.ok };
    return redirect("/settings", { cookies: [flashCookie(c, flash)] });
  });
}
