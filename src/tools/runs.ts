import type { AnyTool } from "../mcp/tool.ts";

export const runTools: AnyTool[] = [];
