import type { AnyTool } from "../mcp/tool.ts";
import { taskTools } from "./tasks.ts";
import { overviewTools } from "./overview.ts";

/** Every tool of the catalog, in catalog order of groups. */
export const ALL_TOOLS: readonly AnyTool[] = [
  ...taskTools,
  ...overviewTools,
];
