import type { AnyTool } from "../catalog/tool.ts";
import { taskTools } from "./tasks.ts";
import { taskQueryTools } from "./task-queries.ts";
import { taskMoveTools } from "./task-moves.ts";
import { taskDependencyTools } from "./task-dependencies.ts";
import { lifecycleTools } from "./lifecycle.ts";
import { projectTools } from "./projects.ts";
import { stepTools } from "./steps.ts";
import { commentTools } from "./comments.ts";
import { runTools } from "./runs.ts";
import { agentTools } from "./agents.ts";
import { approvalTools } from "./approvals.ts";
import { labelTools } from "./labels.ts";
import { calendarTools } from "./calendar.ts";
import { trashTools } from "./trash.ts";
import { digestTools } from "./digest.ts";
import { overviewTools } from "./overview.ts";
import { connectorTools } from "./connectors.ts";
import { accountTools } from "./account.ts";

/** Every tool of the catalog, grouped as in the catalog. */
export const ALL_TOOLS: readonly AnyTool[] = [
  ...taskTools,
  ...taskQueryTools,
  ...taskMoveTools,
  ...taskDependencyTools,
  ...lifecycleTools,
  ...projectTools,
  ...stepTools,
  ...commentTools,
  ...runTools,
  ...agentTools,
  ...approvalTools,
  ...labelTools,
  ...calendarTools,
  ...trashTools,
  ...digestTools,
  ...overviewTools,
  ...connectorTools,
  ...accountTools,
];
