/** Activity: the account's log, filtered by actor, tool or target, a page at a time. */
import { Hono } from "hono";
import { readActivityPage } from "../../../db/console.ts";
import { page as pageOf } from "../../../db/cursor.ts";
import { envOf, type WebEnv } from "../../context.ts";
import { requireSession } from "../../session.ts";
import { activityFilter, safeCursor } from "../queries.ts";
import { WEB_TOKEN_PREFIX } from "../respond.ts";
import { ActivityPage } from "../pages/activity.tsx";
import { render, sessionOf } from "./shared.tsx";

export const activityRoutes = new Hono<WebEnv>();

activityRoutes.get("/", requireSession(), async (c) => {
  const s = await sessionOf(c);
  const { query, filter } = activityFilter(c.req.query(), safeCursor(c.req.query("cursor")));
  const data = await readActivityPage(envOf(c).DB, s.accountId, filter);
  const paged = pageOf(data.items, filter.limit, (r) => ({ k: r.created_at, id: r.id }));
  data.items = paged.items;
  return render(c, s, data, (v) => <ActivityPage view={v} data={data} query={query} nextCursor={paged.next_cursor} webPrefix={WEB_TOKEN_PREFIX} />);
});
