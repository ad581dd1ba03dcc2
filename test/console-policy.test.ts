/**
 * A person sets and edits policies in the console: an agent's (all its
 * connections) on its policy page, a connection's own (which only narrows
 * the agent's) on the token's, and a preset when a token is created or an app
 * is connected by URL. What the agent's MCP client is told (tools/list's
 * `_meta`, whoami) follows at once; bad input is a message and changes nothing.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { POLICY_KEY, POLICY_PRESETS, rulesText } from "../src/catalog/policy.ts";
import { connect, createToken, type TestClient } from "./helpers.ts";
import { Browser, field } from "./web-helpers.ts";
import { flashOn, open, signedInPerson, unescape, type Person } from "./console.helpers.ts";
import { connectApp as connectByUrl, mcp } from "./oauth-helpers.ts";

const CAREFUL = rulesText(POLICY_PRESETS.careful.rules);
const READ_ONLY = rulesText(POLICY_PRESETS.read_only.rules);

/** Sends one of a policy page's forms as the page does: its CSRF token, a fresh form key, the rules it showed. */
async function send(b: Browser, path: string, fields: Record<string, string | undefined>): Promise<Response> {
  const { html } = await open(b, path);
  const res = await b.post(path, { csrf: field(html, "csrf"), form_id: field(html, "form_id"), was: field(html, "was"), ...fields });
  expect(res.status, await res.clone().text()).toBe(303);
  return res;
}

async function agentPolicy(accountId: string, name: string): Promise<string | null> {
  return (await env.DB.prepare("SELECT policy FROM agents WHERE account_id = ? AND name = ?").bind(accountId, name).first<{ policy: string | null }>())!.policy;
}

async function tokenPolicy(id: string): Promise<string | null> {
  return (await env.DB.prepare("SELECT policy FROM tokens WHERE id = ?").bind(id).first<{ policy: string | null }>())!.policy;
}

async function policyRows(accountId: string): Promise<string> {
  const agents = await env.DB.prepare("SELECT name, policy FROM agents WHERE account_id = ? ORDER BY name").bind(accountId).all();
  const tokens = await env.DB.prepare("SELECT id, policy FROM tokens WHERE account_id = ? ORDER BY id").bind(accountId).all();
  const activity = await env.DB.prepare("SELECT count(*) AS n FROM activity WHERE account_id = ?").bind(accountId).first<{ n: number }>();
  return JSON.stringify([agents.results, tokens.results, activity]);
}

/** Each listed tool's policy decision, by name (a tool denied everywhere is not listed). */
async function told(c: TestClient): Promise<Map<string, { decision: string; rule: string; where?: { decision: string; project: string; outside: boolean }[] }>> {
  return new Map((await c.listTools()).map((t) => [t.name, (t as { _meta?: Record<string, any> })._meta?.[POLICY_KEY]]));
}

const agentPage = (p: Person) => `/agents/${p.acc.agentName}/policy`;

