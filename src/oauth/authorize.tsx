/**
 * GET/POST /authorize, the application's part of the OAuth flow. The library
 * validates the request and keeps it server-side behind a browser-bound,
 * single-use handle (beginConsent/approveConsent/denyConsent); Taskgate signs
 * the person in, shows the consent page and decides what the grant means.
 *
 * Errors follow consent-page.md: a redirect back to the client only when the
 * library validated the client and its exact redirect URI (`redirectTo`);
 * everything else is a page here, never a stack trace.
 */
import { AuthorizationError, authorizationErrorRedirect, CimdFetchError, type AuthRequest, type OAuthHelpers } from "@cloudflare/workers-oauth-provider";
import type { Hono } from "hono";
import { oauthScopesFor } from "../domain/grants.ts";
import { AGENT_NAME } from "../db/provisioning.ts";
import { TOOLSETS } from "../catalog/toolsets.ts";
import { isPolicyPreset, POLICY_PRESETS, rulesText } from "../catalog/policy.ts";
import { agentNames } from "../db/grants.ts";
import { envOf, type Session, type WebContext, type WebEnv } from "../web/context.ts";
import { ConsentPage, type ConsentDefaults } from "../web/consent.tsx";
import { ErrorPage } from "../web/layout.tsx";
import { page, redirect } from "../web/render.ts";
import { signInPath } from "../web/return-to.ts";
import { csrfOk, currentSession, sameOrigin } from "../web/session.ts";
import { accountMoving } from "../web/errors.tsx";
import { clientIdProblem } from "./client-ids.ts";
import { completeGrant, type ConsentChoice } from "./grants.ts";

const START_AGAIN = "Start connecting again from the app.";

function helpers(c: WebContext): OAuthHelpers {
  const oauth = envOf(c).OAUTH_PROVIDER;
  if (!oauth) throw new Error("/authorize reached without the OAuth provider");
  return oauth;
}

function refused(status: number, title: string, message: string, session?: Session | null, hint = START_AGAIN): Promise<Response> {
  return page(<ErrorPage title={title} message={message} hint={hint} session={session} />, { status });
}

/** A request the library refused: back to the client if it validated the redirect, otherwise a page here. */
function authorizationFailure(e: unknown, session?: Session | null): Response | Promise<Response> {
  if (e instanceof AuthorizationError && e.redirectTo) return redirect(e.redirectTo, { status: 302 });
  if (e instanceof AuthorizationError) return refused(400, "This connection request is not valid", `${e.description}.`.replace(/\.\.$/, "."), session);
  if (e instanceof CimdFetchError) {
    return refused(400, "This app could not be verified", "Its client metadata document could not be fetched or is not valid, so Taskgate can't tell who is asking.", session);
  }
  throw e;
}

/** Where a form on the consent page may lead: this origin, and the validated redirect URI's origin (browsers check the redirect too). */
function redirectOrigin(uri: string): string[] {
  try {
    const origin = new URL(uri).origin;
    return origin && origin !== "null" ? [origin] : [];
  } catch {
    return [];
  }
}

/**
 * The page as it first appears: nobody chosen for whom the app acts as (the
 * person picks; the form is refused without it) and Read only, whatever the
 * app asked for, so pressing Allow at once never gives an app the person's
 * write standing.
 */
const FIRST_CHOICES: ConsentDefaults = { actAs: null, agentName: "", access: "read", tools: "all", toolsets: [], policy: "trusted" };

async function consentPage(
  c: WebContext,
  request: AuthRequest,
  session: Session,
  o: { defaults?: ConsentDefaults; error?: string; status?: number; headers?: Headers } = {},
): Promise<Response> {
  const oauth = helpers(c);
  const facts = await oauth.describeConsent(request); // first: a failed lookup leaves nothing in KV
  const consent = await oauth.beginConsent(request);
  for (const [k, v] of o.headers ?? new Headers()) if (k.toLowerCase() === "set-cookie") consent.headers.append(k, v);
  const agents = await agentNames(envOf(c).DB, session.accountId);
  return page(
    <ConsentPage
      facts={{ ...facts, requested: facts.scope }}
      handle={consent.handle}
      session={session}
      agents={agents}
      defaults={o.defaults ?? FIRST_CHOICES}
      error={o.error}
    />,
    { status: o.status, headers: consent.headers, formTargets: redirectOrigin(request.redirectUri) },
  );
}

type Parsed = { ok: true; choice: ConsentChoice } | { ok: false; error: string; defaults: ConsentDefaults };

