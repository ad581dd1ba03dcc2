import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { callTool } from "../src/mcp/registry.ts";
import { annotationsFor } from "../src/catalog/effects.ts";
import { findByHash } from "../src/db/tokens.ts";
import { hashToken } from "../src/domain/tokens.ts";
import { CredentialsError, parseCredentials, readCredentialsJson } from "../src/connectors/credentials.ts";
import { decryptCredentials, importConnectorKey, keyFromDotenv, newConnectorKey } from "../src/domain/crypto.ts";
import { planConnector } from "../src/connectors/plan.ts";
import { connect, ERAS, seedAccount, snapshotDb } from "./helpers.ts";
import {
  activityFor, connectApp, connectorRow, CREDS, expectNoSecrets, fakeUpstream, json, SECRET_VALUES, unexpected, type Seen,
} from "./connectors-fakes.ts";

afterEach(() => vi.restoreAllMocks());

const CONNECTOR_TOOLS = ["list_connectors", "search_context", "read_context", "save_context", "disconnect_connector"];

/** Calls a tool through the real registry with a different Worker env (e.g. no CONNECTOR_KEY). */
async function callWithEnv(secret: string, patch: Record<string, unknown>, name: string, args: Record<string, unknown>) {
  const resolved = await findByHash(env.DB, await hashToken(secret));
  return callTool({ env: { ...env, ...patch } as never, principal: resolved!.principal, requestId: "test", waitUntil: () => {} }, name, args);
}

/** A fake of all three apps: Drive and Notion answer one hit each; Slack fails with a 500. */
function fakeApps(onRequest: (s: Seen) => void | Promise<void> = () => {}) {
  return fakeUpstream(async (s) => {
    await onRequest(s);
    if (s.url.startsWith("https://oauth2.googleapis.com/token")) return json({ access_token: "ya29.x", expires_in: 3600 });
    if (s.path === "https://www.googleapis.com/drive/v3/files") return json({ files: [{ id: "1DocAbc_-9", name: "Drive doc" }] });
    if (s.path === "https://slack.com/api/search.messages") return new Response("", { status: 500 });
    if (s.path === "https://api.notion.com/v1/search") return json({ results: [{ id: "a1b2c3d4-e5f6-4789-8abc-def012345678", properties: {} }] });
    return unexpected(s);
  });
}