describe("an agent's policy, edited in the console", () => {
  it("a preset, a rule for one tool and a rule for a project change what the agent's MCP client is told", async () => {
    const p = await signedInPerson("Policy editor");
    const human = await connect(p.acc.human);
    const agent = await connect(p.acc.agent);
    const { project } = await human.ok("create_project", { name: "Payroll" });

    const agents = await open(p.b, "/agents");
    expect(agents.html).toContain(`href="/agents/bot/policy"`);
    expect(agents.html).toMatch(/aria-label="Policy of bot: Trusted">Trusted<\/a>/);
    const page = await open(p.b, agentPage(p));
    expect(page.res.status).toBe(200);
    expect(page.html).toContain("Now: Trusted");
    expect(page.html).toMatch(/<input type="radio" id="preset-trusted" name="preset" value="trusted" checked=""/);
    expect((await told(agent)).get("delete_task")).toMatchObject({ decision: "allow" });

    // Careful, chosen on the page.
    await send(p.b, agentPage(p), { op: "preset", preset: "careful" });
    expect(await flashOn(p.b, agentPage(p))).toBe(`ok: Saved bot's policy: Careful. ${POLICY_PRESETS.careful.description}`);
    expect(await agentPolicy(p.acc.accountId, "bot")).toBe(CAREFUL);
    let list = await told(agent);
    expect(list.get("delete_task")).toMatchObject({ decision: "ask", rule: "agent rule 1: ask the person before destructive tools" });
    expect(list.get("create_task")).toMatchObject({ decision: "allow" });
    let who = (await agent.ok("whoami")).policy;
    expect(who.preset).toBe("careful");
    expect(who.ask.map((a: { tool: string }) => a.tool)).toContain("delete_task");
    const shown = await open(p.b, agentPage(p));
    expect(shown.html).toContain("Now: Careful");
    expect(shown.html).toMatch(/<input type="radio" id="preset-careful" name="preset" value="careful" checked=""/);
    expect(unescape(shown.html)).toContain("ask the person before destructive tools");

    // A deny rule for one tool: the tool is no longer listed.
    await send(p.b, agentPage(p), { op: "add", decision: "deny", applies: "tool", tool: "update_task", where: "anywhere" });
    expect(await flashOn(p.b, agentPage(p))).toBe("ok: Saved bot's policy: added the rule “deny update_task”. It now has 3 rules.");
    list = await told(agent);
    expect(list.has("update_task")).toBe(false);
    who = (await agent.ok("whoami")).policy;
    expect(who.preset).toBeNull();
    expect(who.deny).toEqual([expect.objectContaining({ tool: "update_task", rule: "agent rule 3: deny update_task" })]);
    expect(await agent.fails("update_task", { task_id: "tsk_0000000000000000", title: "x" })).toMatch(/denied/);

    // A rule for a project: named by the project's name on the page, told beside the tool in tools/list.
    await send(p.b, agentPage(p), { op: "add", decision: "deny", applies: "tool", tool: "create_task", where: "in", project: project.id });
    expect(await flashOn(p.b, agentPage(p))).toBe("ok: Saved bot's policy: added the rule “deny create_task in project “Payroll””. It now has 4 rules.");
    list = await told(agent);
    expect(list.get("create_task")).toMatchObject({ decision: "allow", where: [expect.objectContaining({ decision: "deny", project: project.id, outside: false })] });
    who = (await agent.ok("whoami")).policy;
    expect(who.by_project).toEqual([expect.objectContaining({ tool: "create_task", decision: "deny", project: project.id, outside: false })]);
    expect(await agent.fails("create_task", { title: "Raise", project_id: project.id })).toMatch(/denied/);
    await agent.ok("create_task", { title: "Elsewhere" });
    const table = unescape((await open(p.b, agentPage(p))).html);
    expect(table).toContain("deny create_task in project “Payroll”");
    expect(table).toMatch(/In project “Payroll”: <span class="badge s-deny">Deny<\/span>/);

    // Removing the first rule (ask before destructive tools): delete_task is allowed again.
    await send(p.b, agentPage(p), { op: "remove", rule: "1" });
    expect(await flashOn(p.b, agentPage(p))).toBe("ok: Saved bot's policy: removed the rule “ask the person before destructive tools”. It now has 3 rules.");
    expect((await told(agent)).get("delete_task")).toMatchObject({ decision: "allow" });

    // Back to Trusted: no rules, the column empty again.
    await send(p.b, agentPage(p), { op: "preset", preset: "trusted" });
    expect(await agentPolicy(p.acc.accountId, "bot")).toBeNull();
    expect((await told(agent)).has("update_task")).toBe(true);
    expect((await agent.ok("whoami")).policy).toMatchObject({ preset: "trusted", rules: [] });

    const feed = await env.DB.prepare("SELECT token_id, actor, target_id, person_id, summary FROM activity WHERE account_id = ? AND tool = 'set_agent_policy' ORDER BY created_at, id")
      .bind(p.acc.accountId)
      .all<{ token_id: string; actor: string; target_id: string; person_id: string | null; summary: string }>();
    expect(feed.results).toHaveLength(5);
    expect(feed.results[0]).toMatchObject({ token_id: `web_${p.personId}`, actor: "human", person_id: p.personId });
    expect(feed.results[0].summary).toBe(
      "set the policy of agent bot in the web console: Careful (ask the person before destructive tools; ask the person before tools that reach connected apps)",
    );
    await Promise.all([human.close(), agent.close()]);
  });

  it("the same preset again changes nothing and writes no activity", async () => {
    const p = await signedInPerson("Policy unchanged");
    const before = await policyRows(p.acc.accountId);
    await send(p.b, agentPage(p), { op: "preset", preset: "trusted" });
    expect(await flashOn(p.b, agentPage(p))).toBe("ok: Nothing was changed: that is already bot's policy (Trusted).");
    expect(await policyRows(p.acc.accountId)).toBe(before);
  });
});

