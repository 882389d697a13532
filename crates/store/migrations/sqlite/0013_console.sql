-- The operator console: disabled accounts, an append-only audit log of every console action,
-- and the public configuration entries served by ai_sys_config_api (notices, site texts, …).
ALTER TABLE users ADD COLUMN disabled_at BIGINT;

CREATE TABLE audit_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    actor_id BIGINT NOT NULL,
    actor_name TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT NOT NULL,
    before_json TEXT NOT NULL,
    after_json TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX audit_log_created ON audit_log (created_at);

-- Append-only: not even the application may rewrite history.
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;
-- INSERT OR REPLACE deletes without firing the delete trigger: an id already taken is refused.
CREATE TRIGGER audit_log_no_replace BEFORE INSERT ON audit_log
WHEN EXISTS (SELECT 1 FROM audit_log WHERE id = NEW.id)
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;

CREATE TABLE config_entries (
    entity TEXT NOT NULL,
    id TEXT NOT NULL,
    value_json TEXT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (entity, id)
);
