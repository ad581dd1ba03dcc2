/**
 * What a client may be: a Client ID Metadata Document only on a public host
 * (checked before the provider fetches it), a registration within bounds,
 * and a registration that never led to a grant removed by the daily job.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { CLIENT_NAME_MAX, REDIRECT_URI_MAX, REDIRECT_URIS_MAX, REGISTRATION_BODY_MAX_BYTES } from "../src/domain/client-registration.ts";
import { workerFetch } from "./helpers.ts";
import { authorizePath, connectApp, dailyJobAt, PASSWORD, pkce, registerClient, tokenRequest } from "./oauth-helpers.ts";
import { addPerson, Browser, ORIGIN, signIn, uniqueEmail } from "./web-helpers.ts";
import { seedAccount } from "./helpers.ts";

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

/** Counts every outbound request the Worker makes (the provider's metadata fetches included); none reaches the network. */
function countOutbound(answer?: (url: string) => Response): string[] {
  const urls: string[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL) => {
    const url = new Request(input).url;
    urls.push(url);
    if (answer) return answer(url);
    throw new Error(`unexpected outbound fetch ${url}`);
  });
  return urls;
}

const INTERNAL_CLIENT_IDS: [string, RegExp][] = [
  ["https://127.0.0.1:8788/oauth/client.json", /client_id: 127\.0\.0\.1 is a loopback address/],
  ["https://localhost:8788/oauth/client.json", /client_id: localhost is a loopback name/],
  ["https://[::1]:8788/oauth/client.json", /client_id: \[::1\] is the loopback address/],
  ["https://0x7f000001:8788/oauth/client.json", /client_id: 127\.0\.0\.1 is a loopback address/],
  ["https://2130706433:8788/oauth/client.json", /client_id: 127\.0\.0\.1 is a loopback address/],
  ["https://[::ffff:127.0.0.1]:8788/oauth/client.json", /IPv4-mapped address of a loopback address/],
  ["https://169.254.169.254/latest/client.json", /client_id: 169\.254\.169\.254 is a link-local address/],
  ["https://10.0.0.5/client.json", /client_id: 10\.0\.0\.5 is a private address/],
  ["https://metadata.google.internal/client.json", /internal by convention/],
];

async function register(body: Record<string, unknown>): Promise<Response> {
  return workerFetch(`${ORIGIN}/oauth/register`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
}

const REDIRECT = "http://127.0.0.1:33418/callback";
const client = (extra: Record<string, unknown> = {}) => ({
  client_name: "Bounded app",
  redirect_uris: [REDIRECT],
  token_endpoint_auth_method: "none",
  grant_types: ["authorization_code", "refresh_token"],
  ...extra,
});

const clientKeys = async () => (await env.OAUTH_KV.list({ prefix: "client:" })).keys.length;

describe("a client id that is a URL is fetched only from a public host", () => {
  it("/authorize refuses an internal host in any spelling with a page saying why, and makes no outbound request", async () => {
    const urls = countOutbound();
    const { challenge } = await pkce();
    const b = new Browser();
    for (const [clientId, why] of INTERNAL_CLIENT_IDS) {
      const res = await b.get(authorizePath({ clientId, redirectUri: "https://app.example.com/callback", challenge }));
      expect(res.status, clientId).toBe(400);
      expect(res.headers.get("location")).toBeNull();
      const html = await res.text();
      expect(html).toContain("This app could not be verified");
      expect(html).toMatch(why);
      expect(html).toMatch(/Taskgate sends requests only to public hosts, so its client metadata document is not fetched/);
    }
    expect(urls).toEqual([]);

    // The same counter sees the provider's fetch of a public document: the refusals above are real.
    const served = countOutbound(() => new Response("{}", { status: 404 }));
    await b.get(authorizePath({ clientId: "https://app.example.com/oauth/client.json", redirectUri: "https://app.example.com/callback", challenge }));
    expect(served).toEqual(["https://app.example.com/oauth/client.json"]);
  });

  it("the token endpoint answers invalid_client for one (form, HTTP Basic), with no outbound request", async () => {
    const urls = countOutbound();
    for (const [clientId, why] of INTERNAL_CLIENT_IDS) {
      const res = await tokenRequest({ grant_type: "authorization_code", client_id: clientId, code: "a:b:c", code_verifier: "x".repeat(43), redirect_uri: "https://app.example.com/callback" });
      expect(res.status, clientId).toBe(401);
      expect(res.headers.get("cache-control")).toBe("no-store");
      const body = (await res.json()) as { error: string; error_description: string };
      expect(body.error).toBe("invalid_client");
      expect(body.error_description).toMatch(why);
    }
    const basic = await workerFetch(`${ORIGIN}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${btoa(`${encodeURIComponent("https://127.0.0.1:8788/c.json")}:secret`)}` },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: "a:b:c" }),
    });
    expect(basic.status).toBe(401);
    expect(basic.headers.get("www-authenticate")).toMatch(/^Basic /);
    expect(((await basic.json()) as { error: string }).error).toBe("invalid_client");
    expect(urls).toEqual([]);
  });
});

