//! The sentence index shared by every node of a multi-machine deployment.
//!
//! Each node searches its own copy of the index file (`<library_dir>/sentences`, memory and
//! disk local, as fast as on one machine); the copy every node follows is published in the
//! deployment's shared file store (`files_backend` = `database` or `s3`) as a manifest and the
//! file cut into parts:
//!
//! - `library/sentences/manifest.json` — version, size, SHA-256 and number of parts;
//! - `library/sentences/v<version>/part-<n>` — 32 MiB each (a PostgreSQL value holds at most
//!   1 GiB, and no node ever holds more than a part in memory).
//!
//! A change (import, removal, `wenjian corpus index`) embeds its documents first, then takes
//! the `sentence-index` lease in the database, so changes from different nodes never overlap;
//! fetches the newest published copy; makes the change on it; publishes the result as the next
//! version, in a folder of its own, and writes the manifest only if it still holds the lease; and
//! gives the lease back. Before every sentence search a node reads the manifest and fetches the
//! published copy when it differs from its own (a failed fetch leaves the search on the local
//! copy). The version before the newest is kept for nodes still fetching it.
//!
//! The first publication indexes every library document the local copy lacks, so it is whole
//! whichever node makes it; a publication that fails is repaired the same way at the next change.
//! Sharing needs PostgreSQL (several machines); an embedded SQLite deployment is one machine and
//! keeps its own copy. Every change republishes the whole file — imports are operator batches;
//! one process per host should change the library at a time.

use crate::Config;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use simcheck::library::{
    DocId, DocMeta, Library, LibraryError, LibraryResult, NewDoc, ScopeFilter, Seed, SentenceHit,
};
use simcheck::{FingerprintParams, SemanticLibrary, SentenceIndex};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const ROOT: &str = "library/sentences";
const PART_BYTES: usize = 32 << 20;
const LEASE: &str = "sentence-index";
/// A change holds the lease this long past its last renewal (renewed every third of it), so a
/// node killed mid-change blocks the others for at most this long. Generous, because a busy
/// runtime may renew late; the manifest is written only after the lease is confirmed.
const LEASE_TTL: Duration = Duration::from_secs(600);
/// How long a change waits for another node's to finish.
const LEASE_WAIT: Duration = Duration::from_secs(30 * 60);

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Manifest {
    /// Chosen at the first publication and kept: a store emptied or changed starts another
    /// lineage, whose version 1 is not mistaken for an old version of the first.
    lineage: String,
    version: u64,
    /// The folder of this version's parts (`v<version>-<nonce>`: two publishers that both
    /// believe they hold the lease never write into each other's parts).
    folder: String,
    bytes: u64,
    parts: u32,
    sha256: String,
}

impl Manifest {
    /// What the local copy records of the version it holds.
    fn stamp(&self) -> String {
        format!("{} {} {}", self.lineage, self.version, self.sha256)
    }
}

/// Distinct across processes on one host and across calls in one (the clock's nanoseconds).
fn unique_suffix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

fn part_key(folder: &str, part: u32) -> String {
    format!("{ROOT}/{folder}/part-{part:05}")
}

fn manifest_key() -> String {
    format!("{ROOT}/manifest.json")
}

fn shared_error(e: impl std::fmt::Display) -> LibraryError {
    LibraryError::Backend(format!("共享句向量索引：{e}"))
}

/// A library with its sentence index, published to and followed from the shared file store when
/// the deployment has several nodes (see the module comment); otherwise `SemanticLibrary` alone.
pub struct SharedSentences<L> {
    library: SemanticLibrary<L>,
    sharing: Option<Sharing>,
}

struct Sharing {
    files: store::FileStore,
    store: store::Store,
    /// The stamp of the version the local copy holds (`<dir>/shared-version`).
    version_file: PathBuf,
    /// This process's name for its leases (a counter is added per change).
    holder: String,
    changes_made: std::sync::atomic::AtomicU64,
    /// One fetch at a time in this process.
    fetching: tokio::sync::Mutex<()>,
    /// One change at a time in this process (its handlers share this library).
    changing: tokio::sync::Mutex<()>,
    /// A change whose publication failed: the next change indexes what the copy lacks.
    unpublished: std::sync::atomic::AtomicBool,
}