describe("credentials at rest", () => {
  it("stores only an AES-GCM envelope bound to the account and app, which decrypts back with the key", async () => {
    const acc = await seedAccount();
    for (const provider of ["drive", "slack", "notion"] as const) {
      await connectApp(acc.accountId, provider);
      const row = await connectorRow(acc.accountId, provider);
      expect(row!.credentials).toMatch(/^v1:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$/);
      for (const secret of Object.values(CREDS[provider])) {
        for (let i = 0; i + 6 <= secret.length; i++) expect(row!.credentials).not.toContain(secret.slice(i, i + 6));
      }
      const key = await importConnectorKey(env.CONNECTOR_KEY);
      expect(JSON.parse(await decryptCredentials(key, acc.accountId, provider, row!.credentials))).toEqual(CREDS[provider]);
      await expect(decryptCredentials(key, "acc_someoneelse00000", provider, row!.credentials)).rejects.toThrow();
      await expect(decryptCredentials(await importConnectorKey(newConnectorKey()), acc.accountId, provider, row!.credentials)).rejects.toThrow();
    }
    const dump = await snapshotDb();
    for (const secret of SECRET_VALUES) expect(dump).not.toContain(secret);
  });

  it("connecting again replaces the credentials under the same id", async () => {
    const acc = await seedAccount();
    const id = await connectApp(acc.accountId, "slack");
    const before = await connectorRow(acc.accountId, "slack");
    expect(await connectApp(acc.accountId, "slack", { token: "xoxp-9999-new-token-value" })).toBe(id);
    const after = await connectorRow(acc.accountId, "slack");
    expect(after!.id).toBe(id);
    expect(after!.credentials).not.toBe(before!.credentials);
    const key = await importConnectorKey(env.CONNECTOR_KEY);
    expect(JSON.parse(await decryptCredentials(key, acc.accountId, "slack", after!.credentials))).toEqual({ token: "xoxp-9999-new-token-value" });
    expect((await env.DB.prepare("SELECT count(*) AS n FROM connectors WHERE account_id = ?").bind(acc.accountId).first<{ n: number }>())!.n).toBe(1);
  });

  it("refuses a wrong credentials file before anything is stored, naming what is missing and never echoing a value", async () => {
    const acc = await seedAccount();
    const before = await snapshotDb();
    const cases: [string, "drive" | "slack" | "notion", string, RegExp][] = [
      ["drive", "drive", '{"client_id": "abc123"}', /missing client_secret, refresh_token/],
      ["slack file for drive", "drive", '{"token": "xoxp-1-secretvalue"}', /missing client_id, client_secret, refresh_token; unexpected token/],
      ["not JSON", "notion", "token=abc", /not JSON; Notion expects \{"token": "ntn_…"\}/],
      ["array", "notion", "[]", /must be a JSON object/],
      ["number token", "notion", '{"token": 12345678}', /token must be a string/],
      ["bot token", "slack", '{"token": "xoxb-1-secretvalue"}', /bot token \(xoxb-\); search needs a user token/],
      ["not slack", "slack", '{"token": "ghp_secretvalue"}', /not a Slack token/],
      ["spaces", "notion", '{"token": "ntn_a b"}', /one word/],
    ];
    for (const [what, provider, text, message] of cases) {
      let error: unknown;
      try {
        readCredentialsJson(provider, text);
      } catch (e) {
        error = e;
      }
      expect(error, what).toBeInstanceOf(CredentialsError);
      expect((error as Error).message, what).toMatch(message);
      expect((error as Error).message, what).not.toMatch(/secretvalue|abc123|12345678/);
    }
    expect(readCredentialsJson("drive", JSON.stringify(CREDS.drive))).toEqual(CREDS.drive);
    expect(parseCredentials("slack", { token: "  xoxp-1-2  " })).toEqual({ token: "xoxp-1-2" });
    await expect(planConnector({ accountId: acc.accountId, provider: "slack", credentials: { token: "" }, key: env.CONNECTOR_KEY }, new Date().toISOString())).rejects.toThrow(/missing token/);
    await expect(planConnector({ accountId: acc.accountId, provider: "slack", credentials: CREDS.slack, key: "too-short" }, new Date().toISOString())).rejects.toThrow(/CONNECTOR_KEY/);
    expect(await snapshotDb()).toBe(before);
  });

  it("reads CONNECTOR_KEY from a .dev.vars text", () => {
    expect(keyFromDotenv("A=1\nCONNECTOR_KEY=abc=\n")).toBe("abc=");
    expect(keyFromDotenv('export CONNECTOR_KEY="q/+w=="')).toBe("q/+w==");
    expect(keyFromDotenv("CONNECTOR_KEYS=x\n# CONNECTOR_KEY=y")).toBeUndefined();
    expect(atob(newConnectorKey())).toHaveLength(32);
  });
});

