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

use crate::postings::{
    Posting, blocks, bucket_base, bucket_bits_for, bucket_of, decode_block, hash_key,
};
use crate::{Store, now_ms};
use futures_util::{StreamExt, TryStreamExt};
use simcheck::fingerprint::{FingerprintParams, fingerprints};
use simcheck::library::{
    DocId, DocMeta, Library, LibraryError, LibraryResult, NewDoc, Scope, ScopeFilter, Seed,
};
use simcheck::normalize::{count_chars, normalize};
use sqlx::any::AnyRow;
use sqlx::{Any, AnyConnection, Row, Transaction};
use std::collections::{HashMap, HashSet};
use std::fmt::Write;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::OnceCell;

const BLOCKS_PER_INSERT: usize = 500;
const BUCKETS_PER_QUERY: usize = 4_000;
const DOCS_PER_QUERY: usize = 1_000;
/// Runs a check reads at most (between merges); more and the smallest are merged.
const MAX_RUNS: usize = 8;
/// How many runs a merge takes at least: each posting is rewritten about log4 of the library's
/// size in import batches.
const MERGE_FAN_IN: usize = 4;
/// How many of a run's blocks a merge reads at a time.
const MERGE_READ_BLOCKS: usize = 1_000;
const MERGE_LEASE: &str = "library_merge";
const MERGE_LEASE_MS: i64 = 30 * 60 * 1000;
/// Retired runs are kept this long for checks that listed them before the merge finished.
const RETIRED_KEEP_MS: i64 = 10 * 60 * 1000;
const REBUILD_LEASE: &str = "library_rebuild";
const REBUILD_DOCS_PER_RUN: usize = 5_000;
/// A hash with more raw postings than this many times the caller's cap is too common to look
/// its documents up (only removed and other students' private documents could bring it under).
const RAW_POSTINGS_FACTOR: usize = 2;

#[derive(Clone)]
pub struct SqlLibrary {
    store: Store,
    params: FingerprintParams,
    /// Set once this process has seen postings exist for the documents (or built them).
    indexed: Arc<OnceCell<()>>,
}

/// A ready run: its id, bucket bits and postings.
#[derive(Debug, Clone, Copy)]
struct Run {
    id: i64,
    bits: u32,
    postings: u64,
}

/// Who holds a lease: this process and a random number.
fn lease_holder() -> String {
    format!("{}-{:016x}", std::process::id(), rand::random::<u64>())
}

