/**
 * Notion REST API with an internal integration token; the integration sees
 * only the pages shared with it. Pages are read as their blocks, flattened to
 * text (nested blocks indented), cursor by cursor within a request budget.
 */
import { ToolError } from "../domain/errors.ts";
import { clip, errorBody, rateLimited, readJson, rejected, send, unavailable, upstreamError } from "./http.ts";
import type { ConnectionInfo, Connector, IdRules, ReadResult, SaveResult, SearchHit } from "./types.ts";

export const NOTION_API = "https://api.notion.com/v1";
export const NOTION_VERSION = "2022-06-28";

/** Upstream calls one read may make (page + block pages), and how deep it follows nested blocks. */
const MAX_REQUESTS = 25;
const MAX_DEPTH = 3;
const RICH_TEXT_MAX = 2000;
const CHILDREN_MAX = 100;

const HEX32 = /^[0-9a-f]{32}$/;

/** A page id from an id (with or without dashes) or a notion.so URL, dashed; null if there is none. */
export function notionId(text: string): string | null {
  const plain = text.trim().toLowerCase();
  const candidate = HEX32.test(plain.replace(/-/g, "")) ? plain.replace(/-/g, "") : /([0-9a-f]{32})(?:[?#].*)?$/.exec(plain)?.[1];
  if (!candidate) return null;
  return `${candidate.slice(0, 8)}-${candidate.slice(8, 12)}-${candidate.slice(12, 16)}-${candidate.slice(16, 20)}-${candidate.slice(20)}`;
}

export const notionRules: IdRules = {
  checkId: (id) => (HEX32.test(id.toLowerCase().replace(/-/g, "")) ? null : "a Notion ref looks like notion:<32 hex digits, dashes optional> (the page id from search_context)"),
  checkTarget(target) {
    const id = target ? notionId(target) : null;
    return id ? { target: id } : { error: "target: Notion needs the parent page's id or URL (a page shared with the integration)" };
  },
};

interface RichText {
  plain_text?: string;
}

interface NotionPage {
  id: string;
  url?: string;
  last_edited_time?: string;
  properties?: Record<string, { type?: string; title?: RichText[] }>;
}

interface NotionBlock {
  id: string;
  type: string;
  has_children?: boolean;
  [key: string]: unknown;
}

function plain(rich: RichText[] | undefined): string {
  return (rich ?? []).map((r) => r.plain_text ?? "").join("");
}

function titleOf(page: NotionPage): string {
  for (const prop of Object.values(page.properties ?? {})) {
    if (prop?.type === "title") return plain(prop.title) || "(untitled)";
  }
  return "(untitled)";
}

const PREFIX: Record<string, string> = {
  heading_1: "# ", heading_2: "## ", heading_3: "### ", bulleted_list_item: "- ", numbered_list_item: "1. ", quote: "> ", callout: "> ",
};
const FOLLOW = new Set(["paragraph", "bulleted_list_item", "numbered_list_item", "to_do", "toggle", "quote", "callout", "column_list", "column", "synced_block", "heading_1", "heading_2", "heading_3"]);

/** One block as a line of text, or null for blocks with no text form. */
function blockText(b: NotionBlock, depth: number): string | null {
  const data = (b[b.type] ?? {}) as { rich_text?: RichText[]; caption?: RichText[]; checked?: boolean; language?: string; title?: string; url?: string };
  const indent = "  ".repeat(depth);
  switch (b.type) {
    case "paragraph": case "heading_1": case "heading_2": case "heading_3": case "bulleted_list_item":
    case "numbered_list_item": case "quote": case "callout": case "toggle":
      return indent + (PREFIX[b.type] ?? "") + plain(data.rich_text);
    case "to_do":
      return `${indent}[${data.checked ? "x" : " "}] ${plain(data.rich_text)}`;
    case "code":
      return `${indent}\`\`\`${data.language ?? ""}\n${plain(data.rich_text)}\n${indent}\`\`\``;
    case "divider":
      return `${indent}---`;
    case "child_page":
      return `${indent}[page: ${data.title ?? ""}]`;
    case "child_database":
      return `${indent}[database: ${data.title ?? ""}]`;
    case "bookmark": case "embed": case "link_preview":
      return `${indent}${data.url ?? ""}`;
    case "image": case "video": case "file": case "pdf": case "audio":
      return `${indent}[${b.type}${data.caption?.length ? `: ${plain(data.caption)}` : ""}]`;
    default:
      return null;
  }
}

/** The content as paragraph blocks: one per paragraph, each within Notion's 2,000-character rich text limit. */
export function paragraphs(content: string): unknown[] {
  const chunk = (text: string): string[] => {
    const out: string[] = [];
    let rest = text;
    while (rest.length > RICH_TEXT_MAX) {
      const cut = rest.lastIndexOf("\n", RICH_TEXT_MAX);
      const at = cut > RICH_TEXT_MAX / 2 ? cut : RICH_TEXT_MAX;
      out.push(rest.slice(0, at));
      rest = rest.slice(at).replace(/^\n/, "");
    }
    if (rest) out.push(rest);
    return out;
  };
  let pieces = content.split(/\n{2,}/).filter((p) => p.trim()).flatMap(chunk);
  if (pieces.length > CHILDREN_MAX) pieces = chunk(pieces.join("\n\n"));
  return pieces.map((text) => ({ object: "block", type: "paragraph", paragraph: { rich_text: [{ type: "text", text: { content: text } }] } }));
}

export function notionConnector(token: string, info: ConnectionInfo): Connector {
  async function fault(res: Response, about: { page?: string; parent?: string }): Promise<ToolError> {
    const body = await errorBody<{ code?: string; message?: string }>(res);
    const code = body?.code ?? "";
    if (res.status === 401) return rejected("notion", info.accountId, clip(code, 60) || "HTTP 401");
    if (res.status === 403) {
      return rejected("notion", info.accountId, `${clip(code, 60) || "HTTP 403"}: the integration lacks a capability or access; share the page with it (••• › Connections) or reconnect with a token whose integration can read and insert content`);
    }
    if (res.status === 404) {
      const what = about.parent ? `parent page ${about.parent}` : `page ${about.page ?? ""}`;
      return new ToolError("not_found", `Notion has no ${what} shared with the integration; share it (••• › Connections), or use search_context to find refs.`);
    }
    if (res.status === 429) return rateLimited("notion", res.headers.get("retry-after"));
    if (res.status === 409 || res.status >= 500) return unavailable("notion", `HTTP ${res.status}${code ? ` ${clip(code, 60)}` : ""}`);
    return upstreamError("notion", `HTTP ${res.status}${code ? ` ${clip(code, 60)}` : ""}${body?.message ? `: ${clip(body.message)}` : ""}`);
  }

  async function call<T>(path: string, init: { method: "GET" | "POST"; body?: unknown }, about: { page?: string; parent?: string } = {}): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, "notion-version": NOTION_VERSION };
    if (init.body !== undefined) headers["content-type"] = "application/json";
    const res = await send("notion", `${NOTION_API}${path}`, {
      method: init.method,
      headers,
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    if (!res.ok) throw await fault(res, about);
    return readJson<T>("notion", res);
  }

  return {
    async search(query: string, limit: number): Promise<SearchHit[]> {
      const r = await call<{ results?: NotionPage[] }>("/search", {
        method: "POST",
        body: { query, page_size: limit, filter: { property: "object", value: "page" } },
      });
      return (r.results ?? []).slice(0, limit).map((p) => ({
        id: p.id,
        title: titleOf(p),
        snippet: null,
        url: p.url ?? null,
        updatedAt: p.last_edited_time ?? null,
      }));
    },

    async read(id: string, wantChars: number): Promise<ReadResult> {
      const pageId = notionId(id) as string;
      const page = await call<NotionPage>(`/pages/${pageId}`, { method: "GET" }, { page: id });
      const lines: string[] = [];
      let length = 0;
      let requests = 1;
      let complete = true;

      /** Appends a block's children; true when reading must stop (enough text, or the budget is spent). */
      const walk = async (blockId: string, depth: number): Promise<boolean> => {
        let cursor: string | undefined;
        do {
          if (requests >= MAX_REQUESTS) {
            complete = false;
            return true;
          }
          requests++;
          const params = new URLSearchParams({ page_size: "100", ...(cursor ? { start_cursor: cursor } : {}) });
          const r = await call<{ results?: NotionBlock[]; has_more?: boolean; next_cursor?: string | null }>(
            `/blocks/${blockId}/children?${params}`,
            { method: "GET" },
            { page: id },
          );
          for (const b of r.results ?? []) {
            const line = blockText(b, depth);
            if (line !== null) {
              lines.push(line);
              length += line.length + 1;
            }
            if (length >= wantChars) {
              complete = false;
              return true;
            }
            if (b.has_children && depth < MAX_DEPTH && FOLLOW.has(b.type) && (await walk(b.id, depth + 1))) return true;
          }
          cursor = r.has_more && r.next_cursor ? r.next_cursor : undefined;
        } while (cursor);
        return false;
      };
      await walk(pageId, 0);
      const text = lines.join("\n");
      return { title: titleOf(page), url: page.url ?? null, text, complete, length: complete ? text.length : null };
    },

    async save(title: string, content: string, target: string | undefined): Promise<SaveResult> {
      const parent = target as string;
      const r = await call<{ id?: string; url?: string }>(
        "/pages",
        {
          method: "POST",
          body: {
            parent: { page_id: parent },
            properties: { title: { title: [{ type: "text", text: { content: title } }] } },
            children: paragraphs(content),
          },
        },
        { parent },
      );
      if (!r.id) throw unavailable("notion", "it did not return the new page's id");
      return { id: r.id, url: r.url ?? null };
    },
  };
}
