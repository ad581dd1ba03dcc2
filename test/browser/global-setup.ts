/**
 * One local Taskgate for all browser tests: a temporary `--persist-to`
 * directory with schema.sql applied, `wrangler dev` on a free port, and an
 * account made with the admin CLI. The tests get its address through
 * `inject("taskgate")`; the teardown stops wrangler (and proves its process
 * group is gone) and removes the directory, also when a test failed. If vitest
 * is interrupted, LocalStack's exit hook kills the group.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { newConnectorKey } from "../../src/domain/crypto.ts";
import { ROOT } from "../../scripts/lib/d1.ts";
import { newVapidKeyValue } from "../../scripts/lib/demo.ts";
import { LocalStack } from "../../scripts/lib/local-stack.ts";
import type { Taskgate } from "./context.ts";

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
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
    const taskgate: Taskgate = { base: stack.base, persistTo: stack.dir, accountId: account.id };
    project.provide("taskgate", taskgate);
  } catch (e) {
    await stack.stop().catch(() => {});
    throw e;
  }
  return () => stack.stop();
}
