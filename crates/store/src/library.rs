//! The similarity library in SQL: documents, and their winnowed fingerprints (postings) packed
//! into blocks, behind simcheck's `Library` trait. The same statements serve SQLite and
//! PostgreSQL.
//!
//! Postings live in runs, as in a log-structured merge tree: every import batch writes one run
//! (`postings` says how a run is cut into blocks, one row each), and when there are more than
//! `MAX_RUNS` ready runs the smallest are merged into one, streaming and dropping removed
//! documents. A check reads, for each run, only the blocks of its own hashes' buckets, so it
//! reads about the same whatever the library's size. A row per posting, as before, took 20
//! bytes per library character and 1.5 s a check at 10,000 documents.
//!
//! Hash keys, buckets and ids are integers the engine computed, so long `IN (…)` lists are
//! written as literals (sqlx's `Any` driver binds no arrays); nothing a user typed is ever put
//! into SQL text.

use crate::library_runs::{Run, id_list, postings_of, write_run};
use crate::postings::{
    Posting, block_key, bucket_base, bucket_of, bucket_of_block, decode_block, hash_key,
};
use crate::{Store, now_ms};
use futures_util::{StreamExt, TryStreamExt};
use simcheck::fingerprint::FingerprintParams;
use simcheck::library::{
    DocId, DocMeta, Library, LibraryError, LibraryResult, NewDoc, Scope, ScopeFilter, Seed,
};
use simcheck::normalize::count_chars;
use sqlx::Row;
use sqlx::any::AnyRow;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use tokio::sync::OnceCell;

const BUCKETS_PER_QUERY: usize = 4_000;
const DOCS_PER_QUERY: usize = 1_000;
/// Runs one check reads at once, each on a connection of its own.
const RUNS_READ_AT_ONCE: usize = 2;
/// A hash whose relevant postings (public, or the student's own) exceed this many times the
/// caller's cap is too common to look its documents up: only removed documents not yet merged
/// away could bring it under the cap.
const RAW_POSTINGS_FACTOR: usize = 2;
/// Document frequencies look a k-gram's documents up while it has at most this many times the
/// cap in public postings (a k-gram repeats within a document, so postings outnumber documents).
const DF_POSTINGS_FACTOR: usize = 8;

#[derive(Clone)]
pub struct SqlLibrary {
    pub(crate) store: Store,
    pub(crate) params: FingerprintParams,
    /// Set once this process has seen postings exist for the documents (or built them).
    indexed: Arc<OnceCell<()>>,
    /// Whether changes start merges in the background (tests merge when they choose).
    pub(crate) background: bool,
}

