//! The library's catalogue: what each document of the similarity library is (title, author,
//! year, size, a hash of its text), kept in the database beside users and tasks. The index
//! itself may live with the workers (the embedded, memory-mapped backend), so the console on
//! any API node lists, searches and counts the library from here. `Catalogued` wraps a library
//! so every import and removal, by a worker or the command line, keeps the catalogue current.

use crate::{Result, Store, now_ms};
use sha2::{Digest, Sha256};
use simcheck::FingerprintParams;
use simcheck::library::{
    DocId, DocMeta, Library, LibraryError, LibraryResult, NewDoc, Scope, ScopeFilter, Seed,
    SentenceHit,
};
use simcheck::normalize::count_chars;
use sqlx::Row;
use sqlx::any::AnyRow;
use std::collections::{HashMap, HashSet};

/// How many hashes or rows one statement carries.
const PER_STATEMENT: usize = 500;

/// One document as the catalogue lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogueEntry {
    pub doc_id: i64,
    pub title: String,
    pub author: String,
    pub year: Option<i32>,
    pub source: String,
    /// `public`, `private` or `own_published`.
    pub scope: String,
    pub owner: Option<i64>,
    pub chars: i64,
    pub added_at: i64,
}

/// What the console's library list filters by; empty and `None` mean any.
#[derive(Debug, Clone, Default)]
pub struct CatalogueFilter<'a> {
    /// Matched against title, author and source.
    pub query: &'a str,
    pub year: Option<i32>,
    /// `public`, `private` or `own_published`; empty for every scope.
    pub scope: &'a str,
}

/// Documents and characters of one scope.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScopeCount {
    pub docs: i64,
    pub chars: i64,
}

/// The library's size as the catalogue and its keeper report it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CatalogueCounts {
    pub public: ScopeCount,
    pub private: ScopeCount,
    pub own_published: ScopeCount,
    /// Bytes of the index (fingerprints and sentence vectors) when last measured.
    pub index_bytes: i64,
    /// When the keeper last measured it (Unix ms); 0 when never.
    pub measured_at: i64,
}

/// The hex SHA-256 of a document's text: the catalogue's way of finding the same text twice.
pub fn text_hash(text: &str) -> String {
    hex::encode(Sha256::digest(text.trim().as_bytes()))
}

fn scope_name(scope: Scope) -> &'static str {
    match scope {
        Scope::Public => "public",
        Scope::Private => "private",
        Scope::OwnPublished => "own_published",
    }
}

const ENTRY_COLUMNS: &str = "doc_id, title, author, year, source, scope, owner, chars, added_at";

fn entry_from_row(row: &AnyRow) -> Result<CatalogueEntry> {
    Ok(CatalogueEntry {
        doc_id: row.try_get("doc_id")?,
        title: row.try_get("title")?,
        author: row.try_get("author")?,
        year: row.try_get::<Option<i64>, _>("year")?.map(|y| y as i32),
        source: row.try_get("source")?,
        scope: row.try_get("scope")?,
        owner: row.try_get("owner")?,
        chars: row.try_get("chars")?,
        added_at: row.try_get("added_at")?,
    })
}

/// One document to enter in the catalogue.
struct Entered {
    id: DocId,
    title: String,
    author: String,
    year: Option<i32>,
    source: String,
    scope: Scope,
    owner: Option<i64>,
    chars: i64,
    text_hash: String,
    added_at: i64,
}

