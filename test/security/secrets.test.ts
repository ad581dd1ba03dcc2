import { env } from "cloudflare:workers";
import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import { accountInSecret } from "../../src/domain/tokens.ts";
import { describeAllTools, detailedInputSchema } from "../../src/mcp/registry.ts";
import { HUMAN_TOOLS, WRITE_TOOLS, type ToolName } from "../../src/catalog/effects.ts";
import { hashToken } from "../../src/domain/tokens.ts";
import { connect, createToken, ERAS, MCP_URL, seedAccount, workerFetch, type TestClient } from "../helpers.ts";
import { connectApp, fakeUpstream, json, type Seen } from "../connectors-fakes.ts";
import { argumentsFor, fromSchema, type IdPool } from "./arbitrary.ts";
import { seedShapes } from "./shapes.ts";

/**
 * Secrets never leave in clear: after tokens of every kind are made, three
 * apps are connected and every tool has been called (good and junk
 * arguments, person and agent, both protocol eras, refused and failing
 * calls, 401s), no token secret, token hash or connector credential (nor 12
 * characters of one) is in any D1 column, any answer, or any log line.
 */
const SEED = 20261207;

afterEach(() => vi.restoreAllMocks());

const CREDENTIALS = {
  drive: {
    client_id: "884410-tgsecdriveclient.apps.googleusercontent.com",
    client_secret: "GOCSPX-tgsec-Dr1veCl1entS3cret-Qw",
    refresh_token: "1//04tgsec-Dr1veRefreshT0ken-Zx9Lm",
  },
  slack: { token: "xoxp-7301-8402-9503-tgsecSl4ckUs3rT0k" },
  notion: { token: "ntn_tgsecN0tionInt3grationT0ken_Hx7Kp2" },
} as const;
const DRIVE_ACCESS_TOKEN = "ya29.tgsec-Dr1veAccessT0ken-Mv6Tq1Pz";
const CREDENTIAL_VALUES = [...Object.values(CREDENTIALS.drive), CREDENTIALS.slack.token, CREDENTIALS.notion.token, DRIVE_ACCESS_TOKEN];

const DRIVE_FILES = "https://www.googleapis.com/drive/v3/files";
const DOC = "1DocAbc_-9";
const PAGE = "a1b2c3d4-e5f6-4789-8abc-def012345678";
const THREAD = "C0123ABCD/1712345678.000100";

/** Plausible answers of the three apps; anything unknown is a 404. */
function apps(s: Seen): Response {
  if (s.path === "https://oauth2.googleapis.com/token") return json({ access_token: DRIVE_ACCESS_TOKEN, expires_in: 3600, token_type: "Bearer" });
  if (s.path === DRIVE_FILES) return json({ files: [{ id: DOC, name: "Plan", webViewLink: `https://docs.google.com/document/d/${DOC}/edit` }] });
  if (s.path === `${DRIVE_FILES}/${DOC}`) return json({ id: DOC, name: "Plan", mimeType: "application/vnd.google-apps.document" });
  if (s.path === `${DRIVE_FILES}/${DOC}/export`) return new Response("The plan, in plain text.");
  if (s.path === "https://www.googleapis.com/upload/drive/v3/files") return json({ id: "1NewDoc_77", name: "Saved" });
  if (s.path === "https://slack.com/api/search.messages") {
    return json({ ok: true, messages: { matches: [{ ts: "1712345678.000100", text: "ship it", user: "U1", channel: { id: "C0123ABCD", name: "launch" } }] } });
  }
  if (s.path === "https://slack.com/api/conversations.replies") return json({ ok: true, messages: [{ ts: "1712345678.000100", user: "U1", text: "ship it" }] });
  if (s.path === "https://slack.com/api/chat.getPermalink") return json({ ok: true, permalink: "https://acme.slack.com/archives/C0123ABCD/p1712345678000100" });
  if (s.path === "https://slack.com/api/chat.postMessage") return json({ ok: true, channel: "C0123ABCD", ts: "1712349999.000300" });
  const page = { object: "page", id: PAGE, url: `https://www.notion.so/${PAGE.replace(/-/g, "")}`, properties: {} };
  if (s.path === "https://api.notion.com/v1/search") return json({ object: "list", results: [page], has_more: false });
  if (s.path === `https://api.notion.com/v1/pages/${PAGE}`) return json(page);
  if (s.path === `https://api.notion.com/v1/blocks/${PAGE}/children`) {
    return json({ results: [{ object: "block", id: "b1", type: "paragraph", has_children: false, paragraph: { rich_text: [{ plain_text: "Notes" }] } }], has_more: false, next_cursor: null });
  }
  if (s.path === "https://api.notion.com/v1/pages") return json({ object: "page", id: "99990000-aaaa-4bbb-8ccc-ddddeeeeffff", url: "https://www.notion.so/x" });
  return json({ error: { message: "not found" }, code: "object_not_found", ok: false }, 404);
}

