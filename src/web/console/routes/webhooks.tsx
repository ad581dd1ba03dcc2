/** Webhooks: the account's endpoints with their deliveries, adding one (its secret shown once) and removing one. */
import { Hono } from "hono";
import { readFrame } from "../../../db/console.ts";
import { listWebhooks } from "../../../db/webhooks-d1.ts";
import { importConnectorKey } from "../../../domain/crypto.ts";
import { localDevelopment } from "../../../env.ts";
import { envOf, type WebEnv } from "../../context.ts";
import { redirect } from "../../render.ts";
import { requireSession } from "../../session.ts";
import { flashCookie } from "../flash.ts";
import { showOnNextPage, takeShown } from "../once.ts";
import { webPrincipal } from "../respond.ts";
import { addWebhookFromForm, removeWebhookFromForm, type NewWebhook } from "../webhooks.ts";
import { WebhooksPage } from "../pages/webhooks.tsx";
import { formLimit, guardedForm, render, sessionOf } from "./shared.tsx";

export const webhooksRoutes = new Hono<WebEnv>();

/** The webhooks page; a new endpoint's signing secret only on the page right after adding it. */
webhooksRoutes.get("/", requireSession(), async (c) => {
  const s = await sessionOf(c);
  const created = await takeShown<NewWebhook>(c, "webhook");
  const [frame, hooks, setupError] = await Promise.all([
    readFrame(envOf(c).DB, s.accountId),
    listWebhooks(envOf(c).DB, s.accountId),
    importConnectorKey(envOf(c).CONNECTOR_KEY).then(() => null, (e: Error) => e.message),
  ]);
  return render(c, s, frame, (v) => <WebhooksPage view={v} hooks={hooks} created={created.value} setupError={setupError} httpAllowed={localDevelopment(envOf(c))} />, 200, [created.clear]);
});

/** Adding a webhook goes back to the page, which shows its secret once; a refusal goes back with the reason. */
webhooksRoutes.post("/", formLimit, async (c) => {
  const g = await guardedForm(c);
  if (g instanceof Response) return g;
  const made = await addWebhookFromForm(envOf(c), webPrincipal(g.s), g.form);
  if ("error" in made) return redirect("/webhooks", { cookies: [flashCookie(c, { kind: "error", text: made.error })] });
  return redirect("/webhooks", { cookies: [await showOnNextPage(c, "webhook", made)] });
});

webhooksRoutes.post("/remove", formLimit, async (c) => {
  const g = await guardedForm(c);
  if (g instanceof Response) return g;
  const r = await removeWebhookFromForm(envOf(c), g.s.accountId, g.form);
  const flash = "error" in r ? { kind: "error" as const, text: r.error } : { kind: "ok" as const, text: r.ok };
  return redirect("/webhooks", { cookies: [flashCookie(c, flash)] });
});
