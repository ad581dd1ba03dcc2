-- A webhook made for all events (the admin CLI's --events all, or the
-- console's form with every box ticked) was stored as the list of the events
-- of its day, so it never received an event type a later version added: one
-- made before approval.withdrawn existed does not receive it. Now `all` is
-- stored as it is (src/db/webhooks.ts) and matches every event, those added
-- later too. This file marks as `all` each endpoint whose list is the whole
-- list of events of some version: every version stored the types it was
-- given in the order of EVENT_TYPES (src/domain/events.ts), joined by commas,
-- without spaces or repeats, so each whole list has one spelling. A list that
-- leaves out an event its version had was a choice, and stays as it is. (The
-- row does not say which version made it: the six events before
-- approval.withdrawn, chosen after it existed, become all as well; the
-- person adds that endpoint again with its list. docs/webhooks.md says so.)
--
-- Only data changes, in webhooks (no consent rule covers it, so no caller is
-- recorded). The fence of 0011_move_fence.sql would refuse the rows of an
-- account that is moving: the migration passes it as a move's own batch does,
-- with the permit row that lives only inside this file's transaction.
INSERT OR IGNORE INTO move_permit (held) VALUES (1);

UPDATE webhooks SET events = 'all'
 WHERE events IN (
   -- the first webhooks' events
   'approval.requested,task.completed,task.rejected,run.stale,claim.lapsed',
   -- with approval.answered, before approval.withdrawn was added
   'approval.requested,approval.answered,task.completed,task.rejected,run.stale,claim.lapsed',
   -- every event up to this file
   'approval.requested,approval.answered,approval.withdrawn,task.completed,task.rejected,run.stale,claim.lapsed'
 );

DELETE FROM move_permit;
