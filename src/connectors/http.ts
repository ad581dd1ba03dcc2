/**
 * The one way adapters reach a provider: a 10 s timeout on every call, and
 * every fault turned into a ToolError that says what to do next. Messages
 * carry status codes and the provider's error codes, never a response body
 * wholesale and never a credential.
 */
import { ToolError } from "../domain/errors.ts";
import { outboundTextProblem, PUBLIC_ONLY } from "../domain/outbound-url.ts";
import { PROVIDER_NAMES, type Provider } from "../domain/providers.ts";

export const TIMEOUT_MS = 10_000;

/** How much of a body read_context reads before it stops (the tool returns at most 20,000 characters). */
export const MAX_BODY_BYTES = 2 * 1024 * 1024;

export function connectHint(provider: Provider, accountId: string): string {
  return `npm run admin -- connect --account ${accountId} --provider ${provider} --credentials-file FILE`;
}

export function notConnected(provider: Provider, accountId: string): ToolError {
  return new ToolError(
    "not_connected",
    `${PROVIDER_NAMES[provider]} is not connected to this account; the operator connects it with \`${connectHint(provider, accountId)}\` (list_connectors shows what is connected).`,
  );
}

/**
 * Provider text is untrusted and may quote what we sent, even cut short by
 * clip(): anything shaped like a credential is removed before it reaches a
 * message. (Known secrets are also redacted whole, in service.ts.)
 */
export function scrub(text: string): string {
  return text
    .replace(/\b(bearer|basic)(\s+|[:=]\s*)[^\s"',;)]+/gi, "$1$2[redacted]")
    .replace(/\b(client_secret|client_id|refresh_token|access_token|token|assertion|password|code)(["']?\s*[=:]\s*["']?)[^&\s"',;)]+/gi, "$1$2[redacted]")
    .replace(/\b(?:xox[a-z]-|ntn_|secret_|ya29\.|1\/\/|tg_)[^\s"',;)]*/gi, "[redacted]")
    .replace(/[A-Za-z0-9._~+/=-]{24,}…?/g, "[redacted]");
}

/** The provider refused the stored credentials: only a reconnect helps. */
export function rejected(provider: Provider, accountId: string, why: string): ToolError {
  return new ToolError(
    "not_connected",
    `${PROVIDER_NAMES[provider]} rejected the stored credentials (${scrub(why)}); reconnect the app with \`${connectHint(provider, accountId)}\`.`,
  );
}

export function rateLimited(provider: Provider, retryAfter: string | null): ToolError {
  return new ToolError("rate_limited", `${PROVIDER_NAMES[provider]} is rate limiting these requests; retry after ${waitText(retryAfter)}.`);
}

export function unavailable(provider: Provider, why: string): ToolError {
  return new ToolError("upstream", `${PROVIDER_NAMES[provider]} is unavailable (${scrub(why)}); try again in a moment.`);
}

export function upstreamError(provider: Provider, why: string): ToolError {
  return new ToolError("upstream", `${PROVIDER_NAMES[provider]} refused the request (${scrub(why)}).`);
}

/** Retry-After is seconds or an HTTP date; the wait in words. */
export function waitText(retryAfter: string | null, nowMs = Date.now()): string {
  if (retryAfter) {
    const seconds = /^\d+$/.test(retryAfter.trim()) ? Number(retryAfter) : Math.ceil((Date.parse(retryAfter) - nowMs) / 1000);
    if (Number.isFinite(seconds)) return `${Math.max(1, seconds)} second${Math.max(1, seconds) === 1 ? "" : "s"}`;
  }
  return "a minute";
}

/** fetch with the timeout, to a public host only; a timeout or a network failure is a ToolError saying to try again. */
export async function send(provider: Provider, url: string, init: RequestInit): Promise<Response> {
  const refused = outboundTextProblem(url, PUBLIC_ONLY);
  if (refused) throw upstreamError(provider, `its address ${refused}`);
  try {
    return await fetch(url, { ...init, signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (e) {
    const name = (e as { name?: string })?.name;
    if (name === "TimeoutError" || name === "AbortError") {
      throw unavailable(provider, `no answer within ${TIMEOUT_MS / 1000} s`);
    }
    throw unavailable(provider, "could not reach it");
  }
}

/** The generic mapping of an HTTP status; adapters handle their own codes first. */
export function statusFault(provider: Provider, accountId: string, res: Response, detail: string): ToolError {
  const s = res.status;
  if (s === 401 || s === 403) return rejected(provider, accountId, `HTTP ${s}${detail ? `: ${detail}` : ""}`);
  if (s === 429) return rateLimited(provider, res.headers.get("retry-after"));
  if (s >= 500) return unavailable(provider, `HTTP ${s}`);
  return upstreamError(provider, `HTTP ${s}${detail ? `: ${detail}` : ""}`);
}

/** A JSON body, or an upstream error saying the answer was not understood. */
export async function readJson<T>(provider: Provider, res: Response): Promise<T> {
  try {
    return (await res.json()) as T;
  } catch {
    throw unavailable(provider, "it sent an answer that is not JSON");
  }
}

/** A JSON error body if there is one (for the status mapping), else null. */
export async function errorBody<T>(res: Response): Promise<T | null> {
  try {
    return (await res.json()) as T;
  } catch {
    return null;
  }
}

/** Up to MAX_BODY_BYTES of a text body; `complete` says whether that was all of it. */
export async function readBoundedText(res: Response, maxBytes = MAX_BODY_BYTES): Promise<{ text: string; complete: boolean }> {
  if (!res.body) return { text: "", complete: true };
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { text: text + decoder.decode(), complete: true };
    bytes += value.byteLength;
    text += decoder.decode(value, { stream: true });
    if (bytes >= maxBytes) {
      await reader.cancel().catch(() => {});
      return { text, complete: false };
    }
  }
}

/** Short, single-line provider text for a message. */
export function clip(text: unknown, max = 200): string {
  if (typeof text !== "string") return "";
  const one = text.replace(/\s+/g, " ").trim();
  return one.length > max ? one.slice(0, max - 1) + "…" : one;
}