pub(crate) fn backend(e: impl std::fmt::Display) -> LibraryError {
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
        SqlLibrary {
            store,
            params,
            indexed: Arc::new(OnceCell::new()),
            background: true,
        }
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

    /// Bytes the documents' rows (metadata and texts) take; `index_bytes` is the postings'.
    pub async fn document_bytes(&self) -> LibraryResult<u64> {
        self.relation_bytes("'library_docs'").await
    }

    /// Inserts documents and their run of postings in one transaction; an id and time given
    /// (moving another library in) are kept. Merging runs follows in the background.
    async fn insert(&self, docs: Vec<(Option<(DocId, i64)>, NewDoc)>) -> LibraryResult<Vec<DocId>> {
        if docs.is_empty() {
            return Ok(Vec::new());
        }
        self.ensure_indexed().await?;
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
            ids.push(id as u64);
        }
        // Fingerprinting thousands of documents takes seconds: off the async runtime.
        let params = self.params;
        let batch: Vec<(DocId, bool, NewDoc)> = ids
            .iter()
            .zip(docs)
            .map(|(&id, (_, doc))| (id, doc.scope == Scope::Public, doc))
            .collect();
        let postings = tokio::task::spawn_blocking(move || {
            let docs: Vec<(DocId, bool, &str)> = batch
                .iter()
                .map(|(id, public, doc)| (*id, *public, doc.text.as_str()))
                .collect();
            postings_of(&docs, params)
        })
        .await
        .map_err(backend)?;
        write_run(&mut tx, &postings, Some(now)).await?;
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
        self.maintain_in_background();
        self.analyze_after_growth().await;
        Ok(ids)
    }

    /// Builds the postings from the documents' texts when documents exist and no run does (a
    /// database from before migration 0019), once per process.
    async fn ensure_indexed(&self) -> LibraryResult<()> {
        self.indexed
            .get_or_try_init(|| self.rebuild_if_needed())
            .await
            .map(|_| ())
    }

    /// The postings of `hashes`' keys that are `relevant`, in every ready run, by key; a key
    /// with more than `limit` of them is reported apart, as too common, without its postings.
    async fn relevant_postings(
        &self,
        hashes: &[u64],
        relevant: impl Fn(&Posting) -> bool + Sync,
        limit: usize,
    ) -> LibraryResult<(HashMap<u64, Vec<Posting>>, HashSet<u64>)> {
        self.ensure_indexed().await?;
        let mut keys: Vec<u64> = hashes.iter().map(|&h| hash_key(h)).collect();
        keys.sort_unstable();
        keys.dedup();
        if keys.is_empty() {
            return Ok(Default::default());
        }
        // A merge may retire and, minutes later, drop a run this check listed: read again then.
        let mut attempts = 0;
        let found = loop {
            let runs = self.ready_runs().await?;
            let found: Vec<Vec<Posting>> = futures_util::stream::iter(runs.iter().copied())
                .map(|run| self.run_postings(run, &keys, &relevant, limit))
                .buffer_unordered(RUNS_READ_AT_ONCE)
                .try_collect()
                .await?;
            attempts += 1;
            if attempts >= 3 || self.runs_exist(&runs).await? {
                break found;
            }
        };
        let mut by_key: HashMap<u64, Vec<Posting>> = HashMap::new();
        for p in found.into_iter().flatten() {
            by_key.entry(p.key).or_default().push(p);
        }
        let mut too_common = HashSet::new();
        by_key.retain(|&key, hits| {
            let keep = hits.len() <= limit;
            if !keep {
                too_common.insert(key);
            }
            keep
        });
        Ok((by_key, too_common))
    }

    /// The relevant postings of `keys` (sorted, distinct) in one run, at most `limit + 1` a key.
    async fn run_postings(
        &self,
        run: Run,
        keys: &[u64],
        relevant: &(impl Fn(&Posting) -> bool + Sync),
        limit: usize,
    ) -> LibraryResult<Vec<Posting>> {
        let mut buckets: Vec<u64> = keys.iter().map(|&k| bucket_of(k, run.bits)).collect();
        buckets.dedup();
        let mut found = Vec::new();
        let mut decoded = Vec::new();
        let mut per_key: HashMap<u64, usize> = HashMap::new();
        for chunk in buckets.chunks(BUCKETS_PER_QUERY) {
            let rows: Vec<(i64, Vec<u8>)> = sqlx::query_as(&format!(
                "SELECT block, entries FROM library_blocks WHERE block IN ({})",
                id_list(chunk.iter().map(|&b| block_key(run.id, b) as u64))
            ))
            .persistent(false)
            .fetch_all(&self.store.pool)
            .await
            .map_err(backend)?;
            for (block, entries) in rows {
                let bucket = bucket_of_block(block);
                decoded.clear();
                decode_block(
                    &entries,
                    bucket_base(bucket, run.bits),
                    run.bits,
                    &mut decoded,
                )?;
                let from = keys.partition_point(|&k| bucket_of(k, run.bits) < bucket);
                let to = keys.partition_point(|&k| bucket_of(k, run.bits) <= bucket);
                let wanted = &keys[from..to];
                for p in &decoded {
                    if wanted.binary_search(&p.key).is_err() || !relevant(p) {
                        continue;
                    }
                    let seen = per_key.entry(p.key).or_default();
                    if *seen <= limit {
                        *seen += 1;
                        found.push(*p);
                    }
                }
            }
        }
        Ok(found)
    }

    /// Which of `docs` have been removed.
    async fn removed_among(&self, docs: &[DocId]) -> LibraryResult<HashSet<DocId>> {
        let mut removed = HashSet::new();
        for chunk in docs.chunks(DOCS_PER_QUERY) {
            let ids: Vec<i64> = sqlx::query_scalar(&format!(
                "SELECT id FROM library_docs WHERE deleted_at IS NOT NULL AND id IN ({})",
                id_list(chunk.iter().copied())
            ))
            .persistent(false)
            .fetch_all(&self.store.pool)
            .await
            .map_err(backend)?;
            removed.extend(ids.into_iter().map(|id| id as u64));
        }
        Ok(removed)
    }

    /// The live documents of `owner` outside the public library (their postings carry no
    /// public mark): a student has a few.
    async fn own_documents(&self, owner: Option<i64>) -> LibraryResult<HashSet<DocId>> {
        let Some(owner) = owner else {
            return Ok(HashSet::new());
        };
        let ids: Vec<i64> = sqlx::query_scalar(
            "SELECT id FROM library_docs WHERE owner = $1 AND deleted_at IS NULL AND scope <> 'public'",
        )
        .bind(owner)
        .fetch_all(&self.store.pool)
        .await
        .map_err(backend)?;
        Ok(ids.into_iter().map(|id| id as u64).collect())
    }

    /// `by_key` without the postings of removed public documents (a student's own documents
    /// are known live).
    async fn without_removed(
        &self,
        mut by_key: HashMap<u64, Vec<Posting>>,
    ) -> LibraryResult<HashMap<u64, Vec<Posting>>> {
        let mut public: Vec<DocId> = by_key
            .values()
            .flatten()
            .filter(|p| p.public)
            .map(|p| p.doc)
            .collect();
        public.sort_unstable();
        public.dedup();
        let removed = self.removed_among(&public).await?;
        if !removed.is_empty() {
            for hits in by_key.values_mut() {
                hits.retain(|p| !removed.contains(&p.doc));
            }
        }
        Ok(by_key)
    }

    /// Bytes PostgreSQL or SQLite keeps for `tables` (a quoted, comma-separated list).
    async fn relation_bytes(&self, tables: &str) -> LibraryResult<u64> {
        let sql = match self.store.backend {
            crate::Backend::Postgres => format!(
                "SELECT CAST(COALESCE(SUM(pg_total_relation_size(c.oid)), 0) AS BIGINT) \
                 FROM pg_class c WHERE c.relkind = 'r' AND c.relname IN ({tables})"
            ),
            // dbstat is compiled into the bundled SQLite; a build without it tells nothing.
            crate::Backend::Sqlite => format!(
                "SELECT CAST(COALESCE(SUM(pgsize), 0) AS BIGINT) FROM dbstat WHERE name IN \
                 (SELECT name FROM sqlite_master WHERE tbl_name IN ({tables}))"
            ),
        };
        match sqlx::query_scalar::<_, i64>(&sql)
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

    /// PostgreSQL plans from its statistics, and autovacuum refreshes them only after a pause;
    /// stale ones once made checks walk whole tables (p95 79 s with a row per posting). Block
    /// lookups no longer depend on them (one-column keys), but the document lookups do, so an
    /// import refreshes them itself once a tenth more documents (at least 500) have come in.
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
            && let Err(e) = sqlx::query("ANALYZE library_docs, library_blocks")
                .execute(&self.store.pool)
                .await
        {
            tracing::warn!(error = %e, "library not analysed");
        }
    }
}

