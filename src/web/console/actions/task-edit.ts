/** The task page's edits of the task itself: its fields, who holds it, snooze, block, project. */
import type { ActionSpec } from "../action-spec.ts";

export const TASK_EDIT_ACTIONS: Record<string, ActionSpec> = {};
