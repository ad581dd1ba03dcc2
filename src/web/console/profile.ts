/**
 * The signed-in person's shown name (Settings → Your name): the name every
 * decision, claim and activity entry of theirs shows, in the console and in
 * the tools' answers. Saved with an activity row naming the person, in one batch.
 */
import { z } from "zod";
import { insertActivity } from "../../db/activity.ts";
import { updateDisplayName } from "../../db/people.ts";
import { SET_DISPLAY_NAME } from "../../db/summaries.ts";
import { ID_PREFIX, newId } from "../../domain/ids.ts";
import type { Session } from "../context.ts";
import { one, type FormFields } from "./actions.ts";
import { webPrincipal } from "./respond.ts";
import { actorName } from "../../domain/principal.ts";

export const DISPLAY_NAME_MAX = 80;

/** A shown name: 1–80 characters once trimmed, no control characters (it is shown on one line everywhere). */
export const displayName = z
  .string({ error: "Your name: type the name to show for you." })
  .trim()
  .min(1, "Your name: type the name to show for you (1 to 80 characters).")
  .max(DISPLAY_NAME_MAX, `Your name: at most ${DISPLAY_NAME_MAX} characters.`)
  // eslint-disable-next-line no-control-regex
  .refine((n) => !/[\u0000-\u001f\u007f\u2028\u2029]/.test(n), "Your name: use one line of text, without tabs or line breaks.");

export type DisplayNameOutcome = { ok: string; name: string } | { error: string; field: "display_name"; values: Record<string, string> };

/** Sets the signed-in person's display name from the Settings form. */
export async function setDisplayNameFromForm(db: D1Database, s: Session, form: FormFields): Promise<DisplayNameOutcome> {
  const raw = one(form, "display_name") ?? "";
  const parsed = displayName.safeParse(raw);
  if (!parsed.success) return { error: parsed.error.issues[0]?.message ?? "Your name: not saved.", field: "display_name", values: { display_name: raw.slice(0, 200) } };
  const name = parsed.data;
  const now = new Date().toISOString();
  const p = webPrincipal(s);
  await db.batch([
    updateDisplayName(db, { personId: s.personId, accountId: s.accountId, name, now }),
    insertActivity(db, {
      id: newId(ID_PREFIX.activity),
      accountId: s.accountId,
      tokenId: p.tokenId,
      actor: actorName(p),
      tool: "set_display_name",
      targetId: s.personId,
      summary: SET_DISPLAY_NAME.text({ name }),
      now,
      personId: s.personId,
    }),
  ]);
  return { ok: `Saved: your decisions and activity now show “${name}”.`, name };
}
