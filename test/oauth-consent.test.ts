/**
 * The consent page as it first appears, for an app that registered itself
 * (anyone can): submitted exactly as shown — every field with its default
 * value and checked state, its CSRF token and handle, and the Allow button —
 * it never gives the app the person's write standing. Nobody is chosen for
 * whom the app acts as, so the form is refused with what to choose and the
 * same choices again; access starts at Read only, so choosing Myself alone
 * gives a person's read token. The page says what acting as the person
 * allows, and marks an app that registered itself as not verified.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { seedAccount, workerFetch } from "./helpers.ts";
import { authorizePath, exchange, mcp, PASSWORD, pkce, registerClient } from "./oauth-helpers.ts";
import { addPerson, Browser, ORIGIN, signIn, uniqueEmail } from "./web-helpers.ts";
import { HUMAN_TOOLS } from "../src/catalog/effects.ts";
import { PERSON_ONLY_POWERS, personOnlyPowers } from "../src/web/consent.tsx";

afterEach(() => vi.restoreAllMocks());

const decode = (v: string) => v.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");

/** The attributes of one tag: name → value ("" for a bare attribute). */
function attributes(tag: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const m of tag.replace(/^<\w+/, "").matchAll(/([^\s=/>]+)(?:="([^"]*)")?/g)) found.set(m[1].toLowerCase(), decode(m[2] ?? ""));
  return found;
}

/** The consent form's HTML (the page's other form is the header's Sign out). */
function consentFormHtml(html: string): string {
  const form = /<form method="post" action="\/authorize">([\s\S]*?)<\/form>/.exec(html)?.[1];
  expect(form, "the page has the consent form").toBeTruthy();
  return form as string;
}

/**
 * What a browser sends when Allow is pressed on the form as it stands (the
 * HTML form submission algorithm, with the page's constraint validation
 * skipped, as a browser that ignores `required` would): each named input with
 * its value, a radio or checkbox only when checked, and the pressed button.
 */
function submitted(html: string, button: string): [string, string][] {
  const form = consentFormHtml(html);
  const fields: [string, string][] = [];
  for (const [tag] of form.matchAll(/<input\b[^>]*>/g)) {
    const a = attributes(tag);
    const name = a.get("name");
    if (!name || a.has("disabled")) continue;
    const type = (a.get("type") ?? "text").toLowerCase();
    if ((type === "radio" || type === "checkbox") && !a.has("checked")) continue;
    fields.push([name, a.get("value") ?? (type === "checkbox" || type === "radio" ? "on" : "")]);
  }
  const pressed = [...form.matchAll(/<button\b[^>]*>([\s\S]*?)<\/button>/g)].find((m) => m[1].trim() === button);
  expect(pressed, `a ${button} button`).toBeTruthy();
  const a = attributes((pressed as RegExpMatchArray)[0].slice(0, (pressed as RegExpMatchArray)[0].indexOf(">") + 1));
  fields.push([a.get("name") as string, a.get("value") as string]);
  return fields;
}

/** The checked radios of the consent form, by group. */
function checkedRadios(html: string): Record<string, string> {
  return Object.fromEntries(
    [...consentFormHtml(html).matchAll(/<input\b[^>]*type="radio"[^>]*>/g)].map((m) => attributes(m[0])).filter((a) => a.has("checked")).map((a) => [a.get("name"), a.get("value")]),
  );
}

async function post(b: Browser, fields: [string, string][]): Promise<Response> {
  const form: Record<string, string[]> = {};
  for (const [k, v] of fields) (form[k] ??= []).push(v);
  return b.post("/authorize", form);
}

async function signedIn() {
  const acc = await seedAccount();
  const email = uniqueEmail();
  const personId = await addPerson(acc.accountId, email, PASSWORD);
  const browser = new Browser();
  expect((await signIn(browser, email, PASSWORD)).status).toBe(303);
  return { acc, personId, browser };
}

async function grants(personId: string): Promise<{ kind: string; scope: string }[]> {
  return (await env.DB.prepare("SELECT kind, scope FROM tokens WHERE person_id = ?").bind(personId).all<{ kind: string; scope: string }>()).results;
}

