/** The confirmation step of what cannot wait: GET /confirm/:action shows what will happen; nothing changes until its form is sent. */
import { Hono } from "hono";
import { readConfirmPage } from "../../../db/confirm.ts";
import { readFrame } from "../../../db/console.ts";
import { envOf, type WebEnv } from "../../context.ts";
import { safeReturnTo } from "../../return-to.ts";
import { requireSession } from "../../session.ts";
import { confirmStep, SUBJECT_ID } from "../confirm.ts";
import { ConfirmPage, NothingToConfirm } from "../pages/confirm.tsx";
import { MessagePage } from "../pages/message.tsx";
import { render, sessionOf } from "./shared.tsx";

export const confirmRoutes = new Hono<WebEnv>();

confirmRoutes.get("/:action", requireSession(), async (c) => {
  const s = await sessionOf(c);
  const name = c.req.param("action");
  const step = confirmStep(name);
  if (!step) {
    const frame = await readFrame(envOf(c).DB, s.accountId);
    return render(c, s, frame, (v) => (
      <MessagePage view={v} title="Nothing to confirm">There is no action “{name.slice(0, 60)}” that asks to be confirmed; nothing was changed.</MessagePage>
    ), 404);
  }
  const back = safeReturnTo(c.req.query("back"));
  const given = step.field ? (c.req.query(step.field) ?? "") : "";
  const id = SUBJECT_ID[step.subject].test(given) ? given : "";
  const data = await readConfirmPage(envOf(c).DB, s.accountId, s.personId, step.subject, id);
  const words = step.field && !id ? null : step.say(data.facts, data.settings.trash_retention_days);
  if (!words) return render(c, s, data, (v) => <NothingToConfirm view={v} subject={step.subject} back={back} />, 404);
  const fields = step.field ? { [step.field]: id } : {};
  return render(c, s, data, (v) => <ConfirmPage view={v} step={step} words={words} fields={fields} back={back} />);
});
