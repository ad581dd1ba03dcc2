/**
 * `npm run -s scheduled -- daily|minute`: runs one of the Worker's Cron
 * Triggers now on the server `npm start` serves (PORT, default 8787), as
 * Cloudflare runs it when its time comes. `npm start` already runs each cron
 * on its schedule; this is for the daily one (trash purge, sign-in records,
 * old delivery records) without waiting for 03:17 UTC. Prints one line of JSON.
 */
import { configuredCrons, cronByName, triggerScheduled } from "./lib/scheduled.ts";

const USAGE = "Usage: npm run -s scheduled -- daily|minute   (PORT=8788 for a server on another port)";

async function main(argv: string[]): Promise<number> {
  const name = argv[0];
  if (!name || argv.length > 1 || name === "--help" || name === "-h") {
    console.error(USAGE);
    return name === "--help" || name === "-h" ? 0 : 2;
  }
  const cron = cronByName(name);
  if (!cron) {
    console.error(`No cron "${name}" in wrangler.toml (it has ${configuredCrons().map((c) => `"${c}"`).join(", ")}).\n${USAGE}`);
    return 2;
  }
  const origin = `http://127.0.0.1:${process.env.PORT || "8787"}`;
  const at = new Date();
  try {
    await triggerScheduled(origin, cron, at);
  } catch (e) {
    const refused = /fetch failed|ECONNREFUSED/.test(String((e as Error).message) + String((e as { cause?: Error }).cause?.message ?? ""));
    console.error(refused ? `Nothing answers at ${origin}: start Taskgate with npm start first (PORT=… when it serves another port).` : `Error: ${(e as Error).message}`);
    return 1;
  }
  process.stdout.write(JSON.stringify({ cron, ran_at: at.toISOString(), server: origin }) + "\n");
  return 0;
}

main(process.argv.slice(2)).then((code) => process.exit(code));
