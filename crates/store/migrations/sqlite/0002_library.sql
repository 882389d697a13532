-- The similarity library kept in the database (the scale-out backend; the embedded default keeps
-- memory-mapped segments on disk). Fingerprint hashes are stored as signed 64-bit integers.
CREATE TABLE library_docs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    title TEXT NOT NULL,
    author TEXT NOT NULL DEFAULT '',
    year BIGINT,
    source TEXT NOT NULL DEFAULT '',
    owner BIGINT,
    scope TEXT NOT NULL,
    chars BIGINT NOT NULL,
    body TEXT NOT NULL,
    added_at BIGINT NOT NULL,
    deleted_at BIGINT
);

CREATE TABLE library_postings (
    hash BIGINT NOT NULL,
    doc_id BIGINT NOT NULL,
    pos BIGINT NOT NULL
);
CREATE INDEX library_postings_hash ON library_postings(hash);
CREATE INDEX library_postings_doc ON library_postings(doc_id);
