/** Projects: archive, unarchive and delete. */
import type { ActionSpec } from "../action-spec.ts";

export const PROJECT_ACTIONS: Record<string, ActionSpec> = {};
