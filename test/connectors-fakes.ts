import { env } from "cloudflare:workers";
import { expect, vi } from "vitest";
import { planConnector } from "../src/connectors/plan.ts";
import type { Provider } from "../src/domain/providers.ts";
import { run, type SeededAccount } from "./helpers.ts";

/** One outbound request as the provider would see it. */
export interface Seen {
  method: string;
  url: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  body: string;
  hasSignal: boolean;
}

export type Upstream = (req: Seen) => Response | Promise<Response>;

/**
 * Fakes every provider at the fetch boundary: the adapters' outbound calls
 * land in `handler`; the MCP test client does not use the global fetch, so it
 * is unaffected. Nothing reaches the internet: an unexpected call fails.
 */
export function fakeUpstream(handler: Upstream): Seen[] {
  const seen: Seen[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = new Request(input, init);
    const url = new URL(req.url);
    const s: Seen = {
      method: req.method,
      url: req.url,
      path: `${url.origin}${url.pathname}`,
      query: Object.fromEntries(url.searchParams),
      headers: Object.fromEntries(req.headers),
      body: typeof init?.body === "string" ? init.body : init?.body == null ? "" : await new Response(req.clone().body).text(),
      hasSignal: init?.signal instanceof AbortSignal,
    };
    seen.push(s);
    return handler(s);
  });
  return seen;
}

export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
}

export function unexpected(s: Seen): never {
  throw new Error(`unexpected outbound request ${s.method} ${s.url}`);
}

export const DRIVE_CREDS = {
  client_id: "1234-clientid.apps.googleusercontent.com",
  client_secret: "GOCSPX-drive-client-secret-0042",
  refresh_token: "1//drive-refresh-token-0042",
};
export const SLACK_CREDS = { token: "xoxp-1111-2222-3333-slacksecret42" };
export const NOTION_CREDS = { token: "ntn_notion_integration_secret_42" };
export const CREDS = { drive: DRIVE_CREDS, slack: SLACK_CREDS, notion: NOTION_CREDS } as const;

export const SECRET_VALUES = [...Object.values(DRIVE_CREDS), SLACK_CREDS.token, NOTION_CREDS.token];

/** Connects an app the way the admin CLI does: the same planning function, bound to D1. */
export async function connectApp(accountId: string, provider: Provider, credentials: unknown = CREDS[provider], key = env.CONNECTOR_KEY, db: D1Database = env.DB): Promise<string> {
  const existing = await db.prepare("SELECT id FROM connectors WHERE account_id = ? AND provider = ?").bind(accountId, provider).first<{ id: string }>();
  const plan = await planConnector({ accountId, provider, credentials, key, existingId: existing?.id ?? null }, new Date().toISOString());
  await run(plan.statements, db);
  return plan.id;
}

/** No request carries a Taskgate token, and every request has the timeout signal. */
export function expectCleanRequests(seen: Seen[], acc: SeededAccount): void {
  for (const s of seen) {
    const all = JSON.stringify(s);
    for (const secret of [acc.human, acc.humanRead, acc.agent, acc.agentRead]) expect(all).not.toContain(secret);
    expect(all).not.toContain("tg_");
    expect(s.hasSignal, `${s.url} has a timeout signal`).toBe(true);
  }
}

/** No tool output or error text shows a credential. */
export function expectNoSecrets(text: unknown): void {
  const s = typeof text === "string" ? text : JSON.stringify(text);
  for (const secret of SECRET_VALUES) expect(s).not.toContain(secret);
}

export async function connectorRow(accountId: string, provider: Provider) {
  return env.DB.prepare("SELECT * FROM connectors WHERE account_id = ? AND provider = ?")
    .bind(accountId, provider)
    .first<{ id: string; credentials: string; status: string; last_error: string | null; updated_at: string }>();
}

export async function activityFor(accountId: string, tool: string) {
  return (
    await env.DB.prepare("SELECT tool, target_id, summary, actor FROM activity WHERE account_id = ? AND tool = ? ORDER BY created_at")
      .bind(accountId, tool)
      .all<{ tool: string; target_id: string; summary: string; actor: string }>()
  ).results;
}

/** Drive, Slack and Notion answering at the fetch boundary with one plausible answer each, so every connector tool takes its working path; returns the requests seen. */
export function fakeConnectedApps(): Seen[] {
  return fakeUpstream((s) => {
    if (s.url.startsWith("https://oauth2.googleapis.com/token")) return json({ access_token: "ya29.x", expires_in: 3600 });
    if (s.path === "https://www.googleapis.com/drive/v3/files") return json({ files: [{ id: "1DocAbc_-9", name: "Drive doc" }] });
    if (s.path === "https://slack.com/api/search.messages") return json({ ok: true, messages: { matches: [] } });
    if (s.path === "https://slack.com/api/chat.postMessage") return json({ ok: true, channel: "C0123ABCD", ts: "1712345678.000100" });
    if (s.path === "https://slack.com/api/chat.getPermalink") return json({ ok: true, permalink: "https://example.slack.com/archives/C0123ABCD/p1712345678000100" });
    if (s.path === "https://api.notion.com/v1/search") return json({ results: [] });
    if (s.path.startsWith("https://api.notion.com/v1/pages/")) return json({ id: "a1b2c3d4-e5f6-4789-8abc-def012345678", properties: {}, url: "https://notion.so/x" });
    if (s.path.startsWith("https://api.notion.com/v1/blocks/")) return json({ results: [], has_more: false });
    return unexpected(s);
  });
}
