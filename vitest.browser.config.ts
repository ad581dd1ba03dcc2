/**
 * `npm run test:browser`: tests in Node that drive a real Chromium (from
 * @sparticuz/chromium, through playwright-core) against one `wrangler dev`
 * that the global setup starts for all of them. One file at a time: they share
 * that server, and the machine's cores are for the Worker and the browser.
 */
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "browser",
    include: ["test/browser/**/*.test.ts"],
    environment: "node",
    globalSetup: ["./test/browser/global-setup.ts"],
    fileParallelism: false,
    testTimeout: 90_000,
    hookTimeout: 90_000,
  },
});
