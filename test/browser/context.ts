/** What the browser tests' global setup provides, and the admin CLI against its database. */
import { inject } from "vitest";
import { admin } from "../../scripts/lib/e2e-harness.ts";

export interface Taskgate {
  /** `http://127.0.0.1:<port>` of the running `wrangler dev`. */
  base: string;
  /** Its `--persist-to` directory (for the admin CLI). */
  persistTo: string;
  /** An account made for the tests. */
  accountId: string;
}

declare module "vitest" {
  export interface ProvidedContext {
    taskgates: Taskgate[];
  }
}

/** The server of this test file's worker: the files that run at once each have their own (test/browser/global-setup.ts). */
export function taskgate(): Taskgate {
  const all = inject("taskgates");
  const worker = Number(process.env.VITEST_POOL_ID ?? "1");
  return all[(worker - 1) % all.length];
}

/** `npm run admin -- …` against the running server's database. */
export function adminCli(args: string[]): Promise<Record<string, string>> {
  return admin(taskgate().persistTo, args);
}
