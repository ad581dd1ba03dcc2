/** The inbox, the console's home: the requests waiting for the person, a page of them at a time. */
import { Hono } from "hono";
import { readInbox } from "../../../db/inbox.ts";
import { envOf, type WebEnv } from "../../context.ts";
import { requireSession } from "../../session.ts";
import { InboxPage, INBOX_LIMITS } from "../pages/inbox.tsx";
import { render, sessionOf } from "./shared.tsx";

export const inboxRoutes = new Hono<WebEnv>();

inboxRoutes.get("/", requireSession(), async (c) => {
  const s = await sessionOf(c);
  const pageNo = Math.min(Math.max(Number.parseInt(c.req.query("page") ?? "1", 10) || 1, 1), 1000);
  const inbox = await readInbox(envOf(c).DB, s.accountId, { ...INBOX_LIMITS, offset: (pageNo - 1) * INBOX_LIMITS.approvals });
  return render(c, s, inbox, (v) => <InboxPage view={v} inbox={inbox} page={pageNo} />);
});
