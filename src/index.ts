/**
 * The Worker. The edge (this Hono app) gives every request an id and D1
 * metering, answers the probes, and guards /mcp (methods, body size, Origin,
 * tokens in the URL) before anything reads a token. A call of a `tg_` token
 * that resolves goes straight to /mcp's handler (serveTokenCall, src/http/token-lane.ts). Everything
 * else goes to the OAuth provider of the request's origin, which serves
 * discovery, registration and tokens itself, checks the bearer token of /mcp
 * (refusing a `tg_` token the lane refused, with its challenge) and hands it
 * on (src/http/mcp.ts), and sends the rest to the pages (src/web, src/oauth).
 */
import { Hono, type Context } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { AppEnv } from "./http/app-env.ts";
import { refuseQueryTokens } from "./http/auth.ts";
import { CATALOG_PATH, serveCatalog } from "./http/catalog.ts";
import { originCheck } from "./http/origin.ts";
import { canonicalOrigin } from "./http/url-text.ts";
import { tagRequest } from "./http/request-id.ts";
import { requestLine } from "./http/request-log.ts";
import { MAX_BODY_BYTES } from "./mcp/server.ts";
import { VERSION, type Env } from "./env.ts";
import { queue, scheduled } from "./jobs.ts";
import { meterD1, serverTiming } from "./db/metered.ts";
import { shardsOf } from "./db/shards.ts";
import { pingDatabase } from "./db/account.ts";
import { isTransient } from "./db/transient.ts";
import { helpersFor, providerFor, TOKEN_PATH } from "./oauth/provider.ts";
import { serveTokenCall } from "./http/token-lane.ts";
import { serveTokenEndpoint } from "./oauth/token-endpoint.ts";
import { installLibraryFetchGuard } from "./oauth/library-fetch.ts";
import { installTools } from "./mcp/registry.ts";
import { ALL_TOOLS } from "./tools/index.ts";

// The registry serves the tools it is given: every tool, once per isolate.
installTools(ALL_TOOLS);

// The OAuth library fetches client metadata documents with the global fetch: held to the outbound rule there.
installLibraryFetchGuard();

export const app = new Hono<AppEnv>();

/** Sets a header even on a response whose headers are immutable (a fetched or redirect response). */
function withHeader(res: Response, name: string, value: string, append = false): Response {
  let out = res;
  try {
    if (append) out.headers.append(name, value);
    else out.headers.set(name, value);
  } catch {
    out = new Response(res.body, res);
    if (append) out.headers.append(name, value);
    else out.headers.set(name, value);
  }
  return out;
}

app.use("*", async function requestId(c, next) {
  const id = crypto.randomUUID();
  c.set("requestId", id);
  tagRequest(c.req.raw, id);
  await next();
  c.res = withHeader(c.res, "x-request-id", id);
});

/** Every D1 call a request makes, counted and timed in `Server-Timing` (cheap, and useful in production). */
app.use("*", async function d1Timing(c, next) {
  if (!c.env?.DB) return next();
  const started = Date.now();
  // One meter over every database of the deployment (src/db/shards.ts).
  const meter = meterD1(c.env.DB);
  const metered: Record<string, D1Database> = { DB: meter.db };
  for (const s of shardsOf(c.env).slice(1)) metered[s.name] = meterD1(s.db, meter).db;
  c.env = { ...c.env, ...metered };
  await next();
  if (c.res.headers.get("content-type")?.startsWith("text/event-stream") && !c.res.headers.has("content-length")) {
    // A streamed stateless legacy answer is one SSE message: let it finish so the count covers the whole call.
    c.res = new Response(await c.res.arrayBuffer(), c.res);
  }
  c.res = withHeader(c.res, "server-timing", serverTiming(meter), true);
  c.res = withHeader(c.res, "x-d1-calls", String(meter.calls));
  // The request log (src/http/request-log.ts), but for the probe that asks nothing of D1.
  if (c.env.REQUEST_LOG !== "off" && c.req.path !== "/health") {
    console.log(JSON.stringify(requestLine(c.req.raw, c.get("requestId"), c.res.status, Date.now() - started, meter)));
  }
});

