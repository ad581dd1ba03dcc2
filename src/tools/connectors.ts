import { z } from "zod";
import { invalid, ToolError } from "../domain/errors.ts";
import { connectorSql } from "../db/connectors.ts";
import { defineTool } from "../catalog/tool.ts";
import { forgetDriveToken } from "../connectors/drive.ts";
import { connectHint, notConnected } from "../connectors/http.ts";
import { connectorRows, connectorSummaries, openConnector, prepare, requireKey, RULES, upstream } from "../connectors/service.ts";
import { importConnectorKey } from "../domain/crypto.ts";
import { PROVIDER_NAMES, PROVIDERS, type Provider } from "../domain/providers.ts";
import { idempotencyKey, LIMITS, longText, title } from "./schemas.ts";
import { DISCONNECTED, SAVED_TO_CONNECTOR } from "../db/summaries.ts";

const provider = z.enum(PROVIDERS).meta({ detail: "drive (Google Drive), slack or notion" });
const providerOut = z.enum(PROVIDERS);
const ref = z.string().describe("a result's ref, e.g. drive:1AbC…");
const providerName = (p: Provider) => PROVIDER_NAMES[p];

const listConnectors = defineTool({
  name: "list_connectors",
  description: "The apps this account can connect (Drive, Slack, Notion): connected, working, last error. No credentials.",
  input: z.strictObject({}),
  output: z.object({
    connectors: z.array(
      z.object({
        provider: providerOut,
        name: z.string(),
        status: z.enum(["connected", "auth_failed", "not_connected"]).describe("auth_failed: the app rejected the stored credentials; reconnect"),
        id: z.string().nullable(),
        last_error: z.string().nullable(),
        connected_at: z.string().nullable(),
        updated_at: z.string().nullable(),
        connect_with: z.string().describe("the admin command that connects or reconnects it"),
      }),
    ),
    setup_error: z.string().nullable().describe("null when connectors can work; otherwise what the operator must fix"),
  }),
  async handler(ctx) {
    const a = ctx.principal.accountId;
    const rows = await connectorSummaries(ctx.db, a);
    const setupError = await importConnectorKey(ctx.env.CONNECTOR_KEY).then(
      () => null,
      (e: Error) => e.message,
    );
    return {
      connectors: PROVIDERS.map((p) => {
        const r = rows.find((x) => x.provider === p);
        return {
          provider: p,
          name: providerName(p),
          status: r ? (r.status === "connected" ? "connected" : "auth_failed") : "not_connected",
          id: r?.id ?? null,
          last_error: r?.last_error ?? null,
          connected_at: r?.created_at ?? null,
          updated_at: r?.updated_at ?? null,
          connect_with: connectHint(p, a),
        } as const;
      }),
      setup_error: setupError,
    };
  },
});

const hit = z.object({
  ref,
  provider: providerOut,
  title: z.string(),
  snippet: z.string().nullable(),
  url: z.string().nullable(),
  updated_at: z.string().nullable(),
});

const searchContext = defineTool({
  name: "search_context",
  description: "Search the connected apps side by side. Returns results (ref for read_context, title, snippet, url) and errors.",
  input: z.strictObject({
    query: z.string().trim().min(1, "must not be empty").max(500),
    providers: z.array(z.enum(PROVIDERS)).min(1).max(3).optional().meta({ detail: "only these apps" }),
    limit: z.number().int().min(1).max(50).default(10).describe("results per app, ≤ 50"),
  }),
  output: z.object({
    results: z.array(hit),
    errors: z.array(z.object({ provider: providerOut, error: z.string() })),
    searched: z.array(providerOut),
  }),
  async handler(ctx, args) {
    const a = ctx.principal.accountId;
    const rows = await connectorRows(ctx.db, a);
    const wanted: Provider[] = args.providers ? [...new Set(args.providers)] : rows.map((r) => r.provider);
    if (wanted.length === 0) {
      throw new ToolError(
        "not_connected",
        `No app is connected to this account; the operator connects one with \`npm run admin -- connect --account ${a} --provider drive|slack|notion --credentials-file FILE\`.`,
      );
    }
    if (wanted.length === 1 && !rows.some((r) => r.provider === wanted[0])) throw notConnected(wanted[0], a);
    const key = await requireKey(ctx.env);
    const settled = await Promise.allSettled(
      wanted.map(async (p) => {
        const row = rows.find((r) => r.provider === p);
        if (!row) throw notConnected(p, a);
        const open = await openConnector(key, row);
        return upstream(ctx.db, open, (c) => c.search(args.query, args.limit));
      }),
    );
    const results: z.infer<typeof hit>[] = [];
    const errors: { provider: Provider; error: string }[] = [];
    settled.forEach((s, i) => {
      const p = wanted[i];
      if (s.status === "fulfilled") {
        for (const h of s.value) results.push({ ref: `${p}:${h.id}`, provider: p, title: h.title, snippet: h.snippet, url: h.url, updated_at: h.updatedAt });
      } else if (s.reason instanceof ToolError) {
        errors.push({ provider: p, error: s.reason.message });
      } else {
        console.error(JSON.stringify({ level: "error", tool: "search_context", provider: p, error: String(s.reason) }));
        errors.push({ provider: p, error: `${providerName(p)} search failed unexpectedly; try again.` });
      }
    });
    if (errors.length === wanted.length) {
      const first = settled.find((s) => s.status === "rejected" && s.reason instanceof ToolError) as PromiseRejectedResult | undefined;
      throw new ToolError(first ? (first.reason as ToolError).code : "upstream", errors.map((e) => e.error).join(" "));
    }
    return { results, errors, searched: wanted };
  },
});

