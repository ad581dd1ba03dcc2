/** Apps & tokens: connected apps, every token and OAuth connection (list_tokens), and a form that creates a tg_ token. */
import { Hono } from "hono";
import { callTool } from "../../../mcp/registry.ts";
import { readAppsPage } from "../../../db/console.ts";
import { importConnectorKey } from "../../../domain/crypto.ts";
import { envOf, originOf, type WebEnv } from "../../context.ts";
import { redirect } from "../../render.ts";
import { requireSession } from "../../session.ts";
import { flashCookie, typedValues } from "../flash.ts";
import { readTokenPolicyPage } from "../../../db/policy-edits.ts";
import { formShown, savePolicyFromForm } from "../policy.ts";
import { TokenPolicyPage, tokenPolicyPath } from "../pages/policy.tsx";
import { showOnNextPage, takeShown } from "../once.ts";
import { callScope, webPrincipal } from "../respond.ts";

const TOKEN_ID = /^tok_[0-9a-z]{4,40}$/;
import { createTokenFromForm } from "../tokens.ts";
import { AppsPage, type NewToken, type TokenItem } from "../pages/apps.tsx";
import { formLimit, guardedForm, render, sessionOf, textOf } from "./shared.tsx";

const TOKENS_PAGE = 40;

export const appsRoutes = new Hono<WebEnv>();

/** The apps page; its token list is list_tokens itself, one page at a time (revoked ones too with ?tokens=all); a token just made, once. */
appsRoutes.get("/", requireSession(), async (c) => {
  const s = await sessionOf(c);
  const created = await takeShown<NewToken>(c, "token");
  const all = c.req.query("tokens") === "all";
  const cursor = c.req.query("cursor");
  const args = { include_revoked: all, limit: TOKENS_PAGE, ...(cursor && cursor.length <= 500 ? { cursor } : {}) };
  const [data, listed, setupError] = await Promise.all([
    readAppsPage(envOf(c).DB, s.accountId),
    callTool(callScope(c, s), "list_tokens", args),
    importConnectorKey(envOf(c).CONNECTOR_KEY).then(() => null, (e: Error) => e.message),
  ]);
  const listing = listed.isError ? null : (listed.structuredContent as { items: TokenItem[]; next_cursor: string | null });
  const tokens = { items: listing?.items ?? [], next: listing?.next_cursor ?? null, all, error: listed.isError ? textOf(listed) : null };
  const mcpUrl = `${originOf(c)}/mcp`;
  return render(c, s, data, (v) => <AppsPage view={v} data={data} tokens={tokens} setupError={setupError} created={created.value} mcpUrl={mcpUrl} />, 200, [created.clear]);
});

/** Creating a token goes back to the page, which shows the secret once: never stored, never in a URL, sealed to this session on its way. */
appsRoutes.post("/tokens", formLimit, async (c) => {
  const g = await guardedForm(c);
  if (g instanceof Response) return g;
  const made = await createTokenFromForm(envOf(c).DB, webPrincipal(g.s), g.form, g.s.shard);
  if ("error" in made) return redirect("/apps", { cookies: [flashCookie(c, { kind: "error", text: made.error })] });
  return redirect("/apps", { cookies: [await showOnNextPage(c, "token", made.token)] });
});

/** A connection's own policy (an agent's token or app): its rules beside its agent's, what each tool decides, and the forms that change them. */
appsRoutes.get("/tokens/:id/policy", requireSession(), async (c) => {
  const s = await sessionOf(c);
  const id = c.req.param("id");
  const data = await readTokenPolicyPage(envOf(c).DB, s.accountId, TOKEN_ID.test(id) ? id : "");
  return render(c, s, data, (v) => <TokenPolicyPage view={v} data={data} />, data.token ? 200 : 404);
});

appsRoutes.post("/tokens/:id/policy", formLimit, async (c) => {
  const g = await guardedForm(c);
  if (g instanceof Response) return g;
  const id = c.req.param("id");
  const data = await readTokenPolicyPage(envOf(c).DB, g.s.accountId, TOKEN_ID.test(id) ? id : "");
  const t = data.token;
  if (!t || t.kind !== "agent" || !t.agent_name || t.revoked_at !== null) {
    const why = !t ? "There is no such token or connection in this account" : t.kind !== "agent" ? "This token acts as you, and a policy holds only for agents" : "This connection is revoked";
    return redirect(t ? tokenPolicyPath(t.id) : "/apps", { cookies: [flashCookie(c, { kind: "error", text: `${why}; nothing was changed.` })] });
  }
  const target = { kind: "connection" as const, id: t.id, agent: t.agent_name, label: t.client_name ?? t.label };
  const saved = await savePolicyFromForm(envOf(c).DB, webPrincipal(g.s), target, g.form, data.projects);
  const back = tokenPolicyPath(t.id);
  if ("error" in saved) return redirect(back, { cookies: [flashCookie(c, { kind: "error", text: saved.error, ...(saved.field ? { field: saved.field } : {}), values: typedValues(formShown(g.form)) })] });
  return redirect(back, { cookies: [flashCookie(c, { kind: "ok", text: saved.ok })] });
});
