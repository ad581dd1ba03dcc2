/**
 * The short confirmation (or the tool's error) a post/redirect/get carries to
 * the next page: a cookie that lives a minute, read once and cleared. It holds
 * only the message the person is about to read, never a secret.
 */
import { getCookie } from "hono/cookie";
import type { WebContext } from "../context.ts";
import { cookie, cookieName } from "../session.ts";
import type { Flash } from "./ui.tsx";

const NAME = "tg_flash";
const MAX_TEXT = 1200;

function encode(f: Flash): string {
  const bytes = new TextEncoder().encode(JSON.stringify({ k: f.kind, t: f.text.slice(0, MAX_TEXT) }));
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function decode(raw: string): Flash | null {
  try {
    const bin = atob(raw.replace(/-/g, "+").replace(/_/g, "/"));
    const v = JSON.parse(new TextDecoder().decode(Uint8Array.from(bin, (ch) => ch.charCodeAt(0)))) as { k?: unknown; t?: unknown };
    if ((v.k === "ok" || v.k === "error") && typeof v.t === "string") return { kind: v.k, text: v.t.slice(0, MAX_TEXT) };
  } catch {
    /* a damaged cookie shows nothing */
  }
  return null;
}

/** The Set-Cookie that carries a message to the next page. */
export function flashCookie(c: WebContext, f: Flash): string {
  return cookie(c, NAME, encode(f), 60);
}

/** The pending message, if any, and the Set-Cookie that clears it (so a reload does not show it again). */
export function takeFlash(c: WebContext): { flash: Flash | null; clear: string | null } {
  const raw = getCookie(c, cookieName(c, NAME));
  if (!raw) return { flash: null, clear: null };
  return { flash: decode(raw), clear: cookie(c, NAME, "", 0) };
}
