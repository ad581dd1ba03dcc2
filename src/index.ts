import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { AppEnv } from "./http/app-env.ts";
import { bearerAuth } from "./http/auth.ts";
import { originCheck } from "./http/origin.ts";
import { MAX_BODY_BYTES, mcpHandler } from "./mcp/server.ts";
import { VERSION, type Env } from "./env.ts";
import { purgeExpiredTrash } from "./db/trash.ts";

export const app = new Hono<AppEnv>();

app.use("*", async function requestId(c, next) {
  const id = crypto.randomUUID();
  c.set("requestId", id);
  await next();
  c.res.headers.set("x-request-id", id);
});

app.get("/health", (c) => c.json({ ok: true, version: VERSION }));

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
  async scheduled(_controller: ScheduledController, env: Env, ctx: ExecutionContext) {
    ctx.waitUntil(purgeExpiredTrash(env.DB, new Date().toISOString()));
  },
} satisfies ExportedHandler<Env>;
