/**
 * A local Taskgate for each browser test file that runs at once (two): a
 * temporary `--persist-to` directory with schema.sql applied, `wrangler dev`
 * on a free port, and an account made with the admin CLI. A file reaches the
 * one of its worker (test/browser/context.ts), so the admin CLI's direct writes
 * for one file never meet the other's server on one SQLite file. The teardown
 * stops each wrangler (and proves its process group is gone) and removes its
 * directory, also when a test failed. If vitest
 * is interrupted, LocalStack's exit hook kills the group.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import chromium from "@sparticuz/chromium";
import type { TestProject } from "vitest/node";
import { newConnectorKey } from "../../src/domain/crypto.ts";
import { ROOT } from "../../scripts/lib/d1.ts";
import { newVapidKeyValue } from "../../scripts/lib/demo.ts";
import { LocalStack } from "../../scripts/lib/local-stack.ts";
import type { Taskgate } from "./context.ts";

/** How many servers: one for each test file running at once (vitest.browser.config.ts `maxWorkers`). */
export const SERVERS = 2;

async function startOne(): Promise<{ stack: LocalStack; taskgate: Taskgate }> {
  const stack = new LocalStack("taskgate-browser-");
  try {
    await stack.applySchema();
    // The key that seals webhook secrets: .dev.vars when there is one (wrangler reads it), else one for this run;
    // a VAPID key pair (Web Push) of this run's own; and local development, as npm start has it, so a device may
    // subscribe at the tests' stand-in push service (push.example.test, src/domain/push.ts).
    await stack.start({
      ...(existsSync(join(ROOT, ".dev.vars")) ? {} : { CONNECTOR_KEY: newConnectorKey() }),
      VAPID_KEY: newVapidKeyValue(),
      ALLOW_HTTP_WEBHOOKS: "1",
    });
    const account = await stack.admin(["create-account", "--name", "Browser tests"]);
    return { stack, taskgate: { base: stack.base, persistTo: stack.dir, accountId: account.id } };
  } catch (e) {
    await stack.stop().catch(() => {});
    throw e;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // Chromium unpacked once, before the files that run side by side each launch one (each would unpack it at once).
  await chromium.executablePath();
  const started = await Promise.allSettled(Array.from({ length: SERVERS }, () => startOne()));
  const stacks = started.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
  const failed = started.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed) {
    await Promise.all(stacks.map((s) => s.stack.stop().catch(() => {})));
    throw failed.reason;
  }
  project.provide("taskgates", stacks.map((s) => s.taskgate));
  return async () => {
    await Promise.all(stacks.map((s) => s.stack.stop()));
  };
}
