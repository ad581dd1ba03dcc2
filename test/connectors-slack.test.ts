import { afterEach, describe, expect, it, vi } from "vitest";
import { connect, seedAccount } from "./helpers.ts";
import { activityFor, connectApp, connectorRow, expectCleanRequests, expectNoSecrets, fakeUpstream, json, SLACK_CREDS, unexpected } from "./connectors-fakes.ts";

afterEach(() => vi.restoreAllMocks());

const API = "https://slack.com/api";
const AUTH = `Bearer ${SLACK_CREDS.token}`;

async function setup() {
  const acc = await seedAccount();
  const connectorId = await connectApp(acc.accountId, "slack");
  const client = await connect(acc.agent);
  return { acc, connectorId, client };
}

describe("Slack adapter", () => {
  it("searches messages with the user token and points replies at their thread", async () => {
    const { acc, client } = await setup();
    const seen = fakeUpstream((s) => {
      if (s.path === `${API}/search.messages`) {
        return json({
          ok: true,
          messages: {
            matches: [
              { ts: "1712345678.000100", text: "ship it &amp; celebrate &lt;3", username: "alice", channel: { id: "C0123ABCD", name: "launch" }, permalink: "https://acme.slack.com/archives/C0123ABCD/p1712345678000100" },
              { ts: "1712345999.000200", text: "a reply", user: "U042", channel: { id: "C0123ABCD", name: "launch" }, permalink: "https://acme.slack.com/archives/C0123ABCD/p1712345999000200?thread_ts=1712345678.000100&cid=C0123ABCD" },
            ],
            paging: { count: 10, total: 2 },
          },
        });
      }
      return unexpected(s);
    });
    const r = await client.ok("search_context", { query: "ship it", providers: ["slack"] });
    expect(r.results).toEqual([
      { ref: "slack:C0123ABCD/1712345678.000100", provider: "slack", title: "#launch — alice", snippet: "ship it & celebrate <3", url: "https://acme.slack.com/archives/C0123ABCD/p1712345678000100", updated_at: "2024-04-05T19:34:38.000Z" },
      { ref: "slack:C0123ABCD/1712345678.000100", provider: "slack", title: "#launch — U042", snippet: "a reply", url: "https://acme.slack.com/archives/C0123ABCD/p1712345999000200?thread_ts=1712345678.000100&cid=C0123ABCD", updated_at: "2024-04-05T19:39:59.000Z" },
    ]);
    expect(seen).toHaveLength(1);
    expect(seen[0].method).toBe("GET");
    expect(seen[0].headers.authorization).toBe(AUTH);
    expect(seen[0].query).toEqual({ query: "ship it", count: "10", highlight: "false", sort: "score" });
    expectCleanRequests(seen, acc);
    await client.close();
  });

  it("reads a whole thread page by page with conversations.replies, plus its permalink", async () => {
    const { acc, client } = await setup();
    const seen = fakeUpstream((s) => {
      if (s.path === `${API}/conversations.replies`) {
        if (!s.query.cursor) {
          return json({ ok: true, messages: [{ ts: "1712345678.000100", user: "U1", text: "Launch plan &gt; draft" }], has_more: true, response_metadata: { next_cursor: "bmV4dA==" } });
        }
        return json({ ok: true, messages: [{ ts: "1712345700.000100", username: "deploybot", text: "done" }], has_more: false, response_metadata: { next_cursor: "" } });
      }
      if (s.path === `${API}/chat.getPermalink`) return json({ ok: true, channel: "C0123ABCD", permalink: "https://acme.slack.com/archives/C0123ABCD/p1712345678000100" });
      return unexpected(s);
    });
    const r = await client.ok("read_context", { ref: "slack:C0123ABCD/1712345678.000100" });
    expect(r).toEqual({
      ref: "slack:C0123ABCD/1712345678.000100",
      provider: "slack",
      title: "Launch plan > draft",
      url: "https://acme.slack.com/archives/C0123ABCD/p1712345678000100",
      text: "[2024-04-05T19:34:38.000Z] U1: Launch plan > draft\n[2024-04-05T19:35:00.000Z] deploybot: done",
      offset: 0,
      truncated: false,
      original_length: 93,
      next_offset: null,
    });
    const replies = seen.filter((s) => s.path === `${API}/conversations.replies`);
    expect(replies.map((s) => s.query)).toEqual([
      { channel: "C0123ABCD", ts: "1712345678.000100", limit: "200" },
      { channel: "C0123ABCD", ts: "1712345678.000100", limit: "200", cursor: "bmV4dA==" },
    ]);
    expect(seen.find((s) => s.path.endsWith("chat.getPermalink"))!.query).toEqual({ channel: "C0123ABCD", message_ts: "1712345678.000100" });
    for (const s of seen) expect(s.headers.authorization).toBe(AUTH);
    expectCleanRequests(seen, acc);
    await client.close();
  });

  it("posts a message to a channel with chat.postMessage and returns its permalink; a channel is required", async () => {
    const { acc, connectorId, client } = await setup();
    const seen = fakeUpstream((s) => {
      if (s.path === `${API}/chat.postMessage`) return json({ ok: true, channel: "C0123ABCD", ts: "1712349999.000300", message: {} });
      if (s.path === `${API}/chat.getPermalink`) return json({ ok: true, permalink: "https://acme.slack.com/archives/C0123ABCD/p1712349999000300" });
      return unexpected(s);
    });
    expect(await client.fails("save_context", { provider: "slack", title: "Summary", content: "x" })).toMatch(/^target: Slack needs the id of a channel/);
    expect(seen).toHaveLength(0);
    const r = await client.ok("save_context", { provider: "slack", title: "Summary <v2>", content: "A & B", target: "C0123ABCD" });
    expect(r).toEqual({ ref: "slack:C0123ABCD/1712349999.000300", provider: "slack", title: "Summary <v2>", url: "https://acme.slack.com/archives/C0123ABCD/p1712349999000300" });
    const post = seen[0];
    expect(post.method).toBe("POST");
    expect(post.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(post.headers.authorization).toBe(AUTH);
    expect(JSON.parse(post.body)).toEqual({ channel: "C0123ABCD", text: "*Summary &lt;v2&gt;*\nA &amp; B" });
    expect(await activityFor(acc.accountId, "save_context")).toEqual([
      { tool: "save_context", target_id: connectorId, summary: 'saved "Summary <v2>" to Slack as slack:C0123ABCD/1712349999.000300', actor: acc.agentName },
    ]);
    expectCleanRequests(seen, acc);
    await client.close();
  });

  it("a posted message whose permalink lookup fails still succeeds, without a url", async () => {
    const { client } = await setup();
    fakeUpstream((s) => {
      if (s.path === `${API}/chat.postMessage`) return json({ ok: true, channel: "C0123ABCD", ts: "1712349999.000300" });
      return new Response("bad gateway", { status: 502 });
    });
    expect(await client.ok("save_context", { provider: "slack", title: "t", content: "c", target: "C0123ABCD" })).toMatchObject({ url: null, ref: "slack:C0123ABCD/1712349999.000300" });
    await client.close();
  });

  it("maps Slack's ok:false errors and HTTP faults to what to do next", async () => {
    const { acc, client } = await setup();
    let answer: () => Response | Promise<Response> = () => json({ ok: true });
    fakeUpstream(() => answer());
    const search = () => client.fails("search_context", { query: "x", providers: ["slack"] });
    const reconnect = `reconnect the app with \`npm run admin -- connect --account ${acc.accountId} --provider slack --credentials-file FILE\`.`;

    answer = () => json({ ok: false, error: "missing_scope", needed: "search:read", provided: "chat:write" });
    expect(await search()).toBe(`Slack rejected the stored credentials (missing_scope: the token needs search:read); ${reconnect}`);
    answer = () => json({ ok: false, error: "ratelimited" }, 429, { "retry-after": "12" });
    expect(await search()).toBe("Slack is rate limiting these requests; retry after 12 seconds.");
    answer = () => json({ ok: false, error: "fatal_error" });
    expect(await search()).toBe("Slack is unavailable (fatal_error); try again in a moment.");
    answer = () => new Response("", { status: 500 });
    expect(await search()).toBe("Slack is unavailable (HTTP 500); try again in a moment.");
    answer = () => Promise.reject(new DOMException("timed out", "TimeoutError"));
    expect(await search()).toBe("Slack is unavailable (no answer within 10 s); try again in a moment.");
    answer = () => json({ ok: false, error: "channel_not_found" });
    expect(await client.fails("save_context", { provider: "slack", title: "t", content: "c", target: "C0NOPE000" })).toBe(
      "Slack has no channel C0NOPE000 that the connected user can see; check the channel id.",
    );
    answer = () => json({ ok: false, error: "thread_not_found" });
    expect(await client.fails("read_context", { ref: "slack:C0123ABCD/1712345678.000100" })).toBe(
      "Slack has no message slack:C0123ABCD/1712345678.000100; search_context finds refs.",
    );
    expect(await connectorRow(acc.accountId, "slack")).toMatchObject({ status: "auth_failed" });

    answer = () => json({ ok: false, error: "invalid_auth" });
    const text = await search();
    expect(text).toBe(`Slack rejected the stored credentials (invalid_auth); ${reconnect}`);
    expectNoSecrets(text);
    expect((await connectorRow(acc.accountId, "slack"))!.last_error).toBe(text);

    answer = () => json({ ok: true, messages: { matches: [] } });
    await client.ok("search_context", { query: "x", providers: ["slack"] });
    expect(await connectorRow(acc.accountId, "slack")).toMatchObject({ status: "connected", last_error: null });
    expect(await client.fails("read_context", { ref: "slack:general/123" })).toMatch(/^ref: a Slack ref looks like slack:C0123ABCD\/1712345678.000100/);
    await client.close();
  });
});
