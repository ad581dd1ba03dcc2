import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { canonicalJson, requestHash, sha256Hex } from "../src/domain/canonical.ts";
import { describeAllTools, detailedInputSchema } from "../src/mcp/registry.ts";
import { HUMAN_TOOLS, WRITE_TOOLS, type ToolName } from "../src/catalog/effects.ts";
import { connect, seedAccount, snapshotDb, type SeededAccount, type TestClient } from "./helpers.ts";
import { connectApp, fakeUpstream, json, unexpected } from "./connectors-fakes.ts";
import { exampleArgs, exampleValue, type IdPool } from "./tool-args.ts";

/**
 * A call's example arguments: its required fields, and for a tool that names
 * its target by one of two optional ids (approve_task: task_id or approval_id),
 * the task_id.
 */
function argsOf(name: string, pool: IdPool, variant: number): Record<string, unknown> {
  const schema = detailedInputSchema(name);
  const args = exampleArgs(schema, pool, variant);
  const props = (schema.properties ?? {}) as Record<string, any>;
  if (props.task_id && props.approval_id && args.task_id === undefined && args.approval_id === undefined) args.task_id = exampleValue("task_id", props.task_id, pool, variant);
  return args;
}

afterEach(() => vi.restoreAllMocks());

/** Every tool whose input takes an idempotency_key, from the registry. */
const APPEND_TOOLS = describeAllTools().filter((d) => "idempotency_key" in ((d.inputSchema.properties ?? {}) as object));

/** Records for the tools to work on (two of each kind, so two variants of a call differ), and a faked Drive for save_context. */
async function setup(): Promise<{ acc: SeededAccount; agent: TestClient; human: TestClient; pool: IdPool }> {
  const acc = await seedAccount();
  const human = await connect(acc.human);
  const agent = await connect(acc.agent);
  const pool: IdPool = { tsk: [], prj: [], run: [] };
  for (const i of [1, 2]) {
    const { project } = await human.ok("create_project", { name: `Project ${i}` });
    const { task } = await human.ok("create_task", { title: `Task ${i}`, project_id: project.id });
    const { run } = await agent.ok("start_run", { task_id: task.id });
    pool.prj.push(project.id);
    pool.tsk.push(task.id);
    pool.run.push(run.id);
  }
  await connectApp(acc.accountId, "drive");
  let docs = 0;
  fakeUpstream((s) => {
    if (s.url.startsWith("https://oauth2.googleapis.com/token")) return json({ access_token: "ya29.test", expires_in: 3600 });
    if (s.path === "https://www.googleapis.com/upload/drive/v3/files" && s.method === "POST") {
      docs++;
      return json({ id: `1Doc_${docs}`, name: "Doc", webViewLink: `https://docs.google.com/document/d/1Doc_${docs}/edit` });
    }
    return unexpected(s);
  });
  return { acc, agent, human, pool };
}

/** Who calls a tool in these tests: a person for the tools only a person may call, else the agent. */
const callerOf = (name: string, c: { agent: TestClient; human: TestClient }) => (HUMAN_TOOLS.has(name as ToolName) ? c.human : c.agent);

/** What a tool needs of the tasks in the pool before it can run on each: approve_task, a pending approval. */
async function prepare(name: string, c: { agent: TestClient; human: TestClient }, pool: IdPool): Promise<void> {
  if (name !== "approve_task") return;
  for (const task_id of pool.tsk) {
    // A task that already waits for a request (complete_task's sign-off) keeps it: a second, different one is refused.
    const r = await c.agent.call("request_approval", { task_id, question: "Ship it?" });
    if (r.isError) expect(r.text).toContain("already has a pending");
  }
}

async function keyRows(accountId: string, tool: string) {
  return (
    await env.DB.prepare("SELECT key, request_hash FROM idempotency_keys WHERE account_id = ? AND tool = ?").bind(accountId, tool).all<{ key: string; request_hash: string | null }>()
  ).results;
}

/** The same object with its keys in reverse order. */
const reversed = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).reverse());

