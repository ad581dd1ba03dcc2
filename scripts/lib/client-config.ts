/**
 * Ready-to-paste client configurations for a Taskgate URL: without a token the
 * client signs in through OAuth (the browser opens Taskgate's sign-in page);
 * with one it sends the token as a header (headless agents, scripts).
 */

/**
 * Claude Desktop speaks stdio to local servers, so `mcp-remote` bridges to the
 * URL. The header travels through an env var because some hosts split `args`
 * on spaces.
 */
export function claudeDesktopConfig(url: string, token?: string): string {
  const server = token
    ? { command: "npx", args: ["-y", "mcp-remote", url, "--header", "Authorization:${TASKGATE_AUTH}"], env: { TASKGATE_AUTH: `Bearer ${token}` } }
    : { command: "npx", args: ["-y", "mcp-remote", url] };
  return JSON.stringify({ mcpServers: { taskgate: server } }, null, 2);
}

/** Cursor (`~/.cursor/mcp.json`) connects to the URL itself. */
export function cursorConfig(url: string, token?: string): string {
  return JSON.stringify({ mcpServers: { taskgate: { url, ...(token ? { headers: { Authorization: `Bearer ${token}` } } : {}) } } }, null, 2);
}

/** VS Code (`.vscode/mcp.json`, or "MCP: Add Server…"). */
export function vscodeConfig(url: string, token?: string): string {
  return JSON.stringify({ servers: { taskgate: { type: "http", url, ...(token ? { headers: { Authorization: `Bearer ${token}` } } : {}) } } }, null, 2);
}

export function indent(text: string, by = "    "): string {
  return text
    .split("\n")
    .map((l) => by + l)
    .join("\n");
}
