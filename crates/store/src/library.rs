//! The similarity library in SQL: documents and their winnowed fingerprints (postings), behind
//! simcheck's `Library` trait. The same statements serve SQLite and PostgreSQL.
//!
//! Fingerprint hashes and positions are integers the engine computed, so long `IN (…)` lists
//! and multi-row `VALUES` are written as literals (sqlx's `Any` driver binds no arrays); nothing
//! a user typed is ever put into SQL text.

use crate::{Store, now_ms};
use simcheck::fingerprint::{FingerprintParams, fingerprints};
use simcheck::library::{
    DocId, DocMeta, Library, LibraryError, LibraryResult, NewDoc, Scope, ScopeFilter, Seed,
};
use simcheck::normalize::{count_chars, normalize};
use sqlx::Row;
use sqlx::any::AnyRow;
use std::collections::HashMap;
use std::fmt::Write;

const ROWS_PER_INSERT: usize = 1_000;
const HASHES_PER_QUERY: usize = 1_000;

#[derive(Clone)]
pub struct SqlLibrary {
    store: Store,
    params: FingerprintParams,
}

fn backend(e: impl std::fmt::Display) -> LibraryError {
    LibraryError::Backend(e.to_string())
}

fn scope_name(scope: Scope) -> &'static str {
    match scope {
        Scope::Public => "public",
        Scope::Private => "private",
        Scope::OwnPublished => "own_published",
    }
}

fn scope_from(name: &str) -> Scope {
    match name {
        "private" => Scope::Private,
        "own_published" => Scope::OwnPublished,
        _ => Scope::Public,
    }
}

const META_COLUMNS: &str = "id, title, author, year, source, owner, scope, chars, added_at, bib";

fn meta_from_row(row: &AnyRow) -> Result<DocMeta, sqlx::Error> {
    Ok(DocMeta {
        id: row.try_get::<i64, _>("id")? as u64,
        title: row.try_get("title")?,
        author: row.try_get("author")?,
        year: row.try_get::<Option<i64>, _>("year")?.map(|y| y as i32),
        source: row.try_get("source")?,
        owner: row.try_get("owner")?,
        scope: scope_from(&row.try_get::<String, _>("scope")?),
        chars: row.try_get::<i64, _>("chars")? as u64,
        added_at: row.try_get("added_at")?,
        // JSON; empty when the import gave none.
        bib: serde_json::from_str(&row.try_get::<String, _>("bib")?).unwrap_or_default(),
    })
}

impl SqlLibrary {
    pub fn new(store: Store, params: FingerprintParams) -> Self {
        SqlLibrary { store, params }
    }

    /// Adds documents under the ids they had in another library (moving an embedded library
    /// into the database: reports name their sources by id), each with the time it was added.
    pub async fn add_keeping_ids(&self, docs: Vec<(DocId, i64, NewDoc)>) -> LibraryResult<()> {
        self.insert(
            docs.into_iter()
                .map(|(id, added_at, doc)| (Some((id, added_at)), doc))
                .collect(),
        )
        .await?;
        Ok(())
    }

    /// Inserts documents and their postings in one transaction; an id and time given (moving
    /// another library in) are kept.
    async fn insert(&self, docs: Vec<(Option<(DocId, i64)>, NewDoc)>) -> LibraryResult<Vec<DocId>> {
        let mut ids = Vec::with_capacity(docs.len());
        let mut tx = self.store.pool.begin().await.map_err(backend)?;
        let now = now_ms();
        let kept_any = docs.iter().any(|(kept, _)| kept.is_some());
        for (kept, doc) in &docs {
            let sql = match kept {
                None => {
                    "INSERT INTO library_docs (title, author, year, source, owner, scope, chars, body, added_at, bib) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id"
                }
                Some(_) => {
                    "INSERT INTO library_docs (title, author, year, source, owner, scope, chars, body, added_at, bib, id) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id"
                }
            };
            let mut query = sqlx::query(sql)
                .bind(&doc.title)
                .bind(&doc.author)
                .bind(doc.year.map(i64::from))
                .bind(&doc.source)
                .bind(doc.owner)
                .bind(scope_name(doc.scope))
                .bind(count_chars(&doc.text) as i64)
                .bind(&doc.text)
                .bind(kept.map_or(now, |(_, added_at)| added_at))
                .bind(match doc.bib.is_empty() {
                    true => String::new(),
                    false => serde_json::to_string(&doc.bib).unwrap_or_default(),
                });
            if let Some((id, _)) = kept {
                query = query.bind(*id as i64);
            }
            let id: i64 = query
                .fetch_one(&mut *tx)
                .await
                .map_err(backend)?
                .try_get("id")
                .map_err(backend)?;
            let prints = fingerprints(&normalize(&doc.text).chars, self.params);
            for chunk in prints.chunks(ROWS_PER_INSERT) {
                let mut sql =
                    String::from("INSERT INTO library_postings (hash, doc_id, pos) VALUES ");
                for (i, fp) in chunk.iter().enumerate() {
                    let sep = if i == 0 { "" } else { "," };
                    let _ = write!(sql, "{sep}({},{id},{})", fp.hash as i64, fp.pos);
                }
                sqlx::query(&sql).execute(&mut *tx).await.map_err(backend)?;
            }
            ids.push(id as u64);
        }
        if kept_any && self.store.backend == crate::Backend::Postgres {
            // Later imports take ids after the kept ones.
            sqlx::query(
                "SELECT setval(pg_get_serial_sequence('library_docs', 'id'), \
                 COALESCE(MAX(id), 1), MAX(id) IS NOT NULL) FROM library_docs",
            )
            .execute(&mut *tx)
            .await
            .map_err(backend)?;
        }
        tx.commit().await.map_err(backend)?;
        self.analyze_after_growth().await;
        Ok(ids)
    }