impl Library for SqlLibrary {
    fn params(&self) -> FingerprintParams {
        self.params
    }

    async fn add(&self, docs: Vec<NewDoc>) -> LibraryResult<Vec<DocId>> {
        self.insert(docs.into_iter().map(|d| (None, d)).collect())
            .await
    }

    /// Marks the document removed: checks stop finding it at once, and its postings go when
    /// their run is next merged.
    async fn remove(&self, id: DocId) -> LibraryResult<bool> {
        let marked = sqlx::query("UPDATE library_docs SET deleted_at = $1, body = '' WHERE id = $2 AND deleted_at IS NULL")
            .bind(now_ms())
            .bind(id as i64)
            .execute(&self.store.pool)
            .await
            .map_err(backend)?;
        Ok(marked.rows_affected() > 0)
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
        self.relation_bytes("'library_runs', 'library_blocks'")
            .await
    }

    async fn document_frequencies(&self, hashes: &[u64], cap: u32) -> LibraryResult<Vec<u32>> {
        let limit = (cap as usize).saturating_mul(DF_POSTINGS_FACTOR);
        let (by_key, too_common) = self.relevant_postings(hashes, |p| p.public, limit).await?;
        let live = self.without_removed(by_key).await?;
        let mut docs: HashSet<DocId> = HashSet::new();
        Ok(hashes
            .iter()
            .map(|&h| {
                let key = hash_key(h);
                if too_common.contains(&key) {
                    return cap;
                }
                docs.clear();
                docs.extend(live.get(&key).into_iter().flatten().map(|p| p.doc));
                (docs.len() as u32).min(cap)
            })
            .collect())
    }

