import { afterEach, describe, expect, it, vi } from "vitest";
import { connect, seedAccount } from "./helpers.ts";
import { activityFor, connectApp, expectCleanRequests, fakeUpstream, json, NOTION_CREDS, unexpected } from "./connectors-fakes.ts";

afterEach(() => vi.restoreAllMocks());

const API = "https://api.notion.com/v1";
const PAGE = "a1b2c3d4-e5f6-4789-8abc-def012345678";
const PAGE_PLAIN = PAGE.replace(/-/g, "");

const page = (id: string, title: string) => ({
  object: "page",
  id,
  url: `https://www.notion.so/${title.replace(/ /g, "-")}-${id.replace(/-/g, "")}`,
  last_edited_time: "2026-04-01T09:00:00.000Z",
  properties: { Name: { id: "title", type: "title", title: [{ plain_text: title.split(" ")[0] }, { plain_text: " " + title.split(" ").slice(1).join(" ") }] } },
});
const block = (id: string, type: string, text: string, extra: Record<string, unknown> = {}) => ({
  object: "block", id, type, has_children: false, [type]: { rich_text: [{ plain_text: text }], ...extra },
});

async function setup() {
  const acc = await seedAccount();
  const connectorId = await connectApp(acc.accountId, "notion");
  const client = await connect(acc.human);
  return { acc, connectorId, client };
}

function expectNotionHeaders(s: { headers: Record<string, string> }) {
  expect(s.headers.authorization).toBe(`Bearer ${NOTION_CREDS.token}`);
  expect(s.headers["notion-version"]).toBe("2022-06-28");
}

