/**
 * Slack Web API with a user token (search.messages needs one). Slack answers
 * most errors with HTTP 200 and `ok: false`; rate limits come as HTTP 429 with
 * Retry-After. A ref is `slack:<channel>/<thread ts>`.
 */
import { ToolError } from "../domain/errors.ts";
import { clip, rateLimited, readJson, rejected, send, statusFault, unavailable, upstreamError } from "./http.ts";
import type { ConnectionInfo, Connector, IdRules, ReadResult, SaveResult, SearchHit } from "./types.ts";

export const SLACK_API = "https://slack.com/api";

const CHANNEL = /^[CGD][A-Z0-9]{2,30}$/;
const REF = /^([CGD][A-Z0-9]{2,30})\/(\d{6,12}\.\d{1,8})$/;
const MAX_PAGES = 10;

export const slackRules: IdRules = {
  checkId: (id) => (REF.test(id) ? null : "a Slack ref looks like slack:C0123ABCD/1712345678.000100 (channel id / message ts, from search_context)"),
  checkTarget(target) {
    if (target && CHANNEL.test(target)) return { target };
    return { error: "target: Slack needs the id of a channel to post to, like C0123ABCD (the channel's details show it)" };
  },
};

const AUTH_ERRORS = new Set([
  "invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired", "no_permission",
  "org_login_required", "ekm_access_denied", "two_factor_setup_required",
]);
const TRANSIENT_ERRORS = new Set(["fatal_error", "internal_error", "service_unavailable", "request_timeout"]);

interface SlackAnswer {
  ok: boolean;
  error?: string;
  needed?: string;
}

interface SlackMessage {
  ts: string;
  text?: string;
  user?: string;
  username?: string;
  bot_id?: string;
  permalink?: string;
  channel?: { id?: string; name?: string };
}

function tsToIso(ts: string): string | null {
  const ms = Math.round(Number(ts) * 1000);
  return Number.isFinite(ms) && ms > 0 ? new Date(ms).toISOString() : null;
}

/** Slack's three escaped characters, back to text. */
function unescapeText(text: string): string {
  return text.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}

function escapeText(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** A reply's permalink names its thread; the ref points at the whole thread. */
function threadOf(permalink: string | undefined): string | null {
  const m = permalink ? /[?&]thread_ts=(\d+\.\d+)/.exec(permalink) : null;
  return m ? m[1] : null;
}

function author(m: SlackMessage): string {
  return m.username || m.user || m.bot_id || "unknown";
}

export function slackConnector(token: string, info: ConnectionInfo): Connector {
  function fault(res: Response, answer: SlackAnswer, about: { channel?: string; ref?: string }): ToolError {
    const code = answer.error ?? "unknown_error";
    if (AUTH_ERRORS.has(code)) return rejected("slack", info.accountId, code);
    if (code === "missing_scope") return rejected("slack", info.accountId, `missing_scope: the token needs ${clip(answer.needed, 80) || "more scopes"}`);
    if (code === "not_allowed_token_type") return rejected("slack", info.accountId, "not_allowed_token_type: search needs a user token (xoxp-…)");
    if (code === "ratelimited") return rateLimited("slack", res.headers.get("retry-after"));
    if (TRANSIENT_ERRORS.has(code)) return unavailable("slack", code);
    if (code === "channel_not_found") {
      return new ToolError("not_found", `Slack has no channel ${about.channel ?? ""} that the connected user can see; check the channel id.`);
    }
    if ((code === "thread_not_found" || code === "message_not_found") && about.ref) {
      return new ToolError("not_found", `Slack has no message slack:${about.ref}; search_context finds refs.`);
    }
    if (code === "not_in_channel") return upstreamError("slack", `not_in_channel: the connected user must join ${about.channel ?? "the channel"} first`);
    return upstreamError("slack", clip(code, 80));
  }

  async function call<T extends SlackAnswer>(
    method: string,
    params: Record<string, string>,
    about: { channel?: string; ref?: string } = {},
    post = false,
  ): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    let url = `${SLACK_API}/${method}`;
    const init: RequestInit = { method: post ? "POST" : "GET", headers };
    if (post) {
      headers["content-type"] = "application/json; charset=utf-8";
      init.body = JSON.stringify(params);
    } else {
      url += `?${new URLSearchParams(params)}`;
    }
    const res = await send("slack", url, init);
    if (!res.ok) throw statusFault("slack", info.accountId, res, "");
    const answer = await readJson<T>("slack", res);
    if (!answer || answer.ok !== true) throw fault(res, answer ?? { ok: false }, about);
    return answer;
  }

  async function permalink(channel: string, ts: string): Promise<string | null> {
    try {
      const r = await call<SlackAnswer & { permalink?: string }>("chat.getPermalink", { channel, message_ts: ts }, { channel });
      return r.permalink ?? null;
    } catch {
      return null;
    }
  }

  return {
    async search(query: string, limit: number): Promise<SearchHit[]> {
      const r = await call<SlackAnswer & { messages?: { matches?: SlackMessage[] } }>("search.messages", {
        query,
        count: String(limit),
        highlight: "false",
        sort: "score",
      });
      return (r.messages?.matches ?? []).slice(0, limit).flatMap((m) => {
        const channel = m.channel?.id;
        if (!channel || !m.ts) return [];
        const ts = threadOf(m.permalink) ?? m.ts;
        return [{
          id: `${channel}/${ts}`,
          title: `${m.channel?.name ? `#${m.channel.name}` : channel} — ${author(m)}`,
          snippet: clip(unescapeText(m.text ?? ""), 300),
          url: m.permalink ?? null,
          updatedAt: tsToIso(m.ts),
        }];
      });
    },

    async read(id: string, wantChars: number): Promise<ReadResult> {
      const [, channel, ts] = REF.exec(id) as RegExpExecArray;
      const lines: string[] = [];
      let length = 0;
      let cursor: string | undefined;
      let complete = true;
      let firstText = "";
      for (let page = 0; ; page++) {
        if (page === MAX_PAGES || length >= wantChars) {
          complete = false;
          break;
        }
        const r = await call<SlackAnswer & { messages?: SlackMessage[]; has_more?: boolean; response_metadata?: { next_cursor?: string } }>(
          "conversations.replies",
          { channel, ts, limit: "200", ...(cursor ? { cursor } : {}) },
          { channel, ref: id },
        );
        for (const m of r.messages ?? []) {
          const text = unescapeText(m.text ?? "");
          if (!firstText) firstText = text;
          const line = `[${tsToIso(m.ts) ?? m.ts}] ${author(m)}: ${text}`;
          lines.push(line);
          length += line.length + 1;
        }
        cursor = r.has_more ? r.response_metadata?.next_cursor || undefined : undefined;
        if (!cursor) break;
      }
      const text = lines.join("\n");
      return {
        title: clip(firstText, 80) || `Slack thread ${id}`,
        url: await permalink(channel, ts),
        text,
        complete,
        length: complete ? text.length : null,
      };
    },

    async save(title: string, content: string, target: string | undefined): Promise<SaveResult> {
      const channel = target as string;
      const r = await call<SlackAnswer & { channel?: string; ts?: string }>(
        "chat.postMessage",
        { channel, text: `*${escapeText(title)}*\n${escapeText(content)}` },
        { channel },
        true,
      );
      if (!r.ts) throw unavailable("slack", "it did not return the message's ts");
      const posted = r.channel ?? channel;
      return { id: `${posted}/${r.ts}`, url: await permalink(posted, r.ts) };
    },
  };
}
