-- Versions of the prompts an operator edits in the console. The latest version of a prompt is
-- the one in force; `is_builtin` marks a return to the text the release ships with. Nothing is
-- ever rewritten or removed: going back to an older version adds a version.
CREATE TABLE prompt_versions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    body TEXT NOT NULL,
    is_builtin BIGINT NOT NULL DEFAULT 0,
    note TEXT NOT NULL,
    actor_id BIGINT NOT NULL,
    actor_name TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX prompt_versions_name ON prompt_versions (name, id);

CREATE TRIGGER prompt_versions_no_update BEFORE UPDATE ON prompt_versions
BEGIN
    SELECT RAISE(ABORT, 'prompt_versions is append-only');
END;
CREATE TRIGGER prompt_versions_no_delete BEFORE DELETE ON prompt_versions
BEGIN
    SELECT RAISE(ABORT, 'prompt_versions is append-only');
END;
