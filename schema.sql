-- Taskgate schema: the only one. `npm start`, deploys and the tests apply this
-- file as it is; every statement is idempotent, so applying it again keeps the data.
-- Every row that belongs to an account carries account_id, and every query
-- filters by it. Times are ISO 8601 UTC strings. A row whose trash_id is set is
-- in the trash (as part of the unit named by that trash item) and vanishes from reads.

CREATE TABLE IF NOT EXISTS accounts (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  time_zone TEXT NOT NULL DEFAULT 'UTC',
  default_auto_ok INTEGER NOT NULL DEFAULT 0,
  trash_retention_days INTEGER NOT NULL DEFAULT 30,
  -- Activity entries and run events older than this are removed by the daily job.
  activity_retention_days INTEGER NOT NULL DEFAULT 180,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  -- While the account moves to another database (src/db/move-account.ts): that
  -- database's name, on the row in the database it leaves; writes are refused.
  moving_to TEXT
);

CREATE TABLE IF NOT EXISTS agents (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts(id),
  name TEXT NOT NULL,
  paused_at TEXT,
  paused_by TEXT,
  last_seen_at TEXT,
  created_at TEXT NOT NULL,
  -- The agent's policy for all its connections (src/catalog/policy.ts): rules as
  -- JSON; NULL: none (everything its tokens' scope allows).
  policy TEXT,
  UNIQUE (account_id, name)
);

CREATE TABLE IF NOT EXISTS tokens (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts(id),
  kind TEXT NOT NULL CHECK (kind IN ('human', 'agent')),
  scope TEXT NOT NULL CHECK (scope IN ('read', 'write')),
  agent_id TEXT REFERENCES agents(id),
  label TEXT NOT NULL,
  hash TEXT NOT NULL UNIQUE,
  prefix TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT,
  revoked_at TEXT,
  last_used_at TEXT,
  -- The person a person's token acts for: who consented, for an app connected
  -- through OAuth (with the client, its redirect URI and the provider's grant, set
  -- when the code is exchanged; NULL for tg_ tokens), or who made it in the console.
  person_id TEXT,
  client_id TEXT,
  client_name TEXT,
  redirect_uri TEXT,
  grant_id TEXT,
  -- An agent connection's own policy rules (JSON), evaluated with its agent's:
  -- they only narrow it. NULL: none.
  policy TEXT,
  CHECK ((kind = 'agent') = (agent_id IS NOT NULL))
);
CREATE INDEX IF NOT EXISTS tokens_account ON tokens (account_id, created_at);
CREATE INDEX IF NOT EXISTS tokens_agent ON tokens (agent_id);
CREATE INDEX IF NOT EXISTS tokens_person_client ON tokens (person_id, client_id);

CREATE TABLE IF NOT EXISTS projects (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts(id),
  name TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  default_auto_ok INTEGER,
  archived_at TEXT,
  -- Who archived it (`human` or the agent's name; NULL: the server): an agent may not unarchive what a person archived.
  archived_by TEXT,
  version INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  trash_id TEXT
);
CREATE INDEX IF NOT EXISTS projects_account ON projects (account_id, trash_id, created_at, id);

CREATE TABLE IF NOT EXISTS tasks (
  rid INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  account_id TEXT NOT NULL REFERENCES accounts(id),
  project_id TEXT,
  parent_id TEXT,
  title TEXT NOT NULL,
  notes TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL DEFAULT 'open'
    CHECK (status IN ('open', 'in_progress', 'blocked', 'awaiting_approval', 'done', 'cancelled')),
  priority INTEGER NOT NULL DEFAULT 1 CHECK (priority BETWEEN 0 AND 3),
  due_at TEXT,
  estimate_minutes INTEGER,
  assignee TEXT,
  auto_ok INTEGER,
  blocked_reason TEXT,
  status_before_block TEXT,
  snoozed_until TEXT,
  version INTEGER NOT NULL DEFAULT 1,
  created_by TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  completed_at TEXT,
  trash_id TEXT,
  -- The schedule a recurring task repeats by (JSON: rule, start, slot, index; see
  -- src/domain/recurrence.ts), on the one live occurrence of its series only.
  recurrence TEXT,
  series_id TEXT,
  -- An agent's claim (claim_task) lapses at this time unless renewed by the
  -- holder's run events, step status changes and comments; NULL: no lease (a
  -- person's claim, no claim, or a claim made before leases), which never lapses.
  claim_expires_at TEXT,
  -- The lease's length, which each renewal grants again.
  claim_lease_minutes INTEGER,
  -- Who closed it (done or cancelled): `human` or the agent's name; NULL while
  -- open, or closed by the server. An agent may not reopen what a person closed.
  closed_by TEXT,
  -- The task's last block (reason, who, when), kept after unblock_task ends it;
  -- who is `human` or the agent's name, NULL when the server blocked it.
  last_block_reason TEXT,
  last_block_by TEXT,
  last_block_at TEXT,
  -- While the assignee is `human`: the person who claimed it or was assigned it
  -- (people.id); NULL for an agent's or nobody's task, or when no person is known.
  assignee_person_id TEXT,
  -- The areas the task works in (JSON: each area as given and as the overlap rule of
  -- src/domain/scopes.ts reads it); NULL: none. While it is held, another agent's
  -- claim of a task whose scope overlaps is refused.
  scope TEXT
);
CREATE INDEX IF NOT EXISTS tasks_account_created ON tasks (account_id, trash_id, created_at, id);
CREATE INDEX IF NOT EXISTS tasks_account_status ON tasks (account_id, status, created_at, id);
CREATE INDEX IF NOT EXISTS tasks_account_assignee ON tasks (account_id, assignee, status, created_at);
CREATE INDEX IF NOT EXISTS tasks_account_project ON tasks (account_id, project_id, created_at, id);
CREATE INDEX IF NOT EXISTS tasks_account_due ON tasks (account_id, due_at);
CREATE INDEX IF NOT EXISTS tasks_parent ON tasks (parent_id, created_at);
CREATE INDEX IF NOT EXISTS tasks_trash ON tasks (trash_id);
CREATE INDEX IF NOT EXISTS tasks_account_assignee_recent ON tasks (account_id, assignee, trash_id, updated_at, status);
CREATE INDEX IF NOT EXISTS tasks_series ON tasks (series_id, created_at);
-- Only ever one live occurrence carries a series' rule.
CREATE UNIQUE INDEX IF NOT EXISTS tasks_series_rule ON tasks (series_id) WHERE recurrence IS NOT NULL AND trash_id IS NULL;
-- claim_task without task_id: open tasks most urgent first (src/db/claim-next.ts), so the pick stops at the first ready one.
CREATE INDEX IF NOT EXISTS tasks_ready ON tasks (account_id, status, priority DESC, due_at IS NULL, due_at, created_at, id);
-- Claims whose lease runs out, for the minute cron's claim.lapsed event.
CREATE INDEX IF NOT EXISTS tasks_claim_expiry ON tasks (claim_expires_at) WHERE claim_expires_at IS NOT NULL;

CREATE TABLE IF NOT EXISTS task_dependencies (
  account_id TEXT NOT NULL,
  task_id TEXT NOT NULL,
  depends_on_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  -- Who added the link (`human` or the agent's name): a person's gate is removed only by a person.
  added_by TEXT NOT NULL DEFAULT 'human',
  PRIMARY KEY (task_id, depends_on_id)
);
CREATE INDEX IF NOT EXISTS task_dependencies_reverse ON task_dependencies (depends_on_id);

CREATE TABLE IF NOT EXISTS steps (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  task_id TEXT NOT NULL,
  position INTEGER NOT NULL,
  text TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'in_progress', 'done', 'skipped')),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  trash_id TEXT
);
CREATE INDEX IF NOT EXISTS steps_task ON steps (task_id, position);
CREATE INDEX IF NOT EXISTS steps_trash ON steps (trash_id);

CREATE TABLE IF NOT EXISTS comments (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  task_id TEXT NOT NULL,
  author_token_id TEXT NOT NULL,
  author TEXT NOT NULL,
  body TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  trash_id TEXT
);
CREATE INDEX IF NOT EXISTS comments_task ON comments (task_id, created_at, id);
CREATE INDEX IF NOT EXISTS comments_trash ON comments (trash_id);

CREATE TABLE IF NOT EXISTS labels (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  name TEXT NOT NULL COLLATE NOCASE,
  color TEXT,
  created_at TEXT NOT NULL,
  UNIQUE (account_id, name)
);

CREATE TABLE IF NOT EXISTS task_labels (
  account_id TEXT NOT NULL,
  task_id TEXT NOT NULL,
  label_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (task_id, label_id)
);
CREATE INDEX IF NOT EXISTS task_labels_label ON task_labels (label_id, task_id);

CREATE TABLE IF NOT EXISTS runs (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  task_id TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'succeeded', 'failed', 'cancelled')),
  summary TEXT,
  started_at TEXT NOT NULL,
  finished_at TEXT,
  last_event_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_task ON runs (task_id, started_at);
