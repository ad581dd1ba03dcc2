/** Trash: what was deleted, newest first, a page at a time. */
import { Hono } from "hono";
import { readTrashPage } from "../../../db/console.ts";
import { page as pageOf } from "../../../db/cursor.ts";
import { envOf, type WebEnv } from "../../context.ts";
import { requireSession } from "../../session.ts";
import { safeCursor } from "../queries.ts";
import { TrashPage } from "../pages/trash.tsx";
import { render, sessionOf } from "./shared.tsx";

const TRASH_PAGE = 30;

export const trashRoutes = new Hono<WebEnv>();

trashRoutes.get("/", requireSession(), async (c) => {
  const s = await sessionOf(c);
  const data = await readTrashPage(envOf(c).DB, s.accountId, safeCursor(c.req.query("cursor")), TRASH_PAGE);
  const paged = pageOf(data.items, TRASH_PAGE, (r) => ({ k: r.deleted_at, id: r.id }));
  data.items = paged.items;
  return render(c, s, data, (v) => <TrashPage view={v} data={data} nextCursor={paged.next_cursor} />);
});