const readContext = defineTool({
  name: "read_context",
  description: "Read a document, page or thread of a connected app as text, max_chars from offset. Returns text and next_offset.",
  input: z.strictObject({
    ref: ref.min(3).max(300),
    offset: z.number().int().min(0).max(1_000_000).default(0).meta({ detail: "characters to skip (next_offset of a previous read)" }),
    max_chars: z.number().int().min(1).max(LIMITS.text).default(LIMITS.text),
  }),
  output: z.object({
    ref: z.string(),
    provider: providerOut,
    title: z.string(),
    url: z.string().nullable(),
    text: z.string(),
    offset: z.number(),
    truncated: z.boolean().describe("true: there is more text after this part"),
    original_length: z.number().nullable().describe("the whole text's length in characters, when known"),
    next_offset: z.number().nullable().describe("pass as offset to read on; null at the end"),
  }),
  async handler(ctx, args) {
    const a = ctx.principal.accountId;
    const m = /^(drive|slack|notion):(.+)$/.exec(args.ref.trim());
    if (!m) throw invalid("ref: expected provider:id as search_context returns it, e.g. drive:1AbC…, slack:C0123ABCD/1712345678.000100 or notion:<page id>.");
    const p = m[1] as Provider;
    const id = m[2];
    const idError = RULES[p].checkId(id);
    if (idError) throw invalid(`ref: ${idError}.`);
    const row = (await connectorRows(ctx.db, a)).find((r) => r.provider === p);
    if (!row) throw notConnected(p, a);
    const open = await openConnector(await requireKey(ctx.env), row);
    const end = args.offset + args.max_chars;
    const doc = await upstream(ctx.db, open, (c) => c.read(id, end + 1));
    const text = doc.text.slice(args.offset, end);
    const truncated = !doc.complete || doc.text.length > end;
    return {
      ref: `${p}:${id}`,
      provider: p,
      title: doc.title,
      url: doc.url,
      text,
      offset: args.offset,
      truncated,
      original_length: doc.complete ? doc.text.length : doc.length,
      next_offset: truncated && text.length > 0 ? args.offset + text.length : null,
    };
  },
});

const saveContext = defineTool({
  name: "save_context",
  description: "Save a note to a connected app: a Drive doc, a Slack message or a Notion page. Returns ref and url.",
  input: z.strictObject({
    provider,
    title,
    content: longText.min(1, "must not be empty"),
    target: z
      .string()
      .trim()
      .min(1)
      .max(300)
      .optional()
      .describe("Slack channel or Notion parent page (required); Drive folder (default: My Drive)"),
    idempotency_key: idempotencyKey,
  }),
  output: z.object({ ref: z.string(), provider: providerOut, title: z.string(), url: z.string().nullable() }),
  async handler(ctx, args) {
    const a = ctx.principal.accountId;
    const p = args.provider;
    const checked = RULES[p].checkTarget(args.target);
    if ("error" in checked) throw invalid(`${checked.error}.`);
    const row = (await connectorRows(ctx.db, a)).find((r) => r.provider === p);
    if (!row) throw notConnected(p, a);
    const open = await openConnector(await requireKey(ctx.env), row);
    const saved = await upstream(ctx.db, open, (c) => c.save(args.title, args.content, checked.target));
    const result = { ref: `${p}:${saved.id}`, provider: p, title: args.title, url: saved.url };
    return ctx.commit(
      { statements: [], activity: { target: row.id, summary: SAVED_TO_CONNECTOR.text({ title: args.title, provider: providerName(p), ref: result.ref }) } },
      result,
    );
  },
});

const disconnectConnector = defineTool({
  name: "disconnect_connector",
  description: "Disconnect an app, deleting its stored credentials. Returns removed.",
  input: z.strictObject({ provider }),
  output: z.object({ provider: providerOut, id: z.string().nullable(), removed: z.boolean() }),
  async handler(ctx, { provider: p }) {
    const a = ctx.principal.accountId;
    const row = (await connectorSummaries(ctx.db, a)).find((r) => r.provider === p);
    if (!row) return { provider: p, id: null, removed: false };
    forgetDriveToken(row.id);
    return ctx.commit(
      {
        statements: [prepare(ctx.db, connectorSql.remove(a, row.id))],
        activity: { target: row.id, summary: DISCONNECTED.text({ provider: providerName(p) }) },
      },
      { provider: p, id: row.id, removed: true },
    );
  },
});

export const connectorTools = [listConnectors, searchContext, readContext, saveContext, disconnectConnector];