    async fn seeds(
        &self,
        query_hashes: &[u64],
        filter: ScopeFilter,
        max_postings_per_hash: usize,
    ) -> LibraryResult<Vec<Seed>> {
        let own = self.own_documents(filter.owner).await?;
        let limit = max_postings_per_hash.saturating_mul(RAW_POSTINGS_FACTOR);
        let (by_key, _too_common) = self
            .relevant_postings(query_hashes, |p| p.public || own.contains(&p.doc), limit)
            .await?;
        let live = self.without_removed(by_key).await?;
        let mut seeds = Vec::new();
        for (query_pos, &hash) in query_hashes.iter().enumerate() {
            let Some(hits) = live.get(&hash_key(hash)) else {
                continue;
            };
            if hits.len() > max_postings_per_hash {
                continue;
            }
            seeds.extend(hits.iter().map(|p| Seed {
                doc: p.doc,
                source_pos: p.pos,
                query_pos: query_pos as u32,
            }));
        }
        seeds.sort_unstable();
        Ok(seeds)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::library_runs::MAX_RUNS;
    use crate::store_test;
    use simcheck::fingerprint::fingerprints;
    use simcheck::normalize::normalize;

    /// 300 characters of CJK drawn from a generator seeded by `i`: no two texts share k-grams.
    fn quiet(store: Store) -> SqlLibrary {
        SqlLibrary {
            background: false,
            ..SqlLibrary::new(store, FingerprintParams::default())
        }
    }

    fn doc_text(i: usize) -> String {
        let mut state = (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (0..300)
            .map(|_| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                char::from_u32(0x4E00 + ((state >> 33) % 3_000) as u32).unwrap_or('字')
            })
            .collect()
    }

    async fn found_docs(library: &SqlLibrary, text: &str) -> Vec<DocId> {
        let chars: Vec<char> = normalize(text).chars;
        let hashes = simcheck::fingerprint::kgram_hashes(&chars, library.params.k);
        let mut docs: Vec<DocId> = library
            .seeds(&hashes, ScopeFilter::default(), 2_000)
            .await
            .unwrap()
            .into_iter()
            .map(|s| s.doc)
            .collect();
        docs.sort_unstable();
        docs.dedup();
        docs
    }

    async fn ready_postings(library: &SqlLibrary) -> u64 {
        library
            .ready_runs()
            .await
            .unwrap()
            .iter()
            .map(|r| r.postings)
            .sum()
    }

    store_test!(
        runs_are_merged_and_removed_documents_dropped,
        |store: Store| async move {
            let library = quiet(store);
            let mut ids = Vec::new();
            for i in 0..20 {
                let added = library
                    .add(vec![NewDoc::public(format!("文档{i}"), doc_text(i))])
                    .await
                    .unwrap();
                ids.extend(added);
                library.maintain().await.unwrap();
                assert!(library.ready_runs().await.unwrap().len() <= MAX_RUNS);
            }
            for &id in &ids[..3] {
                assert!(library.remove(id).await.unwrap());
            }
            for (i, &id) in ids.iter().enumerate() {
                let expected: Vec<DocId> = if i < 3 { vec![] } else { vec![id] };
                assert_eq!(
                    found_docs(&library, &doc_text(i)).await,
                    expected,
                    "document {i}"
                );
            }
            // One merge of everything keeps exactly the live documents' postings.
            let runs = library.ready_runs().await.unwrap();
            library.merge_runs(&runs, "test").await.unwrap();
            assert_eq!(library.ready_runs().await.unwrap().len(), 1);
            let live: u64 = (3..20)
                .map(|i| fingerprints(&normalize(&doc_text(i)).chars, library.params).len() as u64)
                .sum();
            assert_eq!(ready_postings(&library).await, live);
            for (i, &id) in ids.iter().enumerate().skip(3) {
                assert_eq!(found_docs(&library, &doc_text(i)).await, vec![id]);
            }
        }
    );

    store_test!(a_stale_merge_changes_nothing, |store: Store| async move {
        let library = quiet(store.clone());
        for i in 0..3 {
            library
                .add(vec![NewDoc::public(format!("文档{i}"), doc_text(i))])
                .await
                .unwrap();
        }
        let runs = library.ready_runs().await.unwrap();
        library.merge_runs(&runs[..2], "first").await.unwrap();
        // A merger whose lease another took stops, and leaves nothing.
        assert!(library.merge_runs(&runs[..2], "second").await.is_err());
        // One holding the lease, with inputs merged meanwhile, writes nothing that stays.
        store
            .release_named_lease("library_merge", "first")
            .await
            .unwrap();
        library.merge_runs(&runs[..2], "second").await.unwrap();
        let after = library.ready_runs().await.unwrap();
        assert_eq!(after.len(), 2);
        let all: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM library_runs")
            .fetch_one(&store.pool)
            .await
            .unwrap();
        assert_eq!(all, 4, "two ready, two retired; the stale output is gone");
        // Runs retired long ago and a merge's leftovers are removed by the next merger.
        sqlx::query("UPDATE library_runs SET retired_at = 1 WHERE retired_at IS NOT NULL")
            .execute(&store.pool)
            .await
            .unwrap();
        sqlx::query(
            "INSERT INTO library_runs (bucket_bits, postings, created_at) VALUES (0, 0, 1)",
        )
        .execute(&store.pool)
        .await
        .unwrap();
        library.drop_old_runs().await.unwrap();
        let (runs, blocks): (i64, i64) = sqlx::query_as(
            "SELECT (SELECT COUNT(*) FROM library_runs), \
             (SELECT COUNT(*) FROM library_blocks WHERE block / 1099511627776 NOT IN (SELECT id FROM library_runs))",
        )
        .fetch_one(&store.pool)
        .await
        .unwrap();
        assert_eq!((runs, blocks), (2, 0));
        for i in 0..3 {
            assert_eq!(found_docs(&library, &doc_text(i)).await.len(), 1);
        }
    });

    store_test!(
        postings_are_rebuilt_from_the_texts,
        |store: Store| async move {
            let library = quiet(store.clone());
            let ids = library
                .add(
                    (0..4)
                        .map(|i| NewDoc::public(format!("文档{i}"), doc_text(i)))
                        .collect(),
                )
                .await
                .unwrap();
            library.remove(ids[0]).await.unwrap();
            // A database from before migration 0019: documents, no runs.
            for sql in ["DELETE FROM library_blocks", "DELETE FROM library_runs"] {
                sqlx::query(sql).execute(&store.pool).await.unwrap();
            }
            let reopened = quiet(store.clone());
            assert_eq!(
                found_docs(&reopened, &doc_text(0)).await,
                Vec::<DocId>::new()
            );
            for (i, &id) in ids.iter().enumerate().skip(1) {
                assert_eq!(found_docs(&reopened, &doc_text(i)).await, vec![id]);
            }
            let live: u64 = (1..4)
                .map(|i| fingerprints(&normalize(&doc_text(i)).chars, reopened.params).len() as u64)
                .sum();
            assert_eq!(ready_postings(&reopened).await, live);
        }
    );

    store_test!(
        other_students_copies_do_not_make_a_source_common,
        |store: Store| async move {
            let library = quiet(store);
            let source = library
                .add(vec![NewDoc::public("来源", doc_text(1))])
                .await
                .unwrap()[0];
            // Five other students checked papers copying the same source.
            for owner in 10..15 {
                let mut copy = NewDoc::public(format!("学生{owner}的论文"), doc_text(1));
                copy.scope = Scope::Private;
                copy.owner = Some(owner);
                library.add(vec![copy]).await.unwrap();
            }
            let chars = normalize(&doc_text(1)).chars;
            let hashes = simcheck::fingerprint::kgram_hashes(&chars, library.params.k);
            let filter = ScopeFilter { owner: Some(99) };
            let seeds = library.seeds(&hashes, filter, 3).await.unwrap();
            assert!(!seeds.is_empty());
            assert!(seeds.iter().all(|s| s.doc == source));
            // Their own copy is theirs to match, beside the source.
            let theirs = library
                .seeds(&hashes, ScopeFilter { owner: Some(10) }, 3)
                .await
                .unwrap();
            let mut docs: Vec<DocId> = theirs.iter().map(|s| s.doc).collect();
            docs.dedup();
            docs.sort_unstable();
            docs.dedup();
            assert_eq!(docs.len(), 2);
        }
    );
}
