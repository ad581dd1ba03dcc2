/** People who sign in, and their one-time setup links. */
import { notMoving } from "./move-account.ts";

export interface PersonRow {
  id: string;
  account_id: string;
  email: string;
  password_hash: string | null;
  /** Set while the account moves to another database (src/db/move-account.ts): nothing may be written for it. */
  moving_to: string | null;
}

export function selectPersonByEmail(db: D1Database, email: string): D1PreparedStatement {
  return db
    .prepare("SELECT p.id, p.account_id, p.email, p.password_hash, m.moving_to FROM people p LEFT JOIN accounts m ON m.id = p.account_id WHERE p.email = ?")
    .bind(email);
}

export interface SetupLinkRow {
  person_id: string;
  account_id: string;
  email: string;
  expires_at: string;
  used_at: string | null;
  has_password: number;
  /** Set while the account moves to another database. */
  moving_to: string | null;
}

/** A setup link by its secret's hash, with its person; null when there is none. */
export async function findSetupLink(db: D1Database, hash: string): Promise<SetupLinkRow | null> {
  return db
    .prepare(
      `SELECT s.person_id, s.account_id, p.email, s.expires_at, s.used_at, p.password_hash IS NOT NULL AS has_password, m.moving_to
         FROM setup_links s JOIN people p ON p.id = s.person_id AND p.account_id = s.account_id
              LEFT JOIN accounts m ON m.id = s.account_id
        WHERE s.hash = ?`,
    )
    .bind(hash)
    .first<SetupLinkRow>();
}

/** Thrown when the link was used or expired between the page and the form. */
export class SetupLinkGone extends Error {}

/**
 * Sets the password through the link, in one batch: the link must still be
 * unused and unexpired (a guard row aborts the whole batch otherwise), it is
 * marked used, the person's other sessions end, and `session` (already
 * prepared) signs them in.
 */
export async function completeSetup(
  db: D1Database,
  o: { hash: string; personId: string; accountId: string; passwordHash: string; now: string },
  session: D1PreparedStatement | D1PreparedStatement[],
): Promise<void> {
  try {
    await db.batch([
      db
        .prepare(
          `INSERT INTO guard (failed) SELECT 'setup link gone'
            WHERE NOT EXISTS (SELECT 1 FROM setup_links WHERE hash = ? AND used_at IS NULL AND expires_at > ?)`,
        )
        .bind(o.hash, o.now),
      db.prepare("UPDATE setup_links SET used_at = ? WHERE hash = ?").bind(o.now, o.hash),
      db.prepare("UPDATE people SET password_hash = ?, updated_at = ? WHERE id = ? AND account_id = ?").bind(o.passwordHash, o.now, o.personId, o.accountId),
      db.prepare("DELETE FROM sessions WHERE person_id = ?").bind(o.personId),
      ...[session].flat(),
    ]);
  } catch (e) {
    if (String(e instanceof Error ? e.message : e).includes("CHECK constraint failed: guard")) throw new SetupLinkGone();
    throw e;
  }
}

/** Setup links past their expiry, for the daily cleanup. */
export function purgeExpiredSetupLinks(db: D1Database, now: string): D1PreparedStatement {
  return db.prepare(`DELETE FROM setup_links WHERE expires_at <= ? AND ${notMoving()}`).bind(now);
}

/**
 * The SQL of a person's shown name, over the people row `alias`: the display
 * name, else the part of the email before the @ (src/domain/principal.ts shownName).
 */
export function personNameSql(alias: string): string {
  return `CASE WHEN trim(${alias}.display_name) <> '' THEN trim(${alias}.display_name) WHEN instr(${alias}.email, '@') > 1 THEN substr(${alias}.email, 1, instr(${alias}.email, '@') - 1) ELSE ${alias}.email END`;
}

/** The shown name of the person whose id is the SQL `idSql`, as a scalar subquery (null when none). */
export function personNameOf(idSql: string): string {
  return `(SELECT ${personNameSql("pn")} FROM people pn WHERE pn.id = ${idSql})`;
}

/** Sets a person's display name (the console's settings). */
export function updateDisplayName(db: D1Database, p: { personId: string; accountId: string; name: string; now: string }): D1PreparedStatement {
  return db.prepare("UPDATE people SET display_name = ?, updated_at = ? WHERE id = ? AND account_id = ?").bind(p.name, p.now, p.personId, p.accountId);
}