app.get("/health", (c) => c.json({ ok: true, version: VERSION }));

/** Readiness: one trivial D1 query. */
app.get("/ready", async (c) => {
  try {
    await pingDatabase(c.env.DB);
    return c.json({ ok: true, version: VERSION });
  } catch (e) {
    console.error(JSON.stringify({ level: "error", where: "ready", error: String(e) }));
    return c.json({ ok: false, reason: "database unavailable" }, 503);
  }
});

/** The tool catalog with its fingerprints and what the server enforces, for review before connecting (src/http/catalog.ts). */
app.get(CATALOG_PATH, () => serveCatalog());

const methodNotAllowed = () =>
  new Response(JSON.stringify({ error: "method_not_allowed", error_description: "MCP is served statelessly: use POST /mcp." }), {
    status: 405,
    headers: { allow: "POST", "content-type": "application/json" },
  });
app.on(["GET", "DELETE", "PUT", "PATCH"], "/mcp/*", methodNotAllowed);

const tooLarge = (c: Context) => c.json({ error: "payload_too_large", error_description: "Request bodies are limited to 1 MiB." }, 413);
const streamedBodyLimit = bodyLimit({ maxSize: MAX_BODY_BYTES, onError: tooLarge });

app.use(
  "/mcp/*",
  // A body with a Content-Length is judged by it (the runtime holds the body to that length); only a chunked one is counted as it streams.
  async function mcpBodyLimit(c, next) {
    const length = c.req.header("content-length");
    if (length === undefined || !/^\d+$/.test(length)) return streamedBodyLimit(c, next);
    if (Number(length) > MAX_BODY_BYTES) return tooLarge(c);
    await next();
  },
  originCheck(),
  refuseQueryTokens(),
);

app.all("*", async (c) => {
  const origin = canonicalOrigin(c.req.url);
  if (!origin) {
    // OAuth needs https off loopback: pages move there, API calls are told to.
    const url = new URL(c.req.url);
    if (c.req.method === "GET" || c.req.method === "HEAD") {
      url.protocol = "https:";
      return c.redirect(url.toString(), 308);
    }
    return c.json({ error: "https_required", error_description: `Use ${url.toString().replace(/^http:/, "https:")}: Taskgate is served over https.` }, 400);
  }
  const ctx = c.executionCtx as unknown as ExecutionContext;
  const tokenCall = await serveTokenCall(c.req.raw, c.env, ctx, () => helpersFor(origin, c.env));
  if (tokenCall) return tokenCall;
  if (c.req.method === "POST" && c.req.path === TOKEN_PATH) return serveTokenEndpoint(c.req.raw, c.env, ctx, origin, providerFor(origin));
  // A copy: the provider sets env.OAUTH_PROVIDER on what it gets, and that must not leak to another origin's request.
  return providerFor(origin).fetch(c.req.raw, { ...c.env }, ctx);
});

app.onError((err, c) => {
  // A passing database fault (a busy or briefly unreachable D1) is worth a retry, and says so.
  if (isTransient(err)) {
    console.warn(JSON.stringify({ level: "warn", requestId: c.get("requestId"), transient: err.message }));
    c.header("retry-after", "1");
    return c.json({ error: "temporarily_unavailable", error_description: "The database was briefly unavailable; try again in a moment.", request_id: c.get("requestId") }, 503);
  }
  console.error(JSON.stringify({ level: "error", requestId: c.get("requestId"), error: err.stack ?? err.message }));
  return c.json({ error: "internal_error", error_description: "Something failed on our side; try again.", request_id: c.get("requestId") }, 500);
});

export default {
  fetch: app.fetch,
  scheduled,
  queue,
} satisfies ExportedHandler<Env>;
