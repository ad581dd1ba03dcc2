/**
 * A test host for MCP Apps, built on ext-apps' AppBridge: it runs in the page
 * (bundled by apps-host-page.ts), puts the view in a sandboxed iframe with the
 * CSP its resource declares, gives it the tool result, and forwards its
 * tools/call to `window.hostCallTool`, which the test binds to a real MCP
 * client over HTTP with a real token. Links the view asks to open are kept
 * in `window.openedLinks`.
 */
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

interface Csp {
  connectDomains?: string[];
  resourceDomains?: string[];
  frameDomains?: string[];
}

export interface HostOptions {
  html: string;
  csp: Csp | undefined;
  /** The result the host gives the view; null: none, as when a host shows the resource on its own. */
  toolResult: Record<string, unknown> | null;
  theme: "light" | "dark";
}

declare global {
  interface Window {
    hostCallTool(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>>;
    openHost(o: HostOptions): Promise<void>;
    /** Sends the view a tool result again, as a host does when the tool is called anew. */
    sendToolResult(result: Record<string, unknown>): Promise<void>;
    openedLinks: string[];
  }
}

/** The policy a host sets on a view from its `_meta.ui.csp` (SEP-1865: nothing beyond what it declares). */
export function cspFor(csp: Csp | undefined): string {
  const res = (csp?.resourceDomains ?? []).join(" ");
  const connect = (csp?.connectDomains ?? []).join(" ") || "'none'";
  const frames = (csp?.frameDomains ?? []).join(" ") || "'none'";
  return [
    "default-src 'none'",
    `script-src 'unsafe-inline' ${res}`.trim(),
    `style-src 'unsafe-inline' ${res}`.trim(),
    `img-src data: ${res}`.trim(),
    `font-src ${res || "'none'"}`,
    `media-src ${res || "'none'"}`,
    `connect-src ${connect}`,
    `frame-src ${frames}`,
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
}

window.openedLinks = [];

window.openHost = async (o: HostOptions) => {
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", "allow-scripts allow-forms");
  frame.title = "Taskgate approvals";
  document.getElementById("host")!.append(frame);
  const bridge = new AppBridge(
    null,
    { name: "taskgate-test-host", version: "1.0.0" },
    { serverTools: {}, openLinks: {} },
    { hostContext: { theme: o.theme, displayMode: "inline", platform: "web" } },
  );
  bridge.oncalltool = async (params) => (await window.hostCallTool(params.name, (params.arguments ?? {}) as Record<string, unknown>)) as never;
  bridge.onopenlink = async ({ url }) => {
    window.openedLinks.push(url);
    return {};
  };
  bridge.onsizechange = ({ height }) => {
    if (height) frame.style.height = `${height}px`;
  };
  const initialized = new Promise<void>((resolve) => (bridge.oninitialized = () => resolve()));
  await bridge.connect(new PostMessageTransport(frame.contentWindow!, frame.contentWindow!));
  const meta = `<meta http-equiv="Content-Security-Policy" content="${cspFor(o.csp)}">`;
  frame.srcdoc = o.html.replace("<head>", `<head>${meta}`);
  await initialized;
  window.sendToolResult = (result) => bridge.sendToolResult(result as never);
  if (o.toolResult) await bridge.sendToolResult(o.toolResult as never);
};