CREATE INDEX IF NOT EXISTS runs_agent ON runs (agent_id, status, started_at);
CREATE INDEX IF NOT EXISTS runs_account_status ON runs (account_id, status, started_at);
CREATE INDEX IF NOT EXISTS runs_status_last_event ON runs (status, last_event_at);

CREATE TABLE IF NOT EXISTS run_events (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  run_id TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('progress', 'note', 'artifact')),
  message TEXT NOT NULL,
  url TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS run_events_run ON run_events (run_id, created_at, id);
CREATE INDEX IF NOT EXISTS run_events_account ON run_events (account_id, created_at, id);

CREATE TABLE IF NOT EXISTS approvals (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  task_id TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected', 'closed', 'withdrawn')),
  question TEXT NOT NULL DEFAULT '',
  requested_by TEXT NOT NULL,
  requested_by_token TEXT NOT NULL,
  decided_by TEXT,
  reason TEXT,
  created_at TEXT NOT NULL,
  decided_at TEXT,
  -- A question about unfinished work (request_approval), answered yes or no and
  -- leaving the task where it is; or a sign-off on finished work (an agent's
  -- complete_task without auto-OK), whose approval completes the task.
  kind TEXT NOT NULL DEFAULT 'signoff' CHECK (kind IN ('question', 'signoff')),
  -- A question may offer choices (a JSON array of 2 to 8 texts; NULL: a yes/no
  -- question) and may accept an answer in words (accepts_words = 1). A person's
  -- answer keeps the choice they picked and the words they wrote, each NULL
  -- when not given (src/tools/approvals.ts).
  choices TEXT,
  accepts_words INTEGER NOT NULL DEFAULT 0,
  answer_choice TEXT,
  answer_words TEXT,
  -- The person (people.id) who decided it, when decided_by is `human` and the
  -- call was a person's; NULL otherwise, or decided before people were named.
  decided_by_person_id TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS approvals_one_pending ON approvals (task_id) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS approvals_account_status ON approvals (account_id, status, created_at);
CREATE INDEX IF NOT EXISTS approvals_task ON approvals (task_id, created_at);

-- A call an agent's policy asks the person about (src/catalog/policy.ts "ask"):
-- nothing ran; the call waits here, as the agent made it, for a person to
-- approve it (the server then runs it once, as the agent, and keeps its
-- result) or reject it. It is a third kind of approval beside questions and
-- sign-offs (an `apr_` id, so get_approval finds both). One waits per
-- connection, tool and arguments: the identical call again answers with it.
-- After expires_at it is expired, whether or not the daily job marked it.
CREATE TABLE IF NOT EXISTS pending_actions (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  token_id TEXT NOT NULL,
  requested_by TEXT NOT NULL,
  tool TEXT NOT NULL,
  arguments TEXT NOT NULL,
  arguments_hash TEXT NOT NULL,
  task_id TEXT,
  project_id TEXT,
  rule TEXT NOT NULL,
  reason TEXT NOT NULL,
  preview TEXT NOT NULL DEFAULT '[]',
  status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected', 'expired', 'withdrawn')),
  decided_by TEXT,
  decided_by_token TEXT,
  -- The person (people.id) who decided it, when a person's call did.
  decided_by_person_id TEXT,
  decided_at TEXT,
  note TEXT,
  result TEXT,
  ran_at TEXT,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS pending_actions_one_call ON pending_actions (token_id, tool, arguments_hash) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS pending_actions_account_status ON pending_actions (account_id, status, created_at);
CREATE INDEX IF NOT EXISTS pending_actions_expiry ON pending_actions (status, expires_at);

CREATE TABLE IF NOT EXISTS calendar_links (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  task_id TEXT NOT NULL,
  provider TEXT NOT NULL,
  event_id TEXT NOT NULL,
  title TEXT NOT NULL,
  starts_at TEXT NOT NULL,
  ends_at TEXT NOT NULL,
  url TEXT,
  created_at TEXT NOT NULL,
  UNIQUE (task_id, provider, event_id)
);
CREATE INDEX IF NOT EXISTS calendar_links_account_start ON calendar_links (account_id, starts_at);

CREATE TABLE IF NOT EXISTS connectors (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  provider TEXT NOT NULL CHECK (provider IN ('drive', 'slack', 'notion')),
  credentials TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'connected',
  last_error TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (account_id, provider)
);

CREATE TABLE IF NOT EXISTS trash (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('task', 'project', 'step', 'comment')),
  target_id TEXT NOT NULL,
  title TEXT NOT NULL,
  item_count INTEGER NOT NULL DEFAULT 1,
  deleted_by TEXT NOT NULL,
  deleted_by_token TEXT NOT NULL,
  deleted_at TEXT NOT NULL,
  purge_after TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS trash_account ON trash (account_id, deleted_at, id);
CREATE INDEX IF NOT EXISTS trash_purge ON trash (purge_after);
CREATE INDEX IF NOT EXISTS trash_target ON trash (target_id);

CREATE TABLE IF NOT EXISTS activity (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  token_id TEXT NOT NULL,
  actor TEXT NOT NULL,
  tool TEXT NOT NULL,
  target_id TEXT,
  summary TEXT NOT NULL,
  created_at TEXT NOT NULL,
  -- The person (people.id) who made the call when the actor is `human`; NULL for
  -- an agent, the server, or a tg_ token that belongs to no person.
  person_id TEXT
);
CREATE INDEX IF NOT EXISTS activity_account ON activity (account_id, created_at, id);
CREATE INDEX IF NOT EXISTS activity_target ON activity (target_id, created_at, id);

CREATE TABLE IF NOT EXISTS idempotency_keys (
  account_id TEXT NOT NULL,
  token_id TEXT NOT NULL,
  tool TEXT NOT NULL,
  key TEXT NOT NULL,
  result TEXT NOT NULL,
  created_at TEXT NOT NULL,
  -- SHA-256 (hex) of the call's canonical arguments; NULL on rows from before it existed (they replay as before)
  request_hash TEXT,
  PRIMARY KEY (account_id, token_id, tool, key)
);

-- Where each caller's reads may start (src/db/read-sessions.ts): the D1 bookmark after its latest
-- write, so its next request, in any isolate, reads in a session no older than that write. One row a
-- caller (holder: "agent:<agent id>", "person:<person id>", or "token:<token id>" for a person's token of
-- no person). A bookmark names a state of this database: an account's move copies none.
CREATE TABLE IF NOT EXISTS read_bookmarks (
  account_id TEXT NOT NULL,
  holder TEXT NOT NULL,
  bookmark TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (account_id, holder)
);

-- Webhook endpoints of an account: where its events are delivered, signed
-- with a secret kept only as an AES-GCM envelope (CONNECTOR_KEY).
CREATE TABLE IF NOT EXISTS webhooks (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts(id),
  url TEXT NOT NULL,
  -- 'all' (every event, those a later version adds too), or the event types it
  -- receives, separated by commas
  events TEXT NOT NULL,
  secret TEXT NOT NULL,
  secret_prefix TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS webhooks_account ON webhooks (account_id, created_at);

-- One row per event and endpoint: delivered, still being retried, or given up.
CREATE TABLE IF NOT EXISTS webhook_deliveries (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  webhook_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  last_status INTEGER,
  last_error TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  delivered_at TEXT,
  UNIQUE (webhook_id, event_id)
);
CREATE INDEX IF NOT EXISTS webhook_deliveries_event ON webhook_deliveries (event_id);
CREATE INDEX IF NOT EXISTS webhook_deliveries_created ON webhook_deliveries (created_at);

-- Running runs already announced as stale, with the last_event_at they were
-- stale at: a run is announced once per silence.
CREATE TABLE IF NOT EXISTS stale_run_notices (
  run_id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  last_event_at TEXT NOT NULL,
  event_id TEXT NOT NULL,
  notified_at TEXT NOT NULL
);

-- Lapsed claims already announced (claim.lapsed), with the expiry they lapsed
-- at: a claim is announced once per lapse, by the minute cron or the take-over.
CREATE TABLE IF NOT EXISTS claim_lapse_notices (
  task_id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  expired_at TEXT NOT NULL,
  event_id TEXT NOT NULL,
  notified_at TEXT NOT NULL
);

-- A write batch inserts a row here only when one of its preconditions no longer
-- holds; the CHECK then fails and D1 rolls the whole batch back.
CREATE TABLE IF NOT EXISTS guard (
  failed TEXT,
  CONSTRAINT guard CHECK (failed IS NULL)
);

-- The consent rules (docs/approvals-and-claims.md, C1–C5), enforced where rows
-- are written. Every batch of a tool call starts by recording its caller here
-- and ends by removing it (src/mcp/engine.ts), so inside a batch the triggers
-- below know who writes. The server's own writers (the trash purge, an
-- account's move, the bench seeding, a data migration) record themselves too,
-- as kind `server` with a name such as `server:purge` (src/db/server-caller.ts,
-- serverBatch in src/db/consent.ts); a server
-- caller is neither a person nor an agent: no rule of an agent holds it, and
-- no record names it as who closed, archived or blocked (NULL there). A batch
-- with no caller at all writes none of the guarded tables (the nocaller
-- triggers below): the rules fail closed. A trigger refuses with a code that
-- the engine turns into a message saying what to do instead.
CREATE TABLE IF NOT EXISTS call_actor (
  batch TEXT PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('human', 'agent', 'server')),
  name TEXT NOT NULL,
  now TEXT NOT NULL
);

-- What "held" means, the one definition (C1): a task held by someone other
-- than the agent writing now: in progress with a claim that has not lapsed,
-- blocked, or awaiting sign-off, assigned to another agent or to the person.
-- A task in the trash keeps its hold (a restore by another agent is refused).
-- Empty unless an agent is writing.
CREATE VIEW IF NOT EXISTS holds AS
  SELECT h.id AS task_id, h.account_id AS account_id, h.project_id AS project_id, h.assignee AS holder, h.trash_id AS trash_id
    FROM call_actor a JOIN tasks h
      ON h.assignee IS NOT NULL AND h.assignee <> a.name
     AND (h.status IN ('blocked', 'awaiting_approval') OR (h.status = 'in_progress' AND (h.claim_expires_at IS NULL OR h.claim_expires_at > a.now)))
   WHERE a.kind = 'agent';
-- The live tasks among them: what the rules below hold every row to.
CREATE VIEW IF NOT EXISTS held_by_other AS
  SELECT task_id, account_id, project_id, holder FROM holds WHERE trash_id IS NULL;

-- C1: a held task's row, its place in the tree and its parts change only by its holder or a person.
CREATE TRIGGER IF NOT EXISTS consent_task_held BEFORE UPDATE ON tasks
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
  AND (OLD.project_id IS NOT NEW.project_id OR OLD.parent_id IS NOT NEW.parent_id OR OLD.title IS NOT NEW.title
    OR OLD.notes IS NOT NEW.notes OR OLD.status IS NOT NEW.status OR OLD.priority IS NOT NEW.priority OR OLD.due_at IS NOT NEW.due_at
    OR OLD.estimate_minutes IS NOT NEW.estimate_minutes OR OLD.assignee IS NOT NEW.assignee OR OLD.auto_ok IS NOT NEW.auto_ok
    OR OLD.blocked_reason IS NOT NEW.blocked_reason OR OLD.status_before_block IS NOT NEW.status_before_block
    OR OLD.snoozed_until IS NOT NEW.snoozed_until OR OLD.completed_at IS NOT NEW.completed_at OR OLD.trash_id IS NOT NEW.trash_id
    OR OLD.recurrence IS NOT NEW.recurrence OR OLD.series_id IS NOT NEW.series_id OR OLD.scope IS NOT NEW.scope
    OR OLD.claim_expires_at IS NOT NEW.claim_expires_at OR OLD.claim_lease_minutes IS NOT NEW.claim_lease_minutes)
  AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id = OLD.id)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_child_moved BEFORE UPDATE OF parent_id, project_id, trash_id ON tasks
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
  AND (OLD.parent_id IS NOT NEW.parent_id OR OLD.project_id IS NOT NEW.project_id OR OLD.trash_id IS NOT NEW.trash_id)
  AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id IN (OLD.parent_id, NEW.parent_id))
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_child_added BEFORE INSERT ON tasks
WHEN NEW.parent_id IS NOT NULL AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
  AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id = NEW.parent_id)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_project_held BEFORE UPDATE OF archived_at, trash_id ON projects
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
  AND ((OLD.archived_at IS NULL AND NEW.archived_at IS NOT NULL) OR (OLD.trash_id IS NULL AND NEW.trash_id IS NOT NULL))
  AND EXISTS (SELECT 1 FROM held_by_other WHERE account_id = OLD.account_id AND project_id = OLD.id)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_steps_insert BEFORE INSERT ON steps
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent') AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id = NEW.task_id)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_steps_update BEFORE UPDATE ON steps
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent') AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id IN (OLD.task_id, NEW.task_id))
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_steps_delete BEFORE DELETE ON steps
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent') AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id = OLD.task_id)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_runs_insert BEFORE INSERT ON runs
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent') AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id = NEW.task_id)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_runs_update BEFORE UPDATE ON runs
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent') AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id IN (OLD.task_id, NEW.task_id))
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_runs_delete BEFORE DELETE ON runs
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent') AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id = OLD.task_id)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_approvals_insert BEFORE INSERT ON approvals
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent') AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id = NEW.task_id)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_approvals_update BEFORE UPDATE ON approvals
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent') AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id IN (OLD.task_id, NEW.task_id))
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_approvals_delete BEFORE DELETE ON approvals
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent') AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id = OLD.task_id)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_task_labels_insert BEFORE INSERT ON task_labels
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent') AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id = NEW.task_id)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_task_labels_update BEFORE UPDATE ON task_labels
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent') AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id IN (OLD.task_id, NEW.task_id))
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_task_labels_delete BEFORE DELETE ON task_labels
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent') AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id = OLD.task_id)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_calendar_links_insert BEFORE INSERT ON calendar_links
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent') AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id = NEW.task_id)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_calendar_links_update BEFORE UPDATE ON calendar_links
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent') AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id IN (OLD.task_id, NEW.task_id))
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_calendar_links_delete BEFORE DELETE ON calendar_links
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent') AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id = OLD.task_id)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_task_dependencies_insert BEFORE INSERT ON task_dependencies
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent') AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id = NEW.task_id)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_task_dependencies_update BEFORE UPDATE ON task_dependencies
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent') AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id IN (OLD.task_id, NEW.task_id))
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;
CREATE TRIGGER IF NOT EXISTS consent_task_dependencies_delete BEFORE DELETE ON task_dependencies
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent') AND EXISTS (SELECT 1 FROM held_by_other WHERE task_id = OLD.task_id)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;

