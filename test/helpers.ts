import { env, exports } from "cloudflare:workers";
import { expect } from "vitest";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { Client as LegacyClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as LegacyTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { planAccount, planToken, type Sql, type TokenRequest } from "../src/db/provisioning.ts";
import { actorIn, actorOut } from "../src/db/consent.ts";
import { checkOutput } from "./output-check.ts";
import { PRESENCE_COLUMNS, PRESENCE_TABLES } from "../src/domain/columns.ts";

export const MCP_URL = "https://taskgate.test/mcp";

/** The Worker itself, in this isolate, over real HTTP semantics. */
export function workerFetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
  return (exports as unknown as { default: Fetcher }).default.fetch(new Request(input, init));
}

/**
 * Fixtures written straight into the tables the consent rules cover (tasks,
 * projects, steps, …): one batch that records a server caller first and
 * removes it last, as the server's own writers do (src/db/consent.ts), since
 * a batch with no caller is refused there. Returns the statements' own results.
 */
export async function asServer(db: D1Database, ...statements: (D1PreparedStatement | D1PreparedStatement[])[]): Promise<D1Result[]> {
  const batch = `tst_${crypto.randomUUID()}`;
  const results = await db.batch([
    actorIn(db, batch, { kind: "server", name: TEST_WRITER, now: new Date().toISOString() }),
    ...statements.flat(),
    actorOut(db, batch),
  ]);
  return results.slice(1, -1);
}

/** The name the tests' fixture batches record as their server caller. */
export const TEST_WRITER = "server:test";

export async function run(statements: Sql[], db: D1Database = env.DB): Promise<void> {
  await db.batch(statements.map((s) => db.prepare(s.sql).bind(...s.params)));
}

export async function createToken(req: TokenRequest, db: D1Database = env.DB): Promise<{ id: string; secret: string }> {
  const t = await planToken({ shard: db === env.DB_1 ? "DB_1" : "DB", ...req }, new Date().toISOString());
  await run(t.statements, db);
  return { id: t.id, secret: t.secret };
}

export interface SeededAccount {
  accountId: string;
  /** Secrets of the four demo token kinds. */
  human: string;
  humanRead: string;
  agent: string;
  agentRead: string;
  tokenIds: { human: string; humanRead: string; agent: string; agentRead: string };
  agentName: string;
}

/** An account with a human write, human read, agent write and agent read token, in database `shard` (default the first). */
export async function seedAccount(name = "Test account", agentName = "bot", shard: "DB" | "DB_1" = "DB"): Promise<SeededAccount> {
  const now = new Date().toISOString();
  const account = planAccount(name, now, shard);
  const db = env[shard];
  await run(account.directory);
  await run(account.statements, db);
  const human = await createToken({ accountId: account.id, kind: "human", scope: "write", shard }, db);
  const humanRead = await createToken({ accountId: account.id, kind: "human", scope: "read", shard }, db);
  const agent = await createToken({ accountId: account.id, kind: "agent", scope: "write", agent: agentName, shard }, db);
  const agentRead = await createToken({ accountId: account.id, kind: "agent", scope: "read", agent: agentName, shard }, db);
  return {
    accountId: account.id,
    human: human.secret,
    humanRead: humanRead.secret,
    agent: agent.secret,
    agentRead: agentRead.secret,
    tokenIds: { human: human.id, humanRead: humanRead.id, agent: agent.id, agentRead: agentRead.id },
    agentName,
  };
}

export type Era = "modern" | "legacy";
export const ERAS: Era[] = ["modern", "legacy"];

export interface ToolCallResult {
  isError: boolean;
  text: string;
  structured: Record<string, any>;
  /** The result's `_meta` (a policy's decision, a pending action). */
  meta: Record<string, any>;
}

