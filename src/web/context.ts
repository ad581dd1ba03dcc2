import type { Context } from "hono";
import type { Env } from "../env.ts";
import type { ReadSession } from "../db/read-sessions.ts";

/** A signed-in person's session, as the pages see it (src/web/session.ts). */
export interface Session {
  personId: string;
  accountId: string;
  email: string;
  /** The person's shown name: their display name, or their email's part before the @. */
  name: string;
  /** The value every signed-in form posts as `csrf`. */
  csrfToken: string;
  /** The account is moving to another database: every form is refused until it has moved. */
  moving?: boolean;
  /** The database the account lives in (src/db/shards.ts). */
  shard: string;
}

/** Hono's bindings and variables for the pages. */
export interface WebEnv {
  Bindings: Env;
  Variables: {
    session: Session | null;
    /**
     * The deployment as seen by the account this request acts for (src/db/shards.ts accountEnv):
     * set where the session or link that names the account is resolved. Unset before that.
     */
    accountEnv?: Env;
    /** The signed-in person's D1 session, which accountEnv's DB reads through (src/db/read-sessions.ts); closed after the response. */
    reads?: ReadSession;
  };
}

export type WebContext = Context<WebEnv>;

/**
 * The env a page reads and writes through: the account's view once its
 * session (or setup link, or sign-in) has named the account, the
 * deployment's before that. Its `DB` is then the account's database.
 */
export function envOf(c: WebContext): Env {
  return c.get("accountEnv") ?? c.env;
}

/** The origin the browser sees (scheme, host, port). */
export function originOf(c: Context): string {
  return new URL(c.req.url).origin;
}

export function isHttps(c: Context): boolean {
  return new URL(c.req.url).protocol === "https:";
}