impl<L: Library> SharedSentences<L> {
    /// Shares the index when the library is in the database and files are in a store every
    /// node reaches (`files_backend` = `database` or `s3`).
    pub fn new(config: &Config, store: Option<&store::Store>, library: SemanticLibrary<L>) -> Self {
        let sharing = match store {
            Some(store)
                if config.library_backend == "database"
                    && config.files_backend != "folder"
                    && store.backend() == store::Backend::Postgres
                    && library.sentence_index().is_some() =>
            {
                Some(Sharing {
                    files: config.file_store(store),
                    store: store.clone(),
                    version_file: config
                        .library_dir()
                        .join("sentences")
                        .join("shared-version"),
                    holder: format!(
                        "{}:{}:{:016x}",
                        crate::worker::hostname(),
                        std::process::id(),
                        unique_suffix()
                    ),
                    changes_made: std::sync::atomic::AtomicU64::new(0),
                    fetching: tokio::sync::Mutex::new(()),
                    changing: tokio::sync::Mutex::new(()),
                    unpublished: std::sync::atomic::AtomicBool::new(false),
                })
            }
            _ => None,
        };
        SharedSentences { library, sharing }
    }

    pub fn is_shared(&self) -> bool {
        self.sharing.is_some()
    }

    pub fn sentence_index(&self) -> Option<&SentenceIndex> {
        self.library.sentence_index()
    }

    /// Brings the local copy to the published version (nothing when not shared).
    pub async fn follow(&self) -> LibraryResult<()> {
        match (&self.sharing, self.library.sentence_index()) {
            (Some(sharing), Some(index)) => sharing.fetch_published(index).await,
            _ => Ok(()),
        }
    }

    /// Runs a change of the index under the lease, on the published version, and publishes
    /// the result. The change itself (the database's rows) stands once made: a publication that
    /// fails is logged and made good at the next change.
    async fn changing<T>(
        &self,
        change: impl std::future::Future<Output = LibraryResult<T>>,
    ) -> LibraryResult<T> {
        use std::sync::atomic::Ordering;
        let (Some(sharing), Some(index)) = (&self.sharing, self.library.sentence_index()) else {
            return change.await;
        };
        let _one = sharing.changing.lock().await;
        let lease = sharing.lease().await?;
        sharing.fetch_published(index).await?;
        let first = sharing.manifest().await?.is_none();
        let value = change.await?;
        let publication = async {
            if first || sharing.unpublished.load(Ordering::SeqCst) {
                self.library.index_missing(|_, _| {}).await?;
            }
            sharing.publish(index, &lease).await
        }
        .await;
        match publication {
            Ok(()) => sharing.unpublished.store(false, Ordering::SeqCst),
            Err(e) => {
                sharing.unpublished.store(true, Ordering::SeqCst);
                tracing::error!(error = %e, "sentence index changed here but not published; the next change publishes it");
            }
        }
        lease.release().await;
        Ok(value)
    }

    /// `SemanticLibrary::index_missing`, as a change of the shared index.
    pub async fn index_missing(&self, progress: impl FnMut(usize, usize)) -> LibraryResult<usize> {
        self.changing(self.library.index_missing(progress)).await
    }
}

