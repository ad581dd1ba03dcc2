/**
 * One local Taskgate for all browser tests: a temporary `--persist-to`
 * directory with schema.sql applied, `wrangler dev` on a free port, and an
 * account made with the admin CLI. The tests get its address through
 * `inject("taskgate")`; the teardown stops wrangler (and proves its process
 * group is gone) and removes the directory, also when a test failed. If vitest
 * is interrupted, LocalStack's exit hook kills the group.
 */
import type { TestProject } from "vitest/node";
import { LocalStack } from "../../scripts/lib/local-stack.ts";
import type { Taskgate } from "./context.ts";

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const stack = new LocalStack("taskgate-browser-");
  try {
    await stack.applySchema();
    await stack.start();
    const account = await stack.admin(["create-account", "--name", "Browser tests"]);
    const taskgate: Taskgate = { base: stack.base, persistTo: stack.dir, accountId: account.id };
    project.provide("taskgate", taskgate);
  } catch (e) {
    await stack.stop().catch(() => {});
    throw e;
  }
  return () => stack.stop();
}
