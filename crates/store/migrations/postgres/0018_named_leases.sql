-- A lease on a named piece of shared work (e.g. changing the sentence index all nodes share):
-- one holder at a time, until `until_ms`; a holder that dies simply lets it run out.
CREATE TABLE named_leases (
    name TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    until_ms BIGINT NOT NULL
);
