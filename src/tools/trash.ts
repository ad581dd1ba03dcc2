import type { AnyTool } from "../mcp/tool.ts";

export const trashTools: AnyTool[] = [];
