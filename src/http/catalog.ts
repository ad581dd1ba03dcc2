/**
 * GET /.well-known/mcp/tools.json: the whole tool catalog as tools/list
 * describes it to a person's write token (every tool, its schemas, hints,
 * enforcement, result trust and fingerprint) with the catalog's fingerprint,
 * before any token. A host or a directory reviews it before connecting and
 * can hold the server to it afterwards. The same for every request: made
 * once per isolate.
 */
import { VERSION } from "../env.ts";
import { CATALOG_KEY } from "../catalog/contract.ts";
import { fullCatalog } from "../mcp/registry.ts";

export const CATALOG_PATH = "/.well-known/mcp/tools.json";

let body: string | undefined;
let etag: string | undefined;

export function serveCatalog(): Response {
  if (!body) {
    const { tools, _meta } = fullCatalog();
    body = JSON.stringify({ name: "taskgate", title: "Taskgate", version: VERSION, endpoint: "/mcp", _meta, tools });
    etag = `"${_meta[CATALOG_KEY]}"`;
  }
  return new Response(body, {
    headers: {
      "content-type": "application/json",
      "cache-control": "public, max-age=300",
      "access-control-allow-origin": "*",
      etag: etag as string,
    },
  });
}