-- C2: consent fields are a person's: a task's auto-OK (a new task by an agent
-- takes its project's or the account's default, its parent's or its series'),
-- a project's default, the account's settings, pausing agents, revoking tokens.
CREATE TRIGGER IF NOT EXISTS consent_auto_ok_new BEFORE INSERT ON tasks
WHEN NEW.auto_ok = 1 AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
  AND coalesce((SELECT default_auto_ok FROM projects WHERE id = NEW.project_id AND account_id = NEW.account_id),
               (SELECT default_auto_ok FROM accounts WHERE id = NEW.account_id), 0) <> 1
  AND NOT EXISTS (SELECT 1 FROM tasks p WHERE p.id = NEW.parent_id AND p.auto_ok = 1)
  AND NOT EXISTS (SELECT 1 FROM tasks s WHERE NEW.series_id IS NOT NULL AND s.series_id = NEW.series_id AND s.auto_ok = 1)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:consent');
END;
CREATE TRIGGER IF NOT EXISTS consent_auto_ok BEFORE UPDATE OF auto_ok ON tasks
WHEN OLD.auto_ok IS NOT NEW.auto_ok AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
BEGIN
  SELECT RAISE(ABORT, 'taskgate:consent');
END;
CREATE TRIGGER IF NOT EXISTS consent_project_default_new BEFORE INSERT ON projects
WHEN NEW.default_auto_ok IS NOT NULL AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
BEGIN
  SELECT RAISE(ABORT, 'taskgate:consent');
