/**
 * The webhook checks of the end-to-end script: a real HTTP receiver on this
 * machine, endpoints made with the admin CLI, events caused through MCP and
 * delivered by the local Queue of `wrangler dev`, each verified with the
 * standardwebhooks library and with the snippet of docs/webhooks.md for the older
 * Taskgate-Signature (examples/verify-webhook.mjs).
 */
import { spawnSync } from "node:child_process";
import { createServer, type Server } from "node:http";
import { Webhook } from "standardwebhooks";
import { verifyTaskgateSignature } from "../../examples/verify-webhook.mjs";
import { ROOT } from "./d1.ts";
import { wranglerEnv } from "./dev-server.ts";
import { WEBHOOKS_PER_ACCOUNT } from "../../src/domain/webhooks.ts";
import { accountFile, admin, assert, equal, type Checks, type McpSession } from "./e2e-harness.ts";

interface Delivery {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  event: { id: string; type: string; account_id: string; data: Record<string, any> };
}

/** A receiver on 127.0.0.1 that answers 204 and keeps what it got. */
export class Receiver {
  readonly got: Delivery[] = [];
  private server: Server | null = null;
  url = "";

  async start(): Promise<void> {
    const server = createServer(async (req, res) => {
      let body = "";
      for await (const chunk of req) body += chunk;
      try {
        this.got.push({ path: req.url ?? "", headers: req.headers, body, event: JSON.parse(body) });
      } catch {
        /* not JSON: kept out, the check will miss it */
      }
      res.writeHead(204).end();
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    const address = server.address();
    this.url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  }

  async waitFor(what: string, check: (got: Delivery[]) => boolean, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (check(this.got)) return;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`timed out waiting for ${what}; got ${this.got.map((d) => `${d.path} ${d.event.type}`).join(", ") || "nothing"}`);
  }

  stop(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

interface Actors {
  dir: string;
  base: string;
  accountId: string;
  human: McpSession;
  agent: McpSession;
  receiver: Receiver;
}

export async function webhookDeliveries(c: Checks, { dir, base, accountId, human, agent, receiver }: Actors): Promise<void> {
  const step = <T>(name: string, fn: () => Promise<T>) => c.run(`webhooks: ${name}`, fn);
  const hook = await step("admin CLI add-webhook (a local http:// receiver, all events) shows the secret once", async () => {
    const r = (await admin(dir, ["add-webhook", "--account", accountId, "--url", `${receiver.url}/all`, "--events", "all"])) as unknown as {
      id: string; secret: string; events: string | string[];
    };
    assert(/^whk_/.test(r.id) && /^whsec_/.test(r.secret), `an id and a secret, got ${JSON.stringify(r).slice(0, 120)}`);
    equal(r.events, "all", "events (all: those added later too)");
    return r;
  });
  await step("admin CLI add-webhook --remote refuses an http:// URL before touching any database", async () => {
    const args = ["--no-warnings", "scripts/admin.ts", "add-webhook", "--account", accountId, "--url", "http://example.com/x", "--events", "all", "--remote"];
    const r = spawnSync(process.execPath, args, { cwd: ROOT, env: wranglerEnv(), encoding: "utf8", timeout: 60_000 });
    equal(r.status, 2, "exit status");
    assert(/--url: must start with https:\/\//.test(r.stderr), `refused with the rule, got ${r.stderr.split("\n")[0]}`);
    equal(r.stdout, "", "stdout");
  });
  await step("admin CLI list-webhooks shows the endpoint and never its secret", async () => {
    assert(hook, "no webhook");
    const listed = (await admin(dir, ["list-webhooks", "--account", accountId])) as unknown as { id: string; secret_prefix: string }[];
    equal(listed.length, 1, "endpoints");
    equal(listed[0].id, hook.id, "id");
    assert(!JSON.stringify(listed).includes(hook.secret), "the secret is not listed");
  });
  await step("an agent's completion and a person's approval arrive signed, once each, at the receiver", async () => {
    assert(hook, "no webhook");
    const { task } = await human.ok("create_task", { title: "Tell me when it is done" });
    const waiting = await agent.ok("complete_task", { task_id: task.id, note: "done, please check" });
    await human.ok("approve_task", { task_id: task.id });
    await receiver.waitFor("approval.requested and task.completed", (got) => got.filter((d) => d.event.data?.task?.id === task.id).length >= 2);
    await new Promise((r) => setTimeout(r, 2000));
    const mine = receiver.got.filter((d) => d.event.data?.task?.id === task.id);
    equal(mine.map((d) => d.event.type).join(","), "approval.requested,task.completed", "event types in order");
    equal(new Set(mine.map((d) => d.event.id)).size, 2, "distinct event ids");
    equal(mine[0].event.data.approval.id, waiting.approval.id, "the approval");
    for (const d of mine) {
      assert(await verifyTaskgateSignature(hook.secret, d.headers["taskgate-signature"] as string, d.body), `Taskgate-Signature of ${d.event.type} verifies`);
      equal(JSON.stringify(new Webhook(hook.secret).verify(d.body, d.headers as Record<string, string>)), d.body, `standardwebhooks verifies ${d.event.type}`);
      equal(d.headers["taskgate-event-id"], d.event.id, "Taskgate-Event-Id");
      equal(d.event.account_id, accountId, "account_id");
      assert(!/tg_|whsec_/.test(d.body), "no token or secret in the body");
    }
  });
  await step("a run silent past STALE_RUN_MINUTES is announced once by the minute cron", async () => {
    const { task } = await human.ok("create_task", { title: "A quiet run" });
    const { run: r } = await agent.ok("start_run", { task_id: task.id });
    await new Promise((res) => setTimeout(res, 2500));
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${base}/__scheduled?cron=${encodeURIComponent("* * * * *")}`);
      equal(res.status, 200, "GET /__scheduled");
    }
    await receiver.waitFor("run.stale", (got) => got.some((d) => d.event.type === "run.stale" && d.event.data.run.id === r.id));
    await new Promise((res) => setTimeout(res, 1500));
    equal(receiver.got.filter((d) => d.event.type === "run.stale" && d.event.data.run.id === r.id).length, 1, "run.stale deliveries");
    await agent.ok("finish_run", { run_id: r.id, outcome: "succeeded", summary: "done" });
  });
  await step("admin CLI remove-webhook, then list-webhooks is empty", async () => {
    assert(hook, "no webhook");
    const removed = (await admin(dir, ["remove-webhook", "--id", hook.id])) as unknown as { removed: boolean };
    equal(removed.removed, true, "removed");
    const listed = (await admin(dir, ["list-webhooks", "--account", accountId])) as unknown as unknown[];
    equal(listed.length, 0, "endpoints");
  });
  await step(`admin CLI add-webhook refuses an account's endpoint past ${WEBHOOKS_PER_ACCOUNT}, adding nothing`, async () => {
    // The endpoints that fill the account are written straight into the database file: 20 runs of the CLI would take a minute.
    const { DatabaseSync } = await import("node:sqlite");
    const db = new DatabaseSync(accountFile(dir, accountId));
    db.exec("PRAGMA busy_timeout = 10000");
    const count = () => (db.prepare("SELECT count(*) AS n FROM webhooks WHERE account_id = ?").get(accountId) as { n: number }).n;
    try {
      const insert = db.prepare("INSERT INTO webhooks (id, account_id, url, events, secret, secret_prefix, created_at) VALUES (?, ?, ?, 'task.completed', 'sealed', 'whsec_Fill…', ?)");
      for (let i = 0; i < WEBHOOKS_PER_ACCOUNT; i++) insert.run(`whk_fill${String(i).padStart(12, "0")}`, accountId, `https://fill.example.test/${i}`, new Date().toISOString());
      let refusal = "";
      await admin(dir, ["add-webhook", "--account", accountId, "--url", "https://fill.example.test/more", "--events", "all"]).catch((e: Error) => (refusal = e.message));
      assert(refusal.includes(`at most ${WEBHOOKS_PER_ACCOUNT} webhooks`), `refused with the limit, got ${refusal.slice(0, 200) || "a new webhook"}`);
      equal(count(), WEBHOOKS_PER_ACCOUNT, "endpoints after the refusal");
    } finally {
      db.prepare("DELETE FROM webhooks WHERE account_id = ? AND id LIKE 'whk_fill%'").run(accountId);
      db.close();
    }
  });
}