describe("dynamic client registration within bounds", () => {
  it("accepts a registration at every bound, and refuses one past any bound with what to fix, storing nothing", async () => {
    const atBounds = await register(client({ client_name: "n".repeat(CLIENT_NAME_MAX), redirect_uris: Array.from({ length: REDIRECT_URIS_MAX }, (_, i) => `${REDIRECT}${i}`) }));
    expect(atBounds.status, await atBounds.clone().text()).toBe(201);
    const long = await register(client({ redirect_uris: [`${REDIRECT}?q=${"a".repeat(REDIRECT_URI_MAX - REDIRECT.length - 3)}`] }));
    expect(long.status, await long.clone().text()).toBe(201);

    const before = await clientKeys();
    const refused: [Record<string, unknown>, number, string, RegExp][] = [
      [client({ client_name: "n".repeat(CLIENT_NAME_MAX + 1) }), 400, "invalid_client_metadata", /^client_name: at most 200 characters \(this one has 201\)$/],
      [client({ client_name: "x".repeat(200_000) }), 413, "invalid_request", /^A registration body is at most 16 KiB/],
      [client({ client_name: "Evil <b>App</b>" }), 400, "invalid_client_metadata", /^client_name: must not contain < or >/],
      [client({ client_name: "<script>alert(1)</script>" }), 400, "invalid_client_metadata", /^client_name: must not contain < or >/],
      [client({ client_name: "Tab\there" }), 400, "invalid_client_metadata", /control characters/],
      [client({ client_name: "line\nbreak" }), 400, "invalid_client_metadata", /control characters/],
      [client({ client_name: "gpj.\u202Eexe" }), 400, "invalid_client_metadata", /invisible formatting characters/],
      [client({ "client_name#fr": "Appli <i>" }), 400, "invalid_client_metadata", /^client_name#fr: must not contain < or >/],
      [client({ redirect_uris: Array.from({ length: REDIRECT_URIS_MAX + 1 }, (_, i) => `${REDIRECT}${i}`) }), 400, "invalid_redirect_uri", /^redirect_uris: at most 10 \(this registration has 11\)$/],
      [client({ redirect_uris: Array.from({ length: 1000 }, (_, i) => `${REDIRECT}${i}`) }), 413, "invalid_request", /^A registration body is at most 16 KiB/],
      [client({ redirect_uris: [REDIRECT, `${REDIRECT}?q=${"a".repeat(REDIRECT_URI_MAX)}`] }), 400, "invalid_redirect_uri", /^redirect_uris\[1\]: at most 2000 characters$/],
      [client({ jwks_uri: "https://169.254.169.254/jwks.json" }), 400, "invalid_client_metadata", /^jwks_uri: 169\.254\.169\.254 is a link-local address/],
      [client({ software_version: "v".repeat(REGISTRATION_BODY_MAX_BYTES) }), 413, "invalid_request", /^A registration body is at most 16 KiB \(this one has \d+ bytes\)$/],
    ];
    for (const [body, status, error, description] of refused) {
      const res = await register(body);
      const answer = (await res.json()) as { error: string; error_description: string };
      expect(res.status, JSON.stringify(body).slice(0, 120)).toBe(status);
      expect(answer.error).toBe(error);
      expect(answer.error_description).toMatch(description);
    }
    expect(await clientKeys()).toBe(before);
  });

  it("the consent page shows a client's name cut to 200 characters, whatever its metadata document says", async () => {
    const acc = await seedAccount();
    const email = uniqueEmail();
    await addPerson(acc.accountId, email, PASSWORD);
    const b = new Browser();
    await signIn(b, email, PASSWORD);
    const clientId = "https://app.example.com/oauth/long-name.json";
    const redirectUri = "https://app.example.com/callback";
    const name = `Long${"o".repeat(2000)}ng app`;
    countOutbound(() =>
      new Response(JSON.stringify({ client_id: clientId, client_name: name, redirect_uris: [redirectUri], token_endpoint_auth_method: "none", grant_types: ["authorization_code"] }), {
        headers: { "content-type": "application/json" },
      }),
    );
    const { challenge } = await pkce();
    const res = await b.get(authorizePath({ clientId, redirectUri, challenge }));
    expect(res.status).toBe(200);
    const html = await res.text();
    const shown = `${name.slice(0, CLIENT_NAME_MAX - 1)}…`;
    expect(html).toContain(`<h1>Allow <bdi class="u">${shown}</bdi> to use your Taskgate account?</h1>`);
    expect(html).not.toContain(name.slice(0, CLIENT_NAME_MAX));
    expect(html.length).toBeLessThan(60_000);
  });
});

describe("the daily job removes registrations that never led to a grant", () => {
  it("a day after registration, unused ones are gone (the provider no longer knows them); used and recent ones stay", async () => {
    const unused = await registerClient("Never used app");
    const used = await connectApp({ actAs: "self", access: "read" }, { clientName: "Used app" });
    const known = async (clientId: string) => (await env.OAUTH_KV.get(`client:${clientId}`)) !== null;

    await dailyJobAt(Date.now() + 3_600_000);
    expect(await known(unused.clientId), "an hour on").toBe(true);

    const recent = await registerClient("Registered later app");
    await env.OAUTH_KV.put(
      `client:${recent.clientId}`,
      JSON.stringify({ ...JSON.parse((await env.OAUTH_KV.get(`client:${recent.clientId}`)) as string), registrationDate: Math.floor(Date.now() / 1000) + 86_400 }),
      { expirationTtl: 90 * 86_400 + 86_400 },
    );
    await dailyJobAt(Date.now() + 86_400_000 + 60_000);
    expect(await known(unused.clientId), "a day on, never used").toBe(false);
    expect(await known(used.clientId), "led to a grant").toBe(true);
    expect(await known(recent.clientId), "registered less than a day before").toBe(true);

    const { challenge } = await pkce();
    const gone = await used.browser.get(authorizePath({ clientId: unused.clientId, redirectUri: unused.redirectUri, challenge }));
    expect(gone.status).toBe(400);
    expect(await gone.text()).toMatch(/Invalid client_id/);
  });
});
