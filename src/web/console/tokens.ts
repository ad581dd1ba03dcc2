/**
 * Creating a tg_ token from the console: the same plan the admin CLI uses
 * (planToken: only the hash is stored), with an activity row marked as the
 * web's, in one batch. The secret exists only in the response that shows it.
 */
import { z } from "zod";
import { insertActivity } from "../../db/activity.ts";
import { CREATED_TOKEN_IN_CONSOLE, TOKEN_AGENT } from "../../db/summaries.ts";
import { storePlannedToken } from "../../db/token-create.ts";
import { insertIdempotent } from "../../db/idempotency.ts";
import { ID_PREFIX, newId } from "../../domain/ids.ts";
import { actorName, type Principal } from "../../domain/principal.ts";
import { AGENT_NAME, planToken } from "../../db/provisioning.ts";
import { isPolicyPreset, POLICY_PRESETS, rulesText } from "../../catalog/policy.ts";
import { one, type FormFields } from "./actions.ts";
import { formAlreadyUsed, formOnce } from "./once.ts";

const request = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("agent"),
    agent: z
      .string({ error: "Agent name: give the agent a name." })
      .regex(AGENT_NAME, "Agent name: use lowercase letters, digits, _ . - (up to 63, starting with a letter or digit).")
      .refine((n) => n !== "human", "Agent name: `human` is the person's name; choose another."),
    scope: z.enum(["read", "write"], { error: "May: choose read only or read and write." }),
    label: z.string().max(100, "Label: at most 100 characters.").optional(),
  }),
  z.object({
    kind: z.literal("human"),
    scope: z.enum(["read", "write"], { error: "May: choose read only or read and write." }),
    label: z.string().max(100, "Label: at most 100 characters.").optional(),
  }),
], { error: "Acts as: choose an agent or yourself." });

export interface CreatedToken {
  secret: string;
  label: string;
  kind: "human" | "agent";
  scope: "read" | "write";
  agent: string | null;
  /** The preset of its own policy, when it has one (Careful, Read only). */
  policy?: string;
}

/** `shard`: the database the person's account lives in, named in the secret so that its calls ask no directory. */
export async function createTokenFromForm(db: D1Database, p: Principal, form: FormFields, shard: string): Promise<{ token: CreatedToken } | { error: string }> {
  const once = formOnce(p, form, "create_token");
  if (!once) return { error: "This token form is from an older page: nothing was created. Fill in the form below again." };
  const kind = one(form, "kind");
  const parsed = request.safeParse({
    kind,
    scope: one(form, "scope"),
    label: one(form, "label"),
    ...(kind === "agent" ? { agent: one(form, "agent") } : {}),
  });
  if (!parsed.success) return { error: parsed.error.issues[0]?.message ?? "The token form is incomplete." };
  const r = parsed.data;
  const agent = r.kind === "agent" ? r.agent : null;
  // Its own policy: a preset's rules on the token row (Trusted, the default: none, as before presets).
  const preset = one(form, "policy") ?? "trusted";
  if (!isPolicyPreset(preset)) return { error: "Its own policy: choose Trusted, Careful or Read only. Nothing was created." };
  if (r.kind === "human" && preset !== "trusted") {
    return { error: `Its own policy: ${POLICY_PRESETS[preset].title} holds only for a token that acts as an agent; a token that acts as you is limited by its scope alone. Choose Trusted, or An agent. Nothing was created.` };
  }
  const policy = r.kind === "agent" ? rulesText(POLICY_PRESETS[preset].rules) : null;
  const now = new Date().toISOString();
  const plan = await planToken({ accountId: p.accountId, kind: r.kind, scope: r.scope, agent: agent ?? undefined, label: r.label, shard, policy, personId: r.kind === "human" ? (p.person?.id ?? null) : null }, now);
  const label = r.label ?? (agent ? `${agent} (${r.scope})` : `human (${r.scope})`);
  const activity = insertActivity(db, {
    id: newId(ID_PREFIX.activity),
    accountId: p.accountId,
    tokenId: p.tokenId,
    actor: actorName(p),
    tool: "create_token",
    targetId: plan.id,
    personId: p.person?.id ?? null,
    summary: CREATED_TOKEN_IN_CONSOLE.text({ token: plan.id, label, kind: r.kind, agent: agent ? TOKEN_AGENT.text({ agent }) : "", scope: r.scope }),
    now,
  });
  // The form's id in the same batch: sent again (a reload, a second click), it fails on the key and nothing more is created.
  try {
    await storePlannedToken(db, plan.statements, activity, insertIdempotent(db, once, "", JSON.stringify({ token_id: plan.id }), now));
  } catch (e) {
    if (formAlreadyUsed(e)) {
      return {
        error:
          "This form already created its token, and its secret was shown once, when it was made; nothing more was created. " +
          "If the secret is lost, revoke that token below and create a new one.",
      };
    }
    throw e;
  }
  return { token: { secret: plan.secret, label, kind: r.kind, scope: r.scope, agent, ...(policy ? { policy: POLICY_PRESETS[preset].title } : {}) } };
}