describe("a connection's own policy", () => {
  it("narrows its agent's policy for that connection alone, and cannot widen it", async () => {
    const p = await signedInPerson("Connection policy");
    const other = await createToken({ accountId: p.acc.accountId, kind: "agent", scope: "write", agent: p.acc.agentName, label: "bot elsewhere" });
    const mine = await connect(p.acc.agent);
    const theirs = await connect(other.secret);
    const tokenPage = `/apps/tokens/${p.acc.tokenIds.agent}/policy`;

    const apps = await open(p.b, "/apps");
    expect(apps.html).toContain(`href="${tokenPage}"`);
    expect(apps.html).toContain("its own policy can only narrow that");
    const page = await open(p.b, tokenPage);
    expect(page.res.status).toBe(200);
    expect(unescape(page.html)).toContain("they can only narrow what the agent may do, never widen it");

    // The agent denies delete_task; the connection's own allow does not bring it back.
    await send(p.b, agentPage(p), { op: "add", decision: "deny", applies: "tool", tool: "delete_task", where: "anywhere" });
    await send(p.b, tokenPage, { op: "add", decision: "allow", applies: "tool", tool: "delete_task", where: "anywhere" });
    expect(await flashOn(p.b, tokenPage)).toBe("ok: Saved this connection's own rules: added the rule “allow delete_task”. It now has 1 rule.");
    expect(await tokenPolicy(p.acc.tokenIds.agent)).toBe('[{"decision":"allow","tool":"delete_task"}]');
    expect((await told(mine)).has("delete_task")).toBe(false);
    expect((await mine.ok("whoami")).policy.deny).toEqual([expect.objectContaining({ tool: "delete_task", rule: "agent rule 1: deny delete_task" })]);

    // Read only on this connection: its write tools are gone; the agent's other token keeps them.
    await send(p.b, tokenPage, { op: "preset", preset: "read_only" });
    expect(await tokenPolicy(p.acc.tokenIds.agent)).toBe(READ_ONLY);
    const narrowed = await told(mine);
    expect(narrowed.has("create_task")).toBe(false);
    expect(narrowed.get("list_tasks")).toMatchObject({ decision: "allow" });
    expect((await told(theirs)).get("create_task")).toMatchObject({ decision: "allow" });
    expect(await tokenPolicy(other.id), "another connection keeps what it had").toBeNull();
    const shown = unescape((await open(p.b, "/apps")).html);
    expect(shown).toContain(`>Read only<span class="sr"> (the own policy of bot (write))</span></a>`);

    const feed = await env.DB.prepare("SELECT summary FROM activity WHERE account_id = ? AND tool = 'set_connection_policy' ORDER BY created_at DESC, id DESC")
      .bind(p.acc.accountId)
      .first<{ summary: string }>();
    expect(feed!.summary).toBe(`set the own policy of connection ${p.acc.tokenIds.agent} "bot (write)" (agent bot) in the web console: Read only (deny tools that change data)`);

    // A person's own token has no policy to set.
    const human = await open(p.b, `/apps/tokens/${p.acc.tokenIds.human}/policy`);
    expect(human.html).toContain("a policy holds only for agents");
    expect(human.html).not.toContain('name="preset"');
    const before = await policyRows(p.acc.accountId);
    const refused = await p.b.post(`/apps/tokens/${p.acc.tokenIds.human}/policy`, { csrf: field(human.html, "csrf"), form_id: crypto.randomUUID(), was: "", op: "preset", preset: "careful" });
    expect(refused.status).toBe(303);
    expect(await flashOn(p.b, `/apps/tokens/${p.acc.tokenIds.human}/policy`)).toBe("error: This token acts as you, and a policy holds only for agents; nothing was changed.");
    expect(await policyRows(p.acc.accountId)).toBe(before);
    await Promise.all([mine.close(), theirs.close()]);
  });
});

