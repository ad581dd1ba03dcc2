/**
 * `npm start`: prepares the local database (schema once, a demo account with
 * four tokens on the first run), prints the MCP URL, the tokens and client
 * configurations, then serves the Worker with `wrangler dev` until stopped.
 * The data lives in wrangler's default `.wrangler/state`, the same local D1
 * that `npm run admin` uses without flags, so a second start keeps it.
 */
import { spawn } from "node:child_process";
import { constants } from "node:os";
import { ROOT, type Target } from "./lib/d1.ts";
import { DEMO_AGENT, DEMO_FILE, DEMO_ROLES, ensureDemo, ensureDevVars, ensureSchema, type DemoRole } from "./lib/demo.ts";
import { claudeDesktopConfig, cursorConfig, indent, vscodeConfig } from "./lib/client-config.ts";
import { INSPECTOR_ORIGINS, WRANGLER_JS, waitForHealth, wranglerDevArgs, wranglerEnv } from "./lib/dev-server.ts";

const HOST = "127.0.0.1";

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

async function prepare(): Promise<{ url: string; lines: string[] }> {
  const port = portFromEnv();
  const url = `http://${HOST}:${port}/mcp`;
  const target: Target = { remote: false };
  const lines: string[] = [];

  if (ensureDevVars()) lines.push("Created .dev.vars with a random CONNECTOR_KEY (git-ignored).");
  console.error("Preparing the local database…");
  if (ensureSchema(target)) lines.push("Applied schema.sql to the local D1 database (.wrangler/state).");
  const { demo, state } = await ensureDemo(target);
  const stateLine = {
    created: "Created a demo account with four tokens",
    kept: "Using the demo account from an earlier start",
    renewed: "Using the demo account from an earlier start (revoked or missing tokens were replaced)",
  }[state];
  lines.push(`${stateLine}: ${demo.account.id}. Its tokens are kept in ${DEMO_FILE.slice(ROOT.length + 1)} (git-ignored).`);

  const t = (role: DemoRole) => demo.tokens[role].secret;
  const row = (role: DemoRole, who: string) => `  ${who.padEnd(22)} ${t(role)}   ${DEMO_ROLES[role].sees}`;
  lines.push(
    "",
    `Taskgate MCP server: ${url}`,
    "Send a token as the header  Authorization: Bearer <token>",
    "",
    "Tokens:",
    row("human", "human, write"),
    row("humanRead", "human, read"),
    row("agent", `${DEMO_AGENT}, write`),
    row("agentRead", `${DEMO_AGENT}, read`),
    "",
    "Claude Desktop (claude_desktop_config.json), as you:",
    indent(claudeDesktopConfig(url, t("human"))),
    "",
    `Cursor (~/.cursor/mcp.json), as ${DEMO_AGENT}:`,
    indent(cursorConfig(url, t("agent"))),
    "",
    `VS Code (.vscode/mcp.json), as ${DEMO_AGENT}:`,
    indent(vscodeConfig(url, t("agent"))),
    "",
    "MCP Inspector: npx @modelcontextprotocol/inspector, transport Streamable HTTP,",
    `  URL ${url}, header Authorization: Bearer ${t("humanRead")}`,
    "",
    "More tokens and accounts: npm run admin -- --help",
    "",
  );
  return { url, lines };
}

async function main(): Promise<void> {
  process.env.PATH = wranglerEnv().PATH;
  const port = portFromEnv();
  let prepared;
  try {
    prepared = await prepare();
  } catch (e) {
    console.error(`npm start could not prepare the local database: ${(e as Error).message}`);
    process.exit(1);
  }
  console.log(prepared.lines.join("\n"));

  // Local development: webhook receivers on this machine may use http://.
  const args = wranglerDevArgs({ host: HOST, port, vars: { ALLOWED_ORIGINS: INSPECTOR_ORIGINS.join(","), ALLOW_HTTP_WEBHOOKS: "1" } });
  const child = spawn(process.execPath, [WRANGLER_JS, ...args], { cwd: ROOT, stdio: "inherit", env: wranglerEnv() });

  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    });
  }
  child.on("error", (e) => {
    console.error(`Could not start wrangler dev: ${e.message}`);
    process.exit(1);
  });
  child.on("exit", (code, signal) => {
    process.exit(code ?? (signal ? 128 + (constants.signals[signal] ?? 0) : 1));
  });

  const stopped = () => (child.exitCode !== null || child.signalCode !== null ? "exited" : null);
  waitForHealth(`http://${HOST}:${port}`, 180_000, stopped).then(
    () => console.log(`\nTaskgate is serving MCP at ${prepared.url} (the tokens are above; Ctrl-C stops it).\n`),
    () => {},
  );
}

void main();
