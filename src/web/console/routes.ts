/**
 * The person's web console: GET pages (one D1 batch each after the session
 * lookup) and POST actions (post/redirect/get, each one tool call through the
 * registry with the person's principal). Signed out, every page leads to
 * sign-in; every POST needs this session's CSRF token and this origin.
 *
 * One sub-app an area, each in src/web/console/routes/, mounted here on the
 * pages' app; each route carries its own guard (requireSession for a page,
 * formLimit and guardedForm for a form), so a path no area serves is the
 * pages' 404, signed in or not.
 */
import type { Hono } from "hono";
import type { WebEnv } from "../context.ts";
import { actRoutes } from "./routes/act.ts";
import { activityRoutes } from "./routes/activity.tsx";
import { agentsRoutes } from "./routes/agents.tsx";
import { appsRoutes } from "./routes/apps.tsx";
import { confirmRoutes } from "./routes/confirm.tsx";
import { approvalsRoutes } from "./routes/approvals.tsx";
import { inboxRoutes } from "./routes/inbox.tsx";
import { settingsRoutes } from "./routes/settings.tsx";
import { tasksRoutes } from "./routes/tasks.tsx";
import { trashRoutes } from "./routes/trash.tsx";
import { webhooksRoutes } from "./routes/webhooks.tsx";

export function consoleRoutes(web: Hono<WebEnv>): void {
  web.route("/", inboxRoutes);
  web.route("/tasks", tasksRoutes);
  web.route("/approvals", approvalsRoutes);
  web.route("/agents", agentsRoutes);
  web.route("/apps", appsRoutes);
  web.route("/webhooks", webhooksRoutes);
  web.route("/trash", trashRoutes);
  web.route("/activity", activityRoutes);
  web.route("/settings", settingsRoutes);
  web.route("/confirm", confirmRoutes);
  web.route("/act", actRoutes);
}
