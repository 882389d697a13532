-- The official report as it stood when its check finished: the title, the headline figures and
-- the settings it was made with, under the verification code printed on it. Renaming the record
-- later changes none of it, and deleting the record keeps it (marked deleted), so /verify still
-- answers for a report a teacher holds. No foreign key: it outlives its task on purpose.
CREATE TABLE report_snapshots (
    code TEXT PRIMARY KEY,
    -- The task whose current report this is; NULL once the task was run again (the earlier
    -- report stays verifiable under its own code).
    task_id BIGINT UNIQUE,
    -- The task it was made from.
    source_task_id BIGINT NOT NULL,
    user_id BIGINT NOT NULL,
    kind TEXT NOT NULL,
    report_number TEXT NOT NULL DEFAULT '',
    title TEXT NOT NULL,
    checked_at BIGINT NOT NULL,
    -- JSON of the figures and settings; '' until taken (codes made before snapshots existed).
    summary TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    -- When the code was first shown to its owner: only an issued code verifies.
    issued_at BIGINT,
    deleted_at BIGINT
);
CREATE INDEX report_snapshots_user ON report_snapshots (user_id);

CREATE INDEX report_snapshots_source ON report_snapshots (source_task_id);

INSERT INTO report_snapshots (code, task_id, source_task_id, user_id, kind, title, checked_at, created_at, issued_at)
SELECT rc.code, rc.task_id, rc.task_id, t.user_id, t.kind, t.title, COALESCE(t.finished_at, t.created_at), rc.created_at, rc.created_at
FROM report_codes rc JOIN tasks t ON t.id = rc.task_id;

DROP TABLE report_codes;
