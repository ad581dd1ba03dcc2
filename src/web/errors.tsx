/** The answers for unknown paths and for failures: a page for browsers, JSON for API clients. */
import type { Context } from "hono";
import { requestIdOf } from "../http/request-id.ts";
import { ToolError, type ToolErrorCode } from "../domain/errors.ts";
import { ErrorPage } from "./layout.tsx";
import type { Session } from "./context.ts";
import { page } from "./render.ts";
import { isFenced } from "../db/move-account.ts";

function wantsHtml(c: Context): boolean {
  return (c.req.header("accept") ?? "").includes("text/html");
}

export function notFoundResponse(c: Context): Response | Promise<Response> {
  if (wantsHtml(c)) {
    return page(<ErrorPage title="Page not found" message="There is no page at this address." hint="Start from the home page, or from the app you were connecting." />, {
      status: 404,
    });
  }
  return c.json({ error: "not_found", error_description: "Taskgate serves MCP at POST /mcp and a probe at GET /health." }, 404);
}

/** A caller's mistake as the tools answer it (src/domain/errors.ts), as an HTTP status: never a 5xx for what the person can fix. */
const TOOL_ERROR_STATUS: Record<ToolErrorCode, 400 | 403 | 404 | 409 | 429 | 502 | 503> = {
  invalid_argument: 400,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  rate_limited: 429,
  upstream: 502,
  not_connected: 409,
};

export function errorResponse(c: Context, err: Error): Response | Promise<Response> {
  // The databases' fence refused a write: the account began to move after this request found it.
  if (isFenced(err)) {
    if (wantsHtml(c)) return accountMoving(null);
    return c.json({ error: "temporarily_unavailable", error_description: "This account is moving to another database; try again shortly." }, 503, { "retry-after": "60" });
  }
  if (err instanceof ToolError) {
    const status = TOOL_ERROR_STATUS[err.code];
    if (wantsHtml(c)) return page(<ErrorPage title="That did not work" message={err.message} hint="Go back, change what the message says, and try again." />, { status });
    return c.json({ error: err.code, error_description: err.message }, status);
  }
  const requestId = requestIdOf(c.req.raw);
  console.error(JSON.stringify({ level: "error", requestId, error: err.stack ?? err.message }));
  if (wantsHtml(c)) {
    return page(
      <ErrorPage title="Something went wrong" message="Something failed on our side, not yours. Try again in a moment." hint={`If it keeps happening, report request id ${requestId}.`} />,
      { status: 500 },
    );
  }
  return c.json({ error: "internal_error", error_description: "Something failed on our side; try again.", request_id: requestId }, 500);
}

/** What a person is told when their account is moving to another database (`npm run admin -- move-account`). */
export const MOVING_MESSAGE = "Your account is moving to another database right now, so nothing was changed.";
export const MOVING_HINT = "Try again in a minute or two; everything you made is kept.";

/** A form of an account that is moving: refused, nothing written, with when to try again. */
export function accountMoving(session: Session | null): Promise<Response> {
  return page(<ErrorPage title="Try again in a minute" message={MOVING_MESSAGE} hint={MOVING_HINT} session={session} />, {
    status: 503,
    headers: { "retry-after": "60" },
  });
}

/** A signed-in form that did not come from this session's page: nothing changed. */
export function formRefused(session: Session | null): Promise<Response> {
  return page(
    <ErrorPage title="This form did not come from your session" message="It was not sent from the Taskgate page shown to you in this session, so nothing changed." hint="Open the page again and use its form." session={session} />,
    { status: 403 },
  );
}
