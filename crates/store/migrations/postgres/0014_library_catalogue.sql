-- The library's catalogue: what each document is (not its text or index), kept by whoever adds
-- to or removes from the library, so every API node lists and searches the library even when
-- the index itself lives with the workers (the embedded, memory-mapped backend).
CREATE TABLE library_catalogue (
    doc_id BIGINT PRIMARY KEY,
    title TEXT NOT NULL,
    author TEXT NOT NULL,
    year BIGINT,
    source TEXT NOT NULL,
    scope TEXT NOT NULL,
    owner BIGINT,
    chars BIGINT NOT NULL,
    -- SHA-256 of the text (hex): the same text imported twice is found and skipped.
    text_hash TEXT NOT NULL,
    added_at BIGINT NOT NULL
);
CREATE INDEX library_catalogue_hash ON library_catalogue (text_hash);
CREATE INDEX library_catalogue_added ON library_catalogue (added_at);

-- The index's size as the library's keeper last measured it (one row).
CREATE TABLE library_status (
    id BIGINT PRIMARY KEY,
    docs BIGINT NOT NULL,
    index_bytes BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
