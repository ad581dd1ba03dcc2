/**
 * What an OAuth grant means in Taskgate. The person chose on the consent page
 * who the app acts as (themselves, or one of their agents by name) and what it
 * may do (read, or read and write); the grant's props carry that choice and the
 * tokens row that records it, which resolves to a Principal exactly like a
 * `tg_` token's row does.
 */
import type { TokenKind, TokenScope } from "./principal.ts";

/** Read everything the caller's kind may read: the read tools. Required for any access. */
export const READ_SCOPE = "tasks:read";
/** Also change things: the write tools (a person's or an agent's, by kind). */
export const WRITE_SCOPE = "tasks:write";
export const OAUTH_SCOPES = [READ_SCOPE, WRITE_SCOPE] as const;

/** The OAuth scopes a grant of this Taskgate scope carries. */
export function oauthScopesFor(scope: TokenScope): string[] {
  return scope === "write" ? [READ_SCOPE, WRITE_SCOPE] : [READ_SCOPE];
}

/**
 * The Taskgate scope of an access token: write only when both the grant and
 * the token allow it (a client may ask for a narrower token at refresh).
 */
export function effectiveScope(granted: TokenScope, tokenScopes: readonly string[]): TokenScope {
  return granted === "write" && tokenScopes.includes(WRITE_SCOPE) ? "write" : "read";
}

/** Stored in the grant (encrypted by the provider) and handed to /mcp with every access token. */
export interface GrantProps {
  via: "oauth";
  v: 1;
  /** The tokens row of this grant: revocation, pause and last use live there. */
  tokenId: string;
  accountId: string;
  personId: string;
  kind: TokenKind;
  agent: string | null;
  scope: TokenScope;
  /** The toolsets the person allowed this app (absent: all the scope allows). */
  toolsets?: string[];
}

export function isGrantProps(value: unknown): value is GrantProps {
  const p = value as Partial<GrantProps> | null;
  return (
    !!p &&
    p.via === "oauth" &&
    p.v === 1 &&
    typeof p.tokenId === "string" &&
    typeof p.accountId === "string" &&
    typeof p.personId === "string" &&
    (p.kind === "human" || p.kind === "agent") &&
    (p.scope === "read" || p.scope === "write") &&
    (p.toolsets === undefined || (Array.isArray(p.toolsets) && p.toolsets.every((t) => typeof t === "string")))
  );
}

/** How long an unexchanged grant stays pending (the authorization code's lifetime). */
export const PENDING_GRANT_SECONDS = 10 * 60;
/** Access tokens live an hour; refresh tokens rotate and the grant lasts 30 days from the code exchange. */
export const ACCESS_TOKEN_SECONDS = 60 * 60;
export const GRANT_SECONDS = 30 * 86_400;
