/**
 * Google Drive (REST v3). OAuth client id/secret + refresh token; access
 * tokens are minted on demand at the token endpoint and cached in this isolate
 * until shortly before they expire, keyed by connector and credentials
 * version. They are never stored.
 */
import { ToolError } from "../domain/errors.ts";
import {
  clip, errorBody, rateLimited, readBoundedText, readJson, rejected, send, statusFault, unavailable, upstreamError,
} from "./http.ts";
import type { ConnectionInfo, Connector, DriveCredentials, IdRules, ReadResult, SaveResult, SearchHit } from "./types.ts";

export const DRIVE_TOKEN_URL = "https://oauth2.googleapis.com/token";
export const DRIVE_API = "https://www.googleapis.com/drive/v3";
export const DRIVE_UPLOAD = "https://www.googleapis.com/upload/drive/v3/files";
const GOOGLE_DOC = "application/vnd.google-apps.document";

/** Google's own formats and the text form each exports to. */
const EXPORT_AS: Record<string, string> = {
  "application/vnd.google-apps.document": "text/plain",
  "application/vnd.google-apps.presentation": "text/plain",
  "application/vnd.google-apps.spreadsheet": "text/csv",
};

const TEXT_TYPES = new Set(["application/json", "application/xml", "application/javascript", "application/x-yaml", "application/csv"]);

const DRIVE_ID = /^[A-Za-z0-9_-]{5,200}$/;

export const driveRules: IdRules = {
  checkId: (id) => (DRIVE_ID.test(id) ? null : "a Drive ref looks like drive:1AbCdEf… (the file id from search_context)"),
  checkTarget(target) {
    if (target === undefined) return { target };
    return DRIVE_ID.test(target) ? { target } : { error: "target: for Drive, the id of a folder (or omit it to save in My Drive)" };
  },
};

interface AccessToken {
  token: string;
  expiresAt: number;
}

const MAX_CACHED = 500;
const accessTokens = new Map<string, Promise<AccessToken>>();

/** Drops the cached access tokens of a connector (disconnect, or a 401 on a cached token). */
export function forgetDriveToken(connectorId: string): void {
  for (const k of accessTokens.keys()) if (k.startsWith(connectorId + "@")) accessTokens.delete(k);
}

function escapeQuery(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/'/g, "\\'");
}

interface DriveFile {
  id: string;
  name?: string;
  mimeType?: string;
  webViewLink?: string;
  modifiedTime?: string;
}

interface DriveError {
  error?: { message?: string; status?: string; errors?: { reason?: string }[] };
}

