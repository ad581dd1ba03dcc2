-- Questions a person answers by choice or in words: a question may offer
-- choices (a JSON array of 2 to 8 texts) and may accept an answer in words;
-- the answer keeps the choice picked and the words written. Every column is
-- added with a value that keeps what each row was: no choices (a yes/no
-- question or a sign-off), no words accepted beyond a note, no answer given
-- by choice or in words. Only columns are added; no row changes.
ALTER TABLE approvals ADD COLUMN choices TEXT;
ALTER TABLE approvals ADD COLUMN accepts_words INTEGER NOT NULL DEFAULT 0;
ALTER TABLE approvals ADD COLUMN answer_choice TEXT;
ALTER TABLE approvals ADD COLUMN answer_words TEXT;
