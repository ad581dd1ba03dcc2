/**
 * Per-agent policies, told before the call and enforced by the server: what
 * an agent's tools/list, whoami and a dry run tell, and what a denied call
 * does (nothing), through real SDK clients in both protocol eras.
 */
import { env } from "cloudflare:test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, createToken, ERAS, seedAccount, snapshotDb, type Era, type SeededAccount, type TestClient } from "./helpers.ts";
import { DESTRUCTIVE_TOOLS, HUMAN_TOOLS, OPEN_WORLD_TOOLS, TOOL_NAMES, WRITE_TOOLS } from "../src/catalog/effects.ts";
import { decide, parseRules, POLICY_KEY, POLICY_PRESETS, rulesText, type PolicyRule } from "../src/catalog/policy.ts";
import { actorIn, actorOut } from "../src/db/consent.ts";
import { measureTools, POLICY_META_BYTES_TARGET } from "../bench/tool-bytes.ts";

/** An agent token with these rules on its agent and on itself (a new agent each time: the rules are its own). */
async function agentWith(acc: SeededAccount, agent: string, rules: { agent?: PolicyRule[]; connection?: PolicyRule[] }, era: Era): Promise<{ client: TestClient; tokenId: string }> {
  const token = await createToken({ accountId: acc.accountId, kind: "agent", scope: "write", agent });
  await env.DB.batch([
    env.DB.prepare("UPDATE agents SET policy = ? WHERE account_id = ? AND name = ?").bind(rulesText(rules.agent ?? []), acc.accountId, agent),
    env.DB.prepare("UPDATE tokens SET policy = ? WHERE id = ?").bind(rulesText(rules.connection ?? []), token.id),
  ]);
  return { client: await connect(token.secret, era), tokenId: token.id };
}

const careful = POLICY_PRESETS.careful.rules;

