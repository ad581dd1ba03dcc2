/**
 * The consent rules, each declared once (docs/approvals-and-claims.md): what
 * it says, the code its triggers refuse with, and the triggers of schema.sql
 * that enforce it where rows are written. The engine's refusal for a code is
 * src/domain/consent.ts's sentence for it (src/mcp/engine.ts `consentError`
 * covers every code, checked by the compiler); test/consent-coverage.test.ts
 * reads the real database and fails on a consent trigger no rule declares, a
 * declared trigger that is missing, or one that refuses with another code.
 */

/** The codes the consent triggers refuse with (`taskgate:<code>`). */
export const CONSENT_CODES = ["claim", "consent", "decision", "undo", "paused", "waits", "gate", "nocaller"] as const;
export type ConsentCode = (typeof CONSENT_CODES)[number];

/**
 * The records through which a call reaches a held task (C1): the consent
 * audit's table of relations (test/audit/consent-routes.ts) must name each,
 * and test/consent-coverage.test.ts holds it to this list.
 */
export const HELD_ROUTES = [
  "the task", "its parent", "an ancestor", "its subtask", "what it waits on", "its project", "its step", "its run", "its request",
  "its label", "its calendar link", "a trash item holding it or its parts",
] as const;
export type HeldRoute = (typeof HELD_ROUTES)[number];

export interface ConsentRule {
  /** The rule's name in docs/approvals-and-claims.md. */
  rule: string;
  says: string;
  /** The code its triggers refuse with; null for a rule's bookkeeping, which records and never refuses. */
  code: ConsentCode | null;
  /** The triggers of schema.sql (and of the migration that brought them) that enforce it. */
  triggers: readonly string[];
  /** The records through which a call reaches what the rule holds (the audit calls every one). */
  reaches?: readonly HeldRoute[];
}

/** The tables whose rows belong to a task, each held with it (C1), on insert, update and delete. */
export const TASK_PART_TABLES = ["steps", "runs", "approvals", "task_labels", "calendar_links", "task_dependencies"] as const;

/** The tables a batch writes only with its caller recorded. */
export const FAIL_CLOSED_TABLES = ["tasks", "projects", ...TASK_PART_TABLES, "labels", "trash", "pending_actions"] as const;

const partTriggers = TASK_PART_TABLES.flatMap((t) => [`consent_${t}_insert`, `consent_${t}_update`, `consent_${t}_delete`]);

export const CONSENT_RULES: readonly ConsentRule[] = [
  {
    rule: "C1",
    says: "a held task's row, its parts and its place in the tree change only by its holder or a person; so do a label it carries and its way back from the trash",
    code: "claim",
    triggers: [
      "consent_task_held", "consent_child_moved", "consent_child_added", "consent_project_held", ...partTriggers,
      "consent_label_renamed", "consent_task_restored", "consent_named_task",
    ],
    reaches: HELD_ROUTES,
  },
  {
    rule: "C2",
    says: "consent fields are a person's: auto-OK, a project's default, the account's settings, pausing agents, revoking tokens, an agent's or a connection's policy",
    code: "consent",
    triggers: [
      "consent_auto_ok_new", "consent_auto_ok", "consent_project_default_new", "consent_project_default", "consent_account_settings", "consent_agent_pause",
      "consent_token_revoke", "consent_agent_policy", "consent_token_policy",
    ],
  },
  { rule: "C3", says: "a pending request is decided only by a person; its asker may withdraw it", code: "decision", triggers: ["consent_decision"] },
  {
    rule: "C3",
    says: "a pending action (a call the agent's policy asks about) is approved or rejected only by a person; its asker may withdraw it, and an agent opens one only as pending",
    code: "decision",
    triggers: ["consent_action_decision", "consent_action_new"],
  },
  {
    rule: "C4",
    says: "agents undo no decision of a person: what a person closed, trashed or archived, and a project the person archived takes nothing new from agents",
    code: "undo",
    triggers: ["consent_reopen", "consent_restore", "consent_unarchive", "consent_archived_new", "consent_archived_move", "consent_archived_edit"],
  },
  { rule: "C4", says: "who closed a task and who archived a project, recorded for the rule above", code: null, triggers: ["consent_closed_by", "consent_archived_by"] },
  { rule: "C5", says: "a paused agent is given nothing, by anyone, through any route", code: "paused", triggers: ["consent_paused_new", "consent_paused"] },
  { rule: "C6", says: "a block's reason stays readable as the task's last block", code: null, triggers: ["tasks_last_block"] },
  { rule: "Dependencies", says: "an agent completes no task that waits on unfinished work, in the trash or not", code: "waits", triggers: ["consent_waits"] },
  { rule: "Dependencies", says: "a dependency a person added is removed only by a person", code: "gate", triggers: ["consent_gate_removed"] },
  {
    rule: "Fail closed",
    says: "a batch that recorded no caller (a writer's bug, never a caller's doing) writes none of the tables the rules cover; the server's own writers name themselves",
    code: "nocaller",
    triggers: FAIL_CLOSED_TABLES.flatMap((t) => [`nocaller_${t}_insert`, `nocaller_${t}_update`, `nocaller_${t}_delete`]),
  },
];