/** The choices of the form, or what to fix (the page is shown again with the person's input). */
function parseChoice(form: Record<string, unknown>): Parsed {
  const actAs = form.act_as === "agent" ? "agent" : form.act_as === "self" ? "self" : null;
  const access = form.access === "write" ? "write" : form.access === "read" ? "read" : null;
  const agentName = typeof form.agent_name === "string" ? form.agent_name.trim() : "";
  const tools = form.tools === "agent" || form.tools === "chosen" ? form.tools : form.tools === "all" || form.tools === undefined ? "all" : null;
  const checked = (Array.isArray(form.toolset) ? form.toolset : form.toolset === undefined ? [] : [form.toolset]).filter((t): t is string => typeof t === "string");
  const known = checked.filter((t) => TOOLSETS.some((s) => s.name === t));
  const policyField = form.policy === undefined || form.policy === "" ? "trusted" : form.policy;
  const policy = typeof policyField === "string" && isPolicyPreset(policyField) ? policyField : null;
  const defaults: ConsentDefaults = { actAs, agentName: agentName.slice(0, 63), access: access ?? "read", tools: tools ?? "all", toolsets: known, policy: policy ?? "trusted" };
  if (!actAs) return { ok: false, error: "Choose who the app acts as: One of my agents, or Myself. Nothing was allowed.", defaults };
  if (!access) return { ok: false, error: "Choose what the app may do: Read only, or Read and write.", defaults };
  if (!tools) return { ok: false, error: "Choose which tools the app sees: every tool, an agent's working loop, or the toolsets you tick.", defaults };
  if (known.length !== checked.length) return { ok: false, error: "Toolsets: tick only the toolsets listed on this page.", defaults };
  if (tools === "chosen" && known.length === 0) return { ok: false, error: "Toolsets: tick at least one toolset, or choose Every tool.", defaults };
  const toolsets = tools === "agent" ? ["agent"] : tools === "chosen" ? TOOLSETS.map((s) => s.name).filter((n) => known.includes(n)) : undefined;
  if (!policy) return { ok: false, error: "If it acts as an agent: choose Trusted, Careful or Read only.", defaults };
  if (actAs === "self") {
    if (policy !== "trusted") {
      return {
        ok: false,
        error: `${POLICY_PRESETS[policy].title} holds only for an app that acts as one of your agents; acting as you, an app is limited only by what it may do. Choose One of my agents, or Trusted.`,
        defaults,
      };
    }
    return { ok: true, choice: { kind: "human", agent: null, scope: access, ...(toolsets ? { toolsets } : {}) } };
  }
  if (!agentName) return { ok: false, error: "Agent name: type the name of the agent the app acts as (an existing one or a new one).", defaults };
  if (!AGENT_NAME.test(agentName) || agentName === "human") {
    return { ok: false, error: "Agent name: use lowercase letters, digits, _ . - (up to 63 characters, starting with a letter or digit), e.g. claude-code.", defaults };
  }
  const rules = rulesText(POLICY_PRESETS[policy].rules);
  return { ok: true, choice: { kind: "agent", agent: agentName, scope: access, ...(toolsets ? { toolsets } : {}), ...(rules ? { policy: rules } : {}) } };
}

export function authorizeRoutes(web: Hono<WebEnv>): void {
  web.get("/authorize", async (c) => {
    const oauth = helpers(c);
    // Before the library reads the request: a URL-shaped client id is fetched, and only from a public host.
    const clientProblem = (c.req.queries("client_id") ?? []).map(clientIdProblem).find(Boolean);
    if (clientProblem) return refused(400, "This app could not be verified", `${clientProblem}.`);
    let request: AuthRequest;
    try {
      request = await oauth.parseAuthRequest(c.req.raw);
    } catch (e) {
      return authorizationFailure(e);
    }
    // The library requires S256 for public clients and refuses `plain`; Taskgate requires it of every client.
    if (!request.codeChallenge || request.codeChallengeMethod !== "S256") {
      return redirect(authorizationErrorRedirect(request, "invalid_request", "PKCE is required: send code_challenge with code_challenge_method=S256"), { status: 302 });
    }
    const session = await currentSession(c);
    if (!session) {
      const url = new URL(c.req.url);
      return redirect(signInPath(url.pathname + url.search), { status: 302 });
    }
    try {
      return await consentPage(c, request, session);
    } catch (e) {
      return authorizationFailure(e, session);
    }
  });

  web.post("/authorize", async (c) => {
    const oauth = helpers(c);
    const form = await c.req.parseBody({ all: true });
    const session = await currentSession(c);
    if (!session) return refused(401, "You are signed out", "The consent form needs the session it was shown in; nothing was allowed.");
    if (!sameOrigin(c) || !csrfOk(session, form.csrf)) {
      return refused(403, "This form did not come from your session", "The consent form was not sent from the Taskgate page shown to you in this session, so nothing was allowed.", session);
    }
    if (session.moving) return accountMoving(session);
    const handle = typeof form.handle === "string" ? form.handle : "";
    if (!handle) return refused(400, "This consent form is incomplete", "It has no consent handle, so Taskgate can't tell which request it answers. Nothing was allowed.", session);
    if (form.decision !== "allow" && form.decision !== "deny") {
      return refused(400, "This consent form is incomplete", "It says neither Allow nor Deny. Nothing was allowed.", session);
    }
    try {
      if (form.decision === "deny") {
        const denied = await oauth.denyConsent(c.req.raw, handle);
        return redirect(denied.redirectTo, { status: 302, headers: denied.headers });
      }
      const parsed = parseChoice(form);
      const approved = await oauth.approveConsent(c.req.raw, handle, parsed.ok ? { scope: oauthScopesFor(parsed.choice.scope) } : {});
      if (!parsed.ok) return consentPage(c, approved.request, session, { defaults: parsed.defaults, error: parsed.error, status: 400, headers: approved.headers });
      const facts = await oauth.describeConsent(approved.request);
      const to = await completeGrant({ ...envOf(c), OAUTH_PROVIDER: oauth }, session, approved.request, facts.clientName, parsed.choice);
      return redirect(to, { status: 302, headers: approved.headers });
    } catch (e) {
      if (e instanceof AuthorizationError) {
        return refused(400, "This consent page expired", "It was already used, is more than ten minutes old, or was opened in another browser. Nothing was allowed.", session);
      }
      return authorizationFailure(e, session);
    }
  });
}
