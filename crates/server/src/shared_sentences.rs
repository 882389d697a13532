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
//! A change (import, removal, `wenjian corpus index`) takes the `sentence-index` lease in the
//! database, so changes from different nodes never overlap; fetches the newest published copy;
//! makes the change on it; publishes the result as the next version; and gives the lease back.
//! Before every sentence search a node reads the manifest and fetches a newer version when
//! there is one. The version before the newest is kept for nodes still fetching it.

use crate::Config;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use simcheck::library::{
    DocId, DocMeta, Library, LibraryError, LibraryResult, NewDoc, ScopeFilter, Seed, SentenceHit,
};
use simcheck::{FingerprintParams, SemanticLibrary, SentenceIndex};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const ROOT: &str = "library/sentences";
const PART_BYTES: usize = 32 << 20;
const LEASE: &str = "sentence-index";
/// A change holds the lease this long past its last renewal (renewed every third of it), so a
/// node killed mid-change blocks the others for at most this long.
const LEASE_TTL: Duration = Duration::from_secs(120);
/// How long a change waits for another node's to finish.
const LEASE_WAIT: Duration = Duration::from_secs(30 * 60);

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Manifest {
    version: u64,
    bytes: u64,
    parts: u32,
    sha256: String,
}

/// Distinct across processes on one host and across calls in one (the clock's nanoseconds).
fn unique_suffix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

fn part_key(version: u64, part: u32) -> String {
    format!("{ROOT}/v{version}/part-{part:05}")
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
    /// The version of the local copy (`<dir>/shared-version`).
    version_file: PathBuf,
    holder: String,
    /// One fetch at a time in this process.
    fetching: tokio::sync::Mutex<()>,
}

impl<L: Library> SharedSentences<L> {
    /// Shares the index when the library is in the database and files are in a store every
    /// node reaches (`files_backend` = `database` or `s3`).
    pub fn new(config: &Config, store: Option<&store::Store>, library: SemanticLibrary<L>) -> Self {
        let sharing = match store {
            Some(store)
                if config.library_backend == "database"
                    && config.files_backend != "folder"
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
                    fetching: tokio::sync::Mutex::new(()),
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

    /// Brings the local copy up to the newest published version (nothing when not shared).
    pub async fn follow(&self) -> LibraryResult<()> {
        match (&self.sharing, self.library.sentence_index()) {
            (Some(sharing), Some(index)) => sharing.fetch_newer(index).await,
            _ => Ok(()),
        }
    }

    /// Runs a change of the index under the lease, on the newest version, and publishes it.
    async fn changing<T>(
        &self,
        change: impl std::future::Future<Output = LibraryResult<T>>,
    ) -> LibraryResult<T> {
        let (Some(sharing), Some(index)) = (&self.sharing, self.library.sentence_index()) else {
            return change.await;
        };
        let lease = sharing.lease().await?;
        let outcome = async {
            sharing.fetch_newer(index).await?;
            let value = change.await?;
            sharing.publish(index).await?;
            Ok(value)
        }
        .await;
        lease.release().await;
        outcome
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

    fn local_version(&self) -> u64 {
        std::fs::read_to_string(&self.version_file)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0)
    }

    fn set_local_version(&self, version: u64) -> LibraryResult<()> {
        std::fs::write(&self.version_file, version.to_string())?;
        Ok(())
    }

    async fn fetch_newer(&self, index: &SentenceIndex) -> LibraryResult<()> {
        let _one = self.fetching.lock().await;
        // A version removed while it was being fetched (two newer ones published meanwhile) is
        // fetched again at the newest.
        for _ in 0..3 {
            let Some(manifest) = self.manifest().await? else {
                return Ok(());
            };
            if manifest.version <= self.local_version() {
                return Ok(());
            }
            match self.fetch(index, &manifest).await {
                Ok(()) => return self.set_local_version(manifest.version),
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
                    .get(&part_key(manifest.version, part), PART_BYTES)
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

    /// Publishes the local index file as the version after the newest, then removes versions
    /// older than the one it replaces.
    async fn publish(&self, index: &SentenceIndex) -> LibraryResult<()> {
        let previous = self.manifest().await?.map_or(0, |m| m.version);
        let version = previous + 1;
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
                .put(&part_key(version, parts), &part)
                .await
                .map_err(shared_error)?;
            parts += 1;
            if part.len() < PART_BYTES {
                break;
            }
        }
        let manifest = Manifest {
            version,
            bytes,
            parts,
            sha256: hex::encode(hasher.finalize()),
        };
        self.files
            .put(
                &manifest_key(),
                &serde_json::to_vec(&manifest).map_err(shared_error)?,
            )
            .await
            .map_err(shared_error)?;
        self.set_local_version(version)?;
        for stale in self.versions().await? {
            if stale < previous {
                self.files
                    .remove_under(&format!("{ROOT}/v{stale}"))
                    .await
                    .map_err(shared_error)?;
            }
        }
        Ok(())
    }

    /// The versions whose parts are in the store.
    async fn versions(&self) -> LibraryResult<Vec<u64>> {
        let mut versions: Vec<u64> = self
            .files
            .list(ROOT)
            .await
            .map_err(shared_error)?
            .into_iter()
            .filter_map(|f| {
                f.key
                    .strip_prefix(&format!("{ROOT}/v"))?
                    .split('/')
                    .next()?
                    .parse()
                    .ok()
            })
            .collect();
        versions.dedup();
        Ok(versions)
    }

    async fn lease(&self) -> LibraryResult<Lease> {
        let ttl_ms = LEASE_TTL.as_millis() as i64;
        let waited = std::time::Instant::now();
        while !self
            .store
            .take_named_lease(LEASE, &self.holder, ttl_ms)
            .await
            .map_err(shared_error)?
        {
            if waited.elapsed() > LEASE_WAIT {
                return Err(shared_error("句向量索引正被其他节点修改，等待超时"));
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        let (store, holder) = (self.store.clone(), self.holder.clone());
        let renewing = tokio::spawn(async move {
            loop {
                tokio::time::sleep(LEASE_TTL / 3).await;
                if let Err(e) = store.take_named_lease(LEASE, &holder, ttl_ms).await {
                    tracing::warn!(error = %e, "sentence index lease not renewed");
                }
            }
        });
        Ok(Lease {
            store: self.store.clone(),
            holder: self.holder.clone(),
            renewing,
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

struct Lease {
    store: store::Store,
    holder: String,
    renewing: tokio::task::JoinHandle<()>,
}

impl Lease {
    async fn release(self) {
        self.renewing.abort();
        if let Err(e) = self.store.release_named_lease(LEASE, &self.holder).await {
            // It runs out by itself.
            tracing::warn!(error = %e, "sentence index lease not given back");
        }
    }
}

impl<L: Library> Library for SharedSentences<L> {
    fn params(&self) -> FingerprintParams {
        self.library.params()
    }

    async fn add(&self, docs: Vec<NewDoc>) -> LibraryResult<Vec<DocId>> {
        self.changing(self.library.add(docs)).await
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
        self.follow().await?;
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
