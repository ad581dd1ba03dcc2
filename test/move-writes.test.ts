import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Env } from "../src/env.ts";
import { moveAccountIn, routeLifetimeMs } from "../src/db/move-account-d1.ts";
import { isFenced, MOVE_STEPS, type MoveStep } from "../src/db/move-account.ts";
import { planToken } from "../src/db/provisioning.ts";
import { newEvent } from "../src/domain/events.ts";
import { MINUTE_CRON, scheduled } from "../src/jobs.ts";
import { deliverEvent } from "../src/webhooks/deliver.ts";
import { asServer, connect, createToken, seedAccount, type TestClient, workerFetch } from "./helpers.ts";
import { addPerson, Browser, field, invite, signIn, uniqueEmail } from "./web-helpers.ts";
import { act, open } from "./console.helpers.ts";
import { authorizePath, consentForm, exchange, mcpStatus, PASSWORD, pkce, registerClient } from "./oauth-helpers.ts";
import { addHook, fakeReceivers } from "./webhooks.helpers.ts";

/**
 * Every path that writes an account's rows, injected between each pair of the
 * move's steps while readers read throughout: each write is either accepted
 * and found after the move, or refused as retryable ("try again shortly", 503
 * with Retry-After) with nothing of it written, and accepted once the move
 * has ended; every read answers with the whole account.
 *
 * The edge's caches are short here (1 s each) and the move waits their
 * lifetime before deleting the old rows, as a deployment's does with 60 + 5 s;
 * nothing in this file forgets a cache.
 */
const workerEnv = env as unknown as Env;
workerEnv.SHARD_CACHE_SECONDS = "1";
workerEnv.AUTH_CACHE_SECONDS = "1";

const STEPS: MoveStep[] = MOVE_STEPS.filter((s) => s !== "finish");
type Outcome = "accepted" | "refused";

interface Kind {
  name: string;
  /** Made before the move: what each step's write needs (a session, a link, a code). */
  prepare(step: MoveStep): Promise<void>;
  /** The write, as its path makes it; throws when the answer is neither an acceptance nor a retryable refusal. */
  inject(step: MoveStep): Promise<Outcome>;
  /** After the move: an accepted write is there, a refused one is not, and doing it again now is accepted. */
  check(step: MoveStep, outcome: Outcome): Promise<void>;
}

const retryable = (text: string) => /moving to another database/.test(text) && /try again/i.test(text);

async function pageOutcome(res: Response, accepted: number[]): Promise<Outcome> {
  const text = await res.text();
  if (accepted.includes(res.status)) return "accepted";
  if (res.status === 503 && res.headers.get("retry-after") && retryable(text)) return "refused";
  throw new Error(`unexpected answer ${res.status}: ${text.slice(0, 300)}`);
}

afterEach(() => vi.restoreAllMocks());

