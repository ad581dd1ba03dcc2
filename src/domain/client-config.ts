/** Ready-to-paste client configurations for a Taskgate URL and token (npm start and the web console show them). */

/**
 * Claude Desktop speaks stdio to local servers, so `mcp-remote` bridges to the
 * URL. The header travels through an env var because some hosts split `args`
 * on spaces.
 */
export function claudeDesktopConfig(url: string, token: string): string {
  return JSON.stringify(
    {
      mcpServers: {
        taskgate: {
          command: "npx",
          args: ["-y", "mcp-remote", url, "--header", "Authorization:${TASKGATE_AUTH}"],
          env: { TASKGATE_AUTH: `Bearer ${token}` },
        },
      },
    },
    null,
    2,
  );
}

/** Cursor (`~/.cursor/mcp.json`) connects to the URL itself. */
export function cursorConfig(url: string, token: string): string {
  return JSON.stringify({ mcpServers: { taskgate: { url, headers: { Authorization: `Bearer ${token}` } } } }, null, 2);
}

/** VS Code (`.vscode/mcp.json`, or "MCP: Add Server…"). */
export function vscodeConfig(url: string, token: string): string {
  return JSON.stringify({ servers: { taskgate: { type: "http", url, headers: { Authorization: `Bearer ${token}` } } } }, null, 2);
}

export function indent(text: string, by = "    "): string {
  return text
    .split("\n")
    .map((l) => by + l)
    .join("\n");
}