describe("Notion adapter", () => {
  it("searches pages with POST /v1/search", async () => {
    const { acc, client } = await setup();
    const seen = fakeUpstream((s) => (s.path === `${API}/search` ? json({ object: "list", results: [page(PAGE, "Launch plan")], has_more: false }) : unexpected(s)));
    const r = await client.ok("search_context", { query: "launch", providers: ["notion"], limit: 3 });
    expect(r.results).toEqual([
      { ref: `notion:${PAGE}`, provider: "notion", title: "Launch plan", snippet: null, url: `https://www.notion.so/Launch-plan-${PAGE_PLAIN}`, updated_at: "2026-04-01T09:00:00.000Z" },
    ]);
    expect(seen[0].method).toBe("POST");
    expectNotionHeaders(seen[0]);
    expect(seen[0].headers["content-type"]).toBe("application/json");
    expect(JSON.parse(seen[0].body)).toEqual({ query: "launch", page_size: 3, filter: { property: "object", value: "page" } });
    expectCleanRequests(seen, acc);
    await client.close();
  });

  it("reads a page's blocks as text, following start_cursor and nested children", async () => {
    const { acc, client } = await setup();
    const seen = fakeUpstream((s) => {
      if (s.path === `${API}/pages/${PAGE}`) return json(page(PAGE, "Launch plan"));
      if (s.path === `${API}/blocks/${PAGE}/children`) {
        if (!s.query.start_cursor) {
          return json({
            results: [block("b1", "heading_1", "Goals"), { ...block("b2", "toggle", "Details"), has_children: true }, block("b3", "to_do", "Book room", { checked: true })],
            has_more: true,
            next_cursor: "cursor-2",
          });
        }
        return json({ results: [block("b4", "bulleted_list_item", "Ship"), { object: "block", id: "b5", type: "divider", has_children: false, divider: {} }, { object: "block", id: "b6", type: "unsupported", has_children: false }], has_more: false, next_cursor: null });
      }
      if (s.path === `${API}/blocks/b2/children`) return json({ results: [block("b21", "paragraph", "hidden inside")], has_more: false, next_cursor: null });
      return unexpected(s);
    });
    const r = await client.ok("read_context", { ref: `notion:${PAGE_PLAIN}` });
    expect(r).toMatchObject({ ref: `notion:${PAGE_PLAIN}`, title: "Launch plan", url: `https://www.notion.so/Launch-plan-${PAGE_PLAIN}`, truncated: false, next_offset: null });
    expect(r.text).toBe("# Goals\nDetails\n  hidden inside\n[x] Book room\n- Ship\n---");
    expect(seen.map((s) => `${s.method} ${s.path.slice(API.length)} ${new URLSearchParams(s.query)}`)).toEqual([
      `GET /pages/${PAGE} `,
      `GET /blocks/${PAGE}/children page_size=100`,
      "GET /blocks/b2/children page_size=100",
      `GET /blocks/${PAGE}/children page_size=100&start_cursor=cursor-2`,
    ]);
    for (const s of seen) expectNotionHeaders(s);
    expectCleanRequests(seen, acc);
    await client.close();
  });

  it("stops reading once it has enough text, and says the rest is unknown", async () => {
    const { client } = await setup();
    const seen = fakeUpstream((s) => {
      if (s.path === `${API}/pages/${PAGE}`) return json(page(PAGE, "Big page"));
      if (s.path === `${API}/blocks/${PAGE}/children`) {
        return json({ results: Array.from({ length: 100 }, (_, i) => block(`b${i}`, "paragraph", "x".repeat(300))), has_more: true, next_cursor: "more" });
      }
      return unexpected(s);
    });
    const r = await client.ok("read_context", { ref: `notion:${PAGE}`, max_chars: 1000 });
    expect(r).toMatchObject({ truncated: true, original_length: null, next_offset: 1000 });
    expect(r.text).toHaveLength(1000);
    expect(seen).toHaveLength(2);
    await client.close();
  });

  it("creates a page under a parent page given by URL, content split into paragraph blocks", async () => {
    const { acc, connectorId, client } = await setup();
    const seen = fakeUpstream((s) => (s.path === `${API}/pages` && s.method === "POST" ? json({ object: "page", id: "99990000-aaaa-4bbb-8ccc-ddddeeeeffff", url: "https://www.notion.so/Notes-99990000aaaa4bbb8cccddddeeeeffff" }) : unexpected(s)));
    const long = "y".repeat(4500);
    const r = await client.ok("save_context", {
      provider: "notion",
      title: "Notes",
      content: `First paragraph\nsame paragraph\n\n\nSecond\n\n${long}`,
      target: `https://www.notion.so/acme/Parent-page-${PAGE_PLAIN}?pvs=4`,
    });
    expect(r).toEqual({ ref: "notion:99990000-aaaa-4bbb-8ccc-ddddeeeeffff", provider: "notion", title: "Notes", url: "https://www.notion.so/Notes-99990000aaaa4bbb8cccddddeeeeffff" });
    expectNotionHeaders(seen[0]);
    const body = JSON.parse(seen[0].body);
    expect(body.parent).toEqual({ page_id: PAGE });
    expect(body.properties).toEqual({ title: { title: [{ type: "text", text: { content: "Notes" } }] } });
    const texts = body.children.map((b: any) => {
      expect(b).toMatchObject({ object: "block", type: "paragraph" });
      return b.paragraph.rich_text[0].text.content as string;
    });
    expect(texts).toEqual(["First paragraph\nsame paragraph", "Second", "y".repeat(2000), "y".repeat(2000), "y".repeat(500)]);
    expect(await activityFor(acc.accountId, "save_context")).toMatchObject([{ target_id: connectorId }]);
    expect(await client.fails("save_context", { provider: "notion", title: "t", content: "c" })).toMatch(/^target: Notion needs the parent page's id or URL/);
    expect(await client.fails("save_context", { provider: "notion", title: "t", content: "c", target: "not a page" })).toMatch(/^target: Notion/);
    expect(seen).toHaveLength(1);
    await client.close();
  });

  it("maps faults: 401, unshared pages, 429, 5xx, validation errors", async () => {
    const { acc, client } = await setup();
    let answer: () => Response = () => json({});
    fakeUpstream(() => answer());
    const search = () => client.fails("search_context", { query: "x", providers: ["notion"] });
    answer = () => json({ object: "error", status: 401, code: "unauthorized", message: "API token is invalid." }, 401);
    expect(await search()).toBe(
      `Notion rejected the stored credentials (unauthorized); reconnect the app with \`npm run admin -- connect --account ${acc.accountId} --provider notion --credentials-file FILE\`.`,
    );
    answer = () => json({ object: "error", status: 404, code: "object_not_found", message: "Could not find page" }, 404);
    expect(await client.fails("read_context", { ref: `notion:${PAGE}` })).toBe(
      `Notion has no page ${PAGE} shared with the integration; share it (••• › Connections), or use search_context to find refs.`,
    );
    expect(await client.fails("save_context", { provider: "notion", title: "t", content: "c", target: PAGE })).toMatch(/^Notion has no parent page a1b2c3d4-/);
    answer = () => json({ object: "error", status: 429, code: "rate_limited" }, 429, { "retry-after": "2" });
    expect(await search()).toBe("Notion is rate limiting these requests; retry after 2 seconds.");
    answer = () => json({ object: "error", status: 502, code: "bad_gateway" }, 502);
    expect(await search()).toBe("Notion is unavailable (HTTP 502 bad_gateway); try again in a moment.");
    answer = () => json({ object: "error", status: 400, code: "validation_error", message: "body.parent.page_id should be a valid uuid" }, 400);
    expect(await search()).toBe("Notion refused the request (HTTP 400 validation_error: body.parent.page_id should be a valid uuid).");
    await client.close();
  });
});