/** Text of every value, blobs included, so a secret stored in any form is found. */
function flatten(value: unknown): string {
  if (value instanceof ArrayBuffer) return new TextDecoder("latin1").decode(value);
  if (ArrayBuffer.isView(value)) return new TextDecoder("latin1").decode(value as Uint8Array);
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** Every row of every table in sqlite_master, as text, per table. */
async function dumpAllTables(): Promise<Map<string, string>> {
  const { results: tables } = await env.DB.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all<{ name: string }>();
  const out = new Map<string, string>();
  for (const { name } of tables) {
    let rows: Record<string, unknown>[];
    try {
      rows = (await env.DB.prepare(`SELECT * FROM "${name.replace(/"/g, '""')}"`).all<Record<string, unknown>>()).results;
    } catch (e) {
      if (name.startsWith("_cf_")) continue;
      throw e;
    }
    out.set(name, rows.map((r) => Object.values(r).map(flatten).join("\u0001")).join("\n"));
  }
  return out;
}

/**
 * The secret itself and every 12-character piece of its secret part: a token
 * ends with its account's id (src/domain/tokens.ts), which is no secret and
 * appears in every row of the account.
 */
function pieces(secret: string): string[] {
  const out = [secret];
  const random = accountInSecret(secret) ? secret.slice(0, -16) : secret;
  for (let i = 0; i + 12 <= random.length; i++) out.push(random.slice(i, i + 12));
  return out;
}

function found(haystack: string, secrets: string[]): string[] {
  const hits: string[] = [];
  for (const secret of secrets) {
    const piece = pieces(secret).find((p) => haystack.includes(p));
    if (piece) hits.push(`${secret.slice(0, 6)}… (as "${piece}")`);
  }
  return hits;
}

async function post(headers: Record<string, string>, body: unknown, url = MCP_URL): Promise<string> {
  const res = await workerFetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: JSON.stringify(body),
  });
  return `${res.status} ${JSON.stringify([...res.headers])} ${await res.text()}`;
}

