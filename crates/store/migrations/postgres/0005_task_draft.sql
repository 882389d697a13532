-- What a running task has produced so far (a rewrite streaming in), for pages that show it live.
ALTER TABLE tasks ADD COLUMN draft TEXT;