impl Store {
    async fn enter_in_catalogue(&self, entries: &[Entered]) -> Result<()> {
        let mut tx = self.pool.begin().await?;
        for e in entries {
            // Ids are never reused, so a row already there (a retried import) is the same one.
            sqlx::query(
                "INSERT INTO library_catalogue \
                 (doc_id, title, author, year, source, scope, owner, chars, text_hash, added_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (doc_id) DO NOTHING",
            )
            .bind(e.id as i64)
            .bind(&e.title)
            .bind(&e.author)
            .bind(e.year.map(i64::from))
            .bind(&e.source)
            .bind(scope_name(e.scope))
            .bind(e.owner)
            .bind(e.chars)
            .bind(&e.text_hash)
            .bind(e.added_at)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    async fn remove_from_catalogue(&self, id: DocId) -> Result<()> {
        sqlx::query("DELETE FROM library_catalogue WHERE doc_id = $1")
            .bind(id as i64)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// The catalogue's documents matching `filter`, newest first, with how many match.
    pub async fn search_catalogue(
        &self,
        filter: &CatalogueFilter<'_>,
        offset: i64,
        limit: i64,
    ) -> Result<(Vec<CatalogueEntry>, i64)> {
        let pattern = crate::like_pattern(filter.query);
        let condition = "($1 = '' OR LOWER(title) LIKE $2 ESCAPE '\\' \
             OR LOWER(author) LIKE $2 ESCAPE '\\' OR LOWER(source) LIKE $2 ESCAPE '\\') \
             AND ($3 < 0 OR year = $3) AND ($4 = '' OR scope = $4)";
        let year = filter.year.map_or(-1, i64::from);
        let total: i64 = sqlx::query_scalar(&format!(
            "SELECT COUNT(*) FROM library_catalogue WHERE {condition}"
        ))
        .bind(filter.query.trim())
        .bind(&pattern)
        .bind(year)
        .bind(filter.scope)
        .fetch_one(&self.pool)
        .await?;
        let rows = sqlx::query(&format!(
            "SELECT {ENTRY_COLUMNS} FROM library_catalogue WHERE {condition} \
             ORDER BY doc_id DESC LIMIT $5 OFFSET $6"
        ))
        .bind(filter.query.trim())
        .bind(&pattern)
        .bind(year)
        .bind(filter.scope)
        .bind(limit)
        .bind(offset)
        .fetch_all(&self.pool)
        .await?;
        let entries = rows.iter().map(entry_from_row).collect::<Result<_>>()?;
        Ok((entries, total))
    }

    /// One catalogue entry.
    pub async fn catalogue_entry(&self, doc_id: i64) -> Result<Option<CatalogueEntry>> {
        let row = sqlx::query(&format!(
            "SELECT {ENTRY_COLUMNS} FROM library_catalogue WHERE doc_id = $1"
        ))
        .bind(doc_id)
        .fetch_optional(&self.pool)
        .await?;
        row.as_ref().map(entry_from_row).transpose()
    }

    /// Documents and characters by scope, and the index's size when last measured.
    pub async fn catalogue_counts(&self) -> Result<CatalogueCounts> {
        let rows = sqlx::query(
            "SELECT scope, COUNT(*) AS docs, CAST(COALESCE(SUM(chars), 0) AS BIGINT) AS chars \
             FROM library_catalogue GROUP BY scope",
        )
        .fetch_all(&self.pool)
        .await?;
        let mut counts = CatalogueCounts::default();
        for row in rows {
            let count = ScopeCount {
                docs: row.try_get("docs")?,
                chars: row.try_get("chars")?,
            };
            match row.try_get::<String, _>("scope")?.as_str() {
                "public" => counts.public = count,
                "private" => counts.private = count,
                _ => counts.own_published = count,
            }
        }
        let status: Option<(i64, i64)> =
            sqlx::query_as("SELECT index_bytes, updated_at FROM library_status WHERE id = 1")
                .fetch_optional(&self.pool)
                .await?;
        if let Some((bytes, at)) = status {
            counts.index_bytes = bytes;
            counts.measured_at = at;
        }
        Ok(counts)
    }

    /// For each of `hashes` found in the catalogue's public documents, the id of one document
    /// with that text.
    pub async fn public_texts_present(&self, hashes: &[String]) -> Result<HashMap<String, i64>> {
        let mut found = HashMap::new();
        for chunk in hashes.chunks(PER_STATEMENT) {
            // Hex digests only: nothing a user typed reaches the SQL text.
            let list: Vec<String> = chunk
                .iter()
                .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
                .map(|h| format!("'{h}'"))
                .collect();
            if list.is_empty() {
                continue;
            }
            let rows: Vec<(String, i64)> = sqlx::query_as(&format!(
                "SELECT text_hash, MIN(doc_id) FROM library_catalogue \
                 WHERE scope = 'public' AND text_hash IN ({}) GROUP BY text_hash",
                list.join(",")
            ))
            .fetch_all(&self.pool)
            .await?;
            found.extend(rows);
        }
        Ok(found)
    }

    async fn catalogue_ids(&self) -> Result<HashSet<i64>> {
        let ids: Vec<i64> = sqlx::query_scalar("SELECT doc_id FROM library_catalogue")
            .fetch_all(&self.pool)
            .await?;
        Ok(ids.into_iter().collect())
    }

    async fn catalogue_size(&self) -> Result<i64> {
        Ok(sqlx::query_scalar("SELECT COUNT(*) FROM library_catalogue")
            .fetch_one(&self.pool)
            .await?)
    }

    /// Records the index's size, as the library's keeper measured it.
    pub async fn record_library_status(&self, docs: u64, index_bytes: u64) -> Result<()> {
        sqlx::query(
            "INSERT INTO library_status (id, docs, index_bytes, updated_at) VALUES (1, $1, $2, $3) \
             ON CONFLICT (id) DO UPDATE SET docs = excluded.docs, \
             index_bytes = excluded.index_bytes, updated_at = excluded.updated_at",
        )
        .bind(docs as i64)
        .bind(index_bytes as i64)
        .bind(now_ms())
        .execute(&self.pool)
        .await?;
        Ok(())
    }
}

fn catalogue_error(e: crate::StoreError) -> LibraryError {
    LibraryError::Backend(format!("比对库目录：{e}"))
}

/// A library whose imports and removals are entered in the store's catalogue.
pub struct Catalogued<L> {
    inner: L,
    store: Store,
    /// Held by every change, reconciliation and measurement, so a reconciliation that started
    /// before an import neither undoes its catalogue entries nor records a size from before it.
    changing: tokio::sync::Mutex<()>,
}

impl<L: Library> Catalogued<L> {
    pub fn new(inner: L, store: Store) -> Self {
        Catalogued {
            inner,
            store,
            changing: tokio::sync::Mutex::new(()),
        }
    }

    pub fn inner(&self) -> &L {
        &self.inner
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Brings the catalogue in line with the library (one imported before the catalogue existed,
    /// or changed by a process that did not keep it) and records the index's size. Returns
    /// how many entries were added and removed.
    pub async fn reconcile(&self) -> LibraryResult<(usize, usize)> {
        let _changing = self.changing.lock().await;
        let in_library = self.inner.doc_count().await?;
        let in_catalogue = self.store.catalogue_size().await.map_err(catalogue_error)?;
        let mut changed = (0, 0);
        if in_library != in_catalogue.max(0) as u64 {
            let metas = self.inner.list().await?;
            let live: HashSet<i64> = metas.iter().map(|m| m.id as i64).collect();
            let listed = self.store.catalogue_ids().await.map_err(catalogue_error)?;
            for gone in listed.difference(&live) {
                self.store
                    .remove_from_catalogue(*gone as DocId)
                    .await
                    .map_err(catalogue_error)?;
                changed.1 += 1;
            }
            let missing: Vec<&DocMeta> = metas
                .iter()
                .filter(|m| !listed.contains(&(m.id as i64)))
                .collect();
            for chunk in missing.chunks(PER_STATEMENT) {
                let mut entries = Vec::with_capacity(chunk.len());
                for meta in chunk {
                    let text = self.inner.text(meta.id).await?.unwrap_or_default();
                    entries.push(Entered {
                        id: meta.id,
                        title: meta.title.clone(),
                        author: meta.author.clone(),
                        year: meta.year,
                        source: meta.source.clone(),
                        scope: meta.scope,
                        owner: meta.owner,
                        chars: meta.chars as i64,
                        text_hash: text_hash(&text),
                        added_at: meta.added_at,
                    });
                }
                self.store
                    .enter_in_catalogue(&entries)
                    .await
                    .map_err(catalogue_error)?;
                changed.0 += entries.len();
            }
        }
        self.measure().await?;
        Ok(changed)
    }

    /// Measures the index and records its size for the console.
    pub async fn record_status(&self) -> LibraryResult<()> {
        let _changing = self.changing.lock().await;
        self.measure().await
    }

    async fn measure(&self) -> LibraryResult<()> {
        let docs = self.inner.doc_count().await?;
        let bytes = self.inner.index_bytes().await?;
        self.store
            .record_library_status(docs, bytes)
            .await
            .map_err(catalogue_error)
    }
}

impl<L: Library> Library for Catalogued<L> {
    fn params(&self) -> FingerprintParams {
        self.inner.params()
    }

    async fn add(&self, docs: Vec<NewDoc>) -> LibraryResult<Vec<DocId>> {
        let now = now_ms();
        // What the catalogue keeps is taken before the texts move into the library.
        let mut entries: Vec<Entered> = docs
            .iter()
            .map(|doc| Entered {
                id: 0,
                title: doc.title.clone(),
                author: doc.author.clone(),
                year: doc.year,
                source: doc.source.clone(),
                scope: doc.scope,
                owner: doc.owner,
                chars: count_chars(&doc.text) as i64,
                text_hash: text_hash(&doc.text),
                added_at: now,
            })
            .collect();
        let _changing = self.changing.lock().await;
        let ids = self.inner.add(docs).await?;
        for (entry, id) in entries.iter_mut().zip(&ids) {
            entry.id = *id;
        }
        // The documents are in the library now; a catalogue that could not follow is mended by
        // the next reconciliation rather than failing an import that happened.
        if let Err(e) = self.store.enter_in_catalogue(&entries).await {
            tracing::warn!(error = %e, "library catalogue not updated after an import");
        }
        Ok(ids)
    }

    async fn remove(&self, id: DocId) -> LibraryResult<bool> {
        let _changing = self.changing.lock().await;
        let removed = self.inner.remove(id).await?;
        if let Err(e) = self.store.remove_from_catalogue(id).await {
            tracing::warn!(error = %e, doc = id, "library catalogue not updated after a removal");
        }
        Ok(removed)
    }

    async fn list(&self) -> LibraryResult<Vec<DocMeta>> {
        self.inner.list().await
    }

    async fn meta(&self, id: DocId) -> LibraryResult<Option<DocMeta>> {
        self.inner.meta(id).await
    }

    async fn text(&self, id: DocId) -> LibraryResult<Option<String>> {
        self.inner.text(id).await
    }

    async fn doc_count(&self) -> LibraryResult<u64> {
        self.inner.doc_count().await
    }

    async fn index_bytes(&self) -> LibraryResult<u64> {
        self.inner.index_bytes().await
    }

    async fn document_frequencies(&self, hashes: &[u64], cap: u32) -> LibraryResult<Vec<u32>> {
        self.inner.document_frequencies(hashes, cap).await
    }

    async fn similar_sentences(
        &self,
        queries: &[Vec<f32>],
        k: usize,
    ) -> LibraryResult<Option<Vec<Vec<SentenceHit>>>> {
        self.inner.similar_sentences(queries, k).await
    }

    async fn seeds(
        &self,
        query_hashes: &[u64],
        filter: ScopeFilter,
        max_postings_per_hash: usize,
    ) -> LibraryResult<Vec<Seed>> {
        self.inner
            .seeds(query_hashes, filter, max_postings_per_hash)
            .await
    }
}