describe("secrets", () => {
  it("no token secret, token hash or connector credential in any column, answer or log line", async () => {
    const logs: string[] = [];
    for (const level of ["log", "info", "warn", "error", "debug"] as const) {
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void logs.push(args.map(flatten).join(" ")));
    }
    const answers: string[] = [];
    const seen = fakeUpstream(apps);

    const acc = await seedAccount("Secrets", "bot");
    const extra = await Promise.all([
      createToken({ accountId: acc.accountId, kind: "human", scope: "write", label: "laptop" }),
      createToken({ accountId: acc.accountId, kind: "human", scope: "read", expiresAt: new Date(Date.now() + 86_400_000).toISOString() }),
      createToken({ accountId: acc.accountId, kind: "agent", scope: "write", agent: "scribe" }),
      createToken({ accountId: acc.accountId, kind: "agent", scope: "read", agent: "scribe" }),
      createToken({ accountId: acc.accountId, kind: "human", scope: "write", expiresAt: new Date(Date.now() - 60_000).toISOString() }),
    ]);
    const shapes = await seedShapes(acc);
    const tokenSecrets = [acc.human, acc.humanRead, acc.agent, acc.agentRead, ...extra.map((t) => t.secret), ...shapes.secrets];
    for (const provider of ["drive", "slack", "notion"] as const) await connectApp(acc.accountId, provider, CREDENTIALS[provider]);

    const human = await connect(acc.human, "modern");
    const agent = await connect(acc.agent, "legacy");
    const record = async (client: TestClient, name: string, args: unknown) => {
      try {
        const r = await client.call(name, args as Record<string, unknown>);
        answers.push(r.text, JSON.stringify(r.structured));
        return r;
      } catch (e) {
        answers.push(e instanceof Error ? `${e.message} ${e.stack ?? ""}` : String(e));
        return { isError: true, text: String(e), structured: {} };
      }
    };

    // The apps, used as intended first (disconnect_connector may run in the sweep below).
    expect((await record(human, "search_context", { query: "plan" })).isError).toBe(false);
    for (const ref of [`drive:${DOC}`, `slack:${THREAD}`, `notion:${PAGE}`]) expect((await record(agent, "read_context", { ref })).isError).toBe(false);
    for (const [provider, target] of [["drive", undefined], ["slack", "C0123ABCD"], ["notion", PAGE]] as const) {
      expect((await record(human, "save_context", { provider, title: "Minutes", content: "We agreed.", target })).isError).toBe(false);
    }
    await record(human, "list_connectors", {});
    await record(human, "list_tokens", {});
    await record(agent, "list_tokens", {});
    const revoked = extra[0];
    expect((await record(human, "revoke_token", { token_id: revoked.id })).isError).toBe(false);

    // Every tool of the registry: well-formed arguments over real ids, and junk; as the person and as an agent.
    const pool: IdPool = { byPrefix: shapes.ids };
    for (const [i, tool] of describeAllTools().entries()) {
      const name = tool.name as ToolName;
      const [good] = fc.sample(fromSchema(detailedInputSchema(tool.name), pool, 0, { valid: true }), { seed: SEED + i, numRuns: 1 });
      const [junk] = fc.sample(argumentsFor(detailedInputSchema(tool.name), pool), { seed: SEED - i, numRuns: 1 });
      for (const args of [good, junk]) {
        await record(human, name, args);
        if (!HUMAN_TOOLS.has(name)) await record(agent, name, args);
      }
      if (WRITE_TOOLS.has(name) && HUMAN_TOOLS.has(name)) await record(agent, name, good);
    }
    answers.push(JSON.stringify(await human.listTools()), JSON.stringify(await agent.listTools()));
    await human.close();
    await agent.close();

    // Calls that never reach a tool: no token, a wrong one, a revoked and an expired one, the secret in the URL or a malformed header.
    const call = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "whoami", arguments: {} } };
    const unknown = `tg_${"A".repeat(43)}`;
    for (const [headers, url] of [
      [{}, MCP_URL],
      [{ authorization: `Bearer ${unknown}` }, MCP_URL],
      [{ authorization: `Bearer ${revoked.secret}` }, MCP_URL],
      [{ authorization: `Bearer ${extra[4].secret}` }, MCP_URL],
      [{ authorization: `Basic ${acc.human}` }, MCP_URL],
      [{ authorization: `Bearer ${acc.human} ${acc.agent}` }, MCP_URL],
      [{}, `${MCP_URL}?token=${acc.human}`],
      [{ authorization: `Bearer ${acc.human}` }, `${MCP_URL}?access_token=${acc.agent}`],
      [{ authorization: `Bearer ${acc.humanRead}` }, MCP_URL.replace("/mcp", "/nowhere")],
    ] as [Record<string, string>, string][]) {
      answers.push(await post(headers, call, url));
    }
    for (const era of ERAS) {
      const headers: Record<string, string> = { authorization: `Bearer ${acc.agentRead}` };
      if (era === "modern") Object.assign(headers, { "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "revoke_token" });
      answers.push(await post(headers, { ...call, params: { name: "revoke_token", arguments: { token_id: acc.tokenIds.human } } }));
      answers.push(await post(headers, { ...call, params: { name: "no_such_tool", arguments: {} } }));
    }
    vi.restoreAllMocks();

    expect(seen.length, "the apps were reached").toBeGreaterThan(0);
    const tokenRows = (
      await env.DB.prepare("SELECT id, hash, prefix FROM tokens WHERE account_id = ?").bind(acc.accountId).all<{ id: string; hash: string; prefix: string }>()
    ).results;
    expect(tokenRows.length).toBe(tokenSecrets.length);
    const hashes = tokenRows.map((t) => t.hash);
    for (const t of tokenRows) {
      expect(t.hash, t.id).toMatch(/^[0-9a-f]{64}$/);
      expect(t.prefix, t.id).toMatch(/^tg_[A-Za-z0-9_-]{6}…$/);
    }
    for (const secret of tokenSecrets) {
      const hash = await hashToken(secret);
      const row = tokenRows.find((t) => t.hash === hash);
      expect(row, `a row holds the hash of ${secret.slice(0, 9)}…`).toBeDefined();
      expect(row!.prefix).toBe(`${secret.slice(0, 9)}…`);
    }

    const secrets = [...tokenSecrets, ...CREDENTIAL_VALUES];
    for (const [table, text] of await dumpAllTables()) {
      expect(found(text, secrets), `secrets in table ${table}`).toEqual([]);
      if (table !== "tokens") expect(found(text, hashes), `token hashes in table ${table}`).toEqual([]);
    }
    expect(answers.length).toBeGreaterThan(400);
    const allAnswers = answers.join("\n");
    expect(found(allAnswers, [...secrets, ...hashes]), "secrets in answers").toEqual([]);
    expect(logs.length, "the server logged something to check").toBeGreaterThan(0);
    expect(found(logs.join("\n"), [...secrets, ...hashes]), "secrets in logs").toEqual([]);
  }, 120_000);

  it("an app that quotes the credentials back in its errors: nothing of them reaches an answer, a column or a log", async () => {
    const logs: string[] = [];
    for (const level of ["log", "info", "warn", "error", "debug"] as const) {
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void logs.push(args.map(flatten).join(" ")));
    }
    const quote = (s: Seen) => `${s.headers.authorization ?? ""} ${s.body}`;
    const rounds: ((s: Seen) => Response)[] = [
      (s) => {
        if (s.path === "https://oauth2.googleapis.com/token") return json({ access_token: DRIVE_ACCESS_TOKEN, expires_in: 3600 });
        if (s.path.startsWith("https://slack.com")) return json({ ok: false, error: quote(s) });
        if (s.path.startsWith("https://api.notion.com")) return json({ code: "validation_error", message: `Invalid request: ${quote(s)}` }, 400);
        return json({ error: { message: quote(s), errors: [{ reason: quote(s) }] } }, 400);
      },
      (s) => {
        if (s.path === "https://oauth2.googleapis.com/token") return json({ access_token: DRIVE_ACCESS_TOKEN, expires_in: 3600 });
        if (s.path.startsWith("https://slack.com")) return json({ ok: false, error: "missing_scope", needed: quote(s) });
        if (s.path.startsWith("https://api.notion.com")) return json({ code: quote(s), message: quote(s) }, 401);
        return json({ error: { status: quote(s), errors: [{ reason: quote(s) }] } }, 403);
      },
      (s) => {
        if (s.path === "https://oauth2.googleapis.com/token") return json({ error: quote(s), error_description: quote(s) }, 400);
        if (s.path.startsWith("https://slack.com")) return new Response(quote(s), { status: 500 });
        return new Response(quote(s), { status: 502 });
      },
      (s) => {
        const padded = `${"e".repeat(45)} ${quote(s)}`;
        if (s.path === "https://oauth2.googleapis.com/token") return json({ error: padded }, 401);
        if (s.path.startsWith("https://slack.com")) return json({ ok: false, error: `${"e".repeat(55)} ${quote(s)}` });
        return json({ code: padded, message: `${"e".repeat(170)} ${quote(s)}` }, 400);
      },
    ];
    const answers: string[] = [];
    const tokens: string[] = [];
    for (const round of rounds) {
      const acc = await seedAccount("Hostile apps");
      tokens.push(acc.human);
      for (const provider of ["drive", "slack", "notion"] as const) await connectApp(acc.accountId, provider, CREDENTIALS[provider]);
      vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
        const req = new Request(input, init);
        const url = new URL(req.url);
        const body = typeof init?.body === "string" ? init.body : "";
        return round({ method: req.method, url: req.url, path: `${url.origin}${url.pathname}`, query: Object.fromEntries(url.searchParams), headers: Object.fromEntries(req.headers), body, hasSignal: true });
      });
      const human = await connect(acc.human);
      for (const [provider, ref, target] of [["drive", `drive:${DOC}`, undefined], ["slack", `slack:${THREAD}`, "C0123ABCD"], ["notion", `notion:${PAGE}`, PAGE]] as const) {
        for (const [name, args] of [
          ["search_context", { query: "plan", providers: [provider] }],
          ["read_context", { ref }],
          ["save_context", { provider, title: "Minutes", content: "We agreed.", target }],
        ] as const) {
          const r = await human.call(name, args);
          answers.push(r.text, JSON.stringify(r.structured));
        }
      }
      answers.push((await human.call("list_connectors", {})).text);
      await human.close();
    }
    vi.restoreAllMocks();

    expect(answers.join("\n")).toMatch(/rejected the stored credentials/);
    const secrets = [...CREDENTIAL_VALUES, ...tokens];
    const hits: Record<string, string[]> = {
      answers: found(answers.join("\n"), secrets),
      logs: found(logs.join("\n"), secrets),
    };
    for (const [table, text] of await dumpAllTables()) {
      const inTable = found(text, secrets);
      if (inTable.length) hits[`table ${table}`] = inTable;
    }
    expect(hits).toEqual({ answers: [], logs: [] });
  });
});
