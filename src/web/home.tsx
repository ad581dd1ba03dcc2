/** GET /: who is signed in, and the URL to give an app. */
import type { Hono } from "hono";
import { originOf, type WebEnv } from "./context.ts";
import { Layout } from "./layout.tsx";
import { page } from "./render.ts";
import { currentSession, requireSession } from "./session.ts";

export function homeRoutes(web: Hono<WebEnv>): void {
  web.get("/", requireSession(), async (c) => {
    const session = await currentSession(c);
    const url = `${originOf(c)}/mcp`;
    return page(
      <Layout title="Signed in" session={session}>
        <section class="card">
          <h1>You are signed in</h1>
          <p>
            As <strong>{session?.email}</strong>, owner of account <code>{session?.accountId}</code>.
          </p>
          <h2>Connect an app</h2>
          <p>
            Give the app this URL: <code>{url}</code>. It sends you here to sign in, and you choose whether it acts as you or as one of your
            agents, and whether it may only read or also change things.
          </p>
        </section>
      </Layout>,
    );
  });
}
