/**
 * `npm start`: checks that the port is free, prepares the local database
 * (schema once, then any new migrations, named in what it prints; a demo account with a person who
 * signs in and four tokens on the first run), prints the MCP URL, the sign-in
 * details, the tokens and client configurations, then serves the Worker with
 * `wrangler dev` until stopped, running the Cron Triggers of wrangler.toml on
 * their schedule (scripts/lib/scheduled.ts). SIGINT (Ctrl-C) or SIGTERM stops wrangler and
 * everything it started, then this process.
 * The data lives in wrangler's default `.wrangler/state`, the same local D1
 * that `npm run admin` uses without flags, so a second start keeps it;
 * `npm start -- --persist-to DIR` keeps the database, the demo tokens and a
 * generated CONNECTOR_KEY in DIR instead.
 */
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { ROOT, type Target } from "./lib/d1.ts";
import { DEMO_AGENT, DEMO_ROLES, demoFile, ensureDemo, ensureDevVars, ensureSchema, type DemoRole } from "./lib/demo.ts";
import { claudeDesktopConfig, cursorConfig, indent, vscodeConfig } from "../src/domain/client-config.ts";
import { INSPECTOR_ORIGINS, nextFreePort, portProblem, WRANGLER_JS, wranglerDevArgs, wranglerEnv } from "./lib/dev-server.ts";
import { migrationLines } from "./lib/migration-report.ts";
import { configuredCrons, runCronsOnSchedule, unsupportedCrons } from "./lib/scheduled.ts";
import { supervise } from "./lib/supervise.ts";
import { wranglerNoise } from "./lib/wrangler-noise.ts";

const HOST = "127.0.0.1";

/** The last MCP Inspector release that runs on Node 20 (1.x and 2.x need Node 22). */
const INSPECTOR_COMMAND = "npx @modelcontextprotocol/inspector@0.15.0";

function portFromEnv(): number {
  const raw = process.env.PORT;
  if (raw === undefined || raw === "") return 8787;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    console.error(`PORT must be a TCP port number (1-65535), got "${raw}".`);
    process.exit(2);
  }
  return port;
}

function optionsFromArgs(): { persistTo?: string } {
  try {
    const { values } = parseArgs({ args: process.argv.slice(2), strict: true, options: { "persist-to": { type: "string" } } });
    return { persistTo: values["persist-to"] ? resolve(values["persist-to"]) : undefined };
  } catch (e) {
    console.error(`${(e as Error).message}\nUsage: npm start [-- --persist-to DIR]   (PORT=8788 npm start for another port)`);
    process.exit(2);
  }
}

/** Before anything is printed or written: is the port free? If not, say how to pick another. */
async function checkPort(port: number): Promise<void> {
  const problem = await portProblem(HOST, port);
  if (!problem) return;
  const free = await nextFreePort(HOST, port);
  const example = free ? `PORT=${free} npm start` : "PORT=<port> npm start";
  console.error(`npm start: ${problem}. Stop what uses it, or pick another port: ${example}`);
  process.exit(1);
}

interface Prepared {
  url: string;
  lines: string[];
  envFile: string | null;
}

