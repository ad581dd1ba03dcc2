-- Decisions name the person. An account has several people; every person's act
-- is still recorded under the actor `human` (the consent rules read that name),
-- and now also names which person, by id: the activity row of each call
-- (activity.person_id), the approval a person decided
-- (approvals.decided_by_person_id) and the task a person claimed or was
-- assigned as `human` (tasks.assignee_person_id). A person's shown name is
-- people.display_name, set in the console's settings; empty, the part of the
-- email before the @.
ALTER TABLE tasks ADD COLUMN assignee_person_id TEXT;
ALTER TABLE approvals ADD COLUMN decided_by_person_id TEXT;
ALTER TABLE activity ADD COLUMN person_id TEXT;
ALTER TABLE people ADD COLUMN display_name TEXT NOT NULL DEFAULT '';

-- The rows written before this file, filled where the database knows the person.
-- tasks and approvals are written only with a caller recorded (0019_fail_closed.sql),
-- and the fence of 0011_move_fence.sql passed with the permit row, as a move's own batch does;
-- both live only inside this file's transaction.
INSERT OR IGNORE INTO move_permit (held) VALUES (1);
INSERT INTO call_actor (batch, kind, name, now) VALUES ('mig_0025', 'server', 'server:migration', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));

-- A person's call from the web console: its token id is web_<person id>. A
-- refused sign-in has that token id too, but no one proved to be the person
-- made it: it stays without a person (its target names the person).
UPDATE activity SET person_id = substr(token_id, 5)
 WHERE person_id IS NULL AND actor = 'human' AND token_id LIKE 'web\_%' ESCAPE '\'
   AND tool NOT IN ('sign_in_failed', 'sign_in_throttled')
   AND EXISTS (SELECT 1 FROM people p WHERE p.id = substr(activity.token_id, 5) AND p.account_id = activity.account_id);

-- A person's tg_ token made in the console acts for who made it (as one made now does):
-- its create_token row, by web_<person id>, says who.
UPDATE tokens SET person_id = (
    SELECT substr(e.token_id, 5) FROM activity e
     WHERE e.account_id = tokens.account_id AND e.target_id = tokens.id AND e.tool = 'create_token' AND e.token_id LIKE 'web\_%' ESCAPE '\'
     ORDER BY e.created_at LIMIT 1)
 WHERE kind = 'human' AND person_id IS NULL AND grant_id IS NULL AND client_id IS NULL
   AND EXISTS (SELECT 1 FROM activity e JOIN people p ON p.id = substr(e.token_id, 5) AND p.account_id = e.account_id
                WHERE e.account_id = tokens.account_id AND e.target_id = tokens.id AND e.tool = 'create_token' AND e.token_id LIKE 'web\_%' ESCAPE '\');

-- A person's call through an app connected with OAuth, or with a token the person made in the console:
-- the token names the person.
UPDATE activity SET person_id = (SELECT t.person_id FROM tokens t WHERE t.id = activity.token_id AND t.account_id = activity.account_id)
 WHERE person_id IS NULL AND actor = 'human'
   AND EXISTS (SELECT 1 FROM tokens t WHERE t.id = activity.token_id AND t.account_id = activity.account_id AND t.kind = 'human' AND t.person_id IS NOT NULL);

-- A decision is recorded with its call's activity row about the task, at the same time:
-- a person's row there names who decided. Otherwise (a tg_ token of no person, or a history
-- since removed) the approval stays without a person, and is shown as decided by a person.
UPDATE approvals SET decided_by_person_id = (
    SELECT e.person_id FROM activity e
     WHERE e.account_id = approvals.account_id AND e.target_id = approvals.task_id AND e.created_at = approvals.decided_at
       AND e.actor = 'human' AND e.person_id IS NOT NULL
     ORDER BY e.id LIMIT 1)
 WHERE decided_by_person_id IS NULL AND decided_by = 'human' AND decided_at IS NOT NULL;

-- A task assigned to `human`: the person whose claim_task or assign_task is the latest
-- call that could have set its assignee (an update_task or create_task after it may have
-- set it again, and says nothing of who: then none is filled).
UPDATE tasks SET assignee_person_id = (
    SELECT CASE WHEN e.tool IN ('claim_task', 'assign_task') AND e.actor = 'human' THEN e.person_id END
      FROM activity e
     WHERE e.account_id = tasks.account_id AND e.target_id = tasks.id
       AND e.tool IN ('claim_task', 'assign_task', 'update_task', 'create_task')
     ORDER BY e.created_at DESC, e.id DESC LIMIT 1)
 WHERE assignee = 'human' AND assignee_person_id IS NULL;

DELETE FROM call_actor WHERE batch = 'mig_0025';
DELETE FROM move_permit;
