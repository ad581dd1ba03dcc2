/**
 * A client id shaped as an https URL is a Client ID Metadata Document: the
 * provider fetches it to learn the client. Taskgate checks it with the
 * outbound rule (src/domain/outbound-url.ts) first, wherever a request
 * names a client (/authorize, the token endpoint and its revocation), so the
 * provider never connects to an internal host on a client's say-so; the
 * guard on the library's own fetches (library-fetch.ts) holds the same rule
 * underneath, whatever the parse.
 *
 * At the token endpoint the client is named by the form's `client_id`, HTTP
 * Basic's user, or a client assertion's `iss`, each read here the way the
 * library reads it (it drops empty values, strips a byte-order mark from a
 * JWT payload, decodes Basic's user as a form component). A request that
 * names its client ambiguously (a parameter repeated or empty, credentials
 * that cannot be decoded) is refused before the library reads it.
 */
import { outboundTextProblem, PUBLIC_ONLY } from "../domain/outbound-url.ts";

/** The form parameters that name or authenticate a client (the library's own list, RFC 6749 §2.3, RFC 7521 §4.2). */
const CLIENT_PARAMETERS = ["client_id", "client_secret", "client_assertion", "client_assertion_type"] as const;
/** Of those, the ones that may not be sent empty (an empty client_secret is a public client's habit, and names nothing). */
const NAMING_PARAMETERS = new Set(["client_id", "client_assertion", "client_assertion_type"]);

/** Why the provider may not fetch this client id, or null (not a URL, so looked up by id; or a public https URL). */
export function clientIdProblem(clientId: string): string | null {
  // Whitespace or controls at the ends (URL parsing strips some of them), or anywhere: no client id of ours has them.
  if (/[\p{Cc}\p{Cf}\p{Z}\s]/u.test(clientId)) return "client_id: must not contain spaces, control or invisible characters";
  try {
    new URL(clientId);
  } catch {
    return null;
  }
  const problem = outboundTextProblem(clientId, PUBLIC_ONLY);
  return problem && `client_id: ${problem}, so its client metadata document is not fetched`;
}

/** The client ids a token-endpoint request names, or why the request is refused before the provider reads it. */
export type TokenRequestClients = { ids: string[] } | { refused: string };

/** A JWT part as the library decodes it: base64url → bytes → UTF-8 (a byte-order mark dropped) → a JSON object. */
function jwtPart(encoded: string): Record<string, unknown> | null {
  try {
    const base64 = encoded.replace(/-/g, "+").replace(/_/g, "/");
    const binary = atob(base64.padEnd(base64.length + ((4 - (base64.length % 4)) % 4), "="));
    const parsed: unknown = JSON.parse(new TextDecoder().decode(Uint8Array.from(binary, (ch) => ch.charCodeAt(0))));
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** The library's reading of HTTP Basic client credentials: the client id, "malformed", or null (no Basic scheme). */
export function basicClientId(header: string | null): string | "malformed" | null {
  if (!header) return null;
  const schemeEnd = header.search(/[ \t]/);
  if ((schemeEnd === -1 ? header : header.slice(0, schemeEnd)).toLowerCase() !== "basic") return null;
  if (schemeEnd === -1) return "malformed";
  const encoded = header.slice(schemeEnd).trim();
  if (!encoded || /[ \t]/.test(encoded)) return "malformed";
  try {
    const credentials = atob(encoded);
    const colon = credentials.indexOf(":");
    if (colon === -1) return "malformed";
    return decodeURIComponent(credentials.slice(0, colon).replace(/\+/g, " "));
  } catch {
    return "malformed";
  }
}

/** The client ids a token-endpoint request (a token request or a revocation) names: the form's, HTTP Basic's, a client assertion's issuer. */
export function tokenRequestClients(form: FormData | null, authorization: string | null): TokenRequestClients {
  const ids: string[] = [];
  for (const name of CLIENT_PARAMETERS) {
    const values = form?.getAll(name) ?? [];
    if (values.length > 1) return { refused: `${name} must be sent once (this request sends it ${values.length} times)` };
    if (values.some((v) => typeof v !== "string")) return { refused: `${name} must be a text value` };
    if (values[0] === "" && NAMING_PARAMETERS.has(name)) return { refused: `${name} must not be empty` };
  }
  const fromForm = form?.get("client_id");
  if (typeof fromForm === "string") ids.push(fromForm);
  const basic = basicClientId(authorization);
  if (basic === "malformed") return { refused: "the HTTP Basic credentials cannot be read (base64 of client_id:client_secret, each form-encoded)" };
  if (basic !== null) ids.push(basic);
  const assertion = form?.get("client_assertion");
  if (typeof assertion === "string") {
    const parts = assertion.split(".");
    const payload = parts.length === 3 && parts.every(Boolean) ? jwtPart(parts[1]) : null;
    if (!payload || !jwtPart(parts[0])) return { refused: "client_assertion must be a JWT whose header and payload can be read" };
    if (payload.iss !== undefined) {
      if (typeof payload.iss !== "string") return { refused: "client_assertion: iss must be a string" };
      ids.push(payload.iss);
    }
  }
  return { ids };
}

/** The token endpoint's answer to a request whose client may not be fetched or cannot be read (RFC 6749 §5.2). */
export function invalidClient(problem: string, basic: boolean): Response {
  const headers: Record<string, string> = { "content-type": "application/json", "cache-control": "no-store", pragma: "no-cache" };
  if (basic) headers["www-authenticate"] = 'Basic realm="OAuth", charset="UTF-8"';
  return new Response(JSON.stringify({ error: "invalid_client", error_description: problem }), { status: 401, headers });
}
