/**
 * The Cron Triggers under `npm start`, end to end: an agent claims a task
 * with a one-minute lease on the server `npm start` serves, nobody takes it
 * over, and the minute cron that `npm start` runs announces the lapse
 * (claim.lapsed reaches a webhook receiver on this machine), as deployed.
 * Then `npm run -s scheduled -- daily` runs the daily job on request.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { keyFromDotenv } from "../../src/domain/crypto.ts";
import { ROOT } from "./d1.ts";
import { DEV_VARS_FILE } from "./demo.ts";
import { admin, assert, connect, equal, run } from "./e2e-harness.ts";
import { Receiver } from "./e2e-webhooks.ts";
import { configuredCrons, cronByName, cronMatches, unsupportedCrons } from "./scheduled.ts";

/** The CONNECTOR_KEY the `npm start` on `stateDir` serves with (the admin CLI must seal the webhook secret with it). */
function startKey(stateDir: string): string {
  const file = existsSync(DEV_VARS_FILE) ? DEV_VARS_FILE : join(stateDir, ".dev.vars");
  const key = keyFromDotenv(readFileSync(file, "utf8"));
  assert(key, `no CONNECTOR_KEY in ${file}`);
  return key;
}

/** The cron matcher `npm start` schedules with, on the crons of wrangler.toml. */
export function cronSchedule(): void {
  const crons = configuredCrons();
  equal(unsupportedCrons(crons).length, 0, "crons npm start cannot run");
  const minute = cronByName("minute", crons) as string;
  const daily = cronByName("daily", crons) as string;
  assert(minute && daily, `a minute and a daily cron in wrangler.toml, got ${JSON.stringify(crons)}`);
  assert(cronMatches(minute, new Date("2026-12-04T10:11:00Z")), "the minute cron runs every minute");
  const [m, h] = daily.split(" ").map(Number);
  const at = new Date(Date.UTC(2026, 11, 4, h, m));
  assert(cronMatches(daily, at), `${daily} runs at ${at.toISOString()}`);
  assert(!cronMatches(daily, new Date(at.getTime() + 60_000)) && !cronMatches(daily, new Date(at.getTime() + 3_600_000)), `${daily} runs once a day`);
  assert(cronMatches("*/15 9-17 * * 1-5", new Date("2026-12-04T09:45:00Z")) && !cronMatches("*/15 9-17 * * 1-5", new Date("2026-12-05T09:45:00Z")), "steps, ranges and week days");
  assert(cronMatches("0 0 * * 7", new Date("2026-12-06T00:00:00Z")), "7 is Sunday");
  equal(unsupportedCrons(["0 0 * * MON", "0 0 L * *"]).length, 2, "names and L are reported, not run");
}

/** On the `npm start` serving `port` with `stateDir`: a one-minute claim lapses and the minute cron announces it. */
export async function leaseLapsesUnderStart(port: number, stateDir: string): Promise<void> {
  const demo = JSON.parse(readFileSync(join(stateDir, ".taskgate-demo.json"), "utf8"));
  const receiver = new Receiver();
  await receiver.start();
  const agent = await connect(`http://127.0.0.1:${port}/mcp`, demo.tokens.agent.secret, "modern");
  try {
    const hook = await admin(stateDir, ["add-webhook", "--account", demo.account.id, "--url", `${receiver.url}/lapsed`, "--events", "claim.lapsed"], { CONNECTOR_KEY: startKey(stateDir) });
    assert(/^whk_/.test(hook.id), `a webhook, got ${JSON.stringify(hook)}`);
    const { task } = await agent.ok("create_task", { title: "Claimed, then left alone" });
    const claimed = await agent.ok("claim_task", { task_id: task.id, lease_minutes: 1 });
    const expires = claimed.claim_expires_at as string;
    assert(Date.parse(expires) - Date.now() <= 60_000, `a one-minute lease, until ${expires}`);
    // The lease ends within a minute, and the next minute's cron (at most a minute later) announces it.
    await receiver.waitFor("claim.lapsed from the minute cron", (got) => got.some((d) => d.event.data?.task?.id === task.id), 150_000);
    const lapsed = receiver.got.filter((d) => d.event.data?.task?.id === task.id);
    equal(lapsed.length, 1, "claim.lapsed events for the task");
    const e = lapsed[0].event;
    equal(e.type, "claim.lapsed", "event type");
    equal(e.data.lease_expired_at, expires, "lease_expired_at");
    equal(e.data.taken_over_by, null, "taken over by (nobody: the cron announced it)");
    assert(Date.parse((e as unknown as { created_at: string }).created_at) >= Date.parse(expires), "announced after the lease ended");
  } finally {
    await agent.close();
    await receiver.stop();
  }
}

/** `npm run -s scheduled -- daily` against the server on `port`; and against nothing, a clear refusal. */
export async function dailyOnRequest(port: number, freePort: number): Promise<void> {
  const script = join(ROOT, "scripts", "scheduled.ts");
  const { stdout } = await run(process.execPath, ["--no-warnings", script, "daily"], 60_000, { env: { PORT: String(port) } });
  const out = JSON.parse(stdout.trim());
  equal(out.cron, cronByName("daily"), "the daily cron");
  const refused = await run(process.execPath, ["--no-warnings", script, "daily"], 60_000, { env: { PORT: String(freePort) } }).then(
    () => "",
    (e: Error) => e.message,
  );
  assert(/Nothing answers at http:\/\/127\.0\.0\.1:\d+: start Taskgate with npm start/.test(refused), `without a server: ${refused}`);
}