impl Sharing {
    async fn manifest(&self) -> LibraryResult<Option<Manifest>> {
        let Some(bytes) = self
            .files
            .get(&manifest_key(), 64 << 10)
            .await
            .map_err(shared_error)?
        else {
            return Ok(None);
        };
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| shared_error(format!("清单无法读取：{e}")))
    }

    /// The stamp of the version the local copy holds; none when the copy is missing.
    fn local_stamp(&self, index: &SentenceIndex) -> Option<String> {
        if !index.file_path().exists() {
            return None;
        }
        std::fs::read_to_string(&self.version_file)
            .ok()
            .map(|s| s.trim().to_string())
    }

    fn set_local_stamp(&self, manifest: &Manifest) -> LibraryResult<()> {
        std::fs::write(&self.version_file, manifest.stamp())?;
        Ok(())
    }

    async fn fetch_published(&self, index: &SentenceIndex) -> LibraryResult<()> {
        let _one = self.fetching.lock().await;
        // A version removed while it was being fetched (two newer ones published meanwhile) is
        // fetched again at the newest.
        for _ in 0..3 {
            let Some(manifest) = self.manifest().await? else {
                return Ok(());
            };
            if self.local_stamp(index).as_deref() == Some(manifest.stamp().as_str()) {
                return Ok(());
            }
            match self.fetch(index, &manifest).await {
                Ok(()) => return self.set_local_stamp(&manifest),
                Err(FetchError::Gone) => continue,
                Err(FetchError::Failed(e)) => return Err(e),
            }
        }
        Err(shared_error("索引版本更新过快，未能取得完整副本"))
    }

    async fn fetch(&self, index: &SentenceIndex, manifest: &Manifest) -> Result<(), FetchError> {
        let target = index.file_path();
        let dir = target.parent().unwrap_or(Path::new("."));
        let temp = dir.join(format!(
            ".sentences.fetch-{}-{:016x}",
            std::process::id(),
            unique_suffix()
        ));
        let outcome = async {
            let mut file = tokio::fs::File::create(&temp)
                .await
                .map_err(LibraryError::from)?;
            let mut hasher = Sha256::new();
            let mut total = 0u64;
            for part in 0..manifest.parts {
                let bytes = self
                    .files
                    .get(&part_key(&manifest.folder, part), PART_BYTES)
                    .await
                    .map_err(shared_error)?
                    .ok_or(FetchError::Gone)?;
                hasher.update(&bytes);
                total += bytes.len() as u64;
                file.write_all(&bytes).await.map_err(LibraryError::from)?;
            }
            file.sync_all().await.map_err(LibraryError::from)?;
            if total != manifest.bytes || hex::encode(hasher.finalize()) != manifest.sha256 {
                return Err(shared_error("副本与清单不符（大小或校验和不同）").into());
            }
            index.replace_file(&temp)?;
            Ok(())
        }
        .await;
        if outcome.is_err() {
            let _ = tokio::fs::remove_file(&temp).await;
        }
        outcome
    }

    /// Publishes the local index file as the version after the published one, in a folder of its
    /// own; the manifest is written only while `lease` is still held. Then removes the parts of
    /// versions older than the one it replaces.
    async fn publish(&self, index: &SentenceIndex, lease: &Lease) -> LibraryResult<()> {
        let previous = self.manifest().await?;
        let version = previous.as_ref().map_or(1, |m| m.version + 1);
        let folder = format!("v{version}-{:x}", unique_suffix());
        let mut file = tokio::fs::File::open(index.file_path()).await?;
        let mut hasher = Sha256::new();
        let mut bytes = 0u64;
        let mut parts = 0u32;
        loop {
            let mut part = Vec::with_capacity(PART_BYTES);
            (&mut file)
                .take(PART_BYTES as u64)
                .read_to_end(&mut part)
                .await?;
            if part.is_empty() && parts > 0 {
                break;
            }
            hasher.update(&part);
            bytes += part.len() as u64;
            self.files
                .put(&part_key(&folder, parts), &part)
                .await
                .map_err(shared_error)?;
            parts += 1;
            if part.len() < PART_BYTES {
                break;
            }
        }
        let manifest = Manifest {
            lineage: previous
                .as_ref()
                .map_or_else(|| format!("{:x}", unique_suffix()), |m| m.lineage.clone()),
            version,
            folder: folder.clone(),
            bytes,
            parts,
            sha256: hex::encode(hasher.finalize()),
        };
        if !lease.confirm().await {
            let _ = self.files.remove_under(&format!("{ROOT}/{folder}")).await;
            return Err(shared_error("修改期间租约已失效，本次修改未发布"));
        }
        self.files
            .put(
                &manifest_key(),
                &serde_json::to_vec(&manifest).map_err(shared_error)?,
            )
            .await
            .map_err(shared_error)?;
        self.set_local_stamp(&manifest)?;
        // Clearing old parts is housekeeping: a failure is logged, the next publication retries.
        let keep = [Some(folder), previous.map(|m| m.folder)];
        match self.folders().await {
            Ok(folders) => {
                for stale in folders
                    .iter()
                    .filter(|f| !keep.contains(&Some((*f).clone())))
                {
                    if let Err(e) = self.files.remove_under(&format!("{ROOT}/{stale}")).await {
                        tracing::warn!(error = %e, folder = %stale, "old sentence index parts not removed");
                    }
                }
            }
            Err(e) => tracing::warn!(error = %e, "old sentence index parts not listed"),
        }
        Ok(())
    }

    /// The version folders whose parts are in the store.
    async fn folders(&self) -> LibraryResult<Vec<String>> {
        let mut folders: Vec<String> = self
            .files
            .list(ROOT)
            .await
            .map_err(shared_error)?
            .into_iter()
            .filter_map(|f| {
                let rest = f.key.strip_prefix(&format!("{ROOT}/"))?;
                let (folder, _) = rest.split_once('/')?;
                Some(folder.to_string())
            })
            .collect();
        folders.dedup();
        Ok(folders)
    }

    async fn lease(&self) -> LibraryResult<Lease> {
        let ttl_ms = LEASE_TTL.as_millis() as i64;
        let waited = std::time::Instant::now();
        let holder = format!(
            "{}:{}",
            self.holder,
            self.changes_made
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        while !self
            .store
            .take_named_lease(LEASE, &holder, ttl_ms)
            .await
            .map_err(shared_error)?
        {
            if waited.elapsed() > LEASE_WAIT {
                return Err(shared_error("句向量索引正被其他节点修改，等待超时"));
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        let lost = Arc::new(AtomicBool::new(false));
        let renewing = {
            let (store, holder, lost) = (self.store.clone(), holder.clone(), lost.clone());
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(LEASE_TTL / 3).await;
                    match store.take_named_lease(LEASE, &holder, ttl_ms).await {
                        Ok(true) => {}
                        Ok(false) => {
                            lost.store(true, Ordering::SeqCst);
                            tracing::error!("sentence index lease lost to another node");
                            return;
                        }
                        Err(e) => tracing::warn!(error = %e, "sentence index lease not renewed"),
                    }
                }
            })
        };
        Ok(Lease {
            store: self.store.clone(),
            holder,
            lost,
            renewing: Some(renewing),
        })
    }
}