    /// PostgreSQL plans a check's postings lookups from its statistics: on tables that grew
    /// since they were last analysed it walks every document instead of the hash index (a
    /// 10,000-document library: 1.5 s a check against 28 ms; p95 79 s). Autovacuum analyses
    /// the partitions only after a pause and never the partitioned parent, so an import brings
    /// them up to date itself once a tenth more documents (at least 500) have come in.
    async fn analyze_after_growth(&self) {
        if self.store.backend != crate::Backend::Postgres {
            return;
        }
        // Rows now (ids are dense: documents are marked deleted, never removed) against rows at
        // the last analysis; both read without scanning the table.
        let grown: Result<Option<(i64, i64)>, sqlx::Error> = sqlx::query_as(
            "SELECT (SELECT COALESCE(MAX(id), 0) FROM library_docs) - GREATEST(c.reltuples, 0)::bigint, \
             GREATEST(c.reltuples, 0)::bigint FROM pg_class c WHERE c.relname = 'library_docs' \
             AND c.relnamespace = 'public'::regnamespace",
        )
        .fetch_optional(&self.store.pool)
        .await;
        let due = match grown {
            Ok(Some((changed, rows))) => changed >= (rows / 10).max(500),
            Ok(None) => false,
            Err(e) => {
                tracing::warn!(error = %e, "library statistics not read");
                false
            }
        };
        if due
            && let Err(e) = sqlx::query("ANALYZE library_docs, library_postings")
                .execute(&self.store.pool)
                .await
        {
            tracing::warn!(error = %e, "library not analysed");
        }
    }
}

/// Hashes as a comma-separated SQL list of signed 64-bit integers (how they are stored).
fn sql_hash_list(hashes: &[u64]) -> String {
    hashes
        .iter()
        .map(|h| (*h as i64).to_string())
        .collect::<Vec<_>>()
        .join(",")
}

impl Library for SqlLibrary {
    fn params(&self) -> FingerprintParams {
        self.params
    }

    async fn add(&self, docs: Vec<NewDoc>) -> LibraryResult<Vec<DocId>> {
        self.insert(docs.into_iter().map(|d| (None, d)).collect())
            .await
    }

    async fn remove(&self, id: DocId) -> LibraryResult<bool> {
        let mut tx = self.store.pool.begin().await.map_err(backend)?;
        let marked = sqlx::query("UPDATE library_docs SET deleted_at = $1, body = '' WHERE id = $2 AND deleted_at IS NULL")
            .bind(now_ms())
            .bind(id as i64)
            .execute(&mut *tx)
            .await
            .map_err(backend)?;
        if marked.rows_affected() == 0 {
            return Ok(false);
        }
        sqlx::query("DELETE FROM library_postings WHERE doc_id = $1")
            .bind(id as i64)
            .execute(&mut *tx)
            .await
            .map_err(backend)?;
        tx.commit().await.map_err(backend)?;
        Ok(true)
    }

    async fn list(&self) -> LibraryResult<Vec<DocMeta>> {
        let rows = sqlx::query(&format!(
            "SELECT {META_COLUMNS} FROM library_docs WHERE deleted_at IS NULL ORDER BY id"
        ))
        .fetch_all(&self.store.pool)
        .await
        .map_err(backend)?;
        rows.iter()
            .map(|r| meta_from_row(r).map_err(backend))
            .collect()
    }

    async fn meta(&self, id: DocId) -> LibraryResult<Option<DocMeta>> {
        let row = sqlx::query(&format!(
            "SELECT {META_COLUMNS} FROM library_docs WHERE id = $1 AND deleted_at IS NULL"
        ))
        .bind(id as i64)
        .fetch_optional(&self.store.pool)
        .await
        .map_err(backend)?;
        row.map(|r| meta_from_row(&r).map_err(backend)).transpose()
    }

    async fn text(&self, id: DocId) -> LibraryResult<Option<String>> {
        let row = sqlx::query("SELECT body FROM library_docs WHERE id = $1 AND deleted_at IS NULL")
            .bind(id as i64)
            .fetch_optional(&self.store.pool)
            .await
            .map_err(backend)?;
        row.map(|r| r.try_get::<String, _>("body").map_err(backend))
            .transpose()
    }