async function prepare(port: number, target: Target): Promise<Prepared> {
  const url = `http://${HOST}:${port}/mcp`;
  const lines: string[] = [];
  const where = target.persistTo ?? ".wrangler/state";

  const devVars = ensureDevVars(target);
  if (devVars.created) lines.push(`Created ${devVars.envFile ? devVars.file : ".dev.vars"} with a random CONNECTOR_KEY and VAPID_KEY (git-ignored).`);
  else if (devVars.vapidAdded) lines.push(`Added a VAPID_KEY (Web Push) to ${devVars.envFile ? devVars.file : ".dev.vars"}.`);
  console.error("Preparing the local database…");
  const schema = ensureSchema(target);
  if (schema.created.length) lines.push(`Applied schema.sql to the local D1 database${schema.created.length > 1 ? "s" : ""} ${schema.created.join(", ")} (${where}).`);
  // A database from an earlier start: the migrations it was given, by name, or none.
  lines.push(...migrationLines(schema.migrated));
  const { demo, state } = await ensureDemo(target);
  const stateLine = {
    created: "Created a demo account with a person who signs in and four tokens",
    kept: "Using the demo account from an earlier start",
    renewed: "Using the demo account from an earlier start (revoked or missing tokens, or a changed password, were replaced)",
  }[state];
  const file = demoFile(target);
  lines.push(`${stateLine}: ${demo.account.id}. Its password and tokens are kept in ${file.startsWith(ROOT) ? file.slice(ROOT.length + 1) : file} (git-ignored).`);
  const origin = url.replace(/\/mcp$/, "");

  const t = (role: DemoRole) => demo.tokens[role].secret;
  const row = (role: DemoRole, who: string) => `  ${who.padEnd(22)} ${t(role)}   ${DEMO_ROLES[role].sees}`;
  lines.push(
    "",
    `Taskgate MCP server: ${url}`,
    `Web console:         ${origin}/   (your approvals inbox, tasks, agents, tokens; sign in with the email and password below)`,
    "",
    "Connect an app with nothing but that URL: it opens Taskgate's sign-in page in the browser,",
    "where you sign in and choose who it acts as (you, or one of your agents) and whether it may write.",
    `  Sign in at   ${origin}/signin`,
    `  Email        ${demo.person?.email ?? "(none)"}`,
    `  Password     ${demo.person?.password ?? "(none)"}`,
    "",
    "Claude Desktop (claude_desktop_config.json), by URL through mcp-remote:",
    indent(claudeDesktopConfig(url)),
    "",
    "Cursor (~/.cursor/mcp.json), by URL:",
    indent(cursorConfig(url)),
    "",
    "VS Code (.vscode/mcp.json), by URL:",
    indent(vscodeConfig(url)),
    "",
    "Headless agents and scripts send a token as the header  Authorization: Bearer <token>",
    "",
    "Tokens:",
    row("human", "human, write"),
    row("humanRead", "human, read"),
    row("agent", `${DEMO_AGENT}, write`),
    row("agentRead", `${DEMO_AGENT}, read`),
    "",
    `With a header instead, e.g. Cursor as ${DEMO_AGENT}:`,
    indent(cursorConfig(url, t("agent"))),
    "",
    `VS Code (.vscode/mcp.json), as ${DEMO_AGENT}:`,
    indent(vscodeConfig(url, t("agent"))),
    "",
    `MCP Inspector: ${INSPECTOR_COMMAND}, transport Streamable HTTP,`,
    `  URL ${url}, header Authorization: Bearer ${t("humanRead")}`,
    "",
    "More people, tokens and accounts: npm run -s admin -- --help",
    "",
  );
  return { url, lines, envFile: devVars.envFile ? devVars.file : null };
}

async function main(): Promise<void> {
  process.env.PATH = wranglerEnv().PATH;
  const { persistTo } = optionsFromArgs();
  const port = portFromEnv();
  await checkPort(port);
  const target: Target = { remote: false, persistTo };
  let prepared: Prepared;
  try {
    prepared = await prepare(port, target);
  } catch (e) {
    console.error(`npm start could not prepare the local database: ${(e as Error).message}`);
    process.exit(1);
  }
  console.log(prepared.lines.join("\n"));

  // Local development: webhook receivers on this machine may use http://.
  const args = wranglerDevArgs({ host: HOST, port, persistTo, vars: { ALLOWED_ORIGINS: INSPECTOR_ORIGINS.join(","), ALLOW_HTTP_WEBHOOKS: "1" } });
  if (prepared.envFile) args.push("--env-file", prepared.envFile);
  // Its own process group (so a stop reaches workerd too) and no interactive keys: stdin stays with this process.
  args.push("--show-interactive-dev-session=false");
  const origin = `http://${HOST}:${port}`;
  let crons: (() => void) | null = null;
  const runtime = supervise(process.execPath, [WRANGLER_JS, ...args], {
    cwd: ROOT,
    env: wranglerEnv(),
    origin,
    onStopping: (signal) => {
      crons?.();
      console.error(`\n${signal}: stopping wrangler dev and workerd…`);
    },
    // The lines of wrangler that alarm and ask nothing are dropped (scripts/lib/wrangler-noise.ts; docs/testing.md).
    filter: wranglerNoise,
    say: (line) => console.error(`\n${line}`),
    onReady: (restarts) => {
      if (restarts > 0) {
        console.log(`\nTaskgate is serving again at ${prepared.url} and ${origin}/ (the runtime was restarted${restarts > 1 ? ` ${restarts} times` : ""}).\n`);
        return;
      }
      console.log(`\nTaskgate is serving MCP at ${prepared.url} and the web console at ${origin}/ (sign-in and tokens are above; Ctrl-C stops it).`);
      // The Cron Triggers, as deployed: wrangler dev does not fire them itself; skipped while the runtime restarts.
      const configured = configuredCrons();
      for (const c of unsupportedCrons(configured)) console.error(`The cron "${c}" of wrangler.toml is not run locally (only numbers, *, ranges, lists and steps are).`);
      crons = runCronsOnSchedule(origin, configured, (line) => console.error(line), () => runtime.unavailable());
      console.log(`Cron Triggers run on their schedule (UTC): ${configured.map((c) => `"${c}"`).join(", ")}; the daily one now: npm run -s scheduled -- daily\n`);
    },
  });
}

void main();
