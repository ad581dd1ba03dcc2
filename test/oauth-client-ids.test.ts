/**
 * The outbound rule holds for the client id the OAuth library would fetch at
 * the token endpoint and its revocation, whatever the spelling: generated
 * requests name an internal host through the form (repeated and empty values
 * in every order, whitespace, byte-order marks, other encodings), HTTP Basic
 * and a client assertion's issuer, for every grant type and for revocation.
 * Each is refused, and two counters stay at 0: the library's fetch attempts
 * (the global fetch) and the connections beneath the Worker's guard.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { guardLibraryFetch, LIBRARY_USER_AGENT } from "../src/oauth/library-fetch.ts";
import { workerFetch } from "./helpers.ts";
import { registerClient } from "./oauth-helpers.ts";
import { ORIGIN } from "./web-helpers.ts";

afterEach(() => vi.restoreAllMocks());

interface Counters {
  /** Every call of the global fetch (the library's attempts). */
  attempts: string[];
  /** Every request that passed the guard: what would have left the Worker. */
  connections: Request[];
}

/** The global fetch as the Worker has it (the guard over the network), with the network replaced by a counter. */
function countOutbound(answer: (req: Request) => Response = () => new Response("{}", { status: 404 })): Counters {
  const counters: Counters = { attempts: [], connections: [] };
  const guarded = guardLibraryFetch(async (input, init) => {
    const req = new Request(input, init);
    counters.connections.push(req);
    return answer(req);
  });
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL, init?: RequestInit) => {
    counters.attempts.push(new Request(input, init).url);
    return guarded(input, init);
  });
  return counters;
}

const INTERNAL = "https://127.0.0.1:9444/any";
/** Spellings of internal hosts that URL parsing accepts; every one is an https URL with a path, as the library requires. */
const INTERNAL_SPELLINGS = [
  INTERNAL,
  "HTTPS://127.0.0.1:9444/any",
  " https://127.0.0.1:9444/any",
  "https://127.0.0.1:9444/any ",
  "\thttps://127.0.0.1:9444/any\n",
  "\x01https://127.0.0.1:9444/any",
  "\x1fhttps://127.0.0.1:9444/any\x00",
  "\uFEFFhttps://127.0.0.1:9444/any",
  "\u00A0https://127.0.0.1:9444/any",
  "https://app.example.com@127.0.0.1:9444/any",
  "https:\\\\127.0.0.1:9444\\any",
  "https:127.0.0.1:9444/any",
  "https://%31%32%37.0.0.1:9444/any",
  "https://\uFF11\uFF12\uFF17.0.0.1:9444/any",
  "https://2130706433:9444/any",
  "https://0x7f.1:9444/any",
  "https://0177.0.0.1:9444/any",
  "https://127.1/any",
  "https://[::1]:9444/any",
  "https://[::ffff:7f00:1]/any",
  "https://localhost./any",
  "https://LOCALHOST/any",
  "https://169.254.169.254/latest/meta-data",
  "https://10.0.0.5/c.json",
  "https://metadata.google.internal/c.json",
];

