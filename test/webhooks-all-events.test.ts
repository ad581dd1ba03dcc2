/**
 * "All events" is kept as all: an endpoint made for every event (the admin
 * CLI's `--events all`, every event named, the console's form with every box
 * ticked) is stored as `all` and receives the event types a later version
 * adds. Endpoints an older version stored with the whole list of its day
 * become `all` when migrations/0022_webhooks_all_events.sql upgrades the
 * database; a list that left an event out stays as it was.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { EVENT_TYPES } from "../src/domain/events.ts";
import { listWebhooks, planWebhook } from "../src/db/webhooks-d1.ts";
import { connect, seedAccount } from "./helpers.ts";
import { splitSql } from "./schema.ts";
import { addHook, fakeReceivers, sleep, waitFor, type Received } from "./webhooks.helpers.ts";

afterEach(() => {
  vi.restoreAllMocks();
});

const MIGRATION = "0022_webhooks_all_events.sql";

/** The whole list of events as the versions before approval.withdrawn stored it, and a choice of that time. */
const FIRST_LIST = "approval.requested,task.completed,task.rejected,run.stale,claim.lapsed";
const BEFORE_WITHDRAWN = "approval.requested,approval.answered,task.completed,task.rejected,run.stale,claim.lapsed";
/** The console's default of that time (every box but run.stale): a choice, not all. */
const CHOSEN = "approval.requested,approval.answered,task.completed,task.rejected,claim.lapsed";

async function storedEvents(id: string): Promise<string> {
  return (await env.DB.prepare("SELECT events FROM webhooks WHERE id = ?").bind(id).first<string>("events"))!;
}

/** An endpoint whose events column holds what an older version wrote. */
async function olderHook(accountId: string, url: string, events: string) {
  const hook = await addHook(accountId, url, "task.completed");
  await env.DB.prepare("UPDATE webhooks SET events = ? WHERE id = ?").bind(events, hook.webhook.id).run();
  return hook;
}

describe("a webhook for all events", () => {
  it("stored by an older version with the whole list of its day, is all after the upgrade and receives approval.withdrawn; a chosen list does not", async () => {
    const seen = fakeReceivers();
    const acc = await seedAccount("Older hooks", "bot");
    const first = await olderHook(acc.accountId, "https://hooks.example.test/first", FIRST_LIST);
    const before = await olderHook(acc.accountId, "https://hooks.example.test/before-withdrawn", BEFORE_WITHDRAWN);
    const chosen = await olderHook(acc.accountId, "https://hooks.example.test/chosen", CHOSEN);

    const migration = (JSON.parse(env.MIGRATIONS) as { name: string; sql: string }[]).find((m) => m.name === MIGRATION);
    expect(migration, `migrations/${MIGRATION}`).toBeDefined();
    await env.DB.batch(splitSql(migration!.sql).map((s) => env.DB.prepare(s)));
    expect(await storedEvents(first.webhook.id)).toBe("all");
    expect(await storedEvents(before.webhook.id)).toBe("all");
    expect(await storedEvents(chosen.webhook.id)).toBe(CHOSEN);
    const listed = Object.fromEntries((await listWebhooks(env.DB, acc.accountId)).map((w) => [w.url, w.events]));
    expect(listed).toEqual({
      [first.webhook.url]: "all",
      [before.webhook.url]: "all",
      [chosen.webhook.url]: CHOSEN.split(","),
    });

    // The agent asks and withdraws its question: approval.withdrawn, an event neither older list named.
    const person = await connect(acc.human);
    const agent = await connect(acc.agent);
    const { task } = await person.ok("create_task", { title: "Order the paint", assignee: acc.agentName });
    await agent.ok("request_approval", { task_id: task.id, question: "Blue or green?" });
    await agent.ok("request_approval", { task_id: task.id, withdraw: true });
    const types = (url: string) => seen.filter((r: Received) => r.url === url).map((r) => r.event.type);
    await waitFor("approval.withdrawn at both endpoints that were all", () =>
      types(first.webhook.url).includes("approval.withdrawn") && types(before.webhook.url).includes("approval.withdrawn") && types(chosen.webhook.url).length >= 1,
    );
    await sleep(1500);
    expect(types(first.webhook.url)).toEqual(["approval.requested", "approval.withdrawn"]);
    expect(types(before.webhook.url)).toEqual(["approval.requested", "approval.withdrawn"]);
    expect(types(chosen.webhook.url)).toEqual(["approval.requested"]);
    await Promise.all([person.close(), agent.close()]);
  });

  it("made with --events all or every event named is stored as all; a list short of one event stays a list", async () => {
    const acc = await seedAccount("All events");
    const plan = (events: string) => planWebhook({ accountId: acc.accountId, url: "https://x.example.test/", events, key: env.CONNECTOR_KEY, allowHttp: false }, new Date().toISOString());
    expect((await plan("all")).webhook.events).toBe("all");
    expect((await plan(EVENT_TYPES.join(","))).webhook.events).toBe("all");
    expect((await plan([...EVENT_TYPES].reverse().join(", "))).webhook.events).toBe("all");
    expect((await plan(EVENT_TYPES.slice(1).join(","))).webhook.events).toEqual(EVENT_TYPES.slice(1));

    const all = await addHook(acc.accountId, "https://hooks.example.test/all", "all");
    expect(await storedEvents(all.webhook.id)).toBe("all");
    expect(all.webhook.events).toBe("all");
  });
});
