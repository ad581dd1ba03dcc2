/**
 * The console as an installable web app: its manifest, its icon, the service
 * worker (/sw.js: it shows a Web Push message as a notification and opens the
 * page the notification names when it is tapped, nothing more), and the small
 * script of Settings → "Notify this device". These two scripts are written by
 * hand and served from this origin; every other page runs no script.
 */
import { fnv1a } from "./style.ts";

export const MANIFEST_PATH = "/manifest.webmanifest";
export const SERVICE_WORKER_PATH = "/sw.js";
export const ICON_PATH = "/assets/taskgate-icon.svg";

const ICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 512 512"><rect width="512" height="512" rx="96" fill="#1c2430"/><path d="M136 268l80 80 160-184" fill="none" stroke="#fff" stroke-width="48" stroke-linecap="round" stroke-linejoin="round"/></svg>`;

const MANIFEST = JSON.stringify({
  name: "Taskgate",
  short_name: "Taskgate",
  description: "Tasks and approvals for people and their AI agents.",
  id: "/",
  start_url: "/",
  scope: "/",
  display: "standalone",
  background_color: "#f5f6f8",
  theme_color: "#1c2430",
  icons: [{ src: ICON_PATH, sizes: "any", type: "image/svg+xml", purpose: "any" }],
});

/**
 * The service worker. A push message is JSON { title, body, url, tag,
 * actions? }; tapping the notification opens `url` (a path of this origin:
 * the task's decide page, which asks to sign in first when needed and comes
 * back). A question with choices carries one action per choice; the platform
 * shows as many as it allows (Notification.maxActions, none on some), and each
 * opens the decide page with that choice picked, where the person sends it
 * with the page's form. Nothing is ever decided from a notification.
 */
export const SERVICE_WORKER = `"use strict";
self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));

function samePath(url) {
  return typeof url === "string" && url.startsWith("/") && !url.startsWith("//") && !url.includes("\\\\") ? url : "/";
}

self.addEventListener("push", (event) => {
  let m = {};
  try {
    m = event.data ? event.data.json() : {};
  } catch (e) {
    m = {};
  }
  const title = typeof m.title === "string" && m.title ? m.title : "Taskgate";
  const max = (self.Notification && Notification.maxActions) || 0;
  const actions = (Array.isArray(m.actions) ? m.actions : [])
    .filter((a) => a && typeof a.action === "string" && typeof a.title === "string")
    .slice(0, max)
    .map((a) => ({ action: a.action, title: a.title, url: samePath(a.url) }));
  const options = {
    body: typeof m.body === "string" ? m.body : "",
    tag: typeof m.tag === "string" ? m.tag : undefined,
    icon: "${ICON_PATH}",
    data: actions.length ? { url: samePath(m.url), actions: actions } : { url: samePath(m.url) },
  };
  if (actions.length) options.actions = actions.map((a) => ({ action: a.action, title: a.title }));
  event.waitUntil(self.registration.showNotification(title, options));
});

/** The page a tap opens: an action's (a choice picked), or the notification's own. */
function pageOf(notification, action) {
  const data = notification.data || {};
  const chosen = action && Array.isArray(data.actions) ? data.actions.find((a) => a.action === action) : null;
  return samePath(chosen ? chosen.url : data.url);
}

/** Opens the notification's page: a tab of Taskgate that shows it is focused, another is navigated there, or a new window opens. */
function openPage(notification, action) {
  const url = new URL(pageOf(notification, action), self.location.origin).href;
  const focus = (c) => (c && "focus" in c ? c.focus().catch(() => c) : c);
  return self.clients.matchAll({ type: "window" }).then((open) => {
    const showing = open.find((c) => c.url === url);
    if (showing) return focus(showing);
    if (open.length > 0) return open[0].navigate(url).then((c) => (c ? focus(c) : self.clients.openWindow(url)));
    return self.clients.openWindow(url);
  });
}

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  event.waitUntil(openPage(event.notification, event.action));
});
`;

/**
 * Settings → "Notify this device": registers the service worker, asks for
 * permission, subscribes with the Worker's VAPID public key, puts the
 * subscription in the form's hidden fields and sends the form (with its CSRF
 * token) as a plain POST. Without JavaScript the form still posts, and the
 * page says that a browser with JavaScript and Web Push is needed.
 */
const PUSH_SCRIPT = `"use strict";
(function () {
  const form = document.getElementById("push-subscribe");
  const status = document.getElementById("push-status");
  if (!form || !status) return;
  if (!("serviceWorker" in navigator) || !("PushManager" in window) || !("Notification" in window)) {
    status.textContent = "This browser cannot receive Web Push notifications.";
    return;
  }
  function keyBytes(text) {
    const b64 = text.replace(/-/g, "+").replace(/_/g, "/");
    const bin = atob(b64 + "=".repeat((4 - (b64.length % 4)) % 4));
    return Uint8Array.from(bin, (c) => c.charCodeAt(0));
  }
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    status.textContent = "Asking this browser…";
    (async () => {
      const registration = await navigator.serviceWorker.register("${SERVICE_WORKER_PATH}", { scope: "/" });
      await navigator.serviceWorker.ready;
      if ((await Notification.requestPermission()) !== "granted") {
        throw new Error("notifications are blocked for this site; allow them in the browser's site settings and try again.");
      }
      const sub = await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(form.dataset.key) });
      const json = sub.toJSON();
      form.elements.endpoint.value = json.endpoint;
      form.elements.p256dh.value = json.keys.p256dh;
      form.elements.auth.value = json.keys.auth;
      form.submit();
    })().catch((e) => {
      status.textContent = "This device was not added: " + (e && e.message ? e.message : String(e));
    });
  });
})();
`;

export const PUSH_SCRIPT_PATH = `/assets/taskgate-push-${fnv1a(PUSH_SCRIPT)}.js`;

const NO_SNIFF = { "x-content-type-options": "nosniff" };

export function manifestResponse(): Response {
  return new Response(MANIFEST, { headers: { "content-type": "application/manifest+json", "cache-control": "public, max-age=3600", ...NO_SNIFF } });
}

export function iconResponse(): Response {
  return new Response(ICON, {
    headers: { "content-type": "image/svg+xml", "cache-control": "public, max-age=86400", "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'", ...NO_SNIFF },
  });
}

/** Served fresh (browsers check it for updates); its own CSP lets it reach nothing. */
export function serviceWorkerResponse(): Response {
  return new Response(SERVICE_WORKER, {
    headers: {
      "content-type": "text/javascript; charset=utf-8",
      "cache-control": "no-cache",
      "content-security-policy": "default-src 'none'",
      "service-worker-allowed": "/",
      ...NO_SNIFF,
    },
  });
}

export function pushScriptResponse(): Response {
  return new Response(PUSH_SCRIPT, {
    headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=31536000, immutable", ...NO_SNIFF },
  });
}
