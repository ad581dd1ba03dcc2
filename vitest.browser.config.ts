/**
 * `npm run test:browser`: tests in Node that drive a real Chromium (from
 * @sparticuz/chromium, through playwright-core) against a `wrangler dev` of
 * the global setup. Two files at a time, each with a Chromium of its own and a
 * server of its own: each waits on its server and its browser most of the
 * time, so two take little more than half as long; the slowest start first
 * (docs/testing.md#where-the-time-goes).
 */
import { defineConfig } from "vitest/config";
import { slowestFirst } from "./scripts/lib/test-order.ts";

/** The files that take longest, slowest first, as measured on a 2-core machine. */
const SLOWEST = [
  "test/browser/console.test.ts",
  "test/browser/screens.test.ts",
  "test/browser/approvals-view.test.ts",
  "test/browser/supervise.test.ts",
  "test/browser/oauth.test.ts",
  "test/browser/policy-done.test.ts",
  "test/browser/task-edit.test.ts",
  "test/browser/hostile.test.ts",
];

export default defineConfig({
  test: {
    name: "browser",
    include: ["test/browser/**/*.test.ts"],
    environment: "node",
    globalSetup: ["./test/browser/global-setup.ts"],
    maxWorkers: 2,
    sequence: { sequencer: slowestFirst(SLOWEST) },
    testTimeout: 90_000,
    hookTimeout: 90_000,
  },
});