END;
CREATE TRIGGER IF NOT EXISTS consent_project_default BEFORE UPDATE OF default_auto_ok ON projects
WHEN OLD.default_auto_ok IS NOT NEW.default_auto_ok AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
BEGIN
  SELECT RAISE(ABORT, 'taskgate:consent');
END;
CREATE TRIGGER IF NOT EXISTS consent_account_settings BEFORE UPDATE ON accounts
WHEN EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
  AND (OLD.name IS NOT NEW.name OR OLD.time_zone IS NOT NEW.time_zone OR OLD.default_auto_ok IS NOT NEW.default_auto_ok
    OR OLD.trash_retention_days IS NOT NEW.trash_retention_days OR OLD.activity_retention_days IS NOT NEW.activity_retention_days)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:consent');
END;
CREATE TRIGGER IF NOT EXISTS consent_agent_pause BEFORE UPDATE OF paused_at ON agents
WHEN OLD.paused_at IS NOT NEW.paused_at AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
BEGIN
  SELECT RAISE(ABORT, 'taskgate:consent');
END;
CREATE TRIGGER IF NOT EXISTS consent_token_revoke BEFORE UPDATE OF revoked_at ON tokens
WHEN OLD.revoked_at IS NOT NEW.revoked_at AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
BEGIN
  SELECT RAISE(ABORT, 'taskgate:consent');
