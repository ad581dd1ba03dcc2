/**
 * Web Push devices from Settings. Devices are not tools: the page calls the
 * db operations (savePushDevice, setPushDeviceEvents, removePushDevice) for the
 * signed-in person, each behind the console's CSRF check. A device is named
 * from the browser's User-Agent ("Chrome on Android"); its endpoint and keys
 * are never shown again.
 */
import { removePushDevice, savePushDevice, setPushDeviceEvents } from "../../db/push.ts";
import { checkPushEndpoint, DEFAULT_PUSH_EVENTS, DEVICES_PER_PERSON, fromBase64Url, isPushEvent, type PushEvent } from "../../domain/push.ts";
import { localDevelopment, type Env } from "../../env.ts";
import type { Session } from "../context.ts";
import { one, type FormFields } from "./actions.ts";
import { written, type ConfirmSpec } from "./action-spec.ts";

const DEVICE_ID = /^psh_[0-9a-z]{16}$/;
const B64URL = /^[A-Za-z0-9_-]+={0,2}$/;

/** "Chrome on Android", "Safari on iPhone", … from a User-Agent; "A browser" when unknown. */
export function deviceLabel(ua: string | undefined): string {
  const u = ua ?? "";
  const browser = /Edg\//.test(u) ? "Edge" : /Firefox\//.test(u) ? "Firefox" : /Chrom(e|ium)\//.test(u) ? "Chrome" : /Safari\//.test(u) ? "Safari" : "A browser";
  const os = /Android/.test(u) ? "Android" : /iPhone/.test(u) ? "iPhone" : /iPad/.test(u) ? "iPad" : /CrOS/.test(u) ? "ChromeOS"
    : /Mac OS X|Macintosh/.test(u) ? "macOS" : /Windows/.test(u) ? "Windows" : /Linux/.test(u) ? "Linux" : null;
  return os ? `${browser} on ${os}` : browser;
}

/** The events ticked in the form (`events` repeated); none ticked is allowed (the device stays, silent). */
export function eventsOf(form: FormFields): PushEvent[] | { error: string } {
  const chosen = form.events ?? [];
  const bad = chosen.find((e) => !isPushEvent(e));
  if (bad !== undefined) return { error: `There is no notification “${bad.slice(0, 40)}”; nothing was changed.` };
  return [...new Set(chosen as PushEvent[])];
}

function keyOk(text: string | undefined, bytes: number): text is string {
  if (!text || text.length > 200 || !B64URL.test(text)) return false;
  try {
    return fromBase64Url(text.replace(/=+$/, "")).length === bytes;
  } catch {
    return false;
  }
}

export async function addPushDeviceFromForm(env: Env, s: Session, form: FormFields, origin: string, userAgent: string | undefined): Promise<{ ok: string } | { error: string }> {
  const endpoint = one(form, "endpoint");
  if (!endpoint) {
    return { error: "This browser sent no subscription, so nothing was added. Notify this device needs JavaScript and a browser that supports Web Push (a current Chrome, Edge, Firefox or Safari; on an iPhone, add Taskgate to the Home Screen first)." };
  }
  const checked = checkPushEndpoint(endpoint, localDevelopment(env));
  if ("error" in checked) return { error: `Nothing was added: ${checked.error}.` };
  const p256dh = one(form, "p256dh");
  const auth = one(form, "auth");
  if (!keyOk(p256dh, 65) || !keyOk(auth, 16)) return { error: "Nothing was added: the browser's subscription keys (p256dh, auth) are missing or malformed." };
  const events = form.events_shown ? eventsOf(form) : [...DEFAULT_PUSH_EVENTS];
  if ("error" in events) return events;
  const label = deviceLabel(userAgent);
  const saved = await savePushDevice(env.DB, {
    accountId: s.accountId, personId: s.personId, endpoint: checked.url, p256dh, auth, origin, label, events,
  }, new Date().toISOString());
  if (!saved) {
    return { error: `Nothing was added: you already have ${DEVICES_PER_PERSON} devices (remove one you no longer use first), or this browser is notified for another person here.` };
  }
  return { ok: `${label} will be notified. Settings lists it below.` };
}

export async function setPushEventsFromForm(env: Env, s: Session, form: FormFields): Promise<{ ok: string } | { error: string }> {
  const id = one(form, "device_id") ?? "";
  const events = eventsOf(form);
  if ("error" in events) return events;
  const done = DEVICE_ID.test(id) && (await setPushDeviceEvents(env.DB, s.personId, id, events));
  if (!done) return { error: `You have no device ${id.slice(0, 40)}; nothing was changed.` };
  return { ok: events.length ? "Saved what this device is notified of." : "Saved: this device is notified of nothing until you tick an event again." };
}

export async function removePushDeviceFromForm(env: Env, s: Session, form: FormFields): Promise<{ ok: string } | { error: string }> {
  const id = one(form, "device_id") ?? "";
  const removed = DEVICE_ID.test(id) && (await removePushDevice(env.DB, s.personId, id));
  if (!removed) return { error: `You have no device ${id.slice(0, 40)}; nothing was removed.` };
  return { ok: "Removed the device: it is notified of nothing more." };
}

/** Removing a device waits for the person's confirmation: what stops, and that nothing keeps it. */
export const REMOVE_DEVICE_CONFIRM: ConfirmSpec = {
  subject: "push_device",
  field: "device_id",
  say: (f) => {
    if (f.subject !== "push_device" || !f.device) return null;
    return {
      heading: ["Remove ", ...written(f.device.label), "?"],
      facts: [
        ["This device is notified of nothing more, from now on: no approval requested, no claim lapsed, no run gone stale."],
        ["This cannot be undone, and the trash does not keep devices: to be notified there again, open Settings on that device and choose Notify this device."],
      ],
      button: "Remove the device",
    };
  },
};
