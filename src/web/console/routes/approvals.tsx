/** One pending action's decide page: what the call would do, and approve or reject. */
import { Hono } from "hono";
import { readFrame, frameOf, frameStatements } from "../../../db/console.ts";
import { readBatch } from "../../../db/batch.ts";
import { selectPendingAction, type PendingActionWithTask } from "../../../db/pending-actions.ts";
import { envOf, type WebEnv } from "../../context.ts";
import { requireSession } from "../../session.ts";
import { MessagePage } from "../pages/message.tsx";
import { ActionPage } from "../pages/action.tsx";
import { render, sessionOf } from "./shared.tsx";

export const approvalsRoutes = new Hono<WebEnv>();

approvalsRoutes.get("/:id", requireSession(), async (c) => {
  const s = await sessionOf(c);
  const id = c.req.param("id");
  const db = envOf(c).DB;
  if (!/^apr_[0-9a-z]{16}$/.test(id)) {
    return render(c, s, await readFrame(db, s.accountId), (v) => <MessagePage view={v} title="Not found" section="inbox">There is no approval {id} in this account.</MessagePage>, 404);
  }
  const r = await readBatch(db, { ...frameStatements(db, s.accountId), action: selectPendingAction(db, s.accountId, id) });
  const frame = frameOf(r, s.accountId);
  const row = r.action[0] as PendingActionWithTask | undefined;
  if (!row) {
    // A question or a sign-off is decided on its task's page.
    return render(c, s, frame, (v) => (
      <MessagePage view={v} title="Not found" section="inbox">
        There is no pending action {id} in this account. A question or a sign-off is decided on its task's page, which the inbox links.
      </MessagePage>
    ), 404);
  }
  return render(c, s, frame, (v) => <ActionPage view={v} row={row} />);
});