END;
-- A policy is the person's: no agent's batch sets, widens or removes one.
CREATE TRIGGER IF NOT EXISTS consent_agent_policy BEFORE UPDATE OF policy ON agents
WHEN OLD.policy IS NOT NEW.policy AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
BEGIN
  SELECT RAISE(ABORT, 'taskgate:consent');
END;
CREATE TRIGGER IF NOT EXISTS consent_token_policy BEFORE UPDATE OF policy ON tokens
WHEN OLD.policy IS NOT NEW.policy AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
BEGIN
  SELECT RAISE(ABORT, 'taskgate:consent');
END;

-- C3: a pending request is decided only by a person; the agent that asked may withdraw it.
CREATE TRIGGER IF NOT EXISTS consent_decision BEFORE UPDATE OF status ON approvals
WHEN OLD.status = 'pending' AND NEW.status <> 'pending'
  AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent' AND NOT (NEW.status = 'withdrawn' AND name = OLD.requested_by))
BEGIN
  SELECT RAISE(ABORT, 'taskgate:decision');
END;

-- C3 for a pending action: only a person approves or rejects it; the agent
-- that asked may withdraw it, and one past its expiry is marked expired by
-- anyone. An agent's batch opens one only as pending.
CREATE TRIGGER IF NOT EXISTS consent_action_decision BEFORE UPDATE OF status ON pending_actions
WHEN OLD.status = 'pending' AND NEW.status <> 'pending'
  AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent'
                AND NOT (NEW.status = 'withdrawn' AND name = OLD.requested_by)
                AND NOT (NEW.status = 'expired' AND OLD.expires_at <= call_actor.now))
BEGIN
  SELECT RAISE(ABORT, 'taskgate:decision');
END;
CREATE TRIGGER IF NOT EXISTS consent_action_new BEFORE INSERT ON pending_actions
WHEN NEW.status <> 'pending' AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
BEGIN
  SELECT RAISE(ABORT, 'taskgate:decision');
END;

-- C4: agents do not undo what a person decided: a task a person completed,
-- approved or cancelled, an item a person trashed, a project a person archived.
CREATE TRIGGER IF NOT EXISTS consent_closed_by AFTER UPDATE OF status ON tasks
WHEN (NEW.status IN ('done', 'cancelled')) <> (OLD.status IN ('done', 'cancelled'))
BEGIN
  UPDATE tasks SET closed_by = CASE WHEN NEW.status IN ('done', 'cancelled') THEN (SELECT CASE kind WHEN 'human' THEN 'human' WHEN 'agent' THEN name END FROM call_actor) END
   WHERE rid = NEW.rid;
END;
CREATE TRIGGER IF NOT EXISTS consent_reopen BEFORE UPDATE OF status ON tasks
WHEN OLD.status IN ('done', 'cancelled') AND NEW.status <> OLD.status AND OLD.closed_by = 'human'
  AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
BEGIN
  SELECT RAISE(ABORT, 'taskgate:undo');
END;
CREATE TRIGGER IF NOT EXISTS consent_restore BEFORE DELETE ON trash
WHEN OLD.deleted_by = 'human' AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
BEGIN
  SELECT RAISE(ABORT, 'taskgate:undo');
END;
CREATE TRIGGER IF NOT EXISTS consent_archived_by AFTER UPDATE OF archived_at ON projects
WHEN OLD.archived_at IS NOT NEW.archived_at
BEGIN
  UPDATE projects SET archived_by = CASE WHEN NEW.archived_at IS NOT NULL THEN (SELECT CASE kind WHEN 'human' THEN 'human' WHEN 'agent' THEN name END FROM call_actor) END
   WHERE id = NEW.id;
END;
CREATE TRIGGER IF NOT EXISTS consent_unarchive BEFORE UPDATE OF archived_at ON projects
WHEN OLD.archived_at IS NOT NULL AND NEW.archived_at IS NULL AND OLD.archived_by = 'human'
  AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
BEGIN
  SELECT RAISE(ABORT, 'taskgate:undo');
END;

-- C6: a block's reason ends with the block, and stays readable as the task's last block.
CREATE TRIGGER IF NOT EXISTS tasks_last_block AFTER UPDATE OF blocked_reason ON tasks
WHEN NEW.blocked_reason IS NOT NULL AND NEW.blocked_reason IS NOT OLD.blocked_reason
BEGIN
  UPDATE tasks SET last_block_reason = NEW.blocked_reason,
         last_block_by = (SELECT CASE kind WHEN 'human' THEN 'human' WHEN 'agent' THEN name END FROM call_actor),
         last_block_at = coalesce((SELECT now FROM call_actor), NEW.updated_at)
   WHERE rid = NEW.rid;
END;

-- An agent completes no task that waits on unfinished work (what it depends on, not yet done or
-- cancelled); a person may. The refusal names what it waits on.
CREATE TRIGGER IF NOT EXISTS consent_waits BEFORE UPDATE OF status ON tasks
WHEN NEW.status IN ('done', 'awaiting_approval') AND OLD.status NOT IN ('done', 'awaiting_approval')
  AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
  AND EXISTS (SELECT 1 FROM task_dependencies d JOIN tasks w ON w.id = d.depends_on_id
               WHERE d.task_id = OLD.id AND d.account_id = OLD.account_id AND w.status NOT IN ('done', 'cancelled'))
BEGIN
  SELECT RAISE(ABORT, 'taskgate:waits');
END;

-- The gate a person put on a task (a dependency they added) is lifted only by a person:
-- an agent's remove_dependency, or a purge of what the task waits on, is refused while the task is live.
CREATE TRIGGER IF NOT EXISTS consent_gate_removed BEFORE DELETE ON task_dependencies
WHEN OLD.added_by = 'human' AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
  AND EXISTS (SELECT 1 FROM tasks w WHERE w.id = OLD.task_id AND w.trash_id IS NULL)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:gate');
END;

-- C1 through a label: an agent renames no label that a task another holds carries.
CREATE TRIGGER IF NOT EXISTS consent_label_renamed BEFORE UPDATE OF name ON labels
WHEN OLD.name IS NOT NEW.name AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
  AND EXISTS (SELECT 1 FROM task_labels tl JOIN held_by_other h ON h.task_id = tl.task_id WHERE tl.label_id = OLD.id AND tl.account_id = OLD.account_id)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;