enum FetchError {
    /// A part is no longer in the store: a newer version replaced this one.
    Gone,
    Failed(LibraryError),
}

impl From<LibraryError> for FetchError {
    fn from(e: LibraryError) -> Self {
        FetchError::Failed(e)
    }
}

/// The `sentence-index` lease while a change holds it; renewed in the background, given back
/// when released or dropped (a cancelled job included).
struct Lease {
    store: store::Store,
    holder: String,
    lost: Arc<AtomicBool>,
    renewing: Option<tokio::task::JoinHandle<()>>,
}

impl Lease {
    /// Renews the lease now: true only if it was never lost and is still this change's.
    async fn confirm(&self) -> bool {
        let ttl_ms = LEASE_TTL.as_millis() as i64;
        !self.lost.load(Ordering::SeqCst)
            && matches!(
                self.store
                    .take_named_lease(LEASE, &self.holder, ttl_ms)
                    .await,
                Ok(true)
            )
    }

    async fn release(mut self) {
        if let Some(renewing) = self.renewing.take() {
            renewing.abort();
        }
        if let Err(e) = self.store.release_named_lease(LEASE, &self.holder).await {
            // It runs out by itself.
            tracing::warn!(error = %e, "sentence index lease not given back");
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let Some(renewing) = self.renewing.take() else {
            return;
        };
        renewing.abort();
        let (store, holder) = (self.store.clone(), std::mem::take(&mut self.holder));
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = store.release_named_lease(LEASE, &holder).await;
            });
        }
    }
}

impl<L: Library> Library for SharedSentences<L> {
    fn params(&self) -> FingerprintParams {
        self.library.params()
    }

    async fn add(&self, docs: Vec<NewDoc>) -> LibraryResult<Vec<DocId>> {
        let (Some(_), Some(embedder)) = (&self.sharing, self.library.embedder()) else {
            return self.library.add(docs).await;
        };
        // The encoder's work is done before the lease is taken, off the async runtime.
        let texts: Vec<String> = docs.iter().map(|d| d.text.clone()).collect();
        let vectors = tokio::task::spawn_blocking(move || {
            texts
                .iter()
                .map(|text| simcheck::sentence_vectors(embedder.as_ref(), text))
                .collect::<Vec<_>>()
        })
        .await
        .map_err(shared_error)?;
        self.changing(self.library.add_embedded(docs, vectors))
            .await
    }

    async fn remove(&self, id: DocId) -> LibraryResult<bool> {
        self.changing(self.library.remove(id)).await
    }

    async fn list(&self) -> LibraryResult<Vec<DocMeta>> {
        self.library.list().await
    }

    async fn meta(&self, id: DocId) -> LibraryResult<Option<DocMeta>> {
        self.library.meta(id).await
    }

    async fn text(&self, id: DocId) -> LibraryResult<Option<String>> {
        self.library.text(id).await
    }

    async fn doc_count(&self) -> LibraryResult<u64> {
        self.library.doc_count().await
    }

    async fn index_bytes(&self) -> LibraryResult<u64> {
        self.library.index_bytes().await
    }

    async fn document_frequencies(&self, hashes: &[u64], cap: u32) -> LibraryResult<Vec<u32>> {
        self.library.document_frequencies(hashes, cap).await
    }

    async fn similar_sentences(
        &self,
        queries: &[Vec<f32>],
        k: usize,
    ) -> LibraryResult<Option<Vec<Vec<SentenceHit>>>> {
        // A store that does not answer leaves the search on the copy this node has.
        if let Err(e) = self.follow().await {
            tracing::warn!(error = %e, "shared sentence index not followed; searching the local copy");
        }
        self.library.similar_sentences(queries, k).await
    }

    async fn seeds(
        &self,
        query_hashes: &[u64],
        filter: ScopeFilter,
        max_postings_per_hash: usize,
    ) -> LibraryResult<Vec<Seed>> {
        self.library
            .seeds(query_hashes, filter, max_postings_per_hash)
            .await
    }
}
