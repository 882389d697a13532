//! The sentence index: every checkable sentence of the library as a sentence-encoder vector in
//! an approximate-nearest-neighbour graph (HNSW, `usearch`, 8-bit quantised, cosine), kept on
//! disk beside the library. It finds reworded and translated passages from documents that share
//! no k-gram with the paper, which the fingerprint index can never propose.
//!
//! Keys are `document << 16 | sentence number` (the order of `paraphrase::library_sentences`),
//! so a hit names its sentence without a side table; a document's first 65,536 sentences are
//! indexed. The file is written whole to a temporary name and renamed into place under an OS file
//! lock; another process sees the change on its next search (the file's stamp is checked).
//! `SemanticLibrary` wraps any `Library` so that import and removal keep the index current.
//!
//! A large library's index (from `PROJECT_FROM` vectors) is rebuilt once on projected vectors
//! (`Projection`, fitted on the library's own sentences): a search then reads a quarter of the
//! memory per vector. The projection travels in the same file, after the graph (a graph reader
//! stops where the graph ends), so a copy of the file is always whole. Its similarities are
//! close to the encoder's, not equal: the check confirms each candidate with the encoder.

use crate::FingerprintParams;
use crate::library::{
    DocId, DocMeta, Library, LibraryError, LibraryResult, NewDoc, ScopeFilter, Seed, SentenceHit,
};
use crate::paraphrase::{SentenceEmbedder, embed_all, library_sentences};
use crate::projection::Projection;
use std::fs::{self, File};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::SystemTime;
use usearch::{Index, IndexOptions, MetricKind, ScalarKind};

const FILE: &str = "sentences.usearch";
const MAX_SENTENCES_PER_DOC: usize = 1 << 16;
/// Candidates a search keeps (see `SentenceIndex::set_expansion_search`), chosen with
/// `sentence-index-scale` (docs/simcheck.md).
const EXPANSION_SEARCH: usize = 256;
/// Vectors from which the index is rebuilt on projected vectors (`SentenceIndex::project`):
/// below, a search is fast enough on the encoder's own (docs/simcheck.md).
const PROJECT_FROM: usize = 100_000;
/// Dimensions a projected index keeps, chosen with `sentence-index-scale` (docs/simcheck.md).
const PROJECTED_DIMENSIONS: usize = 128;
/// Vectors the projection is fitted on, spread over the library.
const FIT_SAMPLE: usize = 20_000;
/// Ends a file whose graph is followed by its projection: projection bytes, their length (u64
/// LE), this.
const TRAILER: &[u8; 8] = b"WJPTAIL1";

fn key(doc: DocId, sentence: usize) -> u64 {
    (doc << 16) | sentence as u64
}

fn corrupt(e: impl std::fmt::Display) -> LibraryError {
    LibraryError::Corrupt(format!("sentence index: {e}"))
}

fn backend(e: impl std::fmt::Display) -> LibraryError {
    LibraryError::Backend(format!("sentence index: {e}"))
}

fn stamp(path: &Path) -> Option<(SystemTime, u64)> {
    let m = fs::metadata(path).ok()?;
    Some((m.modified().ok()?, m.len()))
}

/// The graph and, for a projected index, the projection its vectors went through.
struct Stored {
    index: Index,
    projection: Option<Projection>,
}

impl Stored {
    fn query(&self, v: &[f32]) -> Vec<f32> {
        match &self.projection {
            Some(p) => p.apply(v),
            None => v.to_vec(),
        }
    }
}

/// The projection a file carries after its graph, if any.
fn read_trailer(path: &Path) -> LibraryResult<Option<Projection>> {
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    if len < 16 {
        return Ok(None);
    }
    let mut tail = [0u8; 16];
    file.seek(SeekFrom::Start(len - 16))?;
    file.read_exact(&mut tail)?;
    if &tail[8..] != TRAILER {
        return Ok(None);
    }
    let size = u64::from_le_bytes(tail[..8].try_into().unwrap_or_default());
    if size > (len - 16).min(1 << 30) {
        return Err(corrupt("the projection's length is out of range"));
    }
    let mut bytes = vec![0u8; size as usize];
    file.seek(SeekFrom::Start(len - 16 - size))?;
    file.read_exact(&mut bytes)?;
    Projection::from_bytes(&bytes).map(Some).map_err(corrupt)
}