describe("request fingerprints", () => {
  it("ignore key order and undefined members, and leave the idempotency key out", async () => {
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: undefined }, null] })).toBe('{"a":[{"d":2},null],"b":1}');
    expect(await requestHash({ title: "x", priority: "normal", idempotency_key: "k1" })).toBe(await requestHash({ priority: "normal", title: "x", idempotency_key: "k2" }));
    expect(await requestHash({ title: "x" })).not.toBe(await requestHash({ title: "y" }));
    expect(await requestHash({ title: "x" })).toMatch(/^[0-9a-f]{64}$/);
    // FIPS 180-2's test vectors: the hex is the digest itself, every byte two digits (leading zeros kept).
    expect(await sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(await sha256Hex("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  });
});

describe("an idempotency key belongs to one set of arguments, on every append tool", () => {
  it("finds the append tools in the registry: every write that takes idempotency_key", () => {
    expect(APPEND_TOOLS.map((d) => d.name).sort()).toEqual(
      [
        "add_steps", "approve_task", "comment_on_task", "complete_task", "create_project", "create_task", "decompose_task", "log_run_event",
        "save_context", "start_run",
      ],
    );
    for (const d of APPEND_TOOLS) expect(WRITE_TOOLS.has(d.name as ToolName), d.name).toBe(true);
  });

  for (const d of APPEND_TOOLS) {
    it(`${d.name}: same key + same arguments → the first result; other arguments → refused; a row without a hash still replays`, async () => {
      const { acc, agent: agentClient, human, pool } = await setup();
      await prepare(d.name, { agent: agentClient, human }, pool);
      const agent = callerOf(d.name, { agent: agentClient, human });
      const key = `key-${d.name}`;
      const first = { ...argsOf(d.name, pool, 0), idempotency_key: key };
      const other = { ...argsOf(d.name, pool, 1), idempotency_key: key };
      expect(canonicalJson(first), "the two variants differ").not.toBe(canonicalJson(other));

      const result = await agent.ok(d.name, first);
      const rows = await keyRows(acc.accountId, d.name);
      expect(rows).toHaveLength(1);
      expect(rows[0].request_hash).toMatch(/^[0-9a-f]{64}$/);

      const written = await snapshotDb();
      expect(await agent.ok(d.name, first)).toEqual(result);
      expect(await agent.ok(d.name, reversed(first)), "key order does not make other arguments").toEqual(result);
      expect(await snapshotDb()).toBe(written);

      const refused = await agent.fails(d.name, other);
      expect(refused).toContain(`idempotency_key "${key}" was already used for other arguments to ${d.name}`);
      expect(refused).toMatch(/new key/);
      expect(await snapshotDb(), "a refused reuse writes nothing").toBe(written);

      await env.DB.prepare("UPDATE idempotency_keys SET request_hash = NULL WHERE account_id = ? AND tool = ? AND key = ?").bind(acc.accountId, d.name, key).run();
      const legacy = await snapshotDb();
      expect(await agent.ok(d.name, other), "a row from before request hashes replays").toEqual(result);
      expect(await snapshotDb()).toBe(legacy);

      const fresh = await agent.ok(d.name, { ...other, idempotency_key: `${key}-2` });
      expect(fresh, "the other arguments are a valid call of their own").not.toEqual(result);
      await Promise.all([agentClient.close(), human.close()]);
    });
  }

  it("racing calls with one key and two sets of arguments: one write; its arguments get its result, the others are refused", async () => {
    const { acc, agent, human, pool } = await setup();
    for (const d of APPEND_TOOLS) {
      await prepare(d.name, { agent, human }, pool);
      const caller = callerOf(d.name, { agent, human });
      const key = `race-${d.name}`;
      const variants = [0, 1].map((v) => ({ ...argsOf(d.name, pool, v), idempotency_key: key }));
      const before = (await env.DB.prepare("SELECT count(*) AS n FROM activity WHERE account_id = ?").bind(acc.accountId).first<{ n: number }>())!.n;
      const calls = Array.from({ length: 10 }, (_, i) => i % 2);
      const results = await Promise.all(calls.map((v) => caller.call(d.name, variants[v])));
      const after = (await env.DB.prepare("SELECT count(*) AS n FROM activity WHERE account_id = ?").bind(acc.accountId).first<{ n: number }>())!.n;
      expect(after - before, `${d.name}: one write`).toBe(1);
      const winners = results.map((r, i) => [r, calls[i]] as const).filter(([r]) => !r.isError);
      const winning = winners[0][1];
      for (const [r, v] of results.map((r, i) => [r, calls[i]] as const)) {
        if (v === winning) expect(r.structured, `${d.name}: ${r.text}`).toEqual(winners[0][0].structured);
        else expect(r.text, d.name).toContain("was already used for other arguments");
      }
    }
    await Promise.all([agent.close(), human.close()]);
  });
});
