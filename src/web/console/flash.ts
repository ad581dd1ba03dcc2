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
/** What a refused form's fields may carry back, in UTF-8 bytes in all: a cookie holds about 4 KB, the message included. */
const MAX_VALUES = 1200;

/** The typed values of a refused form worth showing again (never its security token), as many as fit. */
export function typedValues(form: Record<string, string[]>): Record<string, string> {
  const out: Record<string, string> = {};
  let room = MAX_VALUES;
  for (const [k, v] of Object.entries(form)) {
    const value = v[0] ?? "";
    const size = new TextEncoder().encode(value).length + k.length + 6;
    if (["csrf", "back", "idempotency_key", "form_id"].includes(k) || size > room) continue;
    out[k] = value;
    room -= size;
  }
  return out;
}

function encode(f: Flash): string {
  const bytes = new TextEncoder().encode(JSON.stringify({ k: f.kind, t: f.text.slice(0, MAX_TEXT), f: f.field, v: f.values }));
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function decode(raw: string): Flash | null {
  try {
    const bin = atob(raw.replace(/-/g, "+").replace(/_/g, "/"));
    const v = JSON.parse(new TextDecoder().decode(Uint8Array.from(bin, (ch) => ch.charCodeAt(0)))) as { k?: unknown; t?: unknown; f?: unknown; v?: unknown };
    if ((v.k === "ok" || v.k === "error") && typeof v.t === "string") {
      const values = v.v && typeof v.v === "object" ? Object.fromEntries(Object.entries(v.v).filter(([, x]) => typeof x === "string")) : undefined;
      return { kind: v.k, text: v.t.slice(0, MAX_TEXT), ...(typeof v.f === "string" ? { field: v.f } : {}), ...(values ? { values } : {}) };
    }
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
