-- What a reference list needs of a library record beyond title, author, year and source
-- (type, volume, issue, pages, DOI, publisher, place), as JSON; empty when the import gave none.
ALTER TABLE library_docs ADD COLUMN bib TEXT NOT NULL DEFAULT '';