const GRANTS: Record<string, string>[] = [
  { grant_type: "authorization_code", code: "a:b:c", code_verifier: "x".repeat(43), redirect_uri: "https://app.example.com/callback" },
  { grant_type: "refresh_token", refresh_token: "a:b:c" },
  { grant_type: "client_credentials" },
  { grant_type: "urn:ietf:params:oauth:grant-type:token-exchange", subject_token: "a:b:c", subject_token_type: "urn:ietf:params:oauth:token-type:access_token" },
  { grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer", assertion: "a.b.c" },
  { token: "a:b:c", token_type_hint: "refresh_token" }, // RFC 7009 revocation
];

const enc = (s: string) => encodeURIComponent(s);
const formOf = (grant: Record<string, string>) => Object.entries(grant).map(([k, v]) => `${enc(k)}=${enc(v)}`);

/** Every sequence of `values` of length 1..n, in every order. */
function sequences<T>(values: T[], n: number): T[][] {
  const out: T[][] = [];
  let level: T[][] = [[]];
  for (let i = 0; i < n; i++) {
    level = level.flatMap((seq) => values.map((v) => [...seq, v]));
    out.push(...level);
  }
  return out;
}

const b64url = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
const utf8 = (s: string) => new TextEncoder().encode(s);

/** Client assertions whose issuer is `iss`, in the spellings the library's decoder reads. */
function assertions(iss: string): string[] {
  const header = b64url(utf8(JSON.stringify({ alg: "RS256", typ: "JWT" })));
  const claims = { iss, sub: iss, aud: `${ORIGIN}/oauth/token`, jti: "j1", exp: Math.floor(Date.now() / 1000) + 60, iat: Math.floor(Date.now() / 1000) };
  const json = JSON.stringify(claims);
  const payloads = [
    utf8(json),
    utf8(`\uFEFF${json}`), // a byte-order mark, which the library's TextDecoder drops
    utf8(`\uFEFF\uFEFF${json}`.slice(1)),
    utf8(` \n\t${json}\r\n`),
    utf8(JSON.stringify({ ...claims, iss: undefined, client_id: "x" }).replace("{", `{"iss":${JSON.stringify(iss)},`)),
  ];
  const out: string[] = [];
  for (const p of payloads) {
    out.push(`${header}.${b64url(p)}.c2ln`);
    // Standard base64 with padding, which the library's decoder accepts too.
    out.push(`${header}.${btoa(String.fromCharCode(...p))}.c2ln`);
  }
  return out;
}

interface Variant {
  what: string;
  body: string;
  authorization?: string;
}

function variants(dcrClientId: string): Variant[] {
  const out: Variant[] = [];
  const others = ["", dcrClientId, "https://app.example.com/oauth/client.json"];
  for (const grant of GRANTS) {
    const g = formOf(grant);
    const kind = grant.grant_type ?? "revocation";
    // The form's client_id: an internal value with empty and other values, repeated, in every order.
    for (const seq of sequences([INTERNAL, ...others], 3).filter((s) => s.includes(INTERNAL))) {
      const params = seq.map((v) => `client_id=${enc(v)}`);
      out.push({ what: `${kind} client_id ${JSON.stringify(seq)}`, body: [...params, ...g].join("&") });
      out.push({ what: `${kind} client_id last ${JSON.stringify(seq)}`, body: [...g, ...params].join("&") });
    }
    // Every spelling, once, in the form's own encodings.
    for (const spelling of INTERNAL_SPELLINGS) {
      out.push({ what: `${kind} spelling ${JSON.stringify(spelling)}`, body: [`client_id=${enc(spelling)}`, ...g].join("&") });
      out.push({ what: `${kind} plus-encoded ${JSON.stringify(spelling)}`, body: [`client_id=${enc(spelling).replace(/%20/g, "+")}`, ...g].join("&") });
      out.push({ what: `${kind} BOM-encoded ${JSON.stringify(spelling)}`, body: [`client_id=%EF%BB%BF${enc(spelling)}`, ...g].join("&") });
      out.push({ what: `${kind} raw ${JSON.stringify(spelling)}`, body: [`client_id=${spelling.replace(/[&=%+#]/g, (c) => enc(c))}`, ...g].join("&") });
      out.push({ what: `${kind} key-encoded ${JSON.stringify(spelling)}`, body: [`%63lient_id=${enc(spelling)}`, ...g].join("&") });
    }
    // HTTP Basic, alone and beside empty form values.
    for (const spelling of INTERNAL_SPELLINGS) {
      for (const user of [enc(spelling), spelling.replace(/:/g, "%3A"), enc(spelling).replace(/%20/g, "+")]) {
        const credentials = btoa(unescape(encodeURIComponent(`${user}:secret`)));
        for (const authorization of [`Basic ${credentials}`, `basic\t${credentials}`, `BASIC   ${credentials}  `]) {
          out.push({ what: `${kind} basic ${JSON.stringify(authorization)}`, body: g.join("&"), authorization });
          out.push({ what: `${kind} basic + empty client_id`, body: ["client_id=", ...g].join("&"), authorization });
        }
      }
    }
    // A client assertion's issuer, alone and beside empty and repeated parameters.
    const type = `client_assertion_type=${enc("urn:ietf:params:oauth:client-assertion-type:jwt-bearer")}`;
    for (const spelling of [INTERNAL, " https://127.0.0.1:9444/any", "\uFEFFhttps://127.0.0.1:9444/any", "https://[::1]/any"]) {
      for (const a of assertions(spelling)) {
        const assertion = `client_assertion=${enc(a)}`;
        out.push({ what: `${kind} assertion ${a.slice(0, 60)}`, body: [assertion, type, ...g].join("&") });
        out.push({ what: `${kind} assertion + empty client_id`, body: ["client_id=", assertion, type, ...g].join("&") });
        out.push({ what: `${kind} empty + assertion`, body: ["client_assertion=", assertion, type, ...g].join("&") });
        out.push({ what: `${kind} assertion + empty`, body: [assertion, "client_assertion=", type, ...g].join("&") });
        out.push({ what: `${kind} assertion, type twice`, body: [assertion, type, type, ...g].join("&") });
      }
    }
  }
  return out;
}

describe("the token endpoint and revocation never fetch a client id on an internal host", () => {
  it("generated variants: every grant type and revocation, repeated and empty parameters, encodings, Basic, assertions: 0 attempts, 0 connections", async () => {
    const dcr = await registerClient("Variant app");
    const all = variants(dcr.clientId);
    vi.spyOn(console, "warn").mockImplementation(() => {}); // the provider's line for each unknown client
    const counters = countOutbound();
    const statuses = new Map<number, number>();
    for (const v of all) {
      const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" };
      if (v.authorization) headers.authorization = v.authorization;
      const res = await workerFetch(`${ORIGIN}/oauth/token`, { method: "POST", headers, body: v.body });
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      expect([400, 401], v.what).toContain(res.status);
      expect(((await res.json()) as { error: string }).error, v.what).toMatch(/^invalid_(client|request)$/);
      expect(counters.attempts, v.what).toEqual([]);
    }
    expect(counters.connections).toEqual([]);
    expect(all.length).toBeGreaterThan(2000);
    console.log(`token endpoint: ${all.length} requests, statuses ${JSON.stringify(Object.fromEntries(statuses))}, ${counters.attempts.length} fetch attempts, ${counters.connections.length} connections`);
  });

  it("a request that names its client ambiguously is refused with what to fix, before the library reads it", async () => {
    const cases: [string, RegExp][] = [
      ["client_id=&client_id=abc&grant_type=refresh_token&refresh_token=a:b:c", /^client_id must be sent once \(this request sends it 2 times\)$/],
      ["client_id=&grant_type=refresh_token&refresh_token=a:b:c", /^client_id must not be empty$/],
      ["client_assertion=x.y.z&client_assertion_type=t&grant_type=refresh_token", /^client_assertion must be a JWT whose header and payload can be read$/],
      ["client_id=%E2%80%8Babc&grant_type=refresh_token&refresh_token=a:b:c", /^client_id: must not contain spaces, control or invisible characters$/],
    ];
    for (const [body, why] of cases) {
      const res = await workerFetch(`${ORIGIN}/oauth/token`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body });
      expect(res.status, body).toBe(401);
      expect(((await res.json()) as { error_description: string }).error_description, body).toMatch(why);
    }
    const basic = await workerFetch(`${ORIGIN}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", authorization: "Basic !!!" },
      body: "grant_type=refresh_token&refresh_token=a:b:c",
    });
    expect(basic.status).toBe(401);
    expect(basic.headers.get("www-authenticate")).toMatch(/^Basic /);
    expect(((await basic.json()) as { error_description: string }).error_description).toMatch(/HTTP Basic credentials cannot be read/);
  });

  it("a legitimate client still gets through: a registered client's refresh is the library's to answer, a public document is fetched", async () => {
    const dcr = await registerClient("Legit app");
    const counters = countOutbound();
    const res = await workerFetch(`${ORIGIN}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "refresh_token", client_id: dcr.clientId, refresh_token: "a:b:c", client_secret: "" }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe("invalid_grant");
    const cimd = await workerFetch(`${ORIGIN}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "refresh_token", client_id: "https://app.example.com/oauth/client.json", refresh_token: "a:b:c" }),
    });
    expect(cimd.status).toBe(401);
    expect(counters.connections.map((r) => r.url)).toEqual(["https://app.example.com/oauth/client.json"]);
    // The guard recognizes the library's requests by their User-Agent: this holds it to the library's actual one.
    expect(counters.connections[0].headers.get("user-agent")).toMatch(LIBRARY_USER_AGENT);
  });
});

describe("the guard on the library's own fetches", () => {
  it("a public document that redirects to an internal host: the hop is refused, only the public URL is connected to", async () => {
    const warnings: string[] = [];
    vi.spyOn(console, "warn").mockImplementation((...args: unknown[]) => void warnings.push(args.map(String).join(" ")));
    const counters = countOutbound((req) =>
      req.url.startsWith("https://app.example.com/") ? new Response(null, { status: 302, headers: { location: INTERNAL } }) : new Response("{}"),
    );
    const res = await workerFetch(`${ORIGIN}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "refresh_token", client_id: "https://app.example.com/oauth/redirects.json", refresh_token: "a:b:c" }),
    });
    expect(res.status).toBe(401);
    expect(counters.connections.map((r) => r.url)).toEqual(["https://app.example.com/oauth/redirects.json"]);
    expect(warnings.join("\n")).toContain(`not fetched: ${INTERNAL} 127.0.0.1 is a loopback address`);
  });

  it("is installed on the Worker's global fetch: a library request to an internal host is refused before any connection", async () => {
    const ua = "workers-oauth-provider/1.2.3 (+https://github.com/cloudflare/workers-oauth-provider)";
    await expect(fetch(INTERNAL, { headers: { "user-agent": ua } })).rejects.toThrow(/^not fetched: https:\/\/127\.0\.0\.1:9444\/any 127\.0\.0\.1 is a loopback address/);
    await expect(fetch("https://[::1]/x", { headers: { "user-agent": ua } })).rejects.toThrow(/not fetched: .*the loopback address/);
  });
});

describe("the guard leaves every other request alone", () => {
  it("a request with a streamed body, or a Request object, reaches the network as it was sent", async () => {
    const seen: string[] = [];
    const guarded = guardLibraryFetch(async (input, init) => {
      const req = new Request(input, init);
      seen.push(`${req.method} ${req.url} ${await req.text()}`);
      return new Response("ok");
    });
    const stream = new ReadableStream({ start: (c) => (c.enqueue(new TextEncoder().encode("streamed")), c.close()) });
    await guarded("http://127.0.0.1:8788/hook", { method: "POST", body: stream });
    await guarded(new Request("https://api.example.com/x", { method: "PUT", body: "object" }));
    expect(seen).toEqual(["POST http://127.0.0.1:8788/hook streamed", "PUT https://api.example.com/x object"]);
  });
});