/// Threads a build or a batch of searches is spread over.
fn threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

/// Inserts keyed vectors on every core (the graph takes concurrent insertions).
fn insert_all(index: &Index, items: &[(u64, Vec<f32>)]) -> LibraryResult<()> {
    let threads = threads();
    let wanted = index.size() + items.len();
    if wanted > index.capacity() {
        index
            .reserve_capacity_and_threads(wanted.max(index.capacity() * 2), threads)
            .map_err(backend)?;
    }
    let chunk = items.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        let workers: Vec<_> = items
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .try_for_each(|(key, v)| index.add(*key, v).map_err(backend))
                })
            })
            .collect();
        workers.into_iter().try_for_each(|w| {
            w.join()
                .unwrap_or_else(|_| Err(backend("insertion failed")))
        })
    })
}

pub struct SentenceIndex {
    dir: PathBuf,
    /// The encoder's dimensions (what `add` and `search` take).
    dimensions: usize,
    index: RwLock<Stored>,
    /// The stamp of the file the index in memory was read from or written to.
    loaded: Mutex<Option<(SystemTime, u64)>>,
    writer: Mutex<()>,
    /// Candidates a search keeps (HNSW's ef): more finds more true neighbours, slower.
    expansion_search: std::sync::atomic::AtomicUsize,
    /// When `project` rebuilds the index, and to how many dimensions.
    project_from: std::sync::atomic::AtomicUsize,
    projected_dimensions: std::sync::atomic::AtomicUsize,
}

impl SentenceIndex {
    /// Opens (or creates) the index in `dir` for vectors of `dimensions`.
    pub fn open(dir: impl Into<PathBuf>, dimensions: usize) -> LibraryResult<Self> {
        let dir = dir.into();
        fs::create_dir_all(&dir)?;
        let stored = Self::read(&dir.join(FILE), dimensions)?;
        stored.index.change_expansion_search(EXPANSION_SEARCH);
        Ok(SentenceIndex {
            loaded: Mutex::new(stamp(&dir.join(FILE))),
            dir,
            dimensions,
            index: RwLock::new(stored),
            writer: Mutex::new(()),
            expansion_search: std::sync::atomic::AtomicUsize::new(EXPANSION_SEARCH),
            project_from: std::sync::atomic::AtomicUsize::new(PROJECT_FROM),
            projected_dimensions: std::sync::atomic::AtomicUsize::new(PROJECTED_DIMENSIONS),
        })
    }

    fn options(dimensions: usize) -> IndexOptions {
        IndexOptions {
            dimensions,
            metric: MetricKind::Cos,
            quantization: ScalarKind::I8,
            connectivity: 16,
            expansion_add: 128,
            expansion_search: EXPANSION_SEARCH,
            multi: false,
        }
    }

    /// The index in the file at `path` (empty when there is none) for an encoder of
    /// `dimensions`.
    fn read(path: &Path, dimensions: usize) -> LibraryResult<Stored> {
        if !path.exists() {
            let index = Index::new(&Self::options(dimensions)).map_err(backend)?;
            return Ok(Stored {
                index,
                projection: None,
            });
        }
        let projection = read_trailer(path)?;
        let stored_dimensions = match &projection {
            Some(p) if p.from_dimensions() != dimensions => {
                return Err(corrupt(format!(
                    "a projection from {} dimensions, the encoder gives {dimensions}",
                    p.from_dimensions()
                )));
            }
            Some(p) => p.dimensions(),
            None => dimensions,
        };
        let index = Index::new(&Self::options(stored_dimensions)).map_err(backend)?;
        index.load(&path.to_string_lossy()).map_err(corrupt)?;
        if index.dimensions() != stored_dimensions {
            return Err(corrupt(format!(
                "{} dimensions on disk, {stored_dimensions} expected",
                index.dimensions()
            )));
        }
        Ok(Stored { index, projection })
    }