describe("presets at creation", () => {
  it("a token created with Careful has it from its first call; existing tokens keep no policy", async () => {
    const p = await signedInPerson("Careful token");
    const { html } = await open(p.b, "/apps");
    expect(html).toMatch(/<input type="radio" id="k-policy-trusted" name="policy" value="trusted" checked=""/);
    const made = await p.b.post("/apps/tokens", { csrf: field(html, "csrf"), form_id: field(html, "form_id"), kind: "agent", agent: "scribe", scope: "write", policy: "careful" });
    expect(made.status).toBe(303);
    const next = await open(p.b, "/apps");
    expect(next.html).toContain("agent scribe, read and write, its own policy Careful.");
    const secret = /<pre class="secret" aria-label="Token">(tg_[A-Za-z0-9_-]{43})<\/pre>/.exec(next.html)?.[1] as string;
    const scribe = await connect(secret);
    const who = await scribe.ok("whoami");
    expect(who.policy.preset).toBe("careful");
    expect(who.policy.rules.map((r: { source: string }) => r.source)).toEqual(["connection", "connection"]);
    expect((await told(scribe)).get("delete_task")).toMatchObject({ decision: "ask" });
    expect(await tokenPolicy(who.token.id)).toBe(CAREFUL);
    expect(await agentPolicy(p.acc.accountId, "scribe"), "the agent itself gets no rules").toBeNull();
    for (const id of Object.values(p.acc.tokenIds)) expect(await tokenPolicy(id)).toBeNull();

    // Trusted, the default, stores nothing: as before presets.
    const again = await open(p.b, "/apps");
    await p.b.post("/apps/tokens", { csrf: field(again.html, "csrf"), form_id: field(again.html, "form_id"), kind: "agent", agent: "plain", scope: "write" });
    const plain = await env.DB.prepare("SELECT t.policy FROM tokens t JOIN agents a ON a.id = t.agent_id WHERE a.name = 'plain' AND a.account_id = ?").bind(p.acc.accountId).first<{ policy: string | null }>();
    expect(plain!.policy).toBeNull();
    await scribe.close();
  });

  it("a token form with a preset that does not apply is refused and creates nothing", async () => {
    const p = await signedInPerson("Refused presets");
    const count = async () => (await env.DB.prepare("SELECT count(*) AS n FROM tokens WHERE account_id = ?").bind(p.acc.accountId).first<{ n: number }>())!.n;
    const before = await count();
    const { html } = await open(p.b, "/apps");
    await p.b.post("/apps/tokens", { csrf: field(html, "csrf"), form_id: crypto.randomUUID(), kind: "human", scope: "write", policy: "careful" });
    expect(await flashOn(p.b, "/apps")).toBe(
      "error: Its own policy: Careful holds only for a token that acts as an agent; a token that acts as you is limited by its scope alone. Choose Trusted, or An agent. Nothing was created.",
    );
    await p.b.post("/apps/tokens", { csrf: field(html, "csrf"), form_id: crypto.randomUUID(), kind: "agent", agent: "x", scope: "write", policy: "lenient" });
    expect(await flashOn(p.b, "/apps")).toBe("error: Its own policy: choose Trusted, Careful or Read only. Nothing was created.");
    expect(await count()).toBe(before);
  });

  it("an app connected by URL as an agent with Careful gets it on its connection", async () => {
    const app = await connectByUrl({ actAs: "agent", agentName: "helper", access: "write", policy: "careful" });
    const client = await mcp(app.tokens.access_token);
    const who = await client.ok("whoami");
    expect(who.token).toMatchObject({ kind: "agent", agent: "helper" });
    expect(who.policy.preset).toBe("careful");
    expect((await told(client)).get("delete_task")).toMatchObject({ decision: "ask" });
    expect(await tokenPolicy(who.token.id)).toBe(CAREFUL);
    const shown = await open(app.browser, `/apps/tokens/${who.token.id}/policy`);
    expect(shown.html).toContain("This connection&#39;s own rules: Careful");
    await client.close();

    const trusted = await connectByUrl({ actAs: "agent", agentName: "helper", access: "write" });
    const plain = await mcp(trusted.tokens.access_token);
    const whoPlain = await plain.ok("whoami");
    expect(await tokenPolicy(whoPlain.token.id), "Trusted, the default: no rules, as before").toBeNull();
    await plain.close();
  });
});

