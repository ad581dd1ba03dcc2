/**
 * People who sign in with an email and a password: an account's owners. An
 * invitation is a one-time setup link (valid 7 days) where the person sets a
 * password; the link's secret exists only in the printed URL, D1 keeps its
 * SHA-256. Plans are plain SQL with parameters, bound by the Worker and the
 * tests and rendered by the admin CLI, like provisioning.ts.
 */
import { ID_PREFIX, newId } from "../domain/ids.ts";
import { placeEmailSql, type Sql } from "./provisioning.ts";
import { base64url, hashToken, newSecretOf } from "../domain/tokens.ts";


export const SETUP_LINK_DAYS = 7;
export const EMAIL_MAX = 254;

/** Emails compare case-insensitively; stored trimmed and lowercased. */
export function normalizeEmail(raw: string): string {
  return raw.trim().toLowerCase();
}

export function isEmail(email: string): boolean {
  return email.length <= EMAIL_MAX && /^[^\s@<>"',;]+@[^\s@<>"',;]+\.[^\s@<>"',;.]+$/.test(email);
}

/** 32 random bytes, base64url: setup links and session ids. */
export function newSecret(): string {
  return base64url(crypto.getRandomValues(new Uint8Array(32)));
}

export interface PlannedInvite {
  email: string;
  secret: string;
  expiresAt: string;
  statements: Sql[];
  /** The email's entry in the directory (first database), run before the statements. */
  directory: Sql[];
}

/**
 * The person (created the first time the email is invited to this account) and
 * a fresh setup link; earlier unused links of the person stop working. An email
 * that belongs to another account makes the link's insert fail (its person id
 * is NULL), so the batch writes nothing.
 */
export async function planInvite(accountId: string, rawEmail: string, now: string): Promise<PlannedInvite> {
  const email = normalizeEmail(rawEmail);
  if (!isEmail(email)) throw new Error(`--email must be an email address like ada@example.com (got ${rawEmail})`);
  const secret = newSecretOf(accountId);
  const hash = await hashToken(secret);
  const expiresAt = new Date(Date.parse(now) + SETUP_LINK_DAYS * 86_400_000).toISOString();
  const personOfAccount = "(SELECT id FROM people WHERE email = ? AND account_id = ?)";
  return {
    email,
    secret,
    expiresAt,
    directory: [placeEmailSql(accountId, email)],
    statements: [
      {
        sql: "INSERT INTO people (id, account_id, email, created_at, updated_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (email) DO NOTHING",
        params: [newId(ID_PREFIX.person), accountId, email, now, now],
      },
      { sql: `DELETE FROM setup_links WHERE used_at IS NULL AND person_id = ${personOfAccount}`, params: [email, accountId] },
      {
        sql: `INSERT INTO setup_links (hash, person_id, account_id, created_at, expires_at) VALUES (?, ${personOfAccount}, ?, ?, ?)`,
        params: [hash, email, accountId, accountId, now, expiresAt],
      },
    ],
  };
}

/** The link a person opens to set a password. */
export function setupUrl(origin: string, secret: string): string {
  return `${origin.replace(/\/+$/, "")}/setup?token=${encodeURIComponent(secret)}`;
}

/**
 * The local demo's person, with a password already set: created, or given this
 * password (and this account, ending its sessions, if a database kept an
 * earlier demo account with the same email).
 */
export function planDemoPerson(accountId: string, rawEmail: string, passwordHash: string, now: string): { email: string; statements: Sql[] } {
  const email = normalizeEmail(rawEmail);
  if (!isEmail(email)) throw new Error(`not an email address: ${rawEmail}`);
  return {
    email,
    statements: [
      { sql: "DELETE FROM sessions WHERE person_id IN (SELECT id FROM people WHERE email = ? AND account_id <> ?)", params: [email, accountId] },
      { sql: "DELETE FROM setup_links WHERE person_id IN (SELECT id FROM people WHERE email = ? AND account_id <> ?)", params: [email, accountId] },
      {
        sql: `INSERT INTO people (id, account_id, email, password_hash, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
              ON CONFLICT (email) DO UPDATE SET account_id = excluded.account_id, password_hash = excluded.password_hash, updated_at = excluded.updated_at`,
        params: [newId(ID_PREFIX.person), accountId, email, passwordHash, now, now],
      },
      // The demo lives in the first database, with the directory.
      {
        sql: "INSERT INTO directory_keys (kind, key, account_id) VALUES ('email', ?, ?) ON CONFLICT DO UPDATE SET account_id = excluded.account_id",
        params: [email, accountId],
      },
    ],
  };
}