describe("the consent page as it first appears never gives a self-registered app the person's write standing", () => {
  for (const scope of ["tasks:read tasks:write", "tasks:write"]) {
    it(`Allow pressed at once (the app asked for ${scope}): refused with what to choose, the same choices again, nothing granted`, async () => {
      const s = await signedIn();
      const { clientId, redirectUri } = await registerClient("Claude");
      const { challenge } = await pkce();
      const shown = await s.browser.get(authorizePath({ clientId, redirectUri, challenge, scope }));
      expect(shown.status).toBe(200);
      const html = await shown.text();
      const fields = submitted(html, "Allow");
      expect(fields.map(([k]) => k)).toEqual(expect.arrayContaining(["handle", "csrf", "decision"]));

      const res = await post(s.browser, fields);
      expect(await grants(s.personId), "what pressing Allow at once granted").toEqual([]);
      expect(res.status).toBe(400);
      expect(res.headers.get("location")).toBeNull();
      expect(fields.find(([k]) => k === "act_as"), "no one is chosen for whom the app acts as").toBeUndefined();
      expect(checkedRadios(html)).toEqual({ access: "read", tools: "all", policy: "trusted" });
      const again = await res.text();
      expect(again).toContain("Choose who the app acts as: One of my agents, or Myself. Nothing was allowed.");
      expect(again).not.toMatch(/\bat \w+ \(|TypeError|Error:/);
      // The same choices, still nobody chosen: pressing Allow on this page again is refused the same way.
      expect(checkedRadios(again)).toEqual({ access: "read", tools: "all", policy: "trusted" });
      for (const value of ["agent", "self"]) expect(again).toMatch(new RegExp(`<input type="radio" id="act_as_${value}" name="act_as" value="${value}" required`));
      const twice = await post(s.browser, submitted(again, "Allow"));
      expect(twice.status).toBe(400);
      expect(await grants(s.personId)).toEqual([]);
      expect((await env.OAUTH_KV.list({ prefix: `grant:${s.personId}:` })).keys).toEqual([]);
    });
  }

  it("choosing Myself and nothing else gives the person's read token, not their write standing", async () => {
    const s = await signedIn();
    const { clientId, redirectUri } = await registerClient("Claude");
    const { verifier, challenge } = await pkce();
    const html = await (await s.browser.get(authorizePath({ clientId, redirectUri, challenge, scope: "tasks:read tasks:write" }))).text();
    const res = await post(s.browser, [...submitted(html, "Allow").filter(([k]) => k !== "act_as"), ["act_as", "self"]]);
    expect(res.status).toBe(302);
    const code = new URL(res.headers.get("location") as string).searchParams.get("code") as string;
    const tokens = await exchange(clientId, code, verifier, redirectUri);
    expect(await grants(s.personId)).toEqual([{ kind: "human", scope: "read" }]);
    expect(tokens.scope).toBe("tasks:read");
    const c = await mcp(tokens.access_token);
    expect((await c.ok("whoami")).token).toMatchObject({ kind: "human", scope: "read" });
    expect((await c.listTools()).map((t) => t.name)).not.toContain("approve_task");
    await c.close();
    // A person's decision is a write: the read token is refused it (403, insufficient_scope).
    const decide = await workerFetch(`${ORIGIN}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${tokens.access_token}` },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "approve_task", arguments: { task_id: "tsk_none" } } }),
    });
    expect(decide.status).toBe(403);
    expect(decide.headers.get("www-authenticate")).toContain("insufficient_scope");
  });

  it("a policy preset holds only for an app that acts as an agent: Careful with Myself is refused, nothing granted; Careful with an agent is stored on its row", async () => {
    const s = await signedIn();
    const { clientId, redirectUri } = await registerClient("Claude");
    const { challenge } = await pkce();
    const html = await (await s.browser.get(authorizePath({ clientId, redirectUri, challenge, scope: "tasks:read tasks:write" }))).text();
    expect(html).toContain("If it acts as an agent, it works");
    const base = submitted(html, "Allow").filter(([k]) => k !== "act_as" && k !== "policy");
    const refused = await post(s.browser, [...base, ["act_as", "self"], ["policy", "careful"]]);
    expect(refused.status).toBe(400);
    const again = await refused.text();
    expect(again).toContain("Careful holds only for an app that acts as one of your agents; acting as you, an app is limited only by what it may do. Choose One of my agents, or Trusted.");
    expect(checkedRadios(again)).toMatchObject({ act_as: "self", policy: "careful" });
    expect(await grants(s.personId)).toEqual([]);
    const unknown = await post(s.browser, [...submitted(again, "Allow").filter(([k]) => k !== "policy"), ["policy", "lenient"]]);
    expect(unknown.status).toBe(400);
    expect(await unknown.text()).toContain("If it acts as an agent: choose Trusted, Careful or Read only.");
    expect(await grants(s.personId)).toEqual([]);
  });

  it("Deny needs no choice: the form as it first appears, with Deny pressed, goes back to the app with access_denied", async () => {
    const s = await signedIn();
    const { clientId, redirectUri } = await registerClient("Claude");
    const { challenge } = await pkce();
    const html = await (await s.browser.get(authorizePath({ clientId, redirectUri, challenge }))).text();
    expect(/<button[^>]*value="deny"[^>]*>/.exec(html)?.[0]).toContain("formnovalidate");
    const res = await post(s.browser, submitted(html, "Deny"));
    expect(res.status).toBe(302);
    expect(new URL(res.headers.get("location") as string).searchParams.get("error")).toBe("access_denied");
    expect(await grants(s.personId)).toEqual([]);
  });
});