    /// Writes `stored` to `path` through a temporary file renamed into place.
    fn write(&self, stored: &Stored) -> LibraryResult<()> {
        let path = self.dir.join(FILE);
        let temp = self.dir.join(format!("{FILE}.tmp"));
        stored
            .index
            .save(&temp.to_string_lossy())
            .map_err(backend)?;
        if let Some(projection) = &stored.projection {
            let bytes = projection.to_bytes();
            let mut file = File::options().append(true).open(&temp)?;
            file.write_all(&bytes)?;
            file.write_all(&(bytes.len() as u64).to_le_bytes())?;
            file.write_all(TRAILER)?;
            file.sync_all()?;
        }
        fs::rename(&temp, &path)?;
        *self.loaded.lock().unwrap_or_else(|e| e.into_inner()) = stamp(&path);
        Ok(())
    }

    /// Reads the file again when another process has replaced it.
    fn refresh(&self) -> LibraryResult<()> {
        let now = stamp(&self.dir.join(FILE));
        let mut loaded = self.loaded.lock().unwrap_or_else(|e| e.into_inner());
        if now != *loaded {
            let stored = Self::read(&self.dir.join(FILE), self.dimensions)?;
            // A load may bring the file's own setting.
            stored
                .index
                .change_expansion_search(self.expansion_search());
            *self.index.write().unwrap_or_else(|e| e.into_inner()) = stored;
            *loaded = now;
        }
        Ok(())
    }