fn id_list(ids: impl IntoIterator<Item = u64>) -> String {
    let mut out = String::new();
    for (i, id) in ids.into_iter().enumerate() {
        let sep = if i == 0 { "" } else { "," };
        let _ = write!(out, "{sep}{}", id as i64);
    }
    out
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
        SqlLibrary {
            store,
            params,
            indexed: Arc::new(OnceCell::new()),
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
    /// (moving another library in) are kept.
    async fn insert(&self, docs: Vec<(Option<(DocId, i64)>, NewDoc)>) -> LibraryResult<Vec<DocId>> {
        self.ensure_indexed().await?;
        let params = self.params;
        // Fingerprinting thousands of documents takes seconds: off the async runtime.
        let (docs, prints) = tokio::task::spawn_blocking(move || {
            let prints: Vec<_> = docs
                .iter()
                .map(|(_, d)| fingerprints(&normalize(&d.text).chars, params))
                .collect();
            (docs, prints)
        })
        .await
        .map_err(backend)?;
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
        let postings = sorted_postings(ids.clone(), prints).await?;
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
        // The documents are in; a merge that fails is tried again after the next import.
        if let Err(e) = self.merge_if_due().await {
            tracing::warn!(error = %e, "library runs not merged");
        }
        self.analyze_after_growth().await;
        Ok(ids)
    }

    /// Builds the postings from the documents' texts when documents exist and no run does: a
    /// database whose postings were kept a row each (before migration 0019). Once per process;
    /// another node doing it is waited for, so no check runs on half an index.
    async fn ensure_indexed(&self) -> LibraryResult<()> {
        self.indexed
            .get_or_try_init(|| async {
                let holder = lease_holder();
                loop {
                    if !self.needs_rebuild().await? {
                        return Ok(());
                    }
                    let taken = self
                        .store
                        .take_named_lease(REBUILD_LEASE, &holder, MERGE_LEASE_MS)
                        .await
                        .map_err(backend)?;
                    if taken {
                        let built = self.rebuild().await;
                        let _ = self.store.release_named_lease(REBUILD_LEASE, &holder).await;
                        return built;
                    }
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            })
            .await
            .map(|_| ())
    }

    async fn needs_rebuild(&self) -> LibraryResult<bool> {
        let (runs, docs): (i64, i64) = sqlx::query_as(
            "SELECT (SELECT COUNT(*) FROM library_runs), \
             (SELECT COUNT(*) FROM (SELECT 1 FROM library_docs WHERE deleted_at IS NULL LIMIT 1) d)",
        )
        .fetch_one(&self.store.pool)
        .await
        .map_err(backend)?;
        Ok(runs == 0 && docs > 0)
    }

    /// Every live document's postings written again from its text, in one transaction.
    async fn rebuild(&self) -> LibraryResult<()> {
        let started = std::time::Instant::now();
        let mut tx = self.store.pool.begin().await.map_err(backend)?;
        let mut after = 0i64;
        let mut docs = 0usize;
        loop {
            let rows: Vec<(i64, String)> = sqlx::query_as(
                "SELECT id, body FROM library_docs WHERE deleted_at IS NULL AND id > $1 \
                 ORDER BY id LIMIT $2",
            )
            .bind(after)
            .bind(REBUILD_DOCS_PER_RUN as i64)
            .fetch_all(&mut *tx)
            .await
            .map_err(backend)?;
            let Some(&(last, _)) = rows.last() else { break };
            after = last;
            docs += rows.len();
            let params = self.params;
            let (ids, prints) = tokio::task::spawn_blocking(move || {
                let ids: Vec<DocId> = rows.iter().map(|(id, _)| *id as u64).collect();
                let prints = rows
                    .iter()
                    .map(|(_, body)| fingerprints(&normalize(body).chars, params))
                    .collect();
                (ids, prints)
            })
            .await
            .map_err(backend)?;
            let postings = sorted_postings(ids, prints).await?;
            write_run(&mut tx, &postings, Some(now_ms())).await?;
        }
        tx.commit().await.map_err(backend)?;
        tracing::info!(
            docs,
            seconds = started.elapsed().as_secs_f64(),
            "library postings rebuilt from the documents"
        );
        if let Err(e) = self.merge_if_due().await {
            tracing::warn!(error = %e, "library runs not merged");
        }
        Ok(())
    }

    async fn ready_runs(&self) -> LibraryResult<Vec<Run>> {
        let rows: Vec<(i64, i64, i64)> = sqlx::query_as(
            "SELECT id, CAST(bucket_bits AS BIGINT), postings FROM library_runs \
             WHERE ready_at IS NOT NULL AND retired_at IS NULL ORDER BY id",
        )
        .fetch_all(&self.store.pool)
        .await
        .map_err(backend)?;
        Ok(rows
            .into_iter()
            .map(|(id, bits, postings)| Run {
                id,
                bits: bits.clamp(0, 40) as u32,
                postings: postings.max(0) as u64,
            })
            .collect())
    }

    /// When more than `MAX_RUNS` runs are ready, merges the smallest (at least `MERGE_FAN_IN`)
    /// until they are not; one node at a time (a lease), others go on.
    async fn merge_if_due(&self) -> LibraryResult<()> {
        if self.ready_runs().await?.len() <= MAX_RUNS {
            return Ok(());
        }
        let holder = lease_holder();
        let taken = self
            .store
            .take_named_lease(MERGE_LEASE, &holder, MERGE_LEASE_MS)
            .await
            .map_err(backend)?;
        if !taken {
            return Ok(());
        }
        let merged = async {
            self.drop_old_runs().await?;
            loop {
                let mut runs = self.ready_runs().await?;
                if runs.len() <= MAX_RUNS {
                    return Ok(());
                }
                runs.sort_by_key(|r| (r.postings, r.id));
                let take = (runs.len() - MAX_RUNS + 1).max(MERGE_FAN_IN);
                self.merge_runs(&runs[..take], &holder).await?;
            }
        }
        .await;
        let _ = self.store.release_named_lease(MERGE_LEASE, &holder).await;
        merged
    }

    /// Removes runs retired a while ago and runs a merger left unfinished (it died, or its lease
    /// ran out): only the lease holder calls this.
    async fn drop_old_runs(&self) -> LibraryResult<()> {
        let now = now_ms();
        let old: Vec<i64> = sqlx::query_scalar(
            "SELECT id FROM library_runs WHERE (retired_at IS NOT NULL AND retired_at < $1) \
             OR (ready_at IS NULL AND created_at < $2)",
        )
        .bind(now - RETIRED_KEEP_MS)
        .bind(now - MERGE_LEASE_MS)
        .fetch_all(&self.store.pool)
        .await
        .map_err(backend)?;
        for id in old {
            self.drop_run(id).await?;
        }
        Ok(())
    }

    async fn drop_run(&self, id: i64) -> LibraryResult<()> {
        let mut tx = self.store.pool.begin().await.map_err(backend)?;
        for sql in [
            "DELETE FROM library_blocks WHERE run_id = $1",
            "DELETE FROM library_runs WHERE id = $1",
        ] {
            sqlx::query(sql)
                .bind(id)
                .execute(&mut *tx)
                .await
                .map_err(backend)?;
        }
        tx.commit().await.map_err(backend)
    }

    /// Merges `inputs` into one new run, streaming them in key order and leaving out removed
    /// documents; the new run replaces them in one transaction, and only if none of them was
    /// merged meanwhile.
    async fn merge_runs(&self, inputs: &[Run], holder: &str) -> LibraryResult<()> {
        let started = std::time::Instant::now();
        let removed: HashSet<DocId> = sqlx::query_scalar::<_, i64>(
            "SELECT id FROM library_docs WHERE deleted_at IS NOT NULL",
        )
        .fetch_all(&self.store.pool)
        .await
        .map_err(backend)?
        .into_iter()
        .map(|id| id as u64)
        .collect();
        let bits = bucket_bits_for(inputs.iter().map(|r| r.postings).sum());
        let out: i64 = sqlx::query_scalar(
            "INSERT INTO library_runs (bucket_bits, postings, created_at) VALUES ($1, 0, $2) RETURNING id",
        )
        .bind(bits as i32)
        .bind(now_ms())
        .fetch_one(&self.store.pool)
        .await
        .map_err(backend)?;
        let written = match self.write_merged(inputs, &removed, out, bits, holder).await {
            Ok(written) => written,
            Err(e) => {
                let _ = self.drop_run(out).await;
                return Err(e);
            }
        };
        let now = now_ms();
        let mut tx = self.store.pool.begin().await.map_err(backend)?;
        let retired = sqlx::query(&format!(
            "UPDATE library_runs SET retired_at = $1 WHERE id IN ({}) \
             AND ready_at IS NOT NULL AND retired_at IS NULL",
            id_list(inputs.iter().map(|r| r.id as u64))
        ))
        .bind(now)
        .execute(&mut *tx)
        .await
        .map_err(backend)?
        .rows_affected();
        let ready = sqlx::query(
            "UPDATE library_runs SET ready_at = $1, postings = $2 WHERE id = $3 AND ready_at IS NULL",
        )
        .bind(now)
        .bind(written as i64)
        .bind(out)
        .execute(&mut *tx)
        .await
        .map_err(backend)?
        .rows_affected();
        if retired != inputs.len() as u64 || ready != 1 {
            // Another merger (this one's lease ran out) got there first.
            drop(tx);
            let _ = self.drop_run(out).await;
            return Ok(());
        }
        tx.commit().await.map_err(backend)?;
        tracing::info!(
            runs = inputs.len(),
            postings = written,
            seconds = started.elapsed().as_secs_f64(),
            "library runs merged"
        );
        Ok(())
    }

    /// Writes the merge of `inputs` as run `out`; returns how many postings it holds.
    async fn write_merged(
        &self,
        inputs: &[Run],
        removed: &HashSet<DocId>,
        out: i64,
        bits: u32,
        holder: &str,
    ) -> LibraryResult<u64> {
        let mut cursors: Vec<RunCursor> = inputs.iter().map(|r| RunCursor::new(*r)).collect();
        let mut conn = self.store.pool.acquire().await.map_err(backend)?;
        let mut block: Vec<Posting> = Vec::new();
        let mut pending: Vec<(u64, Vec<u8>)> = Vec::new();
        let mut written = 0u64;
        loop {
            for cursor in cursors.iter_mut() {
                cursor.fill(&self.store).await?;
            }
            let Some((next, from)) = cursors
                .iter()
                .enumerate()
                .filter_map(|(i, c)| c.head().map(|p| (p, i)))
                .min()
            else {
                break;
            };
            cursors[from].at += 1;
            if removed.contains(&next.doc) {
                continue;
            }
            let bucket = bucket_of(next.key, bits);
            if let Some(first) = block.first()
                && bucket_of(first.key, bits) != bucket
            {
                pending.extend(blocks(&block, bits));
                block.clear();
                if pending.len() >= BLOCKS_PER_INSERT {
                    write_blocks(&mut conn, out, &mut pending).await?;
                    // A long merge keeps its lease.
                    self.store
                        .take_named_lease(MERGE_LEASE, holder, MERGE_LEASE_MS)
                        .await
                        .map_err(backend)?;
                }
            }
            block.push(next);
            written += 1;
        }
        pending.extend(blocks(&block, bits));
        write_blocks(&mut conn, out, &mut pending).await?;
        Ok(written)
    }

    /// The postings of `hashes`' keys in every ready run (live or not, any scope).
    async fn raw_postings(&self, hashes: &[u64]) -> LibraryResult<Vec<Posting>> {
        self.ensure_indexed().await?;
        let mut keys: Vec<u64> = hashes.iter().map(|&h| hash_key(h)).collect();
        keys.sort_unstable();
        keys.dedup();
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let runs = self.ready_runs().await?;
        // A few runs at a time, each on a connection of its own.
        let found: Vec<Vec<Posting>> = futures_util::stream::iter(runs)
            .map(|run| self.run_postings(run, &keys))
            .buffer_unordered(4)
            .try_collect()
            .await?;
        Ok(found.into_iter().flatten().collect())
    }

    /// The postings of `keys` (sorted, distinct) in one run.
    async fn run_postings(&self, run: Run, keys: &[u64]) -> LibraryResult<Vec<Posting>> {
        let mut buckets: Vec<u64> = keys.iter().map(|&k| bucket_of(k, run.bits)).collect();
        buckets.dedup();
        let mut found = Vec::new();
        let mut decoded = Vec::new();
        for chunk in buckets.chunks(BUCKETS_PER_QUERY) {
            let rows: Vec<(i64, Vec<u8>)> = sqlx::query_as(&format!(
                "SELECT bucket, entries FROM library_blocks WHERE run_id = {} AND bucket IN ({})",
                run.id,
                id_list(chunk.iter().copied())
            ))
            .persistent(false)
            .fetch_all(&self.store.pool)
            .await
            .map_err(backend)?;
            for (bucket, entries) in rows {
                let bucket = bucket as u64;
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
                found.extend(
                    decoded
                        .iter()
                        .filter(|p| wanted.binary_search(&p.key).is_ok()),
                );
            }
        }
        Ok(found)
    }

    /// The postings of `hashes`' keys whose documents are live and admitted by `admits`, by key;
    /// and apart, the keys whose raw postings (any document) are `too_common`, not looked up.
    async fn live_postings(
        &self,
        hashes: &[u64],
        too_common: impl Fn(&[(DocId, u32)]) -> bool,
        admits: impl Fn(Scope, Option<i64>) -> bool,
    ) -> LibraryResult<(HashMap<u64, Vec<(DocId, u32)>>, HashSet<u64>)> {
        let mut by_key: HashMap<u64, Vec<(DocId, u32)>> = HashMap::new();
        for p in self.raw_postings(hashes).await? {
            by_key.entry(p.key).or_default().push((p.doc, p.pos));
        }
        let mut left_out = HashSet::new();
        by_key.retain(|&key, hits| {
            let keep = !too_common(hits);
            if !keep {
                left_out.insert(key);
            }
            keep
        });
        let mut docs: Vec<DocId> = by_key.values().flatten().map(|&(doc, _)| doc).collect();
        docs.sort_unstable();
        docs.dedup();
        let mut admitted: HashSet<DocId> = HashSet::new();
        for chunk in docs.chunks(DOCS_PER_QUERY) {
            let rows: Vec<(i64, String, Option<i64>)> = sqlx::query_as(&format!(
                "SELECT id, scope, owner FROM library_docs WHERE deleted_at IS NULL AND id IN ({})",
                id_list(chunk.iter().copied())
            ))
            .persistent(false)
            .fetch_all(&self.store.pool)
            .await
            .map_err(backend)?;
            admitted.extend(
                rows.into_iter()
                    .filter(|(_, scope, owner)| admits(scope_from(scope), *owner))
                    .map(|(id, _, _)| id as u64),
            );
        }
        for hits in by_key.values_mut() {
            hits.retain(|(doc, _)| admitted.contains(doc));
        }
        Ok((by_key, left_out))
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
            && let Err(e) = sqlx::query("ANALYZE library_docs, library_blocks")
                .execute(&self.store.pool)
                .await
        {
            tracing::warn!(error = %e, "library not analysed");
        }
    }
}

/// The batch's postings sorted by key, document and position (off the async runtime).
async fn sorted_postings(
    ids: Vec<DocId>,
    prints: Vec<Vec<simcheck::fingerprint::Fingerprint>>,
) -> LibraryResult<Vec<Posting>> {
    tokio::task::spawn_blocking(move || {
        let mut postings: Vec<Posting> = ids
            .iter()
            .zip(&prints)
            .flat_map(|(&doc, prints)| {
                prints.iter().map(move |fp| Posting {
                    key: hash_key(fp.hash),
                    doc,
                    pos: fp.pos,
                })
            })
            .collect();
        postings.sort_unstable();
        postings
    })
    .await
    .map_err(backend)
}

/// Writes sorted postings as a new run (ready at `ready_at`, or not yet when `None`).
async fn write_run(
    tx: &mut Transaction<'_, Any>,
    postings: &[Posting],
    ready_at: Option<i64>,
) -> LibraryResult<i64> {
    let bits = bucket_bits_for(postings.len() as u64);
    let run: i64 = sqlx::query_scalar(
        "INSERT INTO library_runs (bucket_bits, postings, created_at, ready_at) \
         VALUES ($1, $2, $3, $4) RETURNING id",
    )
    .bind(bits as i32)
    .bind(postings.len() as i64)
    .bind(now_ms())
    .bind(ready_at)
    .fetch_one(&mut **tx)
    .await
    .map_err(backend)?;
    let mut pending = Vec::with_capacity(BLOCKS_PER_INSERT);
    for block in blocks(postings, bits) {
        pending.push(block);
        if pending.len() >= BLOCKS_PER_INSERT {
            write_blocks(tx, run, &mut pending).await?;
        }
    }
    write_blocks(tx, run, &mut pending).await?;
    Ok(run)
}

/// Inserts `pending` blocks of `run` in one statement and empties it.
async fn write_blocks(
    conn: &mut AnyConnection,
    run: i64,
    pending: &mut Vec<(u64, Vec<u8>)>,
) -> LibraryResult<()> {
    if pending.is_empty() {
        return Ok(());
    }
    let mut sql = String::from("INSERT INTO library_blocks (run_id, bucket, entries) VALUES ");
    for (i, (bucket, _)) in pending.iter().enumerate() {
        let sep = if i == 0 { "" } else { "," };
        let _ = write!(sql, "{sep}({run},{},${})", *bucket as i64, i + 1);
    }
    let mut query = sqlx::query(&sql).persistent(false);
    for (_, entries) in pending.drain(..) {
        query = query.bind(entries);
    }
    query.execute(&mut *conn).await.map_err(backend)?;
    Ok(())
}

/// A merge's reading position in one run: blocks read a page at a time, in bucket order,
/// which is key order.
struct RunCursor {
    run: Run,
    /// The last bucket read; `None` before the first page.
    last_bucket: Option<i64>,
    buffer: Vec<Posting>,
    at: usize,
    done: bool,
}

impl RunCursor {
    fn new(run: Run) -> Self {
        RunCursor {
            run,
            last_bucket: None,
            buffer: Vec::new(),
            at: 0,
            done: false,
        }
    }

    fn head(&self) -> Option<Posting> {
        self.buffer.get(self.at).copied()
    }

    /// Reads the next page when this one is used up.
    async fn fill(&mut self, store: &Store) -> LibraryResult<()> {
        while self.at >= self.buffer.len() && !self.done {
            let rows: Vec<(i64, Vec<u8>)> = sqlx::query_as(
                "SELECT bucket, entries FROM library_blocks WHERE run_id = $1 AND bucket > $2 \
                 ORDER BY bucket LIMIT $3",
            )
            .bind(self.run.id)
            .bind(self.last_bucket.unwrap_or(-1))
            .bind(MERGE_READ_BLOCKS as i64)
            .fetch_all(&store.pool)
            .await
            .map_err(backend)?;
            self.buffer.clear();
            self.at = 0;
            self.done = rows.len() < MERGE_READ_BLOCKS;
            for (bucket, entries) in rows {
                self.last_bucket = Some(bucket);
                let bucket = bucket as u64;
                decode_block(
                    &entries,
                    bucket_base(bucket, self.run.bits),
                    self.run.bits,
                    &mut self.buffer,
                )?;
            }
        }
        Ok(())
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

    /// Marks the document removed: checks stop finding it at once, and its postings go at the
    /// next merge of their run.
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
        let max_raw = (cap as usize).saturating_mul(RAW_POSTINGS_FACTOR);
        let raw_docs_over = |hits: &[(DocId, u32)]| {
            let docs: HashSet<DocId> = hits.iter().map(|&(doc, _)| doc).collect();
            docs.len() > max_raw
        };
        let (live, too_common) = self
            .live_postings(hashes, raw_docs_over, |scope, _| scope == Scope::Public)
            .await?;
        let mut docs: HashSet<DocId> = HashSet::new();
        Ok(hashes
            .iter()
            .map(|&h| match live.get(&hash_key(h)) {
                Some(hits) => {
                    docs.clear();
                    docs.extend(hits.iter().map(|&(doc, _)| doc));
                    (docs.len() as u32).min(cap)
                }
                // Too common to look up: as common as the cap says.
                None if too_common.contains(&hash_key(h)) => cap,
                None => 0,
            })
            .collect())
    }

    async fn seeds(
        &self,
        query_hashes: &[u64],
        filter: ScopeFilter,
        max_postings_per_hash: usize,
    ) -> LibraryResult<Vec<Seed>> {
        let max_raw = max_postings_per_hash.saturating_mul(RAW_POSTINGS_FACTOR);
        let (live, _too_common) = self
            .live_postings(
                query_hashes,
                |hits| hits.len() > max_raw,
                |scope, owner| filter.admits(scope, owner),
            )
            .await?;
        let mut seeds = Vec::new();
        for (query_pos, &hash) in query_hashes.iter().enumerate() {
            let Some(hits) = live.get(&hash_key(hash)) else {
                continue;
            };
            if hits.len() > max_postings_per_hash {
                continue;
            }
            seeds.extend(hits.iter().map(|&(doc, source_pos)| Seed {
                doc,
                source_pos,
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
    use crate::store_test;

    /// 300 characters of CJK drawn from a generator seeded by `i`: no two texts share k-grams.
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
            let library = SqlLibrary::new(store, FingerprintParams::default());
            let mut ids = Vec::new();
            for i in 0..20 {
                let added = library
                    .add(vec![NewDoc::public(format!("文档{i}"), doc_text(i))])
                    .await
                    .unwrap();
                ids.extend(added);
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
        let library = SqlLibrary::new(store.clone(), FingerprintParams::default());
        for i in 0..3 {
            library
                .add(vec![NewDoc::public(format!("文档{i}"), doc_text(i))])
                .await
                .unwrap();
        }
        let runs = library.ready_runs().await.unwrap();
        library.merge_runs(&runs[..2], "first").await.unwrap();
        // A second merger with the same (now retired) inputs writes nothing that stays.
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
             (SELECT COUNT(*) FROM library_blocks WHERE run_id NOT IN (SELECT id FROM library_runs))",
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
            let library = SqlLibrary::new(store.clone(), FingerprintParams::default());
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
            let reopened = SqlLibrary::new(store.clone(), FingerprintParams::default());
            assert_eq!(
                found_docs(&reopened, &doc_text(0)).await,
                Vec::<DocId>::new()
            );
            for i in 1..4 {
                assert_eq!(found_docs(&reopened, &doc_text(i)).await, vec![ids[i]]);
            }
            let live: u64 = (1..4)
                .map(|i| fingerprints(&normalize(&doc_text(i)).chars, reopened.params).len() as u64)
                .sum();
            assert_eq!(ready_postings(&reopened).await, live);
        }
    );
}
