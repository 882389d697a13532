//! The SQL library's runs of postings: writing one, merging the smallest when there are too
//! many, rebuilding them all from the documents' texts, and dropping those no check reads any
//! more. Several nodes share one database: merges and rebuilds take a named lease, renewed as
//! they go, and a run becomes visible only in the short transaction that makes it ready.

use crate::library::{SqlLibrary, backend};
use crate::postings::{
    MAX_RUN_ID, Posting, block_key, blocks, bucket_base, bucket_bits_for, bucket_of,
    bucket_of_block, decode_block,
};
use crate::{Store, now_ms};
use simcheck::fingerprint::fingerprints;
use simcheck::library::{DocId, LibraryError, LibraryResult};
use simcheck::normalize::normalize;
use sqlx::{Any, AnyConnection, Transaction};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};
use std::fmt::Write;
use std::time::Duration;

const BLOCKS_PER_INSERT: usize = 500;
/// Runs a check reads at most (between merges); more and the smallest are merged.
pub(crate) const MAX_RUNS: usize = 8;
/// How many runs a merge takes at least: each posting is rewritten about log4 of the library's
/// size in import batches.
const MERGE_FAN_IN: usize = 4;
/// How many of a run's blocks a merge reads at a time.
const MERGE_READ_BLOCKS: usize = 1_000;
const MERGE_LEASE: &str = "library_merge";
const REBUILD_LEASE: &str = "library_rebuild";
/// Merges and rebuilds renew their lease as they write; one whose node died frees it after this.
pub(crate) const LEASE_MS: i64 = 10 * 60 * 1000;
/// Retired runs are kept this long for checks that listed them before the merge finished.
const RETIRED_KEEP_MS: i64 = 10 * 60 * 1000;
const REBUILD_DOCS_PER_READ: i64 = 2_000;
/// A rebuild writes a run per this many postings (16 bytes each in memory while sorted).
const REBUILD_POSTINGS_PER_RUN: usize = 20_000_000;

/// A ready run: its id, bucket bits and postings.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Run {
    pub id: i64,
    pub bits: u32,
    pub postings: u64,
}

/// Who holds a lease: this process and a random number.
pub(crate) fn lease_holder() -> String {
    format!("{}-{:016x}", std::process::id(), rand::random::<u64>())
}

pub(crate) fn id_list(ids: impl IntoIterator<Item = u64>) -> String {
    let mut out = String::new();
    for (i, id) in ids.into_iter().enumerate() {
        let sep = if i == 0 { "" } else { "," };
        let _ = write!(out, "{sep}{}", id as i64);
    }
    out
}

/// The block keys of a run: from the first, up to (not including) the next run's first.
fn block_range(run: i64) -> (i64, i64) {
    (block_key(run, 0), block_key(run + 1, 0))
}

/// Refuses a run id its blocks cannot be keyed under (eight million imports and merges).
fn check_run_id(run: i64) -> LibraryResult<i64> {
    if (1..MAX_RUN_ID).contains(&run) {
        Ok(run)
    } else {
        Err(LibraryError::Backend(format!(
            "相似库的批次编号 {run} 超出范围"
        )))
    }
}

fn lease_lost() -> LibraryError {
    LibraryError::Backend("相似库维护的租约已失效（其他节点接手）".into())
}

/// Documents' fingerprints as postings (off the async runtime by the callers), sorted.
pub(crate) fn postings_of(
    docs: &[(DocId, bool, &str)],
    params: simcheck::FingerprintParams,
) -> Vec<Posting> {
    let mut postings: Vec<Posting> = docs
        .iter()
        .flat_map(|&(doc, public, text)| {
            fingerprints(&normalize(text).chars, params)
                .into_iter()
                .map(move |fp| Posting {
                    key: crate::postings::hash_key(fp.hash),
                    doc,
                    pos: fp.pos,
                    public,
                })
        })
        .collect();
    postings.sort_unstable();
    postings
}

