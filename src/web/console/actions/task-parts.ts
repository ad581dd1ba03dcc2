/** The task page's parts: steps, labels, dependencies and calendar links. */
import type { ActionSpec } from "../action-spec.ts";

export const TASK_PART_ACTIONS: Record<string, ActionSpec> = {};