describe.each(ERAS)("per-agent policy (%s)", (era) => {
  let acc: SeededAccount;
  let person: TestClient;
  const open: TestClient[] = [];
  const agent = async (name: string, rules: { agent?: PolicyRule[]; connection?: PolicyRule[] }) => {
    const made = await agentWith(acc, `${name}-${era}`, rules, era);
    open.push(made.client);
    return made.client;
  };

  beforeAll(async () => {
    acc = await seedAccount(`Policy ${era}`, "bot");
    person = await connect(acc.human, era);
    open.push(person);
  });
  afterAll(() => Promise.all(open.map((c) => c.close())));

  it("Careful: every listed tool tells its decision, ask on exactly the destructive and open-world tools; hints stay the tool's", async () => {
    const c = await agent("careful", { agent: careful });
    const listed = await c.listTools();
    const mine = new Map((await person.listTools()).map((t) => [t.name, t]));
    const agentTools = TOOL_NAMES.filter((t) => !HUMAN_TOOLS.has(t));
    expect(listed.map((t) => t.name).sort()).toEqual([...agentTools].sort());
    for (const t of listed as any[]) {
      const told = t._meta?.[POLICY_KEY];
      const expected = DESTRUCTIVE_TOOLS.has(t.name) || OPEN_WORLD_TOOLS.has(t.name) ? "ask" : "allow";
      expect(told?.decision, t.name).toBe(expected);
      expect(typeof told.rule).toBe("string");
      expect(told.reason.length).toBeGreaterThan(10);
      if (expected === "ask") expect(told.rule).toMatch(/^agent rule [12]: ask the person before (destructive tools|tools that reach connected apps)$/);
      // A policy never changes an annotation: the person's list announces the same hints.
      expect(t.annotations, t.name).toEqual(mine.get(t.name)?.annotations);
      expect(t.title).toBe(mine.get(t.name)?.title);
    }
    // Told in few bytes: what the policy adds to each tool's _meta.
    const sameTools = [...mine.values()].filter((t) => listed.some((l) => l.name === t.name));
    const added = measureTools(listed as any).meta - measureTools(sameTools as any).meta;
    expect(added / listed.length).toBeLessThanOrEqual(POLICY_META_BYTES_TARGET);
    // A person has no policy: nothing is told beside their tools.
    for (const t of mine.values() as Iterable<any>) expect(t._meta?.[POLICY_KEY], t.name).toBeUndefined();
  });

  it("a denied tool is not listed, its call changes nothing and says which rule, and whoami says why", async () => {
    const c = await agent("denied", { agent: careful, connection: [{ decision: "deny", tool: "delete_label" }] });
    const names = (await c.listTools()).map((t) => t.name);
    expect(names).not.toContain("delete_label");
    expect(names).toContain("create_label");
    const label = await person.ok("create_label", { name: `keep-${era}` });
    const before = await snapshotDb();
    const r = await c.call("delete_label", { label_id: label.label.id });
    expect(r.isError).toBe(true);
    expect(r.text).toContain("delete_label is denied: connection rule 1: deny delete_label. Denied by this connection's policy.");
    expect(r.text).toContain("Nothing was run.");
    expect(r.meta[POLICY_KEY]).toEqual({ decision: "deny", rule: "connection rule 1: deny delete_label", reason: "Denied by this connection's policy." });
    expect(await snapshotDb()).toBe(before);
    const who = await c.ok("whoami");
    expect(who.policy.deny).toEqual([{ tool: "delete_label", rule: "connection rule 1: deny delete_label" }]);
    expect(who.policy.ask.map((a: any) => a.tool).sort()).toEqual(TOOL_NAMES.filter((t) => !HUMAN_TOOLS.has(t) && t !== "delete_label" && (DESTRUCTIVE_TOOLS.has(t) || OPEN_WORLD_TOOLS.has(t))).sort());
    expect(who.policy.in_words).toContain("Denied (not listed): delete_label.");
    expect(who.policy.rules.map((r: any) => [r.source, r.decision])).toEqual([["agent", "ask"], ["agent", "ask"], ["connection", "deny"]]);
    expect(who.policy.preset).toBeNull();
  });

  it("Read only lists only reads, as a read token's list does; whoami names the preset", async () => {
    const c = await agent("reader", { agent: POLICY_PRESETS.read_only.rules });
    const names = (await c.listTools()).map((t) => t.name).sort();
    expect(names).toEqual(TOOL_NAMES.filter((t) => !WRITE_TOOLS.has(t)).sort());
    const who = await c.ok("whoami");
    expect(who.policy.preset).toBe("read_only");
    expect(who.policy.deny.length).toBe(TOOL_NAMES.filter((t) => WRITE_TOOLS.has(t) && !HUMAN_TOOLS.has(t)).length);
  });

  it("a connection's rules only narrow: an allow never outweighs its agent's ask", async () => {
    const c = await agent("narrow", { agent: careful, connection: [{ decision: "allow", effect: "destructive" }, { decision: "allow", tool: "delete_task" }] });
    const tool = (await c.listTools()).find((t) => t.name === "delete_task") as any;
    expect(tool._meta[POLICY_KEY].decision).toBe("ask");
    const who = await c.ok("whoami", { dry_run: { tool: "delete_task", arguments: {} } });
    expect(who.dry_run.decision).toBe("ask");
  });

  it("a project rule: writes only in Launch; the list tells where, the call is judged by the rows it names", async () => {
    const launch = await person.ok("create_project", { name: `Launch ${era}` });
    const finance = await person.ok("create_project", { name: `Finance ${era}` });
    const outsideLaunch: PolicyRule = { decision: "deny", effect: "write", outside_project: launch.project.id };
    const c = await agent("launch", { agent: [outsideLaunch] });
    const create = (await c.listTools()).find((t) => t.name === "create_task") as any;
    expect(create._meta[POLICY_KEY]).toMatchObject({ decision: "allow", where: [{ decision: "deny", project: launch.project.id, outside: true }] });
    const inLaunch = await c.ok("create_task", { title: "in launch", project_id: launch.project.id });
    expect(inLaunch.task.project_id).toBe(launch.project.id);
    const there = await person.ok("create_task", { title: "in finance", project_id: finance.project.id });
    const before = await snapshotDb();
    const refused = await c.call("update_task", { task_id: there.task.id, title: "changed" });
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain(`outside project ${launch.project.id}`);
    // A call that names no project reaches none: outside Launch.
    expect((await c.call("create_task", { title: "in the inbox" })).isError).toBe(true);
    expect(await snapshotDb()).toBe(before);
    const dry = (await c.ok("whoami", { dry_run: { tool: "update_task", arguments: { task_id: there.task.id, title: "x" } } })).dry_run;
    expect(dry).toMatchObject({ decision: "deny", writes: true, arguments_valid: true });
    expect(dry.touches).toEqual([{ kind: "task", id: there.task.id, name: "in finance", project_id: finance.project.id, project_name: `Finance ${era}`, status: "open", subtasks: 0 }]);
    // Reads are not written: the rule about writes leaves them allowed anywhere.
    expect((await c.ok("get_task", { task_id: there.task.id })).task.id).toBe(there.task.id);
  });

  it("a dry run says whether a call would run, by which rule, what would change it and what it would touch, and writes nothing", async () => {
    const c = await agent("dry", { agent: careful });
    const parent = await person.ok("create_task", { title: "Ship the release" });
    await person.ok("decompose_task", { task_id: parent.task.id, subtasks: [{ title: "one" }, { title: "two" }] });
    const before = await snapshotDb();
    const dry = (await c.ok("whoami", { dry_run: { tool: "delete_task", arguments: { task_id: parent.task.id } } })).dry_run;
    expect(dry).toMatchObject({
      tool: "delete_task",
      decision: "ask",
      rule: "agent rule 1: ask the person before destructive tools",
      arguments_valid: true,
      problem: null,
      writes: true,
    });
    expect(dry.would_change).toContain("the agent's policy");
    expect(dry.touches).toEqual([{ kind: "task", id: parent.task.id, name: "Ship the release", project_id: null, project_name: null, status: "open", subtasks: 2 }]);
    const read = (await c.ok("whoami", { dry_run: { tool: "list_tasks" } })).dry_run;
    expect(read).toMatchObject({ decision: "allow", rule: "default", reason: "No rule of the policy covers it.", writes: false, touches: [] });
    const bad = (await c.ok("whoami", { dry_run: { tool: "create_task", arguments: { title: "" } } })).dry_run;
    expect(bad.arguments_valid).toBe(false);
    expect(bad.problem).toContain("title");
    const human = (await c.ok("whoami", { dry_run: { tool: "approve_task", arguments: {} } })).dry_run;
    expect(human).toMatchObject({ decision: "deny", rule: "token: human_only" });
    expect((await c.call("whoami", { dry_run: { tool: "no_such_tool" } })).text).toContain("no tool is named");
    expect(await snapshotDb()).toBe(before);
    // A person's dry run: no policy binds them.
    expect((await person.ok("whoami", { dry_run: { tool: "delete_task", arguments: { task_id: parent.task.id } } })).dry_run.decision).toBe("allow");
    expect((await person.ok("whoami")).policy).toBeNull();
  });
});