describe("what the consent page says", () => {
  it("an app that registered itself is marked not verified, and its name is one it chose", async () => {
    const s = await signedIn();
    const { clientId, redirectUri } = await registerClient(`Taskgate Official "Verified" App`);
    const { challenge } = await pkce();
    const html = await (await s.browser.get(authorizePath({ clientId, redirectUri, challenge }))).text();
    expect(html).toContain("Allow the app that calls itself “<bdi class=\"u\">Taskgate Official &quot;Verified&quot; App</bdi>” to use your Taskgate account?");
    expect(html).toMatch(/<strong>Not verified\.<\/strong> This app registered itself, as any app can; Taskgate has not verified who made it\./);
    expect(html).not.toContain("Published by");
  });

  it("a Client ID Metadata Document client shows the host it is published on, and no 'not verified' mark", async () => {
    const s = await signedIn();
    const clientId = "https://app.example.com/oauth/client.json";
    const redirectUri = "https://app.example.com/callback";
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input: RequestInfo | URL) => {
      if (new Request(input).url !== clientId) throw new Error("unexpected outbound fetch");
      return new Response(JSON.stringify({ client_id: clientId, client_name: "Example App", redirect_uris: [redirectUri], token_endpoint_auth_method: "none", grant_types: ["authorization_code"] }), {
        headers: { "content-type": "application/json" },
      });
    });
    const { challenge } = await pkce();
    const q = new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: redirectUri, state: "s", code_challenge: challenge, code_challenge_method: "S256", scope: "tasks:read tasks:write", resource: `${ORIGIN}/mcp` });
    const shown = await s.browser.get(`/authorize?${q}`);
    expect(shown.status).toBe(200);
    const html = await shown.text();
    expect(html).toContain("Allow <bdi class=\"u\">Example App</bdi> to use your Taskgate account?");
    expect(html).toContain("Published by <strong>app.example.com</strong>");
    expect(html).not.toContain("Not verified");
    // Its first appearance is just as safe: nobody chosen, Read only.
    expect(checkedRadios(html)).toEqual({ access: "read", tools: "all", policy: "trusted" });
  });

  it("next to Myself, in plain words, what only a person may do: every human-only tool, each once", async () => {
    const phrased = PERSON_ONLY_POWERS.flatMap((p) => p.tools);
    expect(new Set(phrased).size, "no tool in two phrases").toBe(phrased.length);
    expect([...phrased].sort()).toEqual([...HUMAN_TOOLS].sort());
    expect(personOnlyPowers()).toEqual(PERSON_ONLY_POWERS.map((p) => p.words));

    const s = await signedIn();
    const { clientId, redirectUri } = await registerClient("Claude");
    const { challenge } = await pkce();
    const html = await (await s.browser.get(authorizePath({ clientId, redirectUri, challenge }))).text();
    expect(html).toMatch(/<input type="radio" id="act_as_self" name="act_as" value="self" required="" aria-describedby="act_as_self_means"\/>/);
    const means = /<div class="means" id="act_as_self_means">([\s\S]*?)<\/div>/.exec(html)?.[1] ?? "";
    const listed = [...means.matchAll(/<li>([^<]*)<\/li>/g)].map((m) => decode(m[1]));
    expect(listed).toEqual(personOnlyPowers());
    for (const words of ["approve or reject your agents' work", "turn on auto-OK", "pause and resume agents", "revoke tokens", "disconnect Google Drive, Slack or Notion"]) {
      expect(listed.join("; ")).toContain(words);
    }
    expect(means).toContain("<strong>If an agent sent you this link, choose One of my agents:</strong> acting as you, it could approve its own work.");
  });
});