describe("connector tools", () => {
  for (const era of ERAS) {
    it(`${era}: lists the three apps and their state, never a secret`, async () => {
      const acc = await seedAccount();
      const client = await connect(acc.agentRead, era);
      const empty = await client.ok("list_connectors");
      expect(empty.setup_error).toBeNull();
      expect(empty.connectors).toEqual(
        (["drive", "slack", "notion"] as const).map((p) => ({
          provider: p,
          name: { drive: "Google Drive", slack: "Slack", notion: "Notion" }[p],
          status: "not_connected",
          id: null,
          last_error: null,
          connected_at: null,
          updated_at: null,
          connect_with: `npm run admin -- connect --account ${acc.accountId} --provider ${p} --credentials-file FILE`,
        })),
      );
      const id = await connectApp(acc.accountId, "slack");
      const listed = await client.ok("list_connectors");
      expect(listed.connectors[1]).toMatchObject({ provider: "slack", status: "connected", id, last_error: null });
      expect(listed.connectors[1].connected_at).toMatch(/^\d{4}-/);
      expectNoSecrets(listed);
      expect(JSON.stringify(listed)).not.toContain("v1:");
      await client.close();
    });
  }

  it("announces the hints of the catalog: three open-world tools, disconnect destructive, idempotent and human only", async () => {
    const acc = await seedAccount();
    const agent = await connect(acc.agent);
    const tools = (await agent.listTools()).filter((t) => CONNECTOR_TOOLS.includes(t.name));
    expect(tools.map((t) => t.name).sort()).toEqual(["list_connectors", "read_context", "save_context", "search_context"]);
    const human = await connect(acc.human);
    const all = (await human.listTools()).filter((t) => CONNECTOR_TOOLS.includes(t.name));
    const hints = Object.fromEntries(all.map((t) => [t.name, t.annotations]));
    expect(hints.search_context).toMatchObject({ readOnlyHint: true, openWorldHint: true });
    expect(hints.read_context).toMatchObject({ readOnlyHint: true, openWorldHint: true });
    expect(hints.save_context).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true });
    expect(hints.list_connectors).toMatchObject({ readOnlyHint: true, openWorldHint: false });
    expect(hints.disconnect_connector).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false });
    expect(annotationsFor("disconnect_connector").title).toBe("Disconnect app");
    await agent.close();
    await human.close();
  });

  it("searches the connected apps concurrently; one failing app is reported beside the others' results", async () => {
    const acc = await seedAccount();
    for (const p of ["drive", "slack", "notion"] as const) await connectApp(acc.accountId, p);
    let slackArrived!: () => void;
    const slackSeen = new Promise<void>((resolve) => (slackArrived = resolve));
    const seen = fakeApps(async (s) => {
      if (s.path.startsWith("https://slack.com")) slackArrived();
      if (s.path === "https://api.notion.com/v1/search") {
        await Promise.race([slackSeen, new Promise((_, reject) => setTimeout(() => reject(new Error("searches ran one after another")), 3000))]);
      }
    });
    const client = await connect(acc.agentRead);
    const r = await client.ok("search_context", { query: "plan" });
    expect(r.searched).toEqual(["drive", "notion", "slack"]);
    expect(r.results.map((x: { ref: string }) => x.ref)).toEqual(["drive:1DocAbc_-9", "notion:a1b2c3d4-e5f6-4789-8abc-def012345678"]);
    expect(r.results[1].title).toBe("(untitled)");
    expect(r.errors).toEqual([{ provider: "slack", error: "Slack is unavailable (HTTP 500); try again in a moment." }]);
    expect(seen.filter((s) => s.path === "https://slack.com/api/search.messages")).toHaveLength(1);

    const only = await client.ok("search_context", { query: "plan", providers: ["notion", "notion"] });
    expect(only.searched).toEqual(["notion"]);
    expect(await client.fails("search_context", { query: "plan", providers: ["slack"] })).toBe("Slack is unavailable (HTTP 500); try again in a moment.");
    expect(await client.fails("search_context", { query: "   " })).toMatch(/query: must not be empty/);
    await client.close();
  });

  it("says which admin command connects an app, and keeps accounts apart", async () => {
    const acc = await seedAccount();
    const other = await seedAccount();
    await connectApp(other.accountId, "slack");
    await connectApp(acc.accountId, "drive");
    const seen = fakeApps();
    const client = await connect(acc.human);
    const slack = `Slack is not connected to this account; the operator connects it with \`npm run admin -- connect --account ${acc.accountId} --provider slack --credentials-file FILE\` (list_connectors shows what is connected).`;
    expect(await client.fails("search_context", { query: "x", providers: ["slack"] })).toBe(slack);
    expect(await client.fails("read_context", { ref: "slack:C0123ABCD/1712345678.000100" })).toBe(slack);
    expect(await client.fails("save_context", { provider: "slack", title: "t", content: "c", target: "C0123ABCD" })).toBe(slack);
    const mixed = await client.ok("search_context", { query: "x", providers: ["drive", "slack"] });
    expect(mixed.errors).toEqual([{ provider: "slack", error: slack }]);
    expect(mixed.results).toHaveLength(1);
    expect(seen.some((s) => s.url.includes("slack.com"))).toBe(false);

    const none = await seedAccount();
    const lonely = await connect(none.human);
    expect(await lonely.fails("search_context", { query: "x" })).toBe(
      `No app is connected to this account; the operator connects one with \`npm run admin -- connect --account ${none.accountId} --provider drive|slack|notion --credentials-file FILE\`.`,
    );
    await lonely.close();
    await client.close();
  });

  it("refuses malformed refs and arguments before any upstream call", async () => {
    const acc = await seedAccount();
    await connectApp(acc.accountId, "drive");
    const seen = fakeApps();
    const client = await connect(acc.human);
    expect(await client.fails("read_context", { ref: "gdrive:abc" })).toMatch(/^ref: expected provider:id/);
    expect(await client.fails("read_context", { ref: "drive:../../etc" })).toMatch(/^ref: a Drive ref looks like/);
    expect(await client.fails("read_context", { ref: "notion:xyz" })).toMatch(/^ref: a Notion ref looks like/);
    expect(await client.fails("read_context", { ref: "drive:1DocAbc_-9", max_chars: 20_001 })).toMatch(/max_chars/);
    expect(await client.fails("save_context", { provider: "drive", title: "t", content: "x".repeat(20_001) })).toMatch(/content/);
    expect(await client.fails("save_context", { provider: "drive", title: "", content: "x" })).toMatch(/title/);
    expect(await client.fails("save_context", { provider: "dropbox", title: "t", content: "x" })).toMatch(/provider/);
    expect(seen).toHaveLength(0);
    await client.close();
  });

  it("save_context needs a write token and records nothing when the app fails", async () => {
    const acc = await seedAccount();
    await connectApp(acc.accountId, "slack");
    const seen = fakeUpstream((s) => (s.path.endsWith("chat.postMessage") ? new Response("", { status: 503 }) : unexpected(s)));
    const reader = await connect(acc.agentRead);
    expect(await reader.fails("save_context", { provider: "slack", title: "t", content: "c", target: "C0123ABCD" })).toMatch(/write/);
    expect(seen).toHaveLength(0);
    const before = await snapshotDb();
    const writer = await connect(acc.agent);
    expect(await writer.fails("save_context", { provider: "slack", title: "t", content: "c", target: "C0123ABCD" })).toBe(
      "Slack is unavailable (HTTP 503); try again in a moment.",
    );
    expect(await snapshotDb()).toBe(before);
    await reader.close();
    await writer.close();
  });

  it("disconnect_connector is a human's, deletes the credentials once and converges", async () => {
    const acc = await seedAccount();
    const id = await connectApp(acc.accountId, "notion");
    const agent = await connect(acc.agent);
    expect(await agent.fails("disconnect_connector", { provider: "notion" })).toMatch(/human/);
    const human = await connect(acc.human);
    expect(await human.ok("disconnect_connector", { provider: "notion" })).toEqual({ provider: "notion", id, removed: true });
    expect(await connectorRow(acc.accountId, "notion")).toBeNull();
    expect(await activityFor(acc.accountId, "disconnect_connector")).toEqual([
      { tool: "disconnect_connector", target_id: id, summary: "disconnected Notion; its stored credentials are deleted", actor: "human" },
    ]);
    const before = await snapshotDb();
    expect(await human.ok("disconnect_connector", { provider: "notion" })).toEqual({ provider: "notion", id: null, removed: false });
    expect(await snapshotDb()).toBe(before);
    expect((await human.ok("list_connectors")).connectors[2].status).toBe("not_connected");
    expect(await human.fails("read_context", { ref: "notion:a1b2c3d4-e5f6-4789-8abc-def012345678" })).toMatch(/^Notion is not connected/);
    await agent.close();
    await human.close();
  });

  it("a missing or malformed CONNECTOR_KEY is a clear tool error for the operator, not a crash", async () => {
    const acc = await seedAccount();
    await connectApp(acc.accountId, "slack");
    const seen = fakeApps();
    for (const key of [undefined, "", "not base64 !!", btoa("sixteen bytes...")]) {
      const r = await callWithEnv(acc.human, { CONNECTOR_KEY: key }, "search_context", { query: "x" });
      expect(r.isError).toBe(true);
      const text = (r.content as { text: string }[])[0].text;
      expect(text).toMatch(/CONNECTOR_KEY/);
      expect(text).toMatch(/wrangler secret put CONNECTOR_KEY/);
      const listed = await callWithEnv(acc.human, { CONNECTOR_KEY: key }, "list_connectors", {});
      expect(listed.isError).toBeFalsy();
      expect((listed.structuredContent as { setup_error: string }).setup_error).toMatch(/CONNECTOR_KEY/);
    }
    expect(seen).toHaveLength(0);
  });

  it("credentials stored under another key ask for a reconnect", async () => {
    const acc = await seedAccount();
    await connectApp(acc.accountId, "notion", CREDS.notion, newConnectorKey());
    const seen = fakeApps();
    const client = await connect(acc.human);
    const text = await client.fails("search_context", { query: "x" });
    expect(text).toBe(
      `The stored Notion credentials cannot be opened with the current CONNECTOR_KEY (was the key changed?); reconnect the app with \`npm run admin -- connect --account ${acc.accountId} --provider notion --credentials-file FILE\`.`,
    );
    expect(seen).toHaveLength(0);
    await client.close();
  });
});
