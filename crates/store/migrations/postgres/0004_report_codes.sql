-- The verification code printed on a report's cover: anyone holding it can confirm on /verify
-- that the report is genuine and see its headline figures, never its text.
CREATE TABLE report_codes (
    code TEXT PRIMARY KEY,
    task_id BIGINT NOT NULL UNIQUE REFERENCES tasks(id) ON DELETE CASCADE,
    created_at BIGINT NOT NULL
);