export function driveConnector(creds: DriveCredentials, info: ConnectionInfo): Connector {
  const cacheKey = `${info.connectorId}@${info.version}`;

  async function mint(): Promise<AccessToken> {
    const res = await send("drive", DRIVE_TOKEN_URL, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        client_id: creds.client_id,
        client_secret: creds.client_secret,
        refresh_token: creds.refresh_token,
        grant_type: "refresh_token",
      }).toString(),
    });
    if (!res.ok) {
      const body = await errorBody<{ error?: string }>(res);
      if (res.status === 400 || res.status === 401) {
        throw rejected("drive", info.accountId, `token refresh failed: ${clip(body?.error, 60) || `HTTP ${res.status}`}`);
      }
      throw statusFault("drive", info.accountId, res, "token refresh failed");
    }
    const json = await readJson<{ access_token?: string; expires_in?: number }>("drive", res);
    if (typeof json.access_token !== "string" || !json.access_token) throw unavailable("drive", "the token endpoint sent no access token");
    const lifetime = typeof json.expires_in === "number" && json.expires_in > 0 ? json.expires_in : 3600;
    return { token: json.access_token, expiresAt: Date.now() + Math.max(lifetime - 60, 30) * 1000 };
  }

  async function accessToken(): Promise<{ token: string; cached: boolean }> {
    const hit = accessTokens.get(cacheKey);
    if (hit) {
      const t = await hit.catch(() => null);
      if (t && t.expiresAt > Date.now()) return { token: t.token, cached: true };
      if (accessTokens.get(cacheKey) === hit) accessTokens.delete(cacheKey);
    }
    const minting = mint();
    if (accessTokens.size >= MAX_CACHED) accessTokens.delete(accessTokens.keys().next().value as string);
    accessTokens.set(cacheKey, minting);
    minting.catch(() => {
      if (accessTokens.get(cacheKey) === minting) accessTokens.delete(cacheKey);
    });
    return { token: (await minting).token, cached: false };
  }

  async function fault(res: Response, about: { file?: string; folder?: string }): Promise<ToolError> {
    const body = await errorBody<DriveError>(res);
    const reason = body?.error?.errors?.[0]?.reason ?? body?.error?.status ?? "";
    if (res.status === 404 && about.folder) {
      return new ToolError("not_found", `Google Drive has no folder ${about.folder} that the connected account can write to; pass a folder id as target, or omit it to save in My Drive.`);
    }
    if (res.status === 404 && about.file) {
      return new ToolError("not_found", `Google Drive has no file ${about.file} that the connected account can read; search_context finds refs.`);
    }
    if (res.status === 403 && /rateLimitExceeded/i.test(reason)) return rateLimited("drive", res.headers.get("retry-after"));
    if (res.status === 403 && reason === "exportSizeLimitExceeded") return upstreamError("drive", "the document is too large to export as text");
    return statusFault("drive", info.accountId, res, clip(reason, 60));
  }

  /** An authorised call; a 401 on a cached access token mints a new one and tries once more. */
  async function call(url: string, init: RequestInit, about: { file?: string; folder?: string } = {}): Promise<Response> {
    const withToken = (token: string): RequestInit => ({ ...init, headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${token}` } });
    const first = await accessToken();
    let res = await send("drive", url, withToken(first.token));
    if (res.status === 401 && first.cached) {
      forgetDriveToken(info.connectorId);
      res = await send("drive", url, withToken((await accessToken()).token));
    }
    if (!res.ok) throw await fault(res, about);
    return res;
  }

  return {
    async search(query: string, limit: number): Promise<SearchHit[]> {
      const params = new URLSearchParams({
        q: `fullText contains '${escapeQuery(query)}' and trashed = false`,
        pageSize: String(limit),
        fields: "files(id,name,mimeType,webViewLink,modifiedTime)",
        supportsAllDrives: "true",
        includeItemsFromAllDrives: "true",
      });
      const res = await call(`${DRIVE_API}/files?${params}`, { method: "GET" });
      const json = await readJson<{ files?: DriveFile[] }>("drive", res);
      return (json.files ?? []).slice(0, limit).map((f) => ({
        id: f.id,
        title: f.name || "(untitled)",
        snippet: null,
        url: f.webViewLink ?? null,
        updatedAt: f.modifiedTime ?? null,
      }));
    },

    async read(id: string): Promise<ReadResult> {
      const file = encodeURIComponent(id);
      const metaParams = new URLSearchParams({ fields: "id,name,mimeType,webViewLink", supportsAllDrives: "true" });
      const meta = await readJson<DriveFile>("drive", await call(`${DRIVE_API}/files/${file}?${metaParams}`, { method: "GET" }, { file: id }));
      const mime = meta.mimeType ?? "";
      let res: Response;
      if (EXPORT_AS[mime]) {
        res = await call(`${DRIVE_API}/files/${file}/export?${new URLSearchParams({ mimeType: EXPORT_AS[mime] })}`, { method: "GET" }, { file: id });
      } else if (mime.startsWith("text/") || TEXT_TYPES.has(mime)) {
        res = await call(`${DRIVE_API}/files/${file}?alt=media&supportsAllDrives=true`, { method: "GET" }, { file: id });
      } else {
        throw new ToolError(
          "invalid_argument",
          `drive:${id} is a ${mime || "binary"} file with no text form; read_context reads Google Docs, Sheets, Slides and text files.`,
        );
      }
      const body = await readBoundedText(res);
      const text = body.text.replace(/^\uFEFF/, "");
      return { title: meta.name || "(untitled)", url: meta.webViewLink ?? null, text, complete: body.complete, length: body.complete ? text.length : null };
    },

    async save(title: string, content: string, target: string | undefined): Promise<SaveResult> {
      const boundary = `taskgate-${crypto.randomUUID()}`;
      const metadata = { name: title, mimeType: GOOGLE_DOC, ...(target ? { parents: [target] } : {}) };
      const body =
        `--${boundary}\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n${JSON.stringify(metadata)}\r\n` +
        `--${boundary}\r\nContent-Type: text/plain; charset=UTF-8\r\n\r\n${content}\r\n` +
        `--${boundary}--`;
      const params = new URLSearchParams({ uploadType: "multipart", supportsAllDrives: "true", fields: "id,name,webViewLink" });
      const res = await call(
        `${DRIVE_UPLOAD}?${params}`,
        { method: "POST", headers: { "content-type": `multipart/related; boundary=${boundary}` }, body },
        { folder: target },
      );
      const json = await readJson<DriveFile>("drive", res);
      if (!json.id) throw unavailable("drive", "it did not return the new document's id");
      return { id: json.id, url: json.webViewLink ?? `https://docs.google.com/document/d/${json.id}/edit` };
    },
  };
}
