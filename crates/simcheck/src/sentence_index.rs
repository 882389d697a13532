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

use crate::FingerprintParams;
use crate::library::{
    DocId, DocMeta, Library, LibraryError, LibraryResult, NewDoc, ScopeFilter, Seed, SentenceHit,
};
use crate::paraphrase::{SentenceEmbedder, embed_all, library_sentences};
use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::SystemTime;
use usearch::{Index, IndexOptions, MetricKind, ScalarKind};

const FILE: &str = "sentences.usearch";
const MAX_SENTENCES_PER_DOC: usize = 1 << 16;
/// Candidates a search keeps (see `SentenceIndex::set_expansion_search`), chosen with
/// `sentence-index-scale` (docs/simcheck.md).
const EXPANSION_SEARCH: usize = 256;

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

pub struct SentenceIndex {
    dir: PathBuf,
    dimensions: usize,
    index: RwLock<Index>,
    /// The stamp of the file the index in memory was read from or written to.
    loaded: Mutex<Option<(SystemTime, u64)>>,
    writer: Mutex<()>,
    /// Candidates a search keeps (HNSW's ef): more finds more true neighbours, slower.
    expansion_search: std::sync::atomic::AtomicUsize,
}

impl SentenceIndex {
    /// Opens (or creates) the index in `dir` for vectors of `dimensions`.
    pub fn open(dir: impl Into<PathBuf>, dimensions: usize) -> LibraryResult<Self> {
        let dir = dir.into();
        fs::create_dir_all(&dir)?;
        let index = Self::read(&dir, dimensions)?;
        index.change_expansion_search(EXPANSION_SEARCH);
        Ok(SentenceIndex {
            loaded: Mutex::new(stamp(&dir.join(FILE))),
            dir,
            dimensions,
            index: RwLock::new(index),
            writer: Mutex::new(()),
            expansion_search: std::sync::atomic::AtomicUsize::new(EXPANSION_SEARCH),
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

    fn read(dir: &Path, dimensions: usize) -> LibraryResult<Index> {
        let index = Index::new(&Self::options(dimensions)).map_err(backend)?;
        let path = dir.join(FILE);
        if path.exists() {
            index.load(&path.to_string_lossy()).map_err(corrupt)?;
            if index.dimensions() != dimensions {
                return Err(corrupt(format!(
                    "{} dimensions on disk, the encoder gives {dimensions}",
                    index.dimensions()
                )));
            }
        }
        Ok(index)
    }

    /// Reads the file again when another process has replaced it.
    fn refresh(&self) -> LibraryResult<()> {
        let now = stamp(&self.dir.join(FILE));
        let mut loaded = self.loaded.lock().unwrap_or_else(|e| e.into_inner());
        if now != *loaded {
            let index = Self::read(&self.dir, self.dimensions)?;
            // A load may bring the file's own setting.
            index.change_expansion_search(self.expansion_search());
            *self.index.write().unwrap_or_else(|e| e.into_inner()) = index;
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
    fn change(&self, edit: impl FnOnce(&Index) -> LibraryResult<()>) -> LibraryResult<()> {
        let (_guard, _lock) = self.writing()?;
        self.refresh()?;
        let index = self.index.write().unwrap_or_else(|e| e.into_inner());
        edit(&index)?;
        let path = self.dir.join(FILE);
        let temp = self.dir.join(format!("{FILE}.tmp"));
        index.save(&temp.to_string_lossy()).map_err(backend)?;
        fs::rename(&temp, &path)?;
        *self.loaded.lock().unwrap_or_else(|e| e.into_inner()) = stamp(&path);
        Ok(())
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
        let items: Vec<(u64, &[f32])> = docs
            .iter()
            .flat_map(|(doc, vectors)| {
                vectors
                    .iter()
                    .take(MAX_SENTENCES_PER_DOC)
                    .enumerate()
                    .map(move |(i, v)| (key(*doc, i), v.as_slice()))
            })
            .collect();
        let threads = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1);
        self.change(|index| {
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
        })
    }

    /// Drops a document's sentences.
    pub fn remove(&self, doc: DocId) -> LibraryResult<()> {
        self.change(|index| {
            for i in 0..MAX_SENTENCES_PER_DOC {
                if index.remove(key(doc, i)).map_err(backend)? == 0 {
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
            .contains(key(doc, 0)))
    }

    /// The `k` nearest library sentences of each query vector, best first; queries are spread
    /// over every core.
    pub fn search(&self, queries: &[Vec<f32>], k: usize) -> LibraryResult<Vec<Vec<SentenceHit>>> {
        self.refresh()?;
        let index = self.index.read().unwrap_or_else(|e| e.into_inner());
        if index.size() == 0 {
            return Ok(vec![Vec::new(); queries.len()]);
        }
        let one = |q: &Vec<f32>| -> LibraryResult<Vec<SentenceHit>> {
            let found = index.search(q, k).map_err(backend)?;
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
        let threads = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1);
        let chunk = queries.len().div_ceil(threads).max(1);
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
        let index = self.index.write().unwrap_or_else(|e| e.into_inner());
        self.expansion_search
            .store(candidates, std::sync::atomic::Ordering::Relaxed);
        index.change_expansion_search(candidates);
    }

    /// Indexed sentences.
    pub fn len(&self) -> usize {
        self.index.read().unwrap_or_else(|e| e.into_inner()).size()
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
    /// index of this encoder's dimensions is refused and the current one kept.
    pub fn replace_file(&self, from: &Path) -> LibraryResult<()> {
        let (_guard, _lock) = self.writing()?;
        let probe = Index::new(&Self::options(self.dimensions)).map_err(backend)?;
        probe.load(&from.to_string_lossy()).map_err(corrupt)?;
        if probe.dimensions() != self.dimensions {
            return Err(corrupt("the replacement has other dimensions"));
        }
        probe.change_expansion_search(self.expansion_search());
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
        Ok(ids)
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
        assert_eq!(reader.expansion_search(), 200);
        let loaded = reader.index.read().unwrap().expansion_search();
        assert_eq!(loaded, 200);
        assert_eq!(
            writer.index.read().unwrap().expansion_search(),
            SentenceIndex::DEFAULT_EXPANSION_SEARCH
        );
    }
}
