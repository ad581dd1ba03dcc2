-- Questions and sign-offs: a question (request_approval on unfinished work) is
-- answered and leaves the task where it is; a sign-off's approval completes
-- the task. Approvals from before were all treated as sign-offs, and stay so.
ALTER TABLE approvals ADD COLUMN kind TEXT NOT NULL DEFAULT 'signoff' CHECK (kind IN ('question', 'signoff'));
