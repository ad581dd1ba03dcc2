/**
 * What a dynamic client registration (RFC 7591, `POST /oauth/register`) may
 * hold, on top of what the OAuth provider checks itself: a small body, a
 * short name with nothing in it that could read as markup or move text
 * around, a few redirect URIs of a sane length, and a `jwks_uri` the Worker
 * may fetch (the outbound rule). Registrations are not limited per address:
 * hosted clients register from a few shared addresses for all their users.
 */
import { outboundTextProblem, PUBLIC_ONLY } from "./outbound-url.ts";

/** A registered client lasts this long after its last token exchange (the provider's default); one never used goes after a day. */
export const CLIENT_REGISTRATION_SECONDS = 90 * 86_400;

export const REGISTRATION_BODY_MAX_BYTES = 16 * 1024;
export const CLIENT_NAME_MAX = 200;
export const REDIRECT_URIS_MAX = 10;
export const REDIRECT_URI_MAX = 2000;

/** Markup, C0/C1 controls, and the invisible characters that reorder or hide text (bidi controls, zero-width). */
const FORBIDDEN_IN_NAME = /[<>\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/;

/** Why a client name (`client_name` or one of its `client_name#lang` variants) is refused, or null. */
function nameProblem(field: string, value: unknown): string | null {
  if (value === undefined) return null;
  if (typeof value !== "string") return `${field}: must be a string`;
  if (value.length > CLIENT_NAME_MAX) return `${field}: at most ${CLIENT_NAME_MAX} characters (this one has ${value.length})`;
  if (FORBIDDEN_IN_NAME.test(value)) return `${field}: must not contain < or >, control characters or invisible formatting characters`;
  return null;
}

/** Why this registration's metadata is refused (a sentence naming the field), or null. */
export function registrationProblem(metadata: Record<string, unknown>): string | null {
  for (const [field, value] of Object.entries(metadata)) {
    if (field === "client_name" || field.startsWith("client_name#")) {
      const problem = nameProblem(field, value);
      if (problem) return problem;
    }
  }
  const uris = metadata.redirect_uris;
  if (Array.isArray(uris)) {
    if (uris.length > REDIRECT_URIS_MAX) return `redirect_uris: at most ${REDIRECT_URIS_MAX} (this registration has ${uris.length})`;
    const long = uris.findIndex((u) => typeof u === "string" && u.length > REDIRECT_URI_MAX);
    if (long >= 0) return `redirect_uris[${long}]: at most ${REDIRECT_URI_MAX} characters`;
  }
  if (typeof metadata.jwks_uri === "string") {
    const problem = outboundTextProblem(metadata.jwks_uri, PUBLIC_ONLY);
    if (problem) return `jwks_uri: ${problem}`;
  }
  return null;
}

/** A client name as a page shows it: at most CLIENT_NAME_MAX characters (names from a metadata document are not registered here). */
export function shownClientName(name: string): string {
  const chars = [...name];
  return chars.length > CLIENT_NAME_MAX ? `${chars.slice(0, CLIENT_NAME_MAX - 1).join("")}…` : name;
}