    async fn doc_count(&self) -> LibraryResult<u64> {
        let n: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM library_docs WHERE deleted_at IS NULL")
                .fetch_one(&self.store.pool)
                .await
                .map_err(backend)?;
        Ok(n as u64)
    }

    async fn index_bytes(&self) -> LibraryResult<u64> {
        let sql = match self.store.backend {
            // The postings are partitioned: the parts are measured, not their empty parent.
            crate::Backend::Postgres => {
                "SELECT CAST(COALESCE(SUM(pg_total_relation_size(c.oid)), 0) AS BIGINT) \
                 FROM pg_class c WHERE c.relkind = 'r' \
                 AND (c.relname = 'library_docs' OR c.relname LIKE 'library\\_postings%')"
            }
            // dbstat is compiled into the bundled SQLite; a build without it tells nothing.
            crate::Backend::Sqlite => {
                "SELECT CAST(COALESCE(SUM(pgsize), 0) AS BIGINT) FROM dbstat WHERE name IN \
                 (SELECT name FROM sqlite_master WHERE tbl_name IN ('library_docs', 'library_postings'))"
            }
        };
        match sqlx::query_scalar::<_, i64>(sql)
            .fetch_one(&self.store.pool)
            .await
        {
            Ok(bytes) => Ok(bytes.max(0) as u64),
            Err(e) if self.store.backend == crate::Backend::Sqlite => {
                tracing::debug!(error = %e, "library size unknown: no dbstat");
                Ok(0)
            }
            Err(e) => Err(backend(e)),
        }
    }

    async fn document_frequencies(&self, hashes: &[u64], cap: u32) -> LibraryResult<Vec<u32>> {
        let mut counts: HashMap<u64, u32> = HashMap::new();
        let mut distinct: Vec<u64> = hashes.to_vec();
        distinct.sort_unstable();
        distinct.dedup();
        for chunk in distinct.chunks(HASHES_PER_QUERY) {
            let list = sql_hash_list(chunk);
            let rows = sqlx::query(&format!(
                "SELECT p.hash, COUNT(DISTINCT p.doc_id) AS docs FROM library_postings p \
                 JOIN library_docs d ON d.id = p.doc_id \
                 WHERE p.hash IN ({list}) AND d.deleted_at IS NULL AND d.scope = 'public' \
                 GROUP BY p.hash"
            ))
            .fetch_all(&self.store.pool)
            .await
            .map_err(backend)?;
            for row in rows {
                let hash = row.try_get::<i64, _>("hash").map_err(backend)? as u64;
                let docs = row.try_get::<i64, _>("docs").map_err(backend)?;
                counts.insert(hash, (docs.max(0) as u64).min(cap as u64) as u32);
            }
        }
        Ok(hashes
            .iter()
            .map(|h| counts.get(h).copied().unwrap_or(0))
            .collect())
    }

    async fn seeds(
        &self,
        query_hashes: &[u64],
        filter: ScopeFilter,
        max_postings_per_hash: usize,
    ) -> LibraryResult<Vec<Seed>> {
        let mut positions: HashMap<u64, Vec<u32>> = HashMap::new();
        for (i, &h) in query_hashes.iter().enumerate() {
            positions.entry(h).or_default().push(i as u32);
        }
        let distinct: Vec<u64> = positions.keys().copied().collect();
        let mut postings: HashMap<u64, Vec<(DocId, u32)>> = HashMap::new();
        for chunk in distinct.chunks(HASHES_PER_QUERY) {
            let list = sql_hash_list(chunk);
            let rows = sqlx::query(&format!(
                "SELECT p.hash, p.doc_id, p.pos FROM library_postings p JOIN library_docs d ON d.id = p.doc_id \
                 WHERE p.hash IN ({list}) AND d.deleted_at IS NULL \
                 AND (d.scope = 'public' OR (d.owner IS NOT NULL AND d.owner = $1))"
            ))
            .bind(filter.owner.unwrap_or(i64::MIN))
            .fetch_all(&self.store.pool)
            .await
            .map_err(backend)?;
            for row in rows {
                let hash = row.try_get::<i64, _>("hash").map_err(backend)? as u64;
                let doc = row.try_get::<i64, _>("doc_id").map_err(backend)? as u64;
                let pos = row.try_get::<i64, _>("pos").map_err(backend)? as u32;
                postings.entry(hash).or_default().push((doc, pos));
            }
        }
        let mut seeds = Vec::new();
        for (hash, hits) in postings {
            if hits.len() > max_postings_per_hash {
                continue;
            }
            for &query_pos in &positions[&hash] {
                seeds.extend(hits.iter().map(|&(doc, source_pos)| Seed {
                    doc,
                    source_pos,
                    query_pos,
                }));
            }
        }
        seeds.sort_unstable();
        Ok(seeds)
    }
}
