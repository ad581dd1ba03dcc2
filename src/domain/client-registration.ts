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

/**
 * What a client name may not hold, by Unicode property rather than by list, so
 * that every character of a class is refused, those of later Unicode versions
 * too: controls (Cc), format characters (Cf: soft hyphen, bidi and Arabic
 * letter marks, zero-width characters, the Mongolian vowel separator,
 * interlinear annotation marks, tag characters), private use (Co), unassigned
 * code points and noncharacters (Cn), lone surrogates (Cs), line and paragraph
 * separators (Zl, Zp), every default-ignorable code point (which renders as
 * nothing: Hangul fillers U+115F, U+1160, U+3164, U+FFA0, the combining
 * grapheme joiner, variation selectors, Mongolian free variation selectors),
 * and every space but the plain one (U+0020). The braille pattern blank
 * (U+2800) is a symbol that shows as an empty cell; it is refused too, since a
 * name is there to be read, and a blank one is a favourite of impostors.
 */
const INVISIBLE_IN_NAME = /[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\u2800]/u;
const SPACE_IN_NAME = /\p{White_Space}/u;

/** The first character of a name that may not be in it, or null. */
function forbiddenInName(value: string): string | null {
  for (const ch of value) {
    if (ch === "<" || ch === ">" || INVISIBLE_IN_NAME.test(ch) || (ch !== " " && SPACE_IN_NAME.test(ch))) return ch;
  }
  return null;
}

const codePoint = (ch: string) => `U+${(ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`;

/** Why a client name (`client_name` or one of its `client_name#lang` variants) is refused, or null. */
function nameProblem(field: string, value: unknown): string | null {
  if (value === undefined) return null;
  if (typeof value !== "string") return `${field}: must be a string`;
  if (value.length > CLIENT_NAME_MAX) return `${field}: at most ${CLIENT_NAME_MAX} characters (this one has ${value.length})`;
  const bad = forbiddenInName(value);
  if (bad === "<" || bad === ">") return `${field}: must not contain < or >`;
  if (bad) return `${field}: must not contain control characters, invisible formatting characters or spaces other than the plain space (it has ${codePoint(bad)})`;
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
