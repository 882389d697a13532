-- The library's postings as runs of packed blocks instead of a row per posting; see the
-- PostgreSQL migration of the same number. Existing postings are rebuilt from the documents'
-- texts on first use (`SqlLibrary`).
DROP TABLE library_postings;

CREATE TABLE library_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    bucket_bits INTEGER NOT NULL,
    postings BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    ready_at BIGINT,
    retired_at BIGINT
);

-- A block's key is run_id * 2^40 + bucket: one column, so a check's `IN` list is always an
-- index lookup, whatever PostgreSQL's statistics say about a run made since the last ANALYZE.
CREATE TABLE library_blocks (
    block BIGINT PRIMARY KEY,
    entries BLOB NOT NULL
);

-- A student's own documents are looked up by owner at every check; merges read the removed ids.
CREATE INDEX library_docs_owner ON library_docs(owner) WHERE owner IS NOT NULL;
CREATE INDEX library_docs_removed ON library_docs(id) WHERE deleted_at IS NOT NULL;