export interface TestClient {
  era: Era;
  protocolVersion: string | undefined;
  /** The server's instructions, as the client received them. */
  instructions: string | undefined;
  listTools(): Promise<{ name: string; title?: string; annotations?: Record<string, unknown>; inputSchema: any; outputSchema?: any; description?: string }[]>;
  call(name: string, args?: Record<string, unknown>): Promise<ToolCallResult>;
  /** Calls and expects success; returns structuredContent. */
  ok(name: string, args?: Record<string, unknown>): Promise<Record<string, any>>;
  /** Calls and expects an isError result; returns its text. */
  fails(name: string, args?: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

function toResult(r: any): ToolCallResult {
  const text = (r.content ?? []).filter((c: any) => c.type === "text").map((c: any) => c.text).join("\n");
  return { isError: r.isError === true, text, structured: r.structuredContent ?? {}, meta: r._meta ?? {} };
}

/**
 * A real SDK client with a bearer token: `modern` is @modelcontextprotocol/client
 * 2.x negotiating (it settles on 2026-07-28), `legacy` is @modelcontextprotocol/sdk
 * 1.x opening with initialize, as many hosts still do.
 */
export interface ConnectOptions {
  /** Another MCP URL of the Worker (a toolset path), default MCP_URL. */
  url?: string;
  /** More request headers (X-MCP-Toolsets, X-MCP-Readonly). */
  headers?: Record<string, string>;
  /** Sees every response with the body of its request (e.g. to read x-d1-calls). */
  onResponse?: (res: Response, requestBody: string) => void | Promise<void>;
}

export async function connect(secret: string, era: Era = "modern", opts: ConnectOptions = {}): Promise<TestClient> {
  const { onResponse } = opts;
  const url = new URL(opts.url ?? MCP_URL);
  const requestInit = { headers: { authorization: `Bearer ${secret}`, ...opts.headers } };
  const fetch = onResponse
    ? async (input: RequestInfo | URL, init?: RequestInit) => {
        const res = await workerFetch(input, init);
        await onResponse(res, typeof init?.body === "string" ? init.body : "");
        return res;
      }
    : workerFetch;
  let inner: { listTools: () => Promise<any>; callTool: (p: any) => Promise<any>; close: () => Promise<void> };
  let protocolVersion: string | undefined;
  let instructions: string | undefined;
  if (era === "modern") {
    const client = new Client({ name: "taskgate-test", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
    await client.connect(new StreamableHTTPClientTransport(url, { fetch, requestInit }));
    protocolVersion = client.getNegotiatedProtocolVersion();
    instructions = client.getInstructions();
    // The 2.x client keeps tools/list for the ttlMs the server gives; a test asks the server every time
    // (`refresh` still stores the answer, which the client validates structuredContent against).
    inner = { listTools: () => client.listTools(undefined, { cacheMode: "refresh" }), callTool: (p) => client.callTool(p), close: () => client.close() };
  } else {
    const client = new LegacyClient({ name: "taskgate-legacy-test", version: "1.0.0" });
    const transport = new LegacyTransport(url, { fetch, requestInit });
    await client.connect(transport);
    protocolVersion = transport.protocolVersion;
    instructions = client.getInstructions();
    inner = client;
  }
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const raw = await inner.callTool({ name, arguments: args });
    if (raw.isError !== true && raw.structuredContent !== undefined) checkOutput(name, raw.structuredContent);
    return toResult(raw);
  };
  return {
    era,
    protocolVersion,
    instructions,
    async listTools() {
      return (await inner.listTools()).tools;
    },
    call,
    async ok(name, args) {
      const r = await call(name, args);
      if (r.isError) throw new Error(`${name} failed: ${r.text}`);
      return r.structured;
    },
    async fails(name, args) {
      const r = await call(name, args);
      expect(r.isError, `${name} should have failed but returned ${r.text}`).toBe(true);
      return r.text;
    },
    close: () => inner.close(),
  };
}

const BOOKKEEPING_COLUMNS = new Set(Object.values(PRESENCE_COLUMNS).flat());

/** Every row of every table (bookkeeping columns left out), to prove a refused call changed nothing. */
export async function snapshotDb(db: D1Database = env.DB): Promise<string> {
  const { results: tables } = await db.prepare(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\' AND name NOT LIKE 'task\\_search%' ESCAPE '\\' AND name NOT LIKE 'comment\\_search%' ESCAPE '\\' ORDER BY name",
  ).all<{ name: string }>();
  // One batch (one round trip) for every table: the security suites take a snapshot around each refused call.
  // Where callers' next reads start is stored after responses, at no fixed time: bookkeeping, like a token's last use.
  const kept = tables.filter(({ name }) => !PRESENCE_TABLES.has(name));
  const read = await db.batch(kept.map(({ name }) => db.prepare(`SELECT * FROM "${name}" ORDER BY 1`)));
  const out: Record<string, unknown[]> = {};
  kept.forEach(({ name }, i) => {
    out[name] = (read[i].results as Record<string, unknown>[]).map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => !BOOKKEEPING_COLUMNS.has(k))));
  });
  return JSON.stringify(out);
}

/** Activity rows of an account, or of one target in it: a write adds exactly one, a no-op none. */
export async function activityCount(accountId: string, target?: string): Promise<number> {
  const row = target === undefined
    ? await env.DB.prepare("SELECT count(*) AS n FROM activity WHERE account_id = ?").bind(accountId).first<{ n: number }>()
    : await env.DB.prepare("SELECT count(*) AS n FROM activity WHERE account_id = ? AND target_id = ?").bind(accountId, target).first<{ n: number }>();
  return row?.n ?? 0;
}

/** An account with its person and two agents, alpha and beta, each connected in `era`: who the consent rules are between. */
export async function team(era: Era, name: string) {
  const acc = await seedAccount(name, "alpha");
  const beta = await createToken({ accountId: acc.accountId, kind: "agent", scope: "write", agent: "beta" });
  const clients = { person: await connect(acc.human, era), alpha: await connect(acc.agent, era), beta: await connect(beta.secret, era) };
  return { acc, ...clients, close: () => Promise.all(Object.values(clients).map((c: TestClient) => c.close())) };
}

/** A task's claim as stored: who holds it, its status, and its lease (for the claim, release and lease tests). */
export function claimRow(taskId: string) {
  return env.DB.prepare("SELECT assignee, status, claim_expires_at, claim_lease_minutes FROM tasks WHERE id = ?")
    .bind(taskId)
    .first<{ assignee: string | null; status: string; claim_expires_at: string | null; claim_lease_minutes: number | null }>();
}
