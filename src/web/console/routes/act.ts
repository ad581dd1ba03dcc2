/** The form actions every page posts to: POST /act/:action. */
import { Hono } from "hono";
import { callTool } from "../../../mcp/registry.ts";
import type { WebEnv } from "../../context.ts";
import { redirect } from "../../render.ts";
import { safeReturnTo } from "../../return-to.ts";
import { ACTIONS, personRefusal, type FormFields } from "../actions.ts";
import { confirmed, confirmPath } from "../confirm.ts";
import { flashCookie, typedValues } from "../flash.ts";
import { callScope } from "../respond.ts";
import { formLimit, guardedForm, textOf } from "./shared.tsx";

/** A tool's refusal as the person reads it: a form sent again after an edit is told so in plain words. */
function refusalText(text: string, form: FormFields): string {
  const key = form.idempotency_key?.[0];
  if (key && text.startsWith(`idempotency_key "${key}" was already used`)) {
    return "This form was already sent and did its work then; nothing more was done. Reload the page for a fresh form to send another.";
  }
  return text;
}

export const actRoutes = new Hono<WebEnv>();

/** Every action: one tool call with the person's principal, then back to the page with the outcome. */
actRoutes.post("/:action", formLimit, async (c) => {
  const g = await guardedForm(c);
  if (g instanceof Response) return g;
  const { s, form } = g;
  const back = safeReturnTo(form.back?.[0]);
  const name = c.req.param("action");
  const spec = Object.hasOwn(ACTIONS, name) ? ACTIONS[name] : undefined;
  if (!spec) return redirect(back, { cookies: [flashCookie(c, { kind: "error", text: `There is no action “${name}”; nothing was changed.` })] });
  // What cannot wait acts only once confirmed on its step; without that, the step is shown instead (nothing is done).
  if (spec.confirm && !confirmed(form)) return redirect(confirmPath(name, spec.confirm, form, back));
  const result = await callTool(callScope(c, s), spec.tool, spec.args(form));
  if (result.isError) {
    const text = refusalText(textOf(result), form);
    const said = spec.refused?.(text, form) ?? personRefusal(text, spec);
    return redirect(back, { cookies: [flashCookie(c, { kind: "error", text: said.text, ...(said.field ? { field: said.field } : {}), values: typedValues(form) })] });
  }
  const r = (result.structuredContent ?? {}) as Record<string, unknown>;
  return redirect(safeReturnTo(spec.after?.(r, form) ?? back), { cookies: [flashCookie(c, { kind: "ok", text: spec.done(r, form) })] });
});
