import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { AppEnv } from "./http/app-env.ts";
import { bearerAuth } from "./http/auth.ts";
import { originCheck } from "./http/origin.ts";
import { MAX_BODY_BYTES, mcpHandler } from "./mcp/server.ts";
import { VERSION, type Env } from "./env.ts";
import { queue, scheduled } from "./webhooks/handlers.ts";
import { meterD1, serverTiming } from "./db/metered.ts";

export const app = new Hono<AppEnv>();

app.use("*", async function requestId(c, next) {
  const id = crypto.randomUUID();
  c.set("requestId", id);
  await next();
  c.res.headers.set("x-request-id", id);
});

/** Every D1 call a request makes, counted and timed in `Server-Timing` (cheap, and useful in production). */
app.use("*", async function d1Timing(c, next) {
  if (!c.env?.DB) return next();
  const meter = meterD1(c.env.DB);
  c.env = { ...c.env, DB: meter.db };
  await next();
  if (c.res.headers.get("content-type")?.startsWith("text/event-stream")) {
    // A stateless legacy answer is one SSE message: let it finish so the count covers the whole call.
    c.res = new Response(await c.res.text(), c.res);
  }
  c.res.headers.append("server-timing", serverTiming(meter));
  c.res.headers.set("x-d1-calls", String(meter.calls));
});

app.get("/health", (c) => c.json({ ok: true, version: VERSION }));

/** Readiness: one trivial D1 query. */
app.get("/ready", async (c) => {
  try {
    await c.env.DB.prepare("SELECT 1").first();
    return c.json({ ok: true, version: VERSION });
  } catch (e) {
    console.error(JSON.stringify({ level: "error", where: "ready", error: String(e) }));
    return c.json({ ok: false, reason: "database unavailable" }, 503);
  }
});

const methodNotAllowed = () =>
  new Response(JSON.stringify({ error: "method_not_allowed", error_description: "MCP is served statelessly: use POST /mcp." }), {
    status: 405,
    headers: { allow: "POST", "content-type": "application/json" },
  });
app.on(["GET", "DELETE", "PUT", "PATCH"], "/mcp", methodNotAllowed);

app.use(
  "/mcp",
  bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: (c) => c.json({ error: "payload_too_large", error_description: "Request bodies are limited to 1 MiB." }, 413),
  }),
  originCheck(),
);
app.options("/mcp", methodNotAllowed);
app.post("/mcp", bearerAuth(), (c) => {
  const principal = c.get("principal");
  return mcpHandler.fetch(c.req.raw, {
    authInfo: {
      token: principal.tokenId,
      clientId: principal.tokenId,
      scopes: [principal.scope],
      extra: {
        scope: {
          env: c.env,
          principal,
          requestId: c.get("requestId"),
          waitUntil: (p: Promise<unknown>) => c.executionCtx.waitUntil(p),
        },
      },
    },
  });
});

app.notFound((c) => c.json({ error: "not_found", error_description: "Taskgate serves MCP at POST /mcp and a probe at GET /health." }, 404));

app.onError((err, c) => {
  console.error(JSON.stringify({ level: "error", requestId: c.get("requestId"), error: err.stack ?? err.message }));
  return c.json({ error: "internal_error", error_description: "Something failed on our side; try again.", request_id: c.get("requestId") }, 500);
});

export default {
  fetch: app.fetch,
  scheduled,
  queue,
} satisfies ExportedHandler<Env>;
