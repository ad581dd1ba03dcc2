-- Full-text search kept apart per account: each indexed word is stored as
-- `<account key>_<word>` (key: substr(account_id, 5, 8), as src/domain/search-terms.ts
-- computes it), and comments get a row each instead of one column per task.
-- The index is rebuilt from the rows: a scratch FTS table splits the texts
-- into words, and its vocabulary lists them per row.
DROP TRIGGER IF EXISTS tasks_fts_insert;
DROP TRIGGER IF EXISTS tasks_fts_update;
DROP TRIGGER IF EXISTS tasks_fts_delete;
DROP TRIGGER IF EXISTS comments_fts_insert;
DROP TRIGGER IF EXISTS comments_fts_update;
DROP TRIGGER IF EXISTS comments_fts_delete;
DROP TABLE IF EXISTS task_fts;

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

CREATE VIRTUAL TABLE search_rebuild USING fts5(a, b, tokenize = 'unicode61 remove_diacritics 2');
CREATE VIRTUAL TABLE search_rebuild_words USING fts5vocab(search_rebuild, instance);

INSERT INTO search_rebuild (rowid, a, b) SELECT rid, title, notes FROM tasks;
INSERT INTO task_search (rowid, title, notes)
  SELECT t.rid, coalesce(w.a, ''), coalesce(w.b, '')
    FROM tasks t LEFT JOIN (
      SELECT v.doc,
             group_concat(CASE WHEN v.col = 'a' THEN substr(t2.account_id, 5, 8) || '_' || v.term END, ' ') AS a,
             group_concat(CASE WHEN v.col = 'b' THEN substr(t2.account_id, 5, 8) || '_' || v.term END, ' ') AS b
        FROM search_rebuild_words v JOIN tasks t2 ON t2.rid = v.doc
       GROUP BY v.doc) w ON w.doc = t.rid;

DELETE FROM search_rebuild;
INSERT INTO search_rebuild (rowid, a, b) SELECT rowid, body, '' FROM comments;
INSERT INTO comment_search (rowid, body)
  SELECT v.doc, group_concat(substr(c.account_id, 5, 8) || '_' || v.term, ' ')
    FROM search_rebuild_words v JOIN comments c ON c.rowid = v.doc
   GROUP BY v.doc;

DROP TABLE search_rebuild_words;
DROP TABLE search_rebuild;
