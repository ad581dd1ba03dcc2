/**
 * A client id shaped as an https URL is a Client ID Metadata Document: the
 * provider fetches it to learn the client. Taskgate checks it with the
 * outbound rule (src/domain/outbound-url.ts) first, wherever a request
 * names a client (/authorize, the token endpoint), so the provider never
 * connects to an internal host on a client's say-so.
 */
import { outboundTextProblem, PUBLIC_ONLY } from "../domain/outbound-url.ts";

/** Why the provider may not fetch this client id, or null (not URL-shaped, or a public https URL). */
export function clientIdProblem(clientId: string): string | null {
  if (!/^https:/i.test(clientId.trim())) return null;
  const problem = outboundTextProblem(clientId.trim(), PUBLIC_ONLY);
  return problem && `client_id: ${problem}, so its client metadata document is not fetched`;
}

/** The client ids a token-endpoint request names: the form's, HTTP Basic's, a client assertion's issuer. */
export function tokenRequestClientIds(form: FormData | null, authorization: string | null): string[] {
  const ids: string[] = [];
  const fromForm = form?.get("client_id");
  if (typeof fromForm === "string") ids.push(fromForm);
  const basic = /^Basic[\t ]+(\S+)$/i.exec(authorization ?? "");
  if (basic) {
    try {
      const user = atob(basic[1]).split(":")[0];
      ids.push(decodeURIComponent(user.replace(/\+/g, "%20")));
    } catch {
      // not Basic credentials the provider will read either
    }
  }
  const assertion = form?.get("client_assertion");
  if (typeof assertion === "string") {
    try {
      const payload = JSON.parse(atob(assertion.split(".")[1].replace(/-/g, "+").replace(/_/g, "/"))) as { iss?: unknown };
      if (typeof payload.iss === "string") ids.push(payload.iss);
    } catch {
      // not a JWT: the provider refuses it
    }
  }
  return ids;
}

/** The token endpoint's answer to a request whose client id may not be fetched (RFC 6749 §5.2). */
export function invalidClient(problem: string, basic: boolean): Response {
  const headers: Record<string, string> = { "content-type": "application/json", "cache-control": "no-store", pragma: "no-cache" };
  if (basic) headers["www-authenticate"] = 'Basic realm="OAuth", charset="UTF-8"';
  return new Response(JSON.stringify({ error: "invalid_client", error_description: problem }), { status: 401, headers });
}