describe("policy rules", () => {
  it("are evaluated deny, then ask, then allow, the most specific rule named", () => {
    const rules: PolicyRule[] = [
      { decision: "allow", tool: "delete_task" },
      { decision: "ask", effect: "destructive" },
      { decision: "ask", toolset: "tasks" },
      { decision: "deny", tool: "delete_project" },
    ];
    const policy = { agent: rules, connection: [] };
    expect(decide(policy, "delete_task")).toMatchObject({ decision: "ask", rule: "agent rule 3: ask the person before the tasks tools" });
    expect(decide(policy, "delete_project")).toMatchObject({ decision: "deny", rule: "agent rule 4: deny delete_project" });
    expect(decide(policy, "list_tasks")).toMatchObject({ decision: "ask", rule: "agent rule 3: ask the person before the tasks tools" });
    expect(decide(policy, "list_labels")).toMatchObject({ decision: "allow", source: "default" });
  });

  it("refuse what they cannot read, saying what to fix", () => {
    expect(parseRules([{ decision: "maybe" }])).toEqual({ error: "policy rule 1: decision must be one of allow, ask, deny." });
    expect(parseRules([{ decision: "deny", tool: "drop_everything" }])).toEqual({ error: 'policy rule 1: no tool is named "drop_everything"; tools/list names them.' });
    expect(parseRules([{ decision: "deny", tool: "delete_task", effect: "write" }])).toMatchObject({ error: expect.stringContaining("at most one of effect, toolset and tool") });
    expect(parseRules([{ decision: "deny", project: "prj_a", outside_project: "prj_b" }])).toMatchObject({ error: expect.stringContaining("not both") });
    expect(parseRules("[")).toEqual({ error: "policy: not JSON; give a list of rules." });
    expect(parseRules(null)).toEqual({ rules: [] });
  });
});

describe("a policy is the person's", () => {
  it("no agent's batch sets, widens or removes one, on the agent or on a token", async () => {
    const acc = await seedAccount("Policy rows", "keeper");
    const db = env.DB;
    await db.prepare("UPDATE agents SET policy = ? WHERE account_id = ?").bind(rulesText(careful), acc.accountId).run();
    const now = new Date().toISOString();
    for (const write of [
      db.prepare("UPDATE agents SET policy = NULL WHERE account_id = ?").bind(acc.accountId),
      db.prepare("UPDATE tokens SET policy = ? WHERE id = ?").bind(rulesText([{ decision: "allow" }]), acc.tokenIds.agent),
    ]) {
      await expect(db.batch([actorIn(db, "b1", { kind: "agent", name: "keeper", now }), write, actorOut(db, "b1")])).rejects.toThrow(/taskgate:consent/);
    }
    const row = await db.prepare("SELECT policy FROM agents WHERE account_id = ?").bind(acc.accountId).first<{ policy: string }>();
    expect(row?.policy).toBe(rulesText(careful));
    // A person's batch may.
    await db.batch([actorIn(db, "b2", { kind: "human", name: "human", now }), db.prepare("UPDATE agents SET policy = NULL WHERE account_id = ?").bind(acc.accountId), actorOut(db, "b2")]);
  });
});
