-- Long work (checks, detection, rewriting, generation) is a task; a job is its place in the
-- durable queue. A task never disappears: it ends done, failed (with its reason, refunded) or
-- cancelled (refunded).
CREATE TABLE tasks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL,
    progress BIGINT NOT NULL DEFAULT 0,
    phase TEXT NOT NULL DEFAULT '',
    input TEXT NOT NULL DEFAULT '{}',
    result TEXT,
    error TEXT,
    charged_fen BIGINT NOT NULL DEFAULT 0,
    charged_free BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    started_at BIGINT,
    finished_at BIGINT
);
CREATE INDEX tasks_user ON tasks(user_id, kind, id);

CREATE TABLE jobs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id BIGINT NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
    queue TEXT NOT NULL,
    state TEXT NOT NULL,
    attempts BIGINT NOT NULL DEFAULT 0,
    max_attempts BIGINT NOT NULL DEFAULT 3,
    run_after BIGINT NOT NULL,
    lease_owner TEXT,
    lease_until BIGINT,
    last_error TEXT,
    created_at BIGINT NOT NULL
);
CREATE INDEX jobs_ready ON jobs(queue, state, run_after);
CREATE INDEX jobs_task ON jobs(task_id);