    /// The in-process and cross-process write locks, held while the guard and the file live.
    fn writing(&self) -> LibraryResult<(std::sync::MutexGuard<'_, ()>, File)> {
        let guard = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        let lock = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.dir.join("sentences.lock"))?;
        lock.lock()?;
        Ok((guard, lock))
    }

    /// Runs a change to the index under the in-process and cross-process write locks, on the
    /// newest index on disk, and writes the result back atomically.
    fn change(&self, edit: impl FnOnce(&Stored) -> LibraryResult<()>) -> LibraryResult<()> {
        let (_guard, _lock) = self.writing()?;
        self.refresh()?;
        let stored = self.index.write().unwrap_or_else(|e| e.into_inner());
        edit(&stored)?;
        self.write(&stored)
    }

    /// Adds documents' sentence vectors (`vectors[i]` is sentence i of its document), on every
    /// core (the graph takes concurrent insertions).
    pub fn add(&self, docs: &[(DocId, Vec<Vec<f32>>)]) -> LibraryResult<()> {
        if docs
            .iter()
            .flat_map(|(_, v)| v)
            .any(|v| v.len() != self.dimensions)
        {
            return Err(backend("vector of the wrong length"));
        }
        self.change(|stored| {
            let items: Vec<(u64, Vec<f32>)> = docs
                .iter()
                .flat_map(|(doc, vectors)| {
                    vectors
                        .iter()
                        .take(MAX_SENTENCES_PER_DOC)
                        .enumerate()
                        .map(move |(i, v)| (key(*doc, i), stored.query(v)))
                })
                .collect();
            insert_all(&stored.index, &items)
        })
    }

    /// Whether the index has grown to where `project` would rebuild it.
    pub fn wants_projection(&self) -> bool {
        let stored = self.index.read().unwrap_or_else(|e| e.into_inner());
        stored.projection.is_none()
            && stored.index.size() >= self.project_from.load(std::sync::atomic::Ordering::Relaxed)
            && self.dimensions
                > self
                    .projected_dimensions
                    .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// When the index wants it (`wants_projection`), rebuilds it on projected vectors: fits the
    /// projection on up to `FIT_SAMPLE` of its vectors spread over the library, and inserts every
    /// vector of `docs` (the library's live documents) projected. Returns whether it rebuilt.
    pub fn project(&self, docs: &[DocId]) -> LibraryResult<bool> {
        let (_guard, _lock) = self.writing()?;
        self.refresh()?;
        if !self.wants_projection() {
            return Ok(false);
        }
        let mut stored = self.index.write().unwrap_or_else(|e| e.into_inner());
        let mut items: Vec<(u64, Vec<f32>)> = Vec::with_capacity(stored.index.size());
        for &doc in docs {
            for i in 0..MAX_SENTENCES_PER_DOC {
                let mut v = vec![0.0f32; self.dimensions];
                if !stored.index.contains(key(doc, i))
                    || stored.index.get(key(doc, i), &mut v).map_err(backend)? == 0
                {
                    break;
                }
                items.push((key(doc, i), v));
            }
        }
        let every = items.len().div_ceil(FIT_SAMPLE).max(1);
        let sample: Vec<Vec<f32>> = items
            .iter()
            .step_by(every)
            .map(|(_, v)| v.clone())
            .collect();
        let to = self
            .projected_dimensions
            .load(std::sync::atomic::Ordering::Relaxed);
        let Some(projection) = Projection::fit(&sample, to) else {
            return Ok(false);
        };
        for (_, v) in items.iter_mut() {
            *v = projection.apply(v);
        }
        let index = Index::new(&Self::options(to)).map_err(backend)?;
        index.change_expansion_search(self.expansion_search());
        insert_all(&index, &items)?;
        let rebuilt = Stored {
            index,
            projection: Some(projection),
        };
        self.write(&rebuilt)?;
        *stored = rebuilt;
        Ok(true)
    }

    /// Changes from how many vectors `project` rebuilds the index, and to how many dimensions
    /// (`PROJECT_FROM`, `PROJECTED_DIMENSIONS` unless changed): for measuring and tests.
    pub fn set_projection(&self, from_vectors: usize, dimensions: usize) {
        self.project_from
            .store(from_vectors, std::sync::atomic::Ordering::Relaxed);
        self.projected_dimensions
            .store(dimensions, std::sync::atomic::Ordering::Relaxed);
    }

    /// The projection the index's vectors went through, if it was rebuilt on one.
    pub fn projection(&self) -> Option<Projection> {
        self.refresh().ok()?;
        self.index
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .projection
            .clone()
    }

    /// Drops a document's sentences.
    pub fn remove(&self, doc: DocId) -> LibraryResult<()> {
        self.change(|stored| {
            for i in 0..MAX_SENTENCES_PER_DOC {
                if stored.index.remove(key(doc, i)).map_err(backend)? == 0 {
                    break;
                }
            }
            Ok(())
        })
    }

    /// Whether the document's sentences are indexed (a document with no checkable sentence
    /// never is).
    pub fn contains(&self, doc: DocId) -> LibraryResult<bool> {
        self.refresh()?;
        Ok(self
            .index
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .index
            .contains(key(doc, 0)))
    }

    /// The `k` nearest library sentences of each query vector, best first; queries are spread
    /// over every core.
    pub fn search(&self, queries: &[Vec<f32>], k: usize) -> LibraryResult<Vec<Vec<SentenceHit>>> {
        self.nearest(queries, k, false)
    }

    /// The true `k` nearest, by comparing with every vector: for measuring what the graph's
    /// search misses, far too slow for a check.
    pub fn exact_search(
        &self,
        queries: &[Vec<f32>],
        k: usize,
    ) -> LibraryResult<Vec<Vec<SentenceHit>>> {
        self.nearest(queries, k, true)
    }

    fn nearest(
        &self,
        queries: &[Vec<f32>],
        k: usize,
        exact: bool,
    ) -> LibraryResult<Vec<Vec<SentenceHit>>> {
        self.refresh()?;
        if queries.iter().any(|q| q.len() != self.dimensions) {
            return Err(backend("query vector of the wrong length"));
        }
        let stored = self.index.read().unwrap_or_else(|e| e.into_inner());
        let index = &stored.index;
        if index.size() == 0 {
            return Ok(vec![Vec::new(); queries.len()]);
        }
        let stored = &*stored;
        let one = |q: &Vec<f32>| -> LibraryResult<Vec<SentenceHit>> {
            let q = stored.query(q);
            let found = if exact {
                index.exact_search(&q, k)
            } else {
                index.search(&q, k)
            }
            .map_err(backend)?;
            Ok(found
                .keys
                .iter()
                .zip(&found.distances)
                .map(|(&key, &distance)| SentenceHit {
                    doc: key >> 16,
                    sentence: (key & 0xFFFF) as u32,
                    similarity: 1.0 - distance,
                })
                .collect())
        };
        let chunk = queries.len().div_ceil(threads()).max(1);
        std::thread::scope(|scope| {
            let workers: Vec<_> = queries
                .chunks(chunk)
                .map(|part| scope.spawn(move || part.iter().map(one).collect::<Vec<_>>()))
                .collect();
            let mut out = Vec::with_capacity(queries.len());
            for w in workers {
                for hits in w.join().map_err(|_| backend("search failed"))? {
                    out.push(hits?);
                }
            }
            Ok(out)
        })
    }

    /// Candidates a search keeps unless changed.
    pub const DEFAULT_EXPANSION_SEARCH: usize = EXPANSION_SEARCH;

    /// Candidates each search keeps (`DEFAULT_EXPANSION_SEARCH` unless changed).
    pub fn expansion_search(&self) -> usize {
        self.expansion_search
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Changes how many candidates each search keeps, for measuring recall against speed.
    pub fn set_expansion_search(&self, candidates: usize) {
        let stored = self.index.write().unwrap_or_else(|e| e.into_inner());
        self.expansion_search
            .store(candidates, std::sync::atomic::Ordering::Relaxed);
        stored.index.change_expansion_search(candidates);
    }

    /// Indexed sentences.
    pub fn len(&self) -> usize {
        self.index
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .index
            .size()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The index file, for copying it elsewhere (a reader of it sees one whole version: every
    /// change writes a new file and renames it into place).
    pub fn file_path(&self) -> PathBuf {
        self.dir.join(FILE)
    }

    /// Puts the index file `from` (e.g. a copy fetched from another node) in place of this
    /// one, under the same locks as a change, and reads it: a file that does not load as an
    /// index of this encoder's dimensions (projected or not) is refused and the current one kept.
    pub fn replace_file(&self, from: &Path) -> LibraryResult<()> {
        let (_guard, _lock) = self.writing()?;
        let probe = Self::read(from, self.dimensions)?;
        probe.index.change_expansion_search(self.expansion_search());
        let path = self.dir.join(FILE);
        fs::rename(from, &path)?;
        *self.index.write().unwrap_or_else(|e| e.into_inner()) = probe;
        *self.loaded.lock().unwrap_or_else(|e| e.into_inner()) = stamp(&path);
        Ok(())
    }

    /// Bytes of the index file on disk.
    pub fn bytes(&self) -> u64 {
        stamp(&self.dir.join(FILE)).map(|s| s.1).unwrap_or(0)
    }
}

/// The vectors of a document's indexed sentences, in order (what `SemanticLibrary::add` stores
/// for it).
pub fn sentence_vectors(embedder: &dyn SentenceEmbedder, text: &str) -> Vec<Vec<f32>> {
    let chars: Vec<char> = text.chars().collect();
    let sentences: Vec<String> = library_sentences(text)
        .into_iter()
        .take(MAX_SENTENCES_PER_DOC)
        .map(|(s, e)| chars[s..e].iter().collect())
        .collect();
    embed_all(embedder, &sentences)
}

/// A library whose imports and removals also keep a sentence index, so checks find reworded
/// and translated passages in every document (see the module documentation).
pub struct SemanticLibrary<L> {
    inner: L,
    /// The index and the encoder that fills it; without an encoder the library is `inner` alone.
    semantic: Option<(SentenceIndex, Arc<dyn SentenceEmbedder>)>,
}

impl<L: Library> SemanticLibrary<L> {
    /// `dir` holds the sentence index; `embedder` must be the encoder checks use. Without one
    /// the library keeps no sentence index (checks fall back to the documents sharing k-grams).
    pub fn open(
        inner: L,
        dir: impl Into<PathBuf>,
        embedder: Option<Arc<dyn SentenceEmbedder>>,
    ) -> LibraryResult<Self> {
        let semantic = match embedder {
            Some(embedder) => {
                let dimensions = embedder.embed("维度").len();
                Some((SentenceIndex::open(dir, dimensions)?, embedder))
            }
            None => None,
        };
        Ok(SemanticLibrary { inner, semantic })
    }

    pub fn inner(&self) -> &L {
        &self.inner
    }

    pub fn sentence_index(&self) -> Option<&SentenceIndex> {
        self.semantic.as_ref().map(|(index, _)| index)
    }

    /// The encoder that fills the index, if any.
    pub fn embedder(&self) -> Option<Arc<dyn SentenceEmbedder>> {
        self.semantic.as_ref().map(|(_, embedder)| embedder.clone())
    }

    fn vectors(embedder: &dyn SentenceEmbedder, text: &str) -> Vec<Vec<f32>> {
        sentence_vectors(embedder, text)
    }

    /// Adds documents whose sentence vectors were computed beforehand (`vectors[i]` for
    /// `docs[i]`, by `sentence_vectors` with this library's encoder), e.g. off the async runtime.
    pub async fn add_embedded(
        &self,
        docs: Vec<NewDoc>,
        vectors: Vec<Vec<Vec<f32>>>,
    ) -> LibraryResult<Vec<DocId>> {
        let Some((index, _)) = &self.semantic else {
            return self.inner.add(docs).await;
        };
        if vectors.len() != docs.len() {
            return Err(backend("one list of vectors per document"));
        }
        let ids = self.inner.add(docs).await?;
        let indexed: Vec<(DocId, Vec<Vec<f32>>)> = ids.iter().copied().zip(vectors).collect();
        index.add(&indexed)?;
        self.project_when_large().await?;
        Ok(ids)
    }

    /// Rebuilds the index on projected vectors once the library has grown to want it
    /// (`SentenceIndex::project`).
    pub async fn project_when_large(&self) -> LibraryResult<bool> {
        let Some((index, _)) = &self.semantic else {
            return Ok(false);
        };
        if !index.wants_projection() {
            return Ok(false);
        }
        let docs: Vec<DocId> = self.inner.list().await?.iter().map(|m| m.id).collect();
        index.project(&docs)
    }

    /// Indexes the sentences of every live document not indexed yet (a library imported before
    /// the index existed, or while the encoder was missing). Returns how many were indexed.
    pub async fn index_missing(
        &self,
        mut progress: impl FnMut(usize, usize),
    ) -> LibraryResult<usize> {
        let Some((index, embedder)) = &self.semantic else {
            return Ok(0);
        };
        let docs = self.inner.list().await?;
        let mut done = 0;
        let mut batch = Vec::new();
        for (i, meta) in docs.iter().enumerate() {
            progress(i, docs.len());
            if index.contains(meta.id)? {
                continue;
            }
            let Some(text) = self.inner.text(meta.id).await? else {
                continue;
            };
            let vectors = Self::vectors(embedder.as_ref(), &text);
            if !vectors.is_empty() {
                batch.push((meta.id, vectors));
                done += 1;
            }
            if batch.len() >= 200 {
                index.add(&std::mem::take(&mut batch))?;
            }
        }
        if !batch.is_empty() {
            index.add(&batch)?;
        }
        self.project_when_large().await?;
        progress(docs.len(), docs.len());
        Ok(done)
    }
}

impl<L: Library> Library for SemanticLibrary<L> {
    fn params(&self) -> FingerprintParams {
        self.inner.params()
    }

    async fn add(&self, docs: Vec<NewDoc>) -> LibraryResult<Vec<DocId>> {
        let Some((_, embedder)) = &self.semantic else {
            return self.inner.add(docs).await;
        };
        let vectors: Vec<Vec<Vec<f32>>> = docs
            .iter()
            .map(|d| Self::vectors(embedder.as_ref(), &d.text))
            .collect();
        self.add_embedded(docs, vectors).await
    }

    async fn remove(&self, id: DocId) -> LibraryResult<bool> {
        let removed = self.inner.remove(id).await?;
        if let Some((index, _)) = &self.semantic {
            index.remove(id)?;
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
        let sentences = self.sentence_index().map_or(0, SentenceIndex::bytes);
        Ok(self.inner.index_bytes().await? + sentences)
    }

    async fn document_frequencies(&self, hashes: &[u64], cap: u32) -> LibraryResult<Vec<u32>> {
        self.inner.document_frequencies(hashes, cap).await
    }

    async fn similar_sentences(
        &self,
        queries: &[Vec<f32>],
        k: usize,
    ) -> LibraryResult<Option<Vec<Vec<SentenceHit>>>> {
        match &self.semantic {
            Some((index, _)) => index.search(queries, k).map(Some),
            None => Ok(None),
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(i: usize) -> Vec<f32> {
        let mut v = vec![0.1f32; 8];
        v[i % 8] = 1.0;
        v
    }

    /// Sentence `i` of document `doc`: 8 numbers that vary mostly in their first three.
    fn varied(doc: u64, i: usize) -> Vec<f32> {
        let t = (doc as f32) * 1.7 + i as f32 * 0.61;
        let mut v = vec![t.sin(), t.cos(), (0.5 * t).sin(), 0.0, 0.0, 0.0, 0.0, 0.0];
        v[3 + (i + doc as usize) % 5] = 0.05;
        v
    }

    #[test]
    fn a_large_index_is_rebuilt_on_projected_vectors_that_travel_in_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let index = SentenceIndex::open(dir.path(), 8).unwrap();
        index.set_projection(60, 3);
        let docs: Vec<(DocId, Vec<Vec<f32>>)> = (1..=3)
            .map(|d| (d, (0..25).map(|i| varied(d, i)).collect()))
            .collect();
        index.add(&docs[..2]).unwrap();
        assert!(!index.wants_projection(), "50 vectors are below 60");
        assert!(!index.project(&[1, 2]).unwrap());
        index.add(&docs[2..]).unwrap();
        assert!(index.wants_projection());
        // Document 3 is left out as if removed from the library meanwhile.
        assert!(index.project(&[1, 2]).unwrap());
        assert!(!index.wants_projection());
        let projection = index.projection().unwrap();
        assert_eq!(
            (projection.from_dimensions(), projection.dimensions()),
            (8, 3)
        );
        assert!(projection.kept_energy() > 0.95);
        assert_eq!(index.len(), 50);
        assert!(!index.contains(3).unwrap());
        // Searches take and adds give the encoder's vectors; the index projects them.
        index.add(&[(4, vec![varied(4, 0), varied(4, 1)])]).unwrap();
        let hits = index.search(&[varied(2, 7), varied(4, 1)], 1).unwrap();
        assert_eq!((hits[0][0].doc, hits[0][0].sentence), (2, 7));
        assert_eq!((hits[1][0].doc, hits[1][0].sentence), (4, 1));
        assert!(hits[0][0].similarity > 0.98);
        assert!(index.search(&[vec![1.0; 3]], 1).is_err());
        // Another process reads the graph and the projection from the one file.
        let reader = SentenceIndex::open(dir.path(), 8).unwrap();
        assert_eq!(reader.projection(), Some(projection.clone()));
        let again = reader.search(&[varied(2, 7)], 1).unwrap();
        assert_eq!((again[0][0].doc, again[0][0].sentence), (2, 7));
        // A copy of the file replaces another node's index whole.
        let copy = tempfile::tempdir().unwrap();
        let node = SentenceIndex::open(copy.path(), 8).unwrap();
        let fetched = copy.path().join("fetched");
        fs::copy(index.file_path(), &fetched).unwrap();
        node.replace_file(&fetched).unwrap();
        assert_eq!(node.projection(), Some(projection));
        assert_eq!(node.len(), 52);
        // An encoder of other dimensions is refused, not misread.
        assert!(SentenceIndex::open(dir.path(), 16).is_err());
        index.remove(2).unwrap();
        assert!(!reader.contains(2).unwrap());
        assert_eq!(reader.len(), 27);
    }

    #[test]
    fn a_changed_search_expansion_holds_when_another_process_rewrites_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let reader = SentenceIndex::open(dir.path(), 8).unwrap();
        let writer = SentenceIndex::open(dir.path(), 8).unwrap();
        assert_eq!(
            reader.expansion_search(),
            SentenceIndex::DEFAULT_EXPANSION_SEARCH
        );
        reader.set_expansion_search(200);
        writer
            .add(&[(1, (0..8).map(unit).collect::<Vec<_>>())])
            .unwrap();
        // The reader loads the writer's file on its next search.
        let hits = reader.search(&[unit(3)], 1).unwrap();
        assert_eq!((hits[0][0].doc, hits[0][0].sentence), (1, 3));
        let exact = reader.exact_search(&[unit(3)], 1).unwrap();
        assert_eq!((exact[0][0].doc, exact[0][0].sentence), (1, 3));
        assert_eq!(reader.expansion_search(), 200);
        let loaded = reader.index.read().unwrap().index.expansion_search();
        assert_eq!(loaded, 200);
        assert_eq!(
            writer.index.read().unwrap().index.expansion_search(),
            SentenceIndex::DEFAULT_EXPANSION_SEARCH
        );
    }
}
