/**
 * The stand-in push service of the Workers tests: the `web-push-testing`
 * package's own server (it decrypts each aes128gcm message with the
 * subscription's private key and verifies the VAPID JWT against the key the
 * subscription was made with), run in Node on a loopback port, once per test
 * run. vitest.config.ts hands the Worker tests a service binding to it
 * (PUSH_SERVICE); the tests reach it at any https host and path it serves.
 */
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { Response as MiniflareResponse } from "miniflare";

const require = createRequire(import.meta.url);

let started: Promise<string> | null = null;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Starts web-push-testing on 127.0.0.1 (its own CLI would bind every address); its base URL. */
export function pushService(): Promise<string> {
  started ??= (async () => {
    const WebPushTestingServer = require("web-push-testing/src/server.js");
    const { PushApiModel } = require("web-push-testing/src/PushApiModel.js");
    const port = await freePort();
    const server = new WebPushTestingServer(new PushApiModel(), port);
    await new Promise<void>((resolve, reject) => {
      const listening = server._app.listen(port, "127.0.0.1", () => resolve());
      listening.once("error", reject);
      listening.unref();
    });
    server.setRequestHandlers();
    return `http://127.0.0.1:${port}`;
  })();
  return started;
}

/** The service binding: the request's path and body, sent on to the stand-in; its answer back. */
export async function pushServiceBinding(request: Request): Promise<Response> {
  const base = await pushService();
  const url = new URL(request.url);
  const body = request.method === "GET" || request.method === "HEAD" ? undefined : new Uint8Array(await request.arrayBuffer());
  const res = await fetch(`${base}${url.pathname}${url.search}`, { method: request.method, headers: request.headers, body });
  const headers: Record<string, string> = {};
  res.headers.forEach((value, name) => {
    if (name !== "content-encoding" && name !== "content-length") headers[name] = value;
  });
  return new MiniflareResponse(await res.arrayBuffer(), { status: res.status, headers }) as unknown as Response;
}