describe("moving an account under every kind of write and under readers", () => {
  it("each write between each pair of steps is accepted and kept, or refused as retryable and absent; no read answers from an incomplete copy; the account is writable at the end", async () => {
    const acc = await seedAccount("Moved under load", "bot", "DB");
    const other = await seedAccount("Stays put", "bot", "DB");
    const human = await connect(acc.human);
    const agent = await connect(acc.agent);
    // The task every reader reads: 3 steps, a label, a comment; and more tasks beside it.
    const { task } = await human.ok("create_task", { title: "The read task", notes: "Kept whole." });
    await agent.ok("add_steps", { task_id: task.id, steps: ["One", "Two", "Three"] });
    await agent.ok("label_task", { task_id: task.id, labels: ["kept"] });
    await agent.ok("comment_on_task", { task_id: task.id, body: "A comment that stays." });
    for (let i = 0; i < 4; i++) await human.ok("create_task", { title: `Beside ${i}` });
    const { run } = await agent.ok("start_run", { task_id: task.id });
    // A running run gone silent (for the minute job) and an expired trash item (for the daily job), in both accounts.
    const { task: gone } = await human.ok("create_task", { title: "For the purge" });
    await human.ok("delete_task", { task_id: gone.id });
    const otherHuman = await connect(other.human);
    const { task: otherGone } = await otherHuman.ok("create_task", { title: "Other purge" });
    await otherHuman.ok("delete_task", { task_id: otherGone.id });
    await otherHuman.close();
    await asServer(env.DB, env.DB.prepare("UPDATE trash SET purge_after = '2020-01-01T00:00:00.000Z' WHERE account_id IN (?, ?)").bind(acc.accountId, other.accountId));
    await asServer(env.DB, env.DB.prepare("UPDATE runs SET last_event_at = '2020-01-01T00:00:00.000Z' WHERE id = ?").bind(run.id));
    const email = uniqueEmail("mover");
    await addPerson(acc.accountId, email, PASSWORD);
    const reader = new Browser("203.0.113.60");
    expect((await signIn(reader, email, PASSWORD)).status).toBe(303);
    const hook = await addHook(acc.accountId, "https://hooks.example.com/moved");
    const delivered = fakeReceivers();
    const baseline = JSON.stringify(await human.ok("get_task", { task_id: task.id }));
    const baseTasks = (await human.ok("list_tasks", { limit: 100 })).items.length;
    // A token that names the database the account moves into: during the copy its row is found there first.
    const naming = await createToken({ accountId: acc.accountId, kind: "human", scope: "read", shard: "DB_1" }, env.DB);
    const namingClient = await connect(naming.secret);

    const outcomes = new Map<string, Outcome>();
    const key = (kind: string, step: MoveStep) => `${kind}@${step}`;

    // ---- the kinds of write --------------------------------------------------------------------------
    const sessions = new Map<MoveStep, { b: Browser; cookie: string }>();
    const links = new Map<MoveStep, { path: string; email: string }>();
    const codes = new Map<MoveStep, { clientId: string; redirectUri: string; code: string; verifier: string }>();
    const consents = new Map<MoveStep, { clientId: string; redirectUri: string; challenge: string; verifier: string; form: { handle: string; csrf: string } }>();
    const adminTokens = new Map<MoveStep, { id: string; secret: string }>();
    const consentBrowser = new Browser("203.0.113.61");
    expect((await signIn(consentBrowser, email, PASSWORD)).status).toBe(303);
    const jobErrors: string[] = [];
    const runJob = async (cron: string) => {
      const waits: Promise<unknown>[] = [];
      const spy = vi.spyOn(console, "error").mockImplementation((line: unknown) => void jobErrors.push(String(line)));
      await scheduled({ cron, scheduledTime: Date.now(), noRetry() {} } as ScheduledController, workerEnv, {
        waitUntil: (p: Promise<unknown>) => void waits.push(p),
        passThroughOnException() {},
      } as unknown as ExecutionContext);
      await Promise.all(waits);
      spy.mockRestore();
    };

    const kinds: Kind[] = [
      {
        name: "MCP tool write",
        async prepare() {},
        async inject(step) {
          const r = await human.call("create_task", { title: `MCP at ${step}` });
          if (!r.isError) return "accepted";
          if (/try again shortly/.test(r.text)) return "refused";
          throw new Error(r.text);
        },
        async check(step, outcome) {
          const found = (await human.ok("search_tasks", { query: `MCP at ${step}` })).items.length;
          expect(found, step).toBe(outcome === "accepted" ? 1 : 0);
          if (outcome === "refused") await human.ok("create_task", { title: `MCP at ${step}` });
        },
      },
      {
        name: "console form",
        async prepare() {},
        async inject(step) {
          return pageOutcome(await act(reader, `/tasks/${task.id}`, "comment", { task_id: task.id, body: `Console at ${step}` }), [303]);
        },
        async check(step, outcome) {
          const bodies = (await human.ok("list_comments", { task_id: task.id })).items.map((i: { body: string }) => i.body);
          expect(bodies.filter((b: string) => b === `Console at ${step}`).length, step).toBe(outcome === "accepted" ? 1 : 0);
          if (outcome === "refused") expect((await act(reader, `/tasks/${task.id}`, "comment", { task_id: task.id, body: `Console at ${step}` })).status).toBe(303);
        },
      },
      {
        name: "sign-in",
        async prepare() {},
        async inject(step) {
          const b = new Browser(`203.0.113.${70 + STEPS.indexOf(step)}`);
          const outcome = await pageOutcome(await signIn(b, email, PASSWORD), [303]);
          sessions.set(`in-${step}` as MoveStep, { b, cookie: "" });
          return outcome;
        },
        async check(step, outcome) {
          const { b } = sessions.get(`in-${step}` as MoveStep)!;
          expect((await b.get("/tasks")).status, step).toBe(outcome === "accepted" ? 200 : 302);
          if (outcome === "refused") expect((await signIn(b, email, PASSWORD)).status).toBe(303);
        },
      },
      {
        name: "sign-out",
        async prepare(step) {
          const b = new Browser(`203.0.113.${80 + STEPS.indexOf(step)}`);
          expect((await signIn(b, email, PASSWORD)).status).toBe(303);
          sessions.set(step, { b, cookie: [...b.cookies].map(([k, v]) => `${k}=${v}`).join("; ") });
        },
        async inject(step) {
          const { b } = sessions.get(step)!;
          const page = await open(b, "/");
          return pageOutcome(await b.post("/signout", { csrf: field(page.html, "csrf") }), [303]);
        },
        async check(step, outcome) {
          // The cookie of before the sign-out, sent again: it signs in nowhere, in either database.
          const { cookie } = sessions.get(step)!;
          const res = await workerFetch("https://taskgate.test/tasks", { headers: { cookie, accept: "text/html" }, redirect: "manual" });
          expect(outcome, step).toBe("accepted");
          expect(res.status, `${step}: the session ended`).toBe(302);
        },
      },
      {
        name: "setup link",
        async prepare(step) {
          const who = uniqueEmail(`setup-${step}`);
          links.set(step, { ...(await invite(acc.accountId, who)), email: who });
        },
        async inject(step) {
          const { path } = links.get(step)!;
          const b = new Browser(`203.0.113.${90 + STEPS.indexOf(step)}`);
          const shown = await b.get(path);
          const html = await shown.text();
          const res = await b.post("/setup", { csrf: field(html, "csrf"), token: field(html, "token"), email: field(html, "email"), password: `${PASSWORD} ${step}`, confirm: `${PASSWORD} ${step}` });
          return pageOutcome(res, [302, 303]);
        },
        async check(step, outcome) {
          const { email: who, path } = links.get(step)!;
          expect((await signIn(new Browser("203.0.113.99"), who, `${PASSWORD} ${step}`)).status, step).toBe(outcome === "accepted" ? 303 : 401);
          if (outcome === "refused") {
            const b = new Browser("203.0.113.98");
            const html = await (await b.get(path)).text();
            const res = await b.post("/setup", { csrf: field(html, "csrf"), token: field(html, "token"), email: field(html, "email"), password: `${PASSWORD} ${step}`, confirm: `${PASSWORD} ${step}` });
            expect([302, 303]).toContain(res.status);
          }
        },
      },
      {
        name: "OAuth consent (grant)",
        async prepare(step) {
          const { clientId, redirectUri } = await registerClient(`Consent ${step}`);
          const { verifier, challenge } = await pkce();
          const shown = await consentBrowser.get(authorizePath({ clientId, redirectUri, challenge, scope: "tasks:read tasks:write" }));
          consents.set(step, { clientId, redirectUri, challenge, verifier, form: consentForm(await shown.text()) });
        },
        async inject(step) {
          const c = consents.get(step)!;
          const res = await consentBrowser.post("/authorize", { ...c.form, act_as: "self", agent_name: "", access: "write", tools: "all", decision: "allow" });
          if (res.status === 302) codes.set(`consent-${step}` as MoveStep, { ...c, code: new URL(res.headers.get("location")!).searchParams.get("code")! });
          return pageOutcome(res, [302]);
        },
        async check(step, outcome) {
          const c = consents.get(step)!;
          if (outcome === "accepted") {
            const got = codes.get(`consent-${step}` as MoveStep)!;
            expect(await mcpStatus((await exchange(got.clientId, got.code, got.verifier, got.redirectUri)).access_token)).toBe(200);
            return;
          }
          const tokens = await env.DB_1.prepare("SELECT count(*) AS n FROM tokens WHERE client_id = ?").bind(c.clientId).first<number>("n");
          expect(tokens, `${step}: no grant row`).toBe(0);
          const shown = await consentBrowser.get(authorizePath({ clientId: c.clientId, redirectUri: c.redirectUri, challenge: c.challenge, scope: "tasks:read tasks:write" }));
          const res = await consentBrowser.post("/authorize", { ...consentForm(await shown.text()), act_as: "self", agent_name: "", access: "write", tools: "all", decision: "allow" });
          expect(res.status).toBe(302);
        },
      },
      {
        name: "OAuth code exchange",
        async prepare(step) {
          const { clientId, redirectUri } = await registerClient(`Code ${step}`);
          const { verifier, challenge } = await pkce();
          const shown = await consentBrowser.get(authorizePath({ clientId, redirectUri, challenge, scope: "tasks:read tasks:write" }));
          const res = await consentBrowser.post("/authorize", { ...consentForm(await shown.text()), act_as: "self", agent_name: "", access: "write", tools: "all", decision: "allow" });
          expect(res.status).toBe(302);
          codes.set(step, { clientId, redirectUri, verifier, code: new URL(res.headers.get("location")!).searchParams.get("code")! });
        },
        async inject(step) {
          const c = codes.get(step)!;
          const res = await workerFetch("https://taskgate.test/oauth/token", {
            method: "POST",
            headers: { "content-type": "application/x-www-form-urlencoded" },
            body: new URLSearchParams({ grant_type: "authorization_code", client_id: c.clientId, code: c.code, code_verifier: c.verifier, redirect_uri: c.redirectUri, resource: "https://taskgate.test/mcp" }),
          });
          const text = await res.text();
          if (res.status === 200) {
            codes.set(`token-${step}` as MoveStep, { ...c, code: JSON.parse(text).access_token });
            return "accepted";
          }
          if (res.status === 503 && res.headers.get("retry-after") && /temporarily_unavailable/.test(text) && retryable(text)) return "refused";
          throw new Error(`token endpoint ${res.status}: ${text}`);
        },
        async check(step, outcome) {
          const c = codes.get(step)!;
          const row = await env.DB_1.prepare("SELECT grant_id FROM tokens WHERE client_id = ?").bind(c.clientId).first<{ grant_id: string | null }>();
          if (outcome === "accepted") {
            expect(row?.grant_id, `${step}: the grant is active`).toBeTruthy();
            expect(await mcpStatus(codes.get(`token-${step}` as MoveStep)!.code)).toBe(200);
          } else expect(row?.grant_id ?? null, `${step}: nothing activated`).toBeNull();
        },
      },
      {
        name: "webhook delivery record",
        async prepare() {},
        async inject(step) {
          const before = delivered.length;
          const event = newEvent("task.completed", acc.accountId, new Date().toISOString(), {
            task: { id: `tsk_moving${step}`, title: `Hook at ${step}`, status: "done", project_id: null, assignee: null, due_at: null },
            completed_by: "human", completed_by_person: null, approval_id: null, next_occurrence: null,
          });
          outcomesEvents.set(step, event);
          const r = await deliverEvent(workerEnv, event, 1, Date.now());
          if (r.results.length === 1 && r.results[0].status === "delivered") return "accepted";
          // Waits for the move without calling the receiver, so it is never delivered twice.
          if (r.retryAfterSeconds !== null && r.results.length === 0 && delivered.length === before) return "refused";
          throw new Error(`delivery: ${JSON.stringify(r)}`);
        },
        async check(step, outcome) {
          const event = outcomesEvents.get(step)!;
          const rows = () => env.DB_1.prepare("SELECT status FROM webhook_deliveries WHERE webhook_id = ? AND event_id = ?").bind(hook.webhook.id, event.id).all<{ status: string }>();
          expect((await rows()).results.length, step).toBe(outcome === "accepted" ? 1 : 0);
          if (outcome === "refused") {
            expect((await deliverEvent(workerEnv, event, 2, Date.now())).results.map((x) => x.status)).toEqual(["delivered"]);
            expect((await rows()).results.map((x) => x.status)).toEqual(["delivered"]);
          }
          expect(delivered.filter((d) => (d.event as { id: string }).id === event.id).length, `${step}: delivered once`).toBe(1);
        },
      },
      {
        name: "daily job",
        async prepare() {},
        async inject() {
          await runJob("0 3 * * *");
          const left = await env.DB.prepare("SELECT count(*) AS n FROM trash WHERE account_id = ?").bind(acc.accountId).first<number>("n");
          const inTarget = await env.DB_1.prepare("SELECT count(*) AS n FROM trash WHERE account_id = ?").bind(acc.accountId).first<number>("n");
          // The moving account's expired item waits (in whichever copy is whole); the other account's is purged.
          expect((left ?? 0) + (inTarget ?? 0)).toBeGreaterThan(0);
          return "refused";
        },
        async check() {},
      },
      {
        name: "minute job",
        async prepare() {},
        async inject() {
          await runJob(MINUTE_CRON);
          const notices = await env.DB.prepare("SELECT count(*) AS n FROM stale_run_notices WHERE account_id = ?").bind(acc.accountId).first<number>("n");
          expect(notices).toBe(0);
          return "refused";
        },
        async check() {},
      },
      {
        name: "admin CLI write",
        async prepare() {},
        async inject(step) {
          // What `npm run admin -- create-token` runs: the plan, in the database the directory names.
          const plan = await planToken({ accountId: acc.accountId, kind: "agent", scope: "write", agent: `cli-${step}` }, new Date().toISOString());
          adminTokens.set(step, { id: plan.id, secret: plan.secret });
          const shard = (await env.DB.prepare("SELECT shard FROM directory_accounts WHERE account_id = ?").bind(acc.accountId).first<string>("shard")) ?? "DB";
          const db = shard === "DB" ? env.DB : env.DB_1;
          try {
            await db.batch(plan.statements.map((s) => db.prepare(s.sql).bind(...s.params)));
            return "accepted";
          } catch (e) {
            if (isFenced(e)) return "refused";
            throw e;
          }
        },
        async check(step, outcome) {
          const t = adminTokens.get(step)!;
          const rows = await env.DB_1.prepare("SELECT count(*) AS n FROM tokens WHERE id = ?").bind(t.id).first<number>("n");
          expect(rows, step).toBe(outcome === "accepted" ? 1 : 0);
          if (outcome === "refused") {
            const again = await planToken({ accountId: acc.accountId, kind: "agent", scope: "write", agent: `cli-${step}` }, new Date().toISOString());
            await env.DB_1.batch(again.statements.map((s) => env.DB_1.prepare(s.sql).bind(...s.params)));
            expect(await mcpStatus(again.secret)).toBe(200);
          }
        },
      },
    ];
    const outcomesEvents = new Map<MoveStep, ReturnType<typeof newEvent>>();
    for (const step of STEPS) for (const k of kinds) await k.prepare(step);

    // ---- readers, throughout the move ---------------------------------------------------------------
    let moving = true;
    const reads = { count: 0, wrong: [] as string[], byReader: {} as Record<string, number> };
    const readWith = async (name: string, c: TestClient) => {
      while (moving) {
        const r = await c.call("get_task", { task_id: task.id });
        const list = await c.call("list_tasks", { limit: 100 });
        reads.count += 2;
        reads.byReader[name] = (reads.byReader[name] ?? 0) + 2;
        if (r.isError || JSON.stringify(r.structured) !== baseline) reads.wrong.push(`${name} get_task: ${r.text.slice(0, 160)}`);
        const n = (list.structured.items as unknown[] | undefined)?.length ?? -1;
        if (list.isError || n < baseTasks) reads.wrong.push(`${name} list_tasks: ${n} of ${baseTasks}`);
      }
    };
    const readPages = async () => {
      while (moving) {
        const page = await open(reader, `/tasks/${task.id}`);
        reads.count++;
        reads.byReader.console = (reads.byReader.console ?? 0) + 1;
        if (page.res.status !== 200 || !page.html.includes("A comment that stays.") || !page.html.includes("Three")) reads.wrong.push(`console page: ${page.res.status}`);
      }
    };

    const move = moveAccountIn(env, acc.accountId, "DB_1", {
      // The wait for cached routes to lapse, passed while the readers go on (each read is I/O, which moves the clock).
      sleep: async (ms) => {
        const until = Date.now() + ms;
        while (Date.now() < until) await env.DB.prepare("SELECT 1").first();
      },
      after: async (step) => {
        if (step === "finish") return;
        for (const k of kinds) outcomes.set(key(k.name, step), await k.inject(step));
      },
    }).finally(() => (moving = false));
    const [report] = await Promise.all([move, readWith("token of DB", agent), readWith("token naming DB_1", namingClient), readPages()]);
    expect(report.steps).toEqual([...MOVE_STEPS]);
    expect(routeLifetimeMs(workerEnv)).toBe(2000);

    // A reader just after the move, with whatever its isolate cached during it.
    for (const c of [agent, namingClient]) {
      const r = await c.call("get_task", { task_id: task.id });
      reads.count++;
      if (r.isError || JSON.stringify(r.structured) !== baseline) reads.wrong.push(`after the move: ${r.text.slice(0, 160)}`);
    }

    // ---- after the move: nothing lost, nothing half-written, every kind of write accepted again -------
    for (const step of STEPS) for (const k of kinds) await k.check(step, outcomes.get(key(k.name, step))!);
    await runJob("0 3 * * *");
    await runJob(MINUTE_CRON);
    expect(await env.DB_1.prepare("SELECT count(*) AS n FROM trash WHERE account_id = ?").bind(acc.accountId).first<number>("n"), "purged after the move").toBe(0);
    expect(await env.DB.prepare("SELECT count(*) AS n FROM trash WHERE account_id = ?").bind(other.accountId).first<number>("n"), "the other account's purge went on").toBe(0);
    expect(await env.DB_1.prepare("SELECT count(*) AS n FROM stale_run_notices WHERE run_id = ?").bind(run.id).first<number>("n"), "announced after the move").toBe(1);
    expect(jobErrors.filter((l) => l.includes(acc.accountId) || /account moving/.test(l)), "jobs met no refusal").toEqual([]);
    const left = await env.DB.prepare("SELECT count(*) AS n FROM accounts WHERE id = ?").bind(acc.accountId).first<number>("n");
    expect(left, "nothing of the account left in DB").toBe(0);
    expect(await env.DB_1.prepare("SELECT moving_to FROM accounts WHERE id = ?").bind(acc.accountId).first("moving_to")).toBeNull();
    await human.ok("create_task", { title: "Writable at the end" });

    const table: Record<string, Record<string, Outcome>> = {};
    for (const k of kinds) table[k.name] = Object.fromEntries(STEPS.map((s) => [s, outcomes.get(key(k.name, s))!]));
    const injected = kinds.length * STEPS.length;
    console.log(JSON.stringify({ figures: "move under writes and reads", injected, kinds: kinds.length, steps: STEPS, table, reads: reads.count, byReader: reads.byReader, wrong: reads.wrong.length }));
    expect(reads.wrong).toEqual([]);
    expect(reads.byReader["token of DB"]).toBeGreaterThan(0);
    expect(reads.byReader["token naming DB_1"]).toBeGreaterThan(0);
    expect(reads.byReader.console).toBeGreaterThan(0);
    await human.close();
    await agent.close();
    await namingClient.close();
  }, 180_000);
});
