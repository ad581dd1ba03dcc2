import { env } from "cloudflare:workers";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { expect, vi } from "vitest";
import worker from "../src/index.ts";
import { base64url } from "../src/domain/tokens.ts";
import { connect, seedAccount, workerFetch, type Era, type SeededAccount, type TestClient } from "./helpers.ts";
import { addPerson, Browser, field, ORIGIN, signIn, uniqueEmail } from "./web-helpers.ts";

export const RESOURCE = `${ORIGIN}/mcp`;
export const PASSWORD = "correct horse battery";

export interface Pkce {
  verifier: string;
  challenge: string;
}

export async function pkce(): Promise<Pkce> {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return { verifier, challenge: base64url(new Uint8Array(digest)) };
}

/** RFC 7591 registration of a public client, as Claude, Cursor or mcp-remote do. */
export async function registerClient(name = "Flow app", redirectUri = "http://127.0.0.1:33418/callback"): Promise<{ clientId: string; redirectUri: string }> {
  const res = await workerFetch(`${ORIGIN}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ client_name: name, redirect_uris: [redirectUri], token_endpoint_auth_method: "none", grant_types: ["authorization_code", "refresh_token"] }),
  });
  expect(res.status).toBe(201);
  const body = (await res.json()) as { client_id: string };
  return { clientId: body.client_id, redirectUri };
}

export interface AuthorizeParams {
  clientId: string;
  redirectUri: string;
  challenge?: string;
  method?: string;
  state?: string;
  scope?: string;
  resource?: string;
}

export function authorizePath(p: AuthorizeParams): string {
  const q = new URLSearchParams({ response_type: "code", client_id: p.clientId, redirect_uri: p.redirectUri, state: p.state ?? "st-123" });
  if (p.challenge !== undefined) q.set("code_challenge", p.challenge);
  if (p.challenge !== undefined || p.method) q.set("code_challenge_method", p.method ?? "S256");
  q.set("scope", p.scope ?? "tasks:read");
  q.set("resource", p.resource ?? RESOURCE);
  return `/authorize?${q}`;
}

export interface Choice {
  actAs: "self" | "agent";
  agentName?: string;
  access: "read" | "write";
  /** Which tools the app sees (the page's default: all). */
  tools?: "all" | "agent" | "chosen";
  toolsets?: string[];
  /** The policy preset of an app that acts as an agent (the page's default: trusted). */
  policy?: "trusted" | "careful" | "read_only";
}

/** The consent page's form fields, as the page rendered them. */
export function consentForm(html: string): { handle: string; csrf: string } {
  const handle = field(html, "handle");
  const csrf = field(html, "csrf");
  expect(handle, "the consent page carries its handle").toBeTruthy();
  return { handle: handle as string, csrf: csrf as string };
}

/** GET /authorize in a signed-in browser, then Allow with the choice; returns the redirect's query. */
export async function consent(b: Browser, p: AuthorizeParams, choice: Choice): Promise<URLSearchParams> {
  const shown = await b.get(authorizePath(p));
  expect(shown.status, "the consent page").toBe(200);
  const form = consentForm(await shown.text());
  const res = await b.post("/authorize", {
    ...form,
    act_as: choice.actAs,
    agent_name: choice.agentName ?? "",
    access: choice.access,
    tools: choice.tools,
    toolset: choice.toolsets,
    policy: choice.policy,
    decision: "allow",
  });
  expect(res.status, await res.clone().text()).toBe(302);
  const location = new URL(res.headers.get("location") as string);
  expect(`${location.origin}${location.pathname}`).toBe(p.redirectUri);
  return location.searchParams;
}

export interface Tokens {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  scope: string;
  token_type: string;
  resource?: string;
}

export async function tokenRequest(form: Record<string, string>): Promise<Response> {
  return workerFetch(`${ORIGIN}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form),
  });
}

export async function exchange(clientId: string, code: string, verifier: string, redirectUri: string, resource = RESOURCE): Promise<Tokens> {
  const res = await tokenRequest({ grant_type: "authorization_code", client_id: clientId, code, code_verifier: verifier, redirect_uri: redirectUri, resource });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as Tokens;
}

export async function refresh(clientId: string, refreshToken: string): Promise<Response> {
  return tokenRequest({ grant_type: "refresh_token", client_id: clientId, refresh_token: refreshToken, resource: RESOURCE });
}

export interface Connected {
  acc: SeededAccount;
  browser: Browser;
  email: string;
  personId: string;
  clientId: string;
  redirectUri: string;
  tokens: Tokens;
}

/** An account with a signed-in person, a registered client and a completed authorization with this choice. */
export async function connectApp(choice: Choice, o: { acc?: SeededAccount; clientName?: string; db?: D1Database } = {}): Promise<Connected> {
  const acc = o.acc ?? (await seedAccount());
  const email = uniqueEmail();
  const personId = await addPerson(acc.accountId, email, PASSWORD, o.db);
  const browser = new Browser();
  expect((await signIn(browser, email, PASSWORD)).status).toBe(303);
  const { clientId, redirectUri } = await registerClient(o.clientName ?? "Flow app");
  const { verifier, challenge } = await pkce();
  const q = await consent(browser, { clientId, redirectUri, challenge, scope: "tasks:read tasks:write" }, choice);
  expect(q.get("state")).toBe("st-123");
  expect(q.get("iss")).toBe(ORIGIN);
  const tokens = await exchange(clientId, q.get("code") as string, verifier, redirectUri);
  return { acc, browser, email, personId, clientId, redirectUri, tokens };
}

/** POST /mcp with a bearer token; the status (401 for a refused token). */
export async function mcpStatus(token: string): Promise<number> {
  const res = await workerFetch(RESOURCE, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
  });
  await res.arrayBuffer();
  return res.status;
}

export function mcp(token: string, era: Era = "modern"): Promise<TestClient> {
  return connect(token, era);
}

/** Runs the daily job as if it were `atMs` (Date faked for the run only), and waits for what it left to finish. */
export async function dailyJobAt(atMs: number): Promise<void> {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(atMs);
  try {
    const ctx = createExecutionContext();
    await worker.scheduled!({ cron: "17 3 * * *", scheduledTime: atMs, noRetry() {} } as ScheduledController, env, ctx);
    await waitOnExecutionContext(ctx);
  } finally {
    vi.useRealTimers();
  }
}