describe("bad input and forged forms change nothing", () => {
  it("each bad field is named in plain words; the page keeps the choices; nothing is written", async () => {
    const p = await signedInPerson("Bad policy input");
    const human = await connect(p.acc.human);
    await human.ok("create_project", { name: "Mine" });
    const before = await policyRows(p.acc.accountId);
    const cases: [Record<string, string>, string][] = [
      [{ op: "add", decision: "deny", applies: "tool", tool: "" }, "error: Tool: choose the one tool the rule is about."],
      [{ op: "add", decision: "deny", applies: "tool", tool: "approve_task" }, "error: Tool: choose the one tool the rule is about."],
      [{ op: "add", decision: "maybe", applies: "every" }, "error: Decision: choose Allow, Ask me first, Deny."],
      [{ op: "add", decision: "deny", applies: "effect", effect: "loud" }, "error: Effect: choose which kind of tool the rule is about."],
      [{ op: "add", decision: "deny", applies: "toolset", toolset: "nope" }, expect.stringMatching(/^error: Toolset: choose one of tasks, /) as unknown as string],
      [{ op: "add", decision: "deny", applies: "every", where: "in", project: "prj_notmine0000000" }, "error: Project: choose one of this account's projects from the list."],
      [{ op: "add", decision: "deny", applies: "every", where: "in" }, "error: Project: choose the project the rule is about, or choose Anywhere."],
      [{ op: "add", decision: "deny", applies: "somewhere" }, "error: Applies to: choose every tool, an effect, a toolset or one tool."],
      [{ op: "preset", preset: "lenient" }, "error: Preset: choose Trusted, Careful, Read only."],
      [{ op: "remove", rule: "3" }, "error: There is no rule 3 in this policy; reload the page and choose one of its rules."],
      [{ op: "rename" }, "error: This policy form says neither preset, add nor remove; nothing was changed. Reload the page and try again."],
      [{ op: "preset", preset: "careful", was: "{not json" }, "error: This policy form is damaged (its record of the rules it showed); nothing was changed. Reload the page and try again."],
    ];
    for (const [fields, said] of cases) {
      await send(p.b, agentPage(p), fields);
      expect(await flashOn(p.b, agentPage(p)), JSON.stringify(fields)).toEqual(said);
    }
    // The refused form comes back with its choices and the field to fix marked.
    await send(p.b, agentPage(p), { op: "add", decision: "ask", applies: "tool", tool: "" });
    const again = await open(p.b, agentPage(p));
    expect(again.html).toMatch(/<option value="ask" selected="">Ask me first<\/option>/);
    expect(again.html).toMatch(/id="r-tool-on" name="applies" value="tool" checked=""/);
    expect(again.html).toMatch(/<select id="r-tool" name="tool" aria-label="Tool" aria-invalid="true">/);
    expect(again.html).not.toMatch(/\bat \w+ \(|TypeError|Error:/);
    expect(await policyRows(p.acc.accountId)).toBe(before);
    await human.close();
  });

  it("a form sent twice, a page out of date and a form without its key change nothing more", async () => {
    const p = await signedInPerson("Policy forms once");
    const { html } = await open(p.b, agentPage(p));
    const form = { csrf: field(html, "csrf"), form_id: field(html, "form_id"), was: field(html, "was"), op: "add", decision: "deny", applies: "tool", tool: "delete_task", where: "anywhere" };
    expect((await p.b.post(agentPage(p), form)).status).toBe(303);
    const after = await policyRows(p.acc.accountId);
    expect((await p.b.post(agentPage(p), form)).status).toBe(303);
    expect(await flashOn(p.b, agentPage(p))).toBe(
      "error: This form was already sent and did its work then; nothing more was changed. The page shows the policy as it is now.",
    );
    // Another render of the same old page (a second tab): the rules changed since it showed them.
    expect((await p.b.post(agentPage(p), { ...form, form_id: crypto.randomUUID(), tool: "move_task" })).status).toBe(303);
    expect(await flashOn(p.b, agentPage(p))).toMatch(/^error: This policy changed after the page showed it/);
    expect((await p.b.post(agentPage(p), { ...form, form_id: undefined, tool: "move_task" })).status).toBe(303);
    expect(await flashOn(p.b, agentPage(p))).toBe("error: This policy form is from an older page: nothing was changed. Make the change again below.");
    expect(await policyRows(p.acc.accountId)).toBe(after);
  });

  it("needs this session's CSRF token and this origin", async () => {
    const p = await signedInPerson("Policy CSRF");
    const { html } = await open(p.b, agentPage(p));
    const before = await policyRows(p.acc.accountId);
    const form = { form_id: field(html, "form_id"), was: "", op: "preset", preset: "read_only" };
    const paths = [agentPage(p), `/apps/tokens/${p.acc.tokenIds.agent}/policy`];
    for (const path of paths) {
      const missing = await p.b.post(path, form);
      expect(missing.status).toBe(403);
      expect(await missing.text()).toContain("nothing was changed");
      expect((await p.b.post(path, { ...form, csrf: "forged" })).status).toBe(403);
      expect((await p.b.post(path, { ...form, csrf: field(html, "csrf") }, { origin: "https://evil.example" })).status).toBe(403);
      // Signed out: to sign-in, nothing changed.
      expect((await new Browser().post(path, { ...form, csrf: field(html, "csrf") })).headers.get("location")).toBe("/signin");
    }
    expect(await policyRows(p.acc.accountId)).toBe(before);
  });

  it("an unknown agent or token is a page that says so", async () => {
    const p = await signedInPerson("Unknown policy");
    expect((await open(p.b, "/agents/nobody/policy")).res.status).toBe(404);
    expect((await open(p.b, "/agents/NOT%20A%20NAME/policy")).res.status).toBe(404);
    expect((await open(p.b, "/apps/tokens/tok_doesnotexist0000/policy")).res.status).toBe(404);
    const { html } = await open(p.b, agentPage(p));
    const res = await p.b.post("/agents/nobody/policy", { csrf: field(html, "csrf"), form_id: crypto.randomUUID(), was: "", op: "preset", preset: "careful" });
    expect(res.headers.get("location")).toBe("/agents");
    expect(await flashOn(p.b, "/agents")).toBe("error: There is no agent nobody in this account; nothing was changed.");
  });
});
