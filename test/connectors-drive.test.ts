import { afterEach, describe, expect, it, vi } from "vitest";
import { connect, seedAccount } from "./helpers.ts";
import {
  activityFor, connectApp, connectorRow, DRIVE_CREDS, expectCleanRequests, expectNoSecrets, fakeUpstream, json, unexpected, type Seen,
} from "./connectors-fakes.ts";

afterEach(() => vi.restoreAllMocks());

const TOKEN_URL = "https://oauth2.googleapis.com/token";
const FILES = "https://www.googleapis.com/drive/v3/files";
const UPLOAD = "https://www.googleapis.com/upload/drive/v3/files";
const DOC = "application/vnd.google-apps.document";

/** A Drive that mints `ya29.access-N` tokens and then answers with `api`. */
function fakeDrive(api: (s: Seen) => Response | Promise<Response>) {
  let minted = 0;
  const seen = fakeUpstream((s) => {
    if (s.path === TOKEN_URL) return json({ access_token: `ya29.access-${++minted}`, expires_in: 3599, token_type: "Bearer" });
    return api(s);
  });
  return { seen, minted: () => minted };
}

async function setup() {
  const acc = await seedAccount();
  const connectorId = await connectApp(acc.accountId, "drive");
  const client = await connect(acc.human);
  return { acc, connectorId, client };
}