-- C1 through the trash: an agent brings back no task another holds (its holder or a person may).
CREATE TRIGGER IF NOT EXISTS consent_task_restored BEFORE UPDATE OF trash_id ON tasks
WHEN OLD.trash_id IS NOT NULL AND NEW.trash_id IS NULL AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
  AND EXISTS (SELECT 1 FROM holds WHERE task_id = OLD.id)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim');
END;

-- C4 for a project a person archived: agents add no task to it, move none in or out, and rename or describe it not.
CREATE TRIGGER IF NOT EXISTS consent_archived_new BEFORE INSERT ON tasks
WHEN NEW.project_id IS NOT NULL AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
  AND EXISTS (SELECT 1 FROM projects p WHERE p.id = NEW.project_id AND p.archived_at IS NOT NULL AND p.archived_by = 'human')
  AND NOT EXISTS (SELECT 1 FROM tasks s WHERE NEW.series_id IS NOT NULL AND s.series_id = NEW.series_id)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:undo');
END;
CREATE TRIGGER IF NOT EXISTS consent_archived_move BEFORE UPDATE OF project_id ON tasks
WHEN OLD.project_id IS NOT NEW.project_id AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
  AND EXISTS (SELECT 1 FROM projects p WHERE p.id IN (OLD.project_id, NEW.project_id) AND p.archived_at IS NOT NULL AND p.archived_by = 'human')
BEGIN
  SELECT RAISE(ABORT, 'taskgate:undo');
END;
CREATE TRIGGER IF NOT EXISTS consent_archived_edit BEFORE UPDATE OF name, description ON projects
WHEN (OLD.name IS NOT NEW.name OR OLD.description IS NOT NEW.description)
  AND OLD.archived_at IS NOT NULL AND OLD.archived_by = 'human' AND EXISTS (SELECT 1 FROM call_actor WHERE kind = 'agent')
BEGIN
  SELECT RAISE(ABORT, 'taskgate:undo');
END;

-- C1 for a call that would change nothing: an agent's claim-guarded call first inserts the task it
-- names here (src/mcp/engine.ts), and is refused on a task another holds as a call that changes it
-- would be, never answered as if it acted. Nothing is ever stored.
CREATE TABLE IF NOT EXISTS named_task (task_id TEXT NOT NULL);
CREATE TRIGGER IF NOT EXISTS consent_named_task BEFORE INSERT ON named_task
BEGIN
  SELECT RAISE(ABORT, 'taskgate:claim') WHERE EXISTS (SELECT 1 FROM held_by_other WHERE task_id = NEW.task_id);
  SELECT RAISE(IGNORE);
END;

-- C5: a paused agent is given nothing, by a person or an agent, through any route.
-- The server's own writers copy, restore or seed rows as they are (a move copies
-- a paused agent's tasks with it), so a server caller is not held to it.
CREATE TRIGGER IF NOT EXISTS consent_paused_new BEFORE INSERT ON tasks
WHEN NEW.assignee IS NOT NULL AND EXISTS (SELECT 1 FROM call_actor WHERE kind <> 'server')
  AND EXISTS (SELECT 1 FROM agents WHERE account_id = NEW.account_id AND name = NEW.assignee AND paused_at IS NOT NULL)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:paused');
END;
CREATE TRIGGER IF NOT EXISTS consent_paused BEFORE UPDATE OF assignee ON tasks
WHEN NEW.assignee IS NOT NULL AND OLD.assignee IS NOT NEW.assignee AND EXISTS (SELECT 1 FROM call_actor WHERE kind <> 'server')
  AND EXISTS (SELECT 1 FROM agents WHERE account_id = NEW.account_id AND name = NEW.assignee AND paused_at IS NOT NULL)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:paused');
END;

-- Fail closed: a batch that recorded no caller writes none of the tables the
-- consent rules cover. A tool call records its caller (src/mcp/engine.ts); the
-- server's own writers record themselves as a server caller (src/db/consent.ts).
-- One lookup in call_actor, which holds a row or two, per row written.
CREATE TRIGGER IF NOT EXISTS nocaller_tasks_insert BEFORE INSERT ON tasks WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_tasks_update BEFORE UPDATE ON tasks WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_tasks_delete BEFORE DELETE ON tasks WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_projects_insert BEFORE INSERT ON projects WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_projects_update BEFORE UPDATE ON projects WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_projects_delete BEFORE DELETE ON projects WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_steps_insert BEFORE INSERT ON steps WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_steps_update BEFORE UPDATE ON steps WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_steps_delete BEFORE DELETE ON steps WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_runs_insert BEFORE INSERT ON runs WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_runs_update BEFORE UPDATE ON runs WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_runs_delete BEFORE DELETE ON runs WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_approvals_insert BEFORE INSERT ON approvals WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_approvals_update BEFORE UPDATE ON approvals WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_approvals_delete BEFORE DELETE ON approvals WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_task_labels_insert BEFORE INSERT ON task_labels WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_task_labels_update BEFORE UPDATE ON task_labels WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_task_labels_delete BEFORE DELETE ON task_labels WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_calendar_links_insert BEFORE INSERT ON calendar_links WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_calendar_links_update BEFORE UPDATE ON calendar_links WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_calendar_links_delete BEFORE DELETE ON calendar_links WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_task_dependencies_insert BEFORE INSERT ON task_dependencies WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_task_dependencies_update BEFORE UPDATE ON task_dependencies WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_task_dependencies_delete BEFORE DELETE ON task_dependencies WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_labels_insert BEFORE INSERT ON labels WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_labels_update BEFORE UPDATE ON labels WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_labels_delete BEFORE DELETE ON labels WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_trash_insert BEFORE INSERT ON trash WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_trash_update BEFORE UPDATE ON trash WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_trash_delete BEFORE DELETE ON trash WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_pending_actions_insert BEFORE INSERT ON pending_actions WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_pending_actions_update BEFORE UPDATE ON pending_actions WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;
CREATE TRIGGER IF NOT EXISTS nocaller_pending_actions_delete BEFORE DELETE ON pending_actions WHEN NOT EXISTS (SELECT 1 FROM call_actor)
BEGIN
  SELECT RAISE(ABORT, 'taskgate:nocaller');
END;

-- Full-text search, written by the app (src/db/search-index.ts): each word is
-- stored as `<account key>_<word>` (src/domain/search-terms.ts), so an account's
-- words are terms of their own and a search reads its own account's postings only.
-- A task's title and notes (rowid = tasks.rid), and each comment apart (rowid =
-- comments.rowid, no stored copy), so a new comment indexes its own words only.
CREATE VIRTUAL TABLE IF NOT EXISTS task_search USING fts5(
  title, notes,
  tokenize = "unicode61 remove_diacritics 2 tokenchars '_'"
);
CREATE VIRTUAL TABLE IF NOT EXISTS comment_search USING fts5(
  body,
  tokenize = "unicode61 remove_diacritics 2 tokenchars '_'",
  content = '', contentless_delete = 1
);

