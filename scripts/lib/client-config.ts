/** The client configurations live beside the Worker (the web console prints them too). */
export { claudeDesktopConfig, cursorConfig, indent, vscodeConfig } from "../../src/domain/client-config.ts";