/// Writes sorted postings as a new run (ready at `ready_at`, or not yet when `None`).
pub(crate) async fn write_run(
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
    .map_err(backend)
    .and_then(check_run_id)?;
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
    let mut sql = String::from("INSERT INTO library_blocks (block, entries) VALUES ");
    for (i, (bucket, _)) in pending.iter().enumerate() {
        let sep = if i == 0 { "" } else { "," };
        let _ = write!(sql, "{sep}({},${})", block_key(run, *bucket), i + 1);
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
    /// The last block read; `None` before the first page.
    last_block: Option<i64>,
    buffer: Vec<Posting>,
    at: usize,
    done: bool,
}

impl RunCursor {
    fn new(run: Run) -> Self {
        RunCursor {
            run,
            last_block: None,
            buffer: Vec::new(),
            at: 0,
            done: false,
        }
    }

    /// The next posting, reading the next page when this one is used up.
    async fn next(&mut self, store: &Store) -> LibraryResult<Option<Posting>> {
        while self.at >= self.buffer.len() && !self.done {
            let (from, to) = block_range(self.run.id);
            let rows: Vec<(i64, Vec<u8>)> = sqlx::query_as(
                "SELECT block, entries FROM library_blocks WHERE block >= $1 AND block < $2 \
                 ORDER BY block LIMIT $3",
            )
            .bind(self.last_block.map_or(from, |b| b + 1))
            .bind(to)
            .bind(MERGE_READ_BLOCKS as i64)
            .fetch_all(&store.pool)
            .await
            .map_err(backend)?;
            self.buffer.clear();
            self.at = 0;
            self.done = rows.len() < MERGE_READ_BLOCKS;
            for (block, entries) in rows {
                self.last_block = Some(block);
                let bucket = bucket_of_block(block);
                decode_block(
                    &entries,
                    bucket_base(bucket, self.run.bits),
                    self.run.bits,
                    &mut self.buffer,
                )?;
            }
        }
        let next = self.buffer.get(self.at).copied();
        self.at += 1;
        Ok(next)
    }
}

impl SqlLibrary {
    pub(crate) async fn ready_runs(&self) -> LibraryResult<Vec<Run>> {
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

    /// Postings in ready runs, and in runs retired or unfinished that await removal: the share
    /// of `index_bytes` a library keeps once retired runs are gone.
    pub async fn postings_on_disk(&self) -> LibraryResult<(u64, u64)> {
        let (live, waiting): (i64, i64) = sqlx::query_as(
            "SELECT CAST(COALESCE(SUM(CASE WHEN ready_at IS NOT NULL AND retired_at IS NULL \
             THEN postings ELSE 0 END), 0) AS BIGINT), \
             CAST(COALESCE(SUM(CASE WHEN ready_at IS NOT NULL AND retired_at IS NULL \
             THEN 0 ELSE postings END), 0) AS BIGINT) FROM library_runs",
        )
        .fetch_one(&self.store.pool)
        .await
        .map_err(backend)?;
        Ok((live.max(0) as u64, waiting.max(0) as u64))
    }

    /// Whether these runs all still exist (a check that read them read them whole).
    pub(crate) async fn runs_exist(&self, runs: &[Run]) -> LibraryResult<bool> {
        if runs.is_empty() {
            return Ok(true);
        }
        let n: i64 = sqlx::query_scalar(&format!(
            "SELECT COUNT(*) FROM library_runs WHERE id IN ({})",
            id_list(runs.iter().map(|r| r.id as u64))
        ))
        .fetch_one(&self.store.pool)
        .await
        .map_err(backend)?;
        Ok(n == runs.len() as i64)
    }

    async fn renew(&self, lease: &str, holder: &str) -> LibraryResult<()> {
        match self.store.take_named_lease(lease, holder, LEASE_MS).await {
            Ok(true) => Ok(()),
            Ok(false) => Err(lease_lost()),
            Err(e) => Err(backend(e)),
        }
    }

    /// Merges and clean-up after a change, off the caller's path: an import returns once its
    /// documents are in. Runs retired by the merge are dropped once no check can still be
    /// reading them.
    pub(crate) fn maintain_in_background(&self) {
        if !self.background {
            return;
        }
        let library = self.clone();
        tokio::spawn(async move {
            if let Err(e) = library.maintain().await {
                tracing::warn!(error = %e, "library runs not merged");
                return;
            }
            if library.has_retired_runs().await.unwrap_or(false) {
                tokio::time::sleep(Duration::from_millis(RETIRED_KEEP_MS as u64 + 1_000)).await;
                if let Err(e) = library.maintain().await {
                    tracing::warn!(error = %e, "retired library runs not dropped");
                }
            }
        });
    }

    async fn has_retired_runs(&self) -> LibraryResult<bool> {
        let n: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM library_runs WHERE retired_at IS NOT NULL OR ready_at IS NULL",
        )
        .fetch_one(&self.store.pool)
        .await
        .map_err(backend)?;
        Ok(n > 0)
    }

    /// Waits until no more than `MAX_RUNS` runs are ready, merging itself when no other node
    /// is: what a bulk import or the benchmark calls before it counts the library as built.
    pub async fn settle(&self) -> LibraryResult<()> {
        while self.ready_runs().await?.len() > MAX_RUNS {
            if !self.maintain().await? {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
        Ok(())
    }

    /// Merges the smallest runs (at least `MERGE_FAN_IN`) while more than `MAX_RUNS` are ready,
    /// and drops runs no check reads any more; one node at a time: `false` when another node
    /// holds the lease (and does it).
    pub async fn maintain(&self) -> LibraryResult<bool> {
        let due = self.ready_runs().await?.len() > MAX_RUNS || self.has_retired_runs().await?;
        if !due {
            return Ok(true);
        }
        let holder = lease_holder();
        let taken = self
            .store
            .take_named_lease(MERGE_LEASE, &holder, LEASE_MS)
            .await
            .map_err(backend)?;
        if !taken {
            return Ok(false);
        }
        let done = async {
            loop {
                // Also between merges: while imports keep coming, this holder keeps the lease
                // and nobody else would drop what its merges retired.
                self.drop_old_runs().await?;
                let mut runs = self.ready_runs().await?;
                if runs.len() <= MAX_RUNS {
                    return Ok(true);
                }
                runs.sort_by_key(|r| (r.postings, r.id));
                let take = (runs.len() - MAX_RUNS + 1).max(MERGE_FAN_IN);
                self.merge_runs(&runs[..take], &holder).await?;
            }
        }
        .await;
        let _ = self.store.release_named_lease(MERGE_LEASE, &holder).await;
        done
    }

    /// Removes runs retired a while ago, and runs left unready by a merger or rebuild whose
    /// lease has run out (its node died). Only the merge lease's holder calls this.
    pub(crate) async fn drop_old_runs(&self) -> LibraryResult<()> {
        let now = now_ms();
        let rebuilding: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM named_leases WHERE name = $1 AND until_ms >= $2",
        )
        .bind(REBUILD_LEASE)
        .bind(now)
        .fetch_one(&self.store.pool)
        .await
        .map_err(backend)?;
        let old: Vec<i64> = sqlx::query_scalar(
            "SELECT id FROM library_runs WHERE (retired_at IS NOT NULL AND retired_at < $1) \
             OR (ready_at IS NULL AND created_at < $2 AND $3 = 0)",
        )
        .bind(now - RETIRED_KEEP_MS)
        .bind(now - LEASE_MS)
        .bind(rebuilding)
        .fetch_all(&self.store.pool)
        .await
        .map_err(backend)?;
        for id in old {
            self.drop_run(id).await?;
        }
        Ok(())
    }

    pub(crate) async fn drop_run(&self, id: i64) -> LibraryResult<()> {
        let mut tx = self.store.pool.begin().await.map_err(backend)?;
        let (from, to) = block_range(id);
        sqlx::query("DELETE FROM library_blocks WHERE block >= $1 AND block < $2")
            .bind(from)
            .bind(to)
            .execute(&mut *tx)
            .await
            .map_err(backend)?;
        sqlx::query("DELETE FROM library_runs WHERE id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await
            .map_err(backend)?;
        tx.commit().await.map_err(backend)
    }

    /// Merges `inputs` into one new run, streaming them in key order and leaving out removed
    /// documents; the new run replaces them in one transaction, and only if none of them was
    /// merged meanwhile. A merge that fails leaves nothing behind.
    pub(crate) async fn merge_runs(&self, inputs: &[Run], holder: &str) -> LibraryResult<()> {
        let started = std::time::Instant::now();
        let bits = bucket_bits_for(inputs.iter().map(|r| r.postings).sum());
        let out: i64 = sqlx::query_scalar(
            "INSERT INTO library_runs (bucket_bits, postings, created_at) VALUES ($1, 0, $2) RETURNING id",
        )
        .bind(bits as i32)
        .bind(now_ms())
        .fetch_one(&self.store.pool)
        .await
        .map_err(backend)
        .and_then(check_run_id)?;
        let swapped = async {
            let written = self.write_merged(inputs, out, bits, holder).await?;
            self.renew(MERGE_LEASE, holder).await?;
            self.swap_in(inputs, out, written)
                .await
                .map(|s| (s, written))
        }
        .await;
        match swapped {
            Ok((true, written)) => {
                tracing::info!(
                    runs = inputs.len(),
                    postings = written,
                    seconds = started.elapsed().as_secs_f64(),
                    "library runs merged"
                );
                Ok(())
            }
            // Another merger (this one's lease ran out) got there first.
            Ok((false, _)) => self.drop_run(out).await,
            Err(e) => {
                let _ = self.drop_run(out).await;
                Err(e)
            }
        }
    }

    /// Retires `inputs` and makes `out` ready, in one transaction; `false` (and nothing changed)
    /// when an input is already retired or `out` is gone.
    async fn swap_in(&self, inputs: &[Run], out: i64, written: u64) -> LibraryResult<bool> {
        let now = now_ms();
        let mut tx = self.store.pool.begin().await.map_err(backend)?;
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
        if retired != inputs.len() as u64 || ready != 1 {
            return Ok(false);
        }
        tx.commit().await.map_err(backend)?;
        Ok(true)
    }

    /// Writes the merge of `inputs` as run `out`; returns how many postings it holds.
    async fn write_merged(
        &self,
        inputs: &[Run],
        out: i64,
        bits: u32,
        holder: &str,
    ) -> LibraryResult<u64> {
        // Removed documents among those the inputs could hold (ids only grow).
        let removed: HashSet<DocId> = sqlx::query_scalar::<_, i64>(
            "SELECT id FROM library_docs WHERE deleted_at IS NOT NULL",
        )
        .fetch_all(&self.store.pool)
        .await
        .map_err(backend)?
        .into_iter()
        .map(|id| id as u64)
        .collect();
        let mut cursors: Vec<RunCursor> = inputs.iter().map(|r| RunCursor::new(*r)).collect();
        // The smallest head of every input, and which input it came from.
        let mut heads: BinaryHeap<Reverse<(Posting, usize)>> = BinaryHeap::new();
        for (i, cursor) in cursors.iter_mut().enumerate() {
            if let Some(p) = cursor.next(&self.store).await? {
                heads.push(Reverse((p, i)));
            }
        }
        let mut conn = self.store.pool.acquire().await.map_err(backend)?;
        let mut block: Vec<Posting> = Vec::new();
        let mut pending: Vec<(u64, Vec<u8>)> = Vec::new();
        let mut written = 0u64;
        while let Some(Reverse((next, from))) = heads.pop() {
            if let Some(p) = cursors[from].next(&self.store).await? {
                heads.push(Reverse((p, from)));
            }
            if removed.contains(&next.doc) {
                continue;
            }
            if let Some(first) = block.first()
                && bucket_of(first.key, bits) != bucket_of(next.key, bits)
            {
                pending.extend(blocks(&block, bits));
                block.clear();
                if pending.len() >= BLOCKS_PER_INSERT {
                    write_blocks(&mut conn, out, &mut pending).await?;
                    self.renew(MERGE_LEASE, holder).await?;
                }
            }
            block.push(next);
            written += 1;
        }
        pending.extend(blocks(&block, bits));
        write_blocks(&mut conn, out, &mut pending).await?;
        Ok(written)
    }

    /// Whether documents exist and no ready run does: a database whose postings were kept a
    /// row each (before migration 0019), or whose rebuild has not finished.
    pub(crate) async fn needs_rebuild(&self) -> LibraryResult<bool> {
        let (runs, docs): (i64, i64) = sqlx::query_as(
            "SELECT (SELECT COUNT(*) FROM library_runs WHERE ready_at IS NOT NULL), \
             (SELECT COUNT(*) FROM (SELECT 1 FROM library_docs WHERE deleted_at IS NULL LIMIT 1) d)",
        )
        .fetch_one(&self.store.pool)
        .await
        .map_err(backend)?;
        Ok(runs == 0 && docs > 0)
    }

    /// Builds the postings from the documents' texts when they need it, or waits for the node
    /// that is doing it: no check runs on half an index.
    pub(crate) async fn rebuild_if_needed(&self) -> LibraryResult<()> {
        let holder = lease_holder();
        loop {
            if !self.needs_rebuild().await? {
                return Ok(());
            }
            let taken = self
                .store
                .take_named_lease(REBUILD_LEASE, &holder, LEASE_MS)
                .await
                .map_err(backend)?;
            if taken {
                let built = self.rebuild(&holder).await;
                let _ = self.store.release_named_lease(REBUILD_LEASE, &holder).await;
                built?;
                self.maintain_in_background();
                return Ok(());
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }

    /// Every live document's postings written again from its text: runs written unready, each
    /// in a short transaction of its own, then made ready together.
    async fn rebuild(&self, holder: &str) -> LibraryResult<()> {
        let started = std::time::Instant::now();
        let mut written: Vec<i64> = Vec::new();
        let built = async {
            if !self.needs_rebuild().await? {
                return Ok(false);
            }
            let mut after = 0i64;
            let mut docs = 0usize;
            let mut pending: Vec<Posting> = Vec::new();
            loop {
                let rows: Vec<(i64, String, String)> = sqlx::query_as(
                    "SELECT id, scope, body FROM library_docs WHERE deleted_at IS NULL AND id > $1 \
                     ORDER BY id LIMIT $2",
                )
                .bind(after)
                .bind(REBUILD_DOCS_PER_READ)
                .fetch_all(&self.store.pool)
                .await
                .map_err(backend)?;
                let Some(&(last, _, _)) = rows.last() else {
                    break;
                };
                after = last;
                docs += rows.len();
                let params = self.params;
                let batch = tokio::task::spawn_blocking(move || {
                    let docs: Vec<(DocId, bool, &str)> = rows
                        .iter()
                        .map(|(id, scope, body)| (*id as u64, scope == "public", body.as_str()))
                        .collect();
                    postings_of(&docs, params)
                })
                .await
                .map_err(backend)?;
                pending.extend(batch);
                if pending.len() >= REBUILD_POSTINGS_PER_RUN {
                    written.push(self.write_unready(std::mem::take(&mut pending)).await?);
                    self.renew(REBUILD_LEASE, holder).await?;
                }
            }
            written.push(self.write_unready(pending).await?);
            self.renew(REBUILD_LEASE, holder).await?;
            let mut tx = self.store.pool.begin().await.map_err(backend)?;
            let ready = sqlx::query(&format!(
                "UPDATE library_runs SET ready_at = $1 WHERE ready_at IS NULL AND id IN ({}) \
                 AND NOT EXISTS (SELECT 1 FROM library_runs WHERE ready_at IS NOT NULL)",
                id_list(written.iter().map(|&id| id as u64))
            ))
            .bind(now_ms())
            .execute(&mut *tx)
            .await
            .map_err(backend)?
            .rows_affected();
            if ready != written.len() as u64 {
                return Ok(false);
            }
            tx.commit().await.map_err(backend)?;
            tracing::info!(
                docs,
                runs = written.len(),
                seconds = started.elapsed().as_secs_f64(),
                "library postings rebuilt from the documents"
            );
            Ok(true)
        }
        .await;
        if !matches!(built, Ok(true)) {
            for &run in &written {
                let _ = self.drop_run(run).await;
            }
        }
        built.map(|_| ())
    }

    /// Sorts `postings` off the async runtime and writes them as an unready run.
    async fn write_unready(&self, postings: Vec<Posting>) -> LibraryResult<i64> {
        let sorted = tokio::task::spawn_blocking(move || {
            let mut postings = postings;
            postings.sort_unstable();
            postings
        })
        .await
        .map_err(backend)?;
        let mut tx = self.store.pool.begin().await.map_err(backend)?;
        let run = write_run(&mut tx, &sorted, None).await?;
        tx.commit().await.map_err(backend)?;
        Ok(run)
    }
}