CREATE TRIGGER IF NOT EXISTS tasks_search_delete AFTER DELETE ON tasks BEGIN
  DELETE FROM task_search WHERE rowid = old.rid;
END;

CREATE TRIGGER IF NOT EXISTS comments_search_delete AFTER DELETE ON comments BEGIN
  DELETE FROM comment_search WHERE rowid = old.rowid;
END;

-- People who sign in (an account's owners) with an email and a password
-- (PBKDF2-SHA256, see src/domain/passwords.ts); NULL until set through a setup link.
CREATE TABLE IF NOT EXISTS people (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts(id),
  email TEXT NOT NULL UNIQUE,
  password_hash TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  -- The name shown for the person (1–80 characters, set in the console's
  -- settings); empty: the part of the email before the @ is shown.
  display_name TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS people_account ON people (account_id);

-- One-time links where a person sets a password; only the secret's SHA-256 is kept.
CREATE TABLE IF NOT EXISTS setup_links (
  hash TEXT PRIMARY KEY,
  person_id TEXT NOT NULL REFERENCES people(id),
  account_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  used_at TEXT
);
CREATE INDEX IF NOT EXISTS setup_links_person ON setup_links (person_id);

-- Signed-in browsers: the session id's SHA-256 (the id itself lives only in the cookie).
CREATE TABLE IF NOT EXISTS sessions (
  hash TEXT PRIMARY KEY,
  person_id TEXT NOT NULL REFERENCES people(id),
  account_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_person ON sessions (person_id);
CREATE INDEX IF NOT EXISTS sessions_expiry ON sessions (expires_at);

-- Web Push: the browsers and phones a person asked to be notified on, and
-- which device has had which event (so a retried message reaches each once).
CREATE TABLE IF NOT EXISTS push_subscriptions (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL REFERENCES accounts(id),
  person_id TEXT NOT NULL REFERENCES people(id),
  endpoint TEXT NOT NULL UNIQUE,
  p256dh TEXT NOT NULL,
  auth TEXT NOT NULL,
  origin TEXT NOT NULL,
  label TEXT NOT NULL,
  events TEXT NOT NULL,
  created_at TEXT NOT NULL,
  last_delivered_at TEXT,
  last_failure_at TEXT,
  last_error TEXT
);
CREATE INDEX IF NOT EXISTS push_subscriptions_account ON push_subscriptions (account_id, created_at);
CREATE TABLE IF NOT EXISTS push_deliveries (
  subscription_id TEXT NOT NULL,
  event_id TEXT NOT NULL,
  account_id TEXT NOT NULL,
  delivered_at TEXT NOT NULL,
  PRIMARY KEY (subscription_id, event_id)
);
CREATE INDEX IF NOT EXISTS push_deliveries_delivered ON push_deliveries (delivered_at);

-- A moving account's devices and their deliveries are fenced like its other rows (0011_move_fence.sql).
CREATE TRIGGER IF NOT EXISTS move_fence_push_subscriptions_insert BEFORE INSERT ON push_subscriptions WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_push_subscriptions_update BEFORE UPDATE ON push_subscriptions WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_push_subscriptions_delete BEFORE DELETE ON push_subscriptions WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_push_deliveries_insert BEFORE INSERT ON push_deliveries WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_push_deliveries_update BEFORE UPDATE ON push_deliveries WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_push_deliveries_delete BEFORE DELETE ON push_deliveries WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;

-- Failed sign-ins, for throttling: key is the SHA-256 of `email:<address>` or `ip:<address>`.
CREATE TABLE IF NOT EXISTS signin_failures (
  key TEXT NOT NULL,
  failed_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS signin_failures_key ON signin_failures (key, failed_at);
CREATE INDEX IF NOT EXISTS signin_failures_time ON signin_failures (failed_at);

-- The directory: which database holds each account (a deployment may have
-- several D1 databases; the first one keeps the directory), and what arrives
-- without an account (a sign-in email, the hash of a token made before tokens
-- carried their account) → the account.
CREATE TABLE IF NOT EXISTS directory_accounts (
  account_id TEXT PRIMARY KEY,
  shard TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS directory_keys (
  kind TEXT NOT NULL CHECK (kind IN ('email', 'token')),
  key TEXT NOT NULL,
  account_id TEXT NOT NULL,
  PRIMARY KEY (kind, key)
);
CREATE INDEX IF NOT EXISTS directory_keys_account ON directory_keys (account_id);

-- OAuth refresh tokens are single-use (src/oauth/refresh-replay.ts): each
-- refresh token a grant has exchanged, by the SHA-256 hex of the token, keyed
-- by the provider's user and grant ids. A refresh records its token with one
-- INSERT, which exactly one of concurrent requests wins. The row with `hash`
-- 'replayed' marks a grant ended because a used token came back. Written in
-- the first database (DB) only, whatever the grant's account: the token
-- endpoint does not know it. The daily job removes rows once their grant has
-- expired.
CREATE TABLE IF NOT EXISTS spent_refresh_tokens (
  user_id TEXT NOT NULL,
  grant_id TEXT NOT NULL,
  hash TEXT NOT NULL CHECK (length(hash) = 64 OR hash = 'replayed'),
  spent_at TEXT NOT NULL,
  grant_expires_at TEXT NOT NULL,
  PRIMARY KEY (user_id, grant_id, hash)
);
CREATE INDEX IF NOT EXISTS spent_refresh_tokens_expiry ON spent_refresh_tokens (grant_expires_at);

-- While an account moves (src/db/move-account.ts) its rows are fenced in the
-- database itself: every insert, update and delete of a row of an account whose
-- `moving_to` is set fails with 'account moving', whatever route it came by (a
-- tool, a page, a job, the admin CLI, a stale cached route). Only the move's own
-- batches pass: each begins by inserting the one row of move_permit and ends by
-- deleting it, inside the same transaction, so no other writer ever sees it.
-- Reads' bookkeeping (tokens.last_used_at, agents.last_seen_at) is not fenced,
-- nor is ending a session (a sign-out ends it in every database).
CREATE TABLE IF NOT EXISTS move_permit (
  held INTEGER PRIMARY KEY CHECK (held = 1)
);
CREATE TRIGGER IF NOT EXISTS move_fence_agents_insert BEFORE INSERT ON agents WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_agents_update BEFORE UPDATE OF id, account_id, name, paused_at, paused_by, created_at, policy ON agents WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_agents_delete BEFORE DELETE ON agents WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_tokens_insert BEFORE INSERT ON tokens WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_tokens_update BEFORE UPDATE OF id, account_id, kind, scope, agent_id, label, hash, prefix, created_at, expires_at, revoked_at, person_id, client_id, client_name, redirect_uri, grant_id, policy ON tokens WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_tokens_delete BEFORE DELETE ON tokens WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_projects_insert BEFORE INSERT ON projects WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_projects_update BEFORE UPDATE ON projects WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_projects_delete BEFORE DELETE ON projects WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_tasks_insert BEFORE INSERT ON tasks WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_tasks_update BEFORE UPDATE ON tasks WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_tasks_delete BEFORE DELETE ON tasks WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_task_dependencies_insert BEFORE INSERT ON task_dependencies WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_task_dependencies_update BEFORE UPDATE ON task_dependencies WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_task_dependencies_delete BEFORE DELETE ON task_dependencies WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_steps_insert BEFORE INSERT ON steps WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_steps_update BEFORE UPDATE ON steps WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_steps_delete BEFORE DELETE ON steps WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_comments_insert BEFORE INSERT ON comments WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_comments_update BEFORE UPDATE ON comments WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_comments_delete BEFORE DELETE ON comments WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_labels_insert BEFORE INSERT ON labels WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_labels_update BEFORE UPDATE ON labels WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_labels_delete BEFORE DELETE ON labels WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_task_labels_insert BEFORE INSERT ON task_labels WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_task_labels_update BEFORE UPDATE ON task_labels WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_task_labels_delete BEFORE DELETE ON task_labels WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_runs_insert BEFORE INSERT ON runs WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_runs_update BEFORE UPDATE ON runs WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_runs_delete BEFORE DELETE ON runs WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_run_events_insert BEFORE INSERT ON run_events WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_run_events_update BEFORE UPDATE ON run_events WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_run_events_delete BEFORE DELETE ON run_events WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_approvals_insert BEFORE INSERT ON approvals WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_approvals_update BEFORE UPDATE ON approvals WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_approvals_delete BEFORE DELETE ON approvals WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_pending_actions_insert BEFORE INSERT ON pending_actions WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_pending_actions_update BEFORE UPDATE ON pending_actions WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_pending_actions_delete BEFORE DELETE ON pending_actions WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_calendar_links_insert BEFORE INSERT ON calendar_links WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_calendar_links_update BEFORE UPDATE ON calendar_links WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_calendar_links_delete BEFORE DELETE ON calendar_links WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_connectors_insert BEFORE INSERT ON connectors WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_connectors_update BEFORE UPDATE ON connectors WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_connectors_delete BEFORE DELETE ON connectors WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_trash_insert BEFORE INSERT ON trash WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_trash_update BEFORE UPDATE ON trash WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_trash_delete BEFORE DELETE ON trash WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_activity_insert BEFORE INSERT ON activity WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_activity_update BEFORE UPDATE ON activity WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_activity_delete BEFORE DELETE ON activity WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_idempotency_keys_insert BEFORE INSERT ON idempotency_keys WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_idempotency_keys_update BEFORE UPDATE ON idempotency_keys WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_idempotency_keys_delete BEFORE DELETE ON idempotency_keys WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_read_bookmarks_insert BEFORE INSERT ON read_bookmarks WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_read_bookmarks_update BEFORE UPDATE ON read_bookmarks WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_read_bookmarks_delete BEFORE DELETE ON read_bookmarks WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_webhooks_insert BEFORE INSERT ON webhooks WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_webhooks_update BEFORE UPDATE ON webhooks WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_webhooks_delete BEFORE DELETE ON webhooks WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_webhook_deliveries_insert BEFORE INSERT ON webhook_deliveries WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_webhook_deliveries_update BEFORE UPDATE ON webhook_deliveries WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_webhook_deliveries_delete BEFORE DELETE ON webhook_deliveries WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_stale_run_notices_insert BEFORE INSERT ON stale_run_notices WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_stale_run_notices_update BEFORE UPDATE ON stale_run_notices WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_stale_run_notices_delete BEFORE DELETE ON stale_run_notices WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_claim_lapse_notices_insert BEFORE INSERT ON claim_lapse_notices WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_claim_lapse_notices_update BEFORE UPDATE ON claim_lapse_notices WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_claim_lapse_notices_delete BEFORE DELETE ON claim_lapse_notices WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_people_insert BEFORE INSERT ON people WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_people_update BEFORE UPDATE ON people WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_people_delete BEFORE DELETE ON people WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_setup_links_insert BEFORE INSERT ON setup_links WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_setup_links_update BEFORE UPDATE ON setup_links WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_setup_links_delete BEFORE DELETE ON setup_links WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_sessions_insert BEFORE INSERT ON sessions WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = NEW.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_sessions_update BEFORE UPDATE ON sessions WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND (SELECT moving_to FROM accounts WHERE id = OLD.account_id) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_accounts_update BEFORE UPDATE ON accounts WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND OLD.moving_to IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;
CREATE TRIGGER IF NOT EXISTS move_fence_accounts_delete BEFORE DELETE ON accounts WHEN NOT EXISTS (SELECT 1 FROM move_permit) AND OLD.moving_to IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'account moving: try again shortly');
END;

-- wrangler's migration ledger: a database made from this file already holds
-- every migration below, so `wrangler d1 migrations apply` later applies only newer ones.
CREATE TABLE IF NOT EXISTS d1_migrations (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT UNIQUE,
  applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL
);
INSERT OR IGNORE INTO d1_migrations (name) VALUES
  ('0000_initial.sql'),
  ('0001_idempotency_request_hash.sql'),
  ('0002_people_sessions.sql'),
  ('0003_recurrence_webhooks.sql'),
  ('0004_claim_leases.sql'),
  ('0005_search_per_account.sql'),
  ('0006_activity_retention.sql'),
  ('0007_approval_kinds.sql'),
  ('0008_directory.sql'),
  ('0009_account_moves.sql'),
  ('0011_move_fence.sql'),
  ('0012_push_subscriptions.sql'),
  ('0015_consent_rules.sql'),
  ('0017_fill_consent_data.sql'),
  ('0018_consent_routes.sql'),
  ('0019_fail_closed.sql'),
  ('0020_named_task.sql'),
  ('0021_spent_refresh_tokens.sql'),
  ('0022_webhooks_all_events.sql'),
  ('0023_policies.sql'),
  ('0024_question_choices.sql'),
  ('0025_person_names.sql'),
  ('0026_pending_actions.sql'),
  ('0027_task_scopes.sql'),
  ('0028_read_bookmarks.sql');
