/** Agents: each with its latest work, a page of agents at a time (by name); each agent's policy on a page of its own. */
import { Hono } from "hono";
import { readAgentsPage } from "../../../db/console.ts";
import { staleRunMinutes } from "../../../domain/stale-runs.ts";
import { envOf, type WebEnv } from "../../context.ts";
import { requireSession } from "../../session.ts";
import { AgentsPage, AGENTS_PAGE } from "../pages/agents.tsx";
import { formLimit, guardedForm, render, sessionOf } from "./shared.tsx";
import { readAgentPolicyPage } from "../../../db/policy-edits.ts";
import { AGENT_NAME } from "../../../db/provisioning.ts";
import { redirect } from "../../render.ts";
import { flashCookie, typedValues } from "../flash.ts";
import { formShown, savePolicyFromForm } from "../policy.ts";
import { webPrincipal } from "../respond.ts";
import { AgentPolicyPage, agentPolicyPath } from "../pages/policy.tsx";

export const agentsRoutes = new Hono<WebEnv>();

agentsRoutes.get("/", requireSession(), async (c) => {
  const s = await sessionOf(c);
  const minutes = staleRunMinutes(envOf(c));
  const now = Date.now();
  const after = c.req.query("after") ?? "";
  const afterName = /^[a-z0-9][a-z0-9_.-]{0,62}$/.test(after) ? after : "";
  const data = await readAgentsPage(envOf(c).DB, s.accountId, {
    now: new Date(now).toISOString(),
    staleBefore: new Date(now - minutes * 60_000).toISOString(),
    perAgent: AGENTS_PAGE.perAgent,
    afterName,
    limit: AGENTS_PAGE.agents,
  });
  const more = data.agents.length > AGENTS_PAGE.agents;
  data.agents = data.agents.slice(0, AGENTS_PAGE.agents);
  const nextAfter = more ? data.agents[data.agents.length - 1].name : null;
  return render(c, s, data, (v) => <AgentsPage view={v} data={data} staleMinutes={minutes} nextAfter={nextAfter} first={afterName === ""} />);
});

/** An agent's policy: its rules in words, what each tool decides, and the forms that change them. */
agentsRoutes.get("/:name/policy", requireSession(), async (c) => {
  const s = await sessionOf(c);
  const name = c.req.param("name");
  const data = await readAgentPolicyPage(envOf(c).DB, s.accountId, AGENT_NAME.test(name) ? name : "", new Date().toISOString());
  return render(c, s, data, (v) => <AgentPolicyPage view={v} data={data} />, data.agent ? 200 : 404);
});

/** A preset chosen, a rule added or removed: one batch with its activity row, then back to the page with what happened. */
agentsRoutes.post("/:name/policy", formLimit, async (c) => {
  const g = await guardedForm(c);
  if (g instanceof Response) return g;
  const name = c.req.param("name");
  const data = await readAgentPolicyPage(envOf(c).DB, g.s.accountId, AGENT_NAME.test(name) ? name : "", new Date().toISOString());
  if (!data.agent) return redirect("/agents", { cookies: [flashCookie(c, { kind: "error", text: `There is no agent ${name.slice(0, 63)} in this account; nothing was changed.` })] });
  const target = { kind: "agent" as const, id: data.agent.id, agent: data.agent.name };
  const saved = await savePolicyFromForm(envOf(c).DB, webPrincipal(g.s), target, g.form, data.projects);
  const back = agentPolicyPath(data.agent.name);
  if ("error" in saved) return redirect(back, { cookies: [flashCookie(c, { kind: "error", text: saved.error, ...(saved.field ? { field: saved.field } : {}), values: typedValues(formShown(g.form)) })] });
  return redirect(back, { cookies: [flashCookie(c, { kind: "ok", text: saved.ok })] });
});