describe("Google Drive adapter", () => {
  it("refreshes an access token, searches with a full-text query, and reuses the cached token", async () => {
    const { acc, client } = await setup();
    const drive = fakeDrive((s) => {
      if (s.path === FILES && s.method === "GET") {
        return json({ files: [{ id: "1DocAbc_-9", name: "Q3 plan", mimeType: DOC, webViewLink: "https://docs.google.com/document/d/1DocAbc_-9/edit", modifiedTime: "2026-05-01T10:00:00.000Z" }] });
      }
      return unexpected(s);
    });
    const r = await client.ok("search_context", { query: "it's \\ plan", providers: ["drive"], limit: 5 });
    expect(r).toEqual({
      results: [{ ref: "drive:1DocAbc_-9", provider: "drive", title: "Q3 plan", snippet: null, url: "https://docs.google.com/document/d/1DocAbc_-9/edit", updated_at: "2026-05-01T10:00:00.000Z" }],
      errors: [],
      searched: ["drive"],
    });
    const [token, list] = drive.seen;
    expect(token.method).toBe("POST");
    expect(token.url).toBe(TOKEN_URL);
    expect(token.headers["content-type"]).toBe("application/x-www-form-urlencoded");
    expect(Object.fromEntries(new URLSearchParams(token.body))).toEqual({ ...DRIVE_CREDS, grant_type: "refresh_token" });
    expect(token.headers.authorization).toBeUndefined();
    expect(list.method).toBe("GET");
    expect(list.headers.authorization).toBe("Bearer ya29.access-1");
    expect(list.query).toEqual({
      q: "fullText contains 'it\\'s \\\\ plan' and trashed = false",
      pageSize: "5",
      fields: "files(id,name,mimeType,webViewLink,modifiedTime)",
      supportsAllDrives: "true",
      includeItemsFromAllDrives: "true",
    });
    await client.ok("search_context", { query: "plan", providers: ["drive"] });
    expect(drive.minted()).toBe(1);
    expect(drive.seen.filter((s) => s.path === TOKEN_URL)).toHaveLength(1);
    expect(drive.seen.at(-1)?.headers.authorization).toBe("Bearer ya29.access-1");
    expectCleanRequests(drive.seen, acc);
    await client.close();
  });

  it("reads a Google Doc as exported plain text, and cuts long text at max_chars with the original length", async () => {
    const { acc, client } = await setup();
    const long = "\uFEFF" + "a".repeat(19_990) + "0123456789" + "b".repeat(5_000);
    const drive = fakeDrive((s) => {
      if (s.path === `${FILES}/1DocAbc_-9` && s.method === "GET") {
        return json({ id: "1DocAbc_-9", name: "Q3 plan", mimeType: DOC, webViewLink: "https://docs.google.com/document/d/1DocAbc_-9/edit" });
      }
      if (s.path === `${FILES}/1DocAbc_-9/export`) return new Response(long, { headers: { "content-type": "text/plain; charset=utf-8" } });
      return unexpected(s);
    });
    const first = await client.ok("read_context", { ref: "drive:1DocAbc_-9" });
    expect(first).toMatchObject({ ref: "drive:1DocAbc_-9", provider: "drive", title: "Q3 plan", offset: 0, truncated: true, original_length: 25_000, next_offset: 20_000 });
    expect(first.text).toHaveLength(20_000);
    expect(first.text.endsWith("0123456789")).toBe(true);
    const meta = drive.seen.find((s) => s.path === `${FILES}/1DocAbc_-9`)!;
    expect(meta.query).toEqual({ fields: "id,name,mimeType,webViewLink", supportsAllDrives: "true" });
    const exp = drive.seen.find((s) => s.path.endsWith("/export"))!;
    expect(exp.method).toBe("GET");
    expect(exp.query).toEqual({ mimeType: "text/plain" });
    expect(exp.headers.authorization).toBe("Bearer ya29.access-1");

    const rest = await client.ok("read_context", { ref: "drive:1DocAbc_-9", offset: 20_000 });
    expect(rest).toMatchObject({ offset: 20_000, truncated: false, original_length: 25_000, next_offset: null });
    expect(rest.text).toBe("b".repeat(5_000));
    const small = await client.ok("read_context", { ref: "drive:1DocAbc_-9", max_chars: 10 });
    expect(small).toMatchObject({ text: "a".repeat(10), truncated: true, next_offset: 10 });
    expectCleanRequests(drive.seen, acc);
    await client.close();
  });

  it("reads text files with alt=media, exports Sheets as CSV, and refuses binary files without downloading them", async () => {
    const { client } = await setup();
    const drive = fakeDrive((s) => {
      if (s.path === `${FILES}/notes_txt_1`) {
        if (s.query.alt === "media") return new Response("plain notes");
        return json({ id: "notes_txt_1", name: "notes.txt", mimeType: "text/plain" });
      }
      if (s.path === `${FILES}/sheet_0001`) return json({ id: "sheet_0001", name: "Budget", mimeType: "application/vnd.google-apps.spreadsheet" });
      if (s.path === `${FILES}/sheet_0001/export`) return new Response("a,b\n1,2");
      if (s.path === `${FILES}/image_0001`) return json({ id: "image_0001", name: "photo.png", mimeType: "image/png" });
      return unexpected(s);
    });
    expect(await client.ok("read_context", { ref: "drive:notes_txt_1" })).toMatchObject({ text: "plain notes", truncated: false, url: null });
    expect(drive.seen.at(-1)?.query).toEqual({ alt: "media", supportsAllDrives: "true" });
    expect(await client.ok("read_context", { ref: "drive:sheet_0001" })).toMatchObject({ text: "a,b\n1,2" });
    expect(drive.seen.at(-1)?.query).toEqual({ mimeType: "text/csv" });
    const before = drive.seen.length;
    expect(await client.fails("read_context", { ref: "drive:image_0001" })).toMatch(/image\/png file with no text form/);
    expect(drive.seen.length).toBe(before + 1);
    await client.close();
  });

  it("saves a Google Doc with a multipart upload into a folder, records it, and replays an idempotency key without calling Drive", async () => {
    const { acc, connectorId, client } = await setup();
    const drive = fakeDrive((s) => {
      if (s.path === UPLOAD && s.method === "POST") return json({ id: "1NewDoc_77", name: "Notes", webViewLink: "https://docs.google.com/document/d/1NewDoc_77/edit" });
      return unexpected(s);
    });
    const args = { provider: "drive", title: "Notes", content: "line one\nline two ünïcode", target: "folder_0042", idempotency_key: "save-1" };
    const saved = await client.ok("save_context", args);
    expect(saved).toEqual({ ref: "drive:1NewDoc_77", provider: "drive", title: "Notes", url: "https://docs.google.com/document/d/1NewDoc_77/edit" });
    const up = drive.seen.find((s) => s.path === UPLOAD)!;
    expect(up.query).toEqual({ uploadType: "multipart", supportsAllDrives: "true", fields: "id,name,webViewLink" });
    expect(up.headers.authorization).toBe("Bearer ya29.access-1");
    const boundary = /^multipart\/related; boundary=(.+)$/.exec(up.headers["content-type"])![1];
    const parts = up.body.split(`--${boundary}`);
    expect(parts).toHaveLength(4);
    expect(parts[3]).toBe("--");
    const [metaHead, metaJson] = parts[1].split("\r\n\r\n");
    expect(metaHead).toBe("\r\nContent-Type: application/json; charset=UTF-8");
    expect(JSON.parse(metaJson)).toEqual({ name: "Notes", mimeType: DOC, parents: ["folder_0042"] });
    expect(parts[2]).toBe("\r\nContent-Type: text/plain; charset=UTF-8\r\n\r\nline one\nline two ünïcode\r\n");
    const log = await activityFor(acc.accountId, "save_context");
    expect(log).toEqual([{ tool: "save_context", target_id: connectorId, summary: 'saved "Notes" to Google Drive as drive:1NewDoc_77', actor: "human" }]);

    const calls = drive.seen.length;
    expect(await client.ok("save_context", args)).toEqual(saved);
    expect(drive.seen.length).toBe(calls);
    expect(await activityFor(acc.accountId, "save_context")).toHaveLength(1);

    await client.ok("save_context", { provider: "drive", title: "Root doc", content: "x" });
    expect(JSON.parse(drive.seen.at(-1)!.body.split("\r\n\r\n")[1].split("\r\n")[0])).toEqual({ name: "Root doc", mimeType: DOC });
    expect(await client.fails("save_context", { provider: "drive", title: "x", content: "y", target: "no such/folder" })).toMatch(/target: for Drive/);
    expectCleanRequests(drive.seen, acc);
    await client.close();
  });

  it("a revoked refresh token asks to reconnect with the admin command, marks the connector, and a reconnect clears it", async () => {
    const { acc, client } = await setup();
    const seen = fakeUpstream((s) => (s.path === TOKEN_URL ? json({ error: "invalid_grant", error_description: "Token has been expired or revoked." }, 400) : unexpected(s)));
    const text = await client.fails("read_context", { ref: "drive:1DocAbc_-9" });
    expect(text).toContain("Google Drive rejected the stored credentials (token refresh failed: invalid_grant)");
    expect(text).toContain(`npm run admin -- connect --account ${acc.accountId} --provider drive --credentials-file FILE`);
    expectNoSecrets(text);
    const row = await connectorRow(acc.accountId, "drive");
    expect(row).toMatchObject({ status: "auth_failed" });
    expect(row!.last_error).toContain("invalid_grant");
    const listed = await client.ok("list_connectors");
    expect(listed.connectors.find((c: { provider: string }) => c.provider === "drive")).toMatchObject({ status: "auth_failed", last_error: row!.last_error });

    await connectApp(acc.accountId, "drive");
    expect(await connectorRow(acc.accountId, "drive")).toMatchObject({ status: "connected", last_error: null });
    expect(seen).toHaveLength(1);
    await client.close();
  });

  it("a 401 on a cached access token mints a new one and retries once", async () => {
    const { client } = await setup();
    let listCalls = 0;
    const drive = fakeDrive((s) => {
      if (s.path === FILES) {
        listCalls++;
        if (listCalls === 2) return json({ error: { code: 401, message: "Invalid Credentials", status: "UNAUTHENTICATED" } }, 401);
        return json({ files: [] });
      }
      return unexpected(s);
    });
    await client.ok("search_context", { query: "x", providers: ["drive"] });
    await client.ok("search_context", { query: "x", providers: ["drive"] });
    expect(drive.minted()).toBe(2);
    expect(drive.seen.map((s) => `${s.path === TOKEN_URL ? "token" : "list"} ${s.headers.authorization ?? ""}`)).toEqual([
      "token ",
      "list Bearer ya29.access-1",
      "list Bearer ya29.access-1",
      "token ",
      "list Bearer ya29.access-2",
    ]);
    await client.close();
  });

  it("maps faults: 403 rate limit, 429 with Retry-After, 5xx, timeouts, network failures, missing files and folders", async () => {
    const { acc, client } = await setup();
    let answer: () => Response | Promise<Response> = () => json({});
    fakeDrive(() => answer());
    const search = () => client.fails("search_context", { query: "x", providers: ["drive"] });

    answer = () => json({ error: { code: 403, errors: [{ reason: "userRateLimitExceeded" }] } }, 403);
    expect(await search()).toBe("Google Drive is rate limiting these requests; retry after a minute.");
    answer = () => json({ error: { code: 429 } }, 429, { "retry-after": "30" });
    expect(await search()).toBe("Google Drive is rate limiting these requests; retry after 30 seconds.");
    answer = () => new Response("oops", { status: 503 });
    expect(await search()).toBe("Google Drive is unavailable (HTTP 503); try again in a moment.");
    answer = () => Promise.reject(new DOMException("The operation was aborted due to timeout", "TimeoutError"));
    expect(await search()).toBe("Google Drive is unavailable (no answer within 10 s); try again in a moment.");
    answer = () => Promise.reject(new TypeError("Network connection lost."));
    expect(await search()).toBe("Google Drive is unavailable (could not reach it); try again in a moment.");
    answer = () => json({ error: { code: 403, errors: [{ reason: "insufficientPermissions" }] } }, 403);
    expect(await search()).toMatch(/^Google Drive rejected the stored credentials \(HTTP 403: insufficientPermissions\); reconnect the app with `npm run admin -- connect/);
    answer = () => json({ error: { code: 404, message: "File not found: 1Missing00." } }, 404);
    expect(await client.fails("read_context", { ref: "drive:1Missing00" })).toBe(
      "Google Drive has no file 1Missing00 that the connected account can read; search_context finds refs.",
    );
    expect(await client.fails("save_context", { provider: "drive", title: "t", content: "c", target: "folder_gone" })).toMatch(/no folder folder_gone/);
    answer = () => new Response("not json", { status: 200 });
    expect(await search()).toBe("Google Drive is unavailable (it sent an answer that is not JSON); try again in a moment.");
    expect(await activityFor(acc.accountId, "save_context")).toEqual([]);
    await client.close();
  });
});
