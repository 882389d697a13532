-- Uploaded and generated files when `files_backend = "database"`: every node of a deployment
-- reaches them through the database (see store::FileStore). Keys are relative paths.
CREATE TABLE files (
    key TEXT PRIMARY KEY,
    bytes BLOB NOT NULL,
    size BIGINT NOT NULL,
    created_at BIGINT NOT NULL
);

-- Worker processes say every few seconds that they are alive (store::Store::worker_seen), so an
-- operator sees which hosts work which queues; a clean stop removes the row, a killed worker's
-- row goes stale.
CREATE TABLE workers (
    name TEXT PRIMARY KEY,
    host TEXT NOT NULL,
    queues TEXT NOT NULL,
    per_queue BIGINT NOT NULL,
    started_at BIGINT NOT NULL,
    seen_at BIGINT NOT NULL
);
