/**
 * An email signs in to one account in the whole deployment: the directory
 * (in the first database) names the account of each email it knows, and each
 * database's `people` is unique only within that database, so an invite asks
 * both before it writes. Over `SqlDb`, so the admin CLI (wrangler) and the
 * Worker's D1 ask the same way.
 */
import type { SqlDb } from "./move-account.ts";

export interface EmailOwner {
  account: string;
  /** Where it was found: the directory, or the database whose people hold it. */
  where: string;
}

/** The account the email belongs to anywhere in the deployment, other than `accountId`; null when it is free for it. */
export async function emailOwnerElsewhere(
  email: string,
  accountId: string,
  directory: SqlDb,
  databases: { name: string; db: SqlDb }[],
): Promise<EmailOwner | null> {
  const [key] = await directory.all({ sql: "SELECT account_id FROM directory_keys WHERE kind = 'email' AND key = ? AND account_id != ?", params: [email, accountId] });
  if (key) return { account: key.account_id as string, where: "the directory" };
  for (const d of databases) {
    const [person] = await d.db.all({ sql: "SELECT account_id FROM people WHERE email = ? AND account_id != ?", params: [email, accountId] });
    if (person) return { account: person.account_id as string, where: d.name };
  }
  return null;
}
