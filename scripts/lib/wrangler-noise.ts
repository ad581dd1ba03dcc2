/**
 * The lines of `wrangler dev` that `npm start` does not pass on, because they
 * alarm a newcomer and ask nothing of them (docs/testing.md explains each):
 *
 * - the warning that Scheduled Workers are not triggered locally, with its
 *   indented advice: `npm start` runs the Cron Triggers itself, on their schedule;
 * - "Unable to fetch the `Request.cf` object" and the `ENOTFOUND
 *   workers.cloudflare.com` stack trace that follows it on a machine without
 *   internet access: local requests get a placeholder `request.cf`, which
 *   Taskgate does not read;
 * - the line of each `HEAD /health`: npm start's own probes, every 2 s, of
 *   whether the runtime still answers (scripts/lib/supervise.ts).
 *
 * Everything else (errors, the bindings table, each other request) passes.
 */

const ANSI = /\x1b\[[0-9;]*m/g;

/** A filter for one output stream: true to print the line. It keeps state, so each stream gets its own. */
export function wranglerNoise(): (line: string) => boolean {
  let skipping: "scheduled" | "trace" | null = null;
  return (raw: string) => {
    const line = raw.replace(ANSI, "");
    if (skipping === "scheduled") {
      if (line.trim() === "" || /^\s/.test(line)) return false;
      skipping = null;
    } else if (skipping === "trace") {
      if (/^\s+at /.test(line)) return false;
      skipping = null;
    }
    if (/Scheduled Workers are not automatically triggered during local development/.test(line)) {
      skipping = "scheduled";
      return false;
    }
    if (/Unable to fetch the `Request\.cf` object/.test(line)) return false;
    if (/^\[wrangler:info\] HEAD \/health /.test(line)) return false;
    if (/ENOTFOUND workers\.cloudflare\.com/.test(line)) {
      skipping = "trace";
      return false;
    }
    return true;
  };
}
