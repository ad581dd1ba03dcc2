/** The task vocabulary every layer speaks: the tools' schemas, the SQL mapping and the pages. */
export const PRIORITIES = ["low", "normal", "high", "urgent"] as const;
export const TASK_STATUSES = ["open", "in_progress", "blocked", "awaiting_approval", "done", "cancelled"] as const;
export const STEP_STATUSES = ["pending", "in_progress", "done", "skipped"] as const;

export type Priority = (typeof PRIORITIES)[number];
export type TaskStatus = (typeof TASK_STATUSES)[number];
export type StepStatus = (typeof STEP_STATUSES)[number];
