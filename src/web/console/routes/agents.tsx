/** Agents: each with its latest work, a page of agents at a time (by name). */
import { Hono } from "hono";
import { readAgentsPage } from "../../../db/console.ts";
import { staleRunMinutes } from "../../../domain/stale-runs.ts";
import { envOf, type WebEnv } from "../../context.ts";
import { requireSession } from "../../session.ts";
import { AgentsPage, AGENTS_PAGE } from "../pages/agents.tsx";
import { render, sessionOf } from "./shared.tsx";

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
