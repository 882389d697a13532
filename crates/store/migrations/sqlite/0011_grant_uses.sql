-- Packages pay for tasks: what a task took from the account's grants (units: uses, or characters
-- for rewriting), kept per grant so that a refund returns them to the grant they came from.
ALTER TABLE tasks ADD COLUMN charged_units BIGINT NOT NULL DEFAULT 0;

CREATE TABLE grant_uses (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    grant_id BIGINT NOT NULL REFERENCES account_grants(id) ON DELETE CASCADE,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    -- No foreign key: the use stays in the account's history when the task is deleted.
    task_id BIGINT NOT NULL,
    -- What stays used (a refund takes it down).
    units BIGINT NOT NULL,
    reason TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX grant_uses_task ON grant_uses(task_id);
CREATE INDEX grant_uses_user ON grant_uses(user_id, id);
