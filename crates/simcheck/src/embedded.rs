//! The embedded library backend: immutable on-disk segments, memory-mapped.
//!
//! Each `add` writes a new segment (`seg-N.idx` fingerprints, `seg-N.docs.json` metadata,
//! `seg-N.txt` texts) and then atomically replaces `manifest.json`. Readers work on an
//! immutable snapshot swapped in without locks, so a writer never blocks them; another process
//! sees a change on its next read (the manifest's stamp is checked). Writers take `lock`
//! (an OS file lock) so two processes never write at once. Removal marks documents deleted;
//! when segments pile up they are merged into one, dropping deleted documents.
//!
//! Index file layout (little-endian): magic `WJIX0001`, bucket bits B (u32), padding (u32),
//! entry count (u64), document count (u64), 2^B + 1 bucket offsets (u32), then entries (u64):
//! 16 further hash bits | local document (24 bits) | stream position (24 bits). The bucket is
//! the top B bits of the fingerprint hash. About 0.2 fingerprints per character at w = 9 make
//! 1.6 bytes of entries plus at most 1 byte of buckets per library character.

use crate::fingerprint::{FingerprintParams, fingerprints};
use crate::library::{
    DocId, DocMeta, Library, LibraryError, LibraryResult, NewDoc, Scope, ScopeFilter, Seed,
};
use crate::normalize::{count_chars, normalize};
use arc_swap::ArcSwap;
use memmap2::Mmap;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

const MAGIC: &[u8; 8] = b"WJIX0001";
const HEADER: usize = 32;
const MAX_LOCAL_DOCS: usize = 1 << 24;
const MAX_POS: u32 = 1 << 24;
/// Merge when there are more segments than this.
const MAX_SEGMENTS: usize = 8;

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Manifest {
    format: u32,
    params: FingerprintParams,
    next_doc_id: DocId,
    next_segment: u64,
    segments: Vec<String>,
    deleted: Vec<DocId>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct SegDoc {
    meta: DocMeta,
    text_offset: u64,
    text_len: u64,
}

struct Segment {
    name: String,
    index: Option<Mmap>,
    bucket_bits: u32,
    entry_count: usize,
    docs: Vec<SegDoc>,
    texts: Option<Mmap>,
}

impl Segment {
    fn open(dir: &Path, name: &str) -> LibraryResult<Segment> {
        let docs: Vec<SegDoc> =
            serde_json::from_slice(&fs::read(dir.join(format!("{name}.docs.json")))?)
                .map_err(|e| LibraryError::Corrupt(format!("{name}.docs.json: {e}")))?;
        let index = map_file(&dir.join(format!("{name}.idx")))?;
        let texts = map_file(&dir.join(format!("{name}.txt")))?;
        let (bucket_bits, entry_count) = match &index {
            Some(m) if m.len() >= HEADER && &m[..8] == MAGIC => {
                let bits = u32::from_le_bytes(m[8..12].try_into().expect("4 bytes"));
                let entries = u64::from_le_bytes(m[16..24].try_into().expect("8 bytes")) as usize;
                let expected = HEADER + ((1usize << bits) + 1) * 4 + entries * 8;
                if bits > 40 || m.len() != expected {
                    return Err(LibraryError::Corrupt(format!(
                        "{name}.idx has the wrong size"
                    )));
                }
                (bits, entries)
            }
            _ => {
                return Err(LibraryError::Corrupt(format!(
                    "{name}.idx is not an index file"
                )));
            }
        };
        Ok(Segment {
            name: name.to_string(),
            index,
            bucket_bits,
            entry_count,
            docs,
            texts,
        })
    }

    fn bucket_range(&self, bucket: usize) -> (usize, usize) {
        let m = self.index.as_ref().expect("checked on open");
        let at = HEADER + bucket * 4;
        let start = u32::from_le_bytes(m[at..at + 4].try_into().expect("4 bytes")) as usize;
        let end = u32::from_le_bytes(m[at + 4..at + 8].try_into().expect("4 bytes")) as usize;
        (start.min(self.entry_count), end.min(self.entry_count))
    }

    fn entry(&self, i: usize) -> u64 {
        let m = self.index.as_ref().expect("checked on open");
        let at = HEADER + ((1usize << self.bucket_bits) + 1) * 4 + i * 8;
        u64::from_le_bytes(m[at..at + 8].try_into().expect("8 bytes"))
    }

    fn text(&self, local: usize) -> Option<String> {
        let d = self.docs.get(local)?;
        let bytes = match &self.texts {
            Some(m) => m.get(d.text_offset as usize..(d.text_offset + d.text_len) as usize)?,
            None => &[][..],
        };
        String::from_utf8(bytes.to_vec()).ok()
    }
}

fn map_file(path: &Path) -> LibraryResult<Option<Mmap>> {
    let file = File::open(path)?;
    if file.metadata()?.len() == 0 {
        return Ok(None);
    }
    // SAFETY: segment files are written once under a temporary name and renamed into place;
    // nothing modifies them afterwards (they are only ever deleted), so the mapping never changes.
    #[allow(unsafe_code)]
    let map = unsafe { Mmap::map(&file)? };
    Ok(Some(map))
}

fn split_hash(hash: u64, bucket_bits: u32) -> (usize, u64) {
    let bucket = if bucket_bits == 0 {
        0
    } else {
        (hash >> (64 - bucket_bits)) as usize
    };
    let residual = (hash >> (48 - bucket_bits)) & 0xFFFF;
    (bucket, residual)
}

struct Snapshot {
    stamp: Option<(SystemTime, u64)>,
    manifest: Manifest,
    segments: Vec<Arc<Segment>>,
    deleted: HashSet<DocId>,
    /// Where each live document is: segment index and local number.
    locate: HashMap<DocId, (usize, usize)>,
}

pub struct EmbeddedLibrary {
    dir: PathBuf,
    snapshot: ArcSwap<Snapshot>,
    writer: Mutex<()>,
}

fn manifest_stamp(dir: &Path) -> Option<(SystemTime, u64)> {
    let meta = fs::metadata(dir.join("manifest.json")).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    fs::rename(&tmp, path)?;
    if let Some(parent) = path.parent() {
        File::open(parent)?.sync_all()?;
    }
    Ok(())
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

impl EmbeddedLibrary {
    /// Opens the library in `dir`, creating it (with `params`) when empty. An existing library
    /// keeps the parameters it was built with.
    pub fn open(dir: impl Into<PathBuf>, params: FingerprintParams) -> LibraryResult<Self> {
        let dir = dir.into();
        fs::create_dir_all(&dir)?;
        if !dir.join("manifest.json").exists() {
            let manifest = Manifest {
                format: 1,
                params,
                next_doc_id: 1,
                next_segment: 1,
                segments: vec![],
                deleted: vec![],
            };
            write_atomically(
                &dir.join("manifest.json"),
                &serde_json::to_vec_pretty(&manifest).expect("serialisable"),
            )?;
        }
        let snapshot = Self::load(&dir, None)?;
        Ok(EmbeddedLibrary {
            dir,
            snapshot: ArcSwap::from_pointee(snapshot),
            writer: Mutex::new(()),
        })
    }

    fn load(dir: &Path, previous: Option<&Snapshot>) -> LibraryResult<Snapshot> {
        let stamp = manifest_stamp(dir);
        let manifest: Manifest = serde_json::from_slice(&fs::read(dir.join("manifest.json"))?)
            .map_err(|e| LibraryError::Corrupt(format!("manifest.json: {e}")))?;
        let mut segments = Vec::with_capacity(manifest.segments.len());
        for name in &manifest.segments {
            let reused =
                previous.and_then(|p| p.segments.iter().find(|s| &s.name == name).cloned());
            segments.push(match reused {
                Some(s) => s,
                None => Arc::new(Segment::open(dir, name)?),
            });
        }
        let deleted: HashSet<DocId> = manifest.deleted.iter().copied().collect();
        let mut locate = HashMap::new();
        for (si, seg) in segments.iter().enumerate() {
            for (li, d) in seg.docs.iter().enumerate() {
                if !deleted.contains(&d.meta.id) {
                    locate.insert(d.meta.id, (si, li));
                }
            }
        }
        Ok(Snapshot {
            stamp,
            manifest,
            segments,
            deleted,
            locate,
        })
    }

    /// The current snapshot, reloaded first if another process changed the library.
    fn current(&self) -> LibraryResult<Arc<Snapshot>> {
        let snap = self.snapshot.load_full();
        if manifest_stamp(&self.dir) == snap.stamp {
            return Ok(snap);
        }
        let fresh = Arc::new(Self::load(&self.dir, Some(&snap))?);
        self.snapshot.store(fresh.clone());
        Ok(fresh)
    }

    /// Runs a change under the in-process and cross-process write locks, then publishes it.
    fn write<T>(
        &self,
        change: impl FnOnce(&mut Manifest, &Snapshot) -> LibraryResult<T>,
    ) -> LibraryResult<T> {
        let _guard = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        let lock_file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.dir.join("lock"))?;
        lock_file.lock()?;
        let snap = Arc::new(Self::load(&self.dir, Some(&self.snapshot.load_full()))?);
        let mut manifest = snap.manifest.clone();
        let out = change(&mut manifest, &snap)?;
        write_atomically(
            &self.dir.join("manifest.json"),
            &serde_json::to_vec_pretty(&manifest).expect("serialisable"),
        )?;
        let fresh = Self::load(&self.dir, Some(&snap))?;
        // Files of segments no longer listed can go: readers of old snapshots keep their mappings.
        for old in &snap.manifest.segments {
            if !manifest.segments.contains(old) {
                for ext in ["idx", "docs.json", "txt"] {
                    let _ = fs::remove_file(self.dir.join(format!("{old}.{ext}")));
                }
            }
        }
        self.snapshot.store(Arc::new(fresh));
        Ok(out)
    }

    fn build_segment(
        &self,
        name: &str,
        params: FingerprintParams,
        docs: &[(DocMeta, &str)],
    ) -> LibraryResult<()> {
        if docs.len() > MAX_LOCAL_DOCS {
            return Err(LibraryError::Backend(
                "too many documents in one segment".into(),
            ));
        }
        let total_chars: usize = docs.iter().map(|(_, t)| t.len() / 3 + 1).sum();
        let estimate = total_chars * 2 / (params.w + 1) + 16;
        let bucket_bits = (estimate / 8)
            .max(16)
            .next_power_of_two()
            .trailing_zeros()
            .min(32);
        let mut keyed: Vec<u128> = Vec::with_capacity(estimate);
        let mut seg_docs = Vec::with_capacity(docs.len());
        let mut text_offset = 0u64;
        let mut texts = BufWriter::new(File::create(self.dir.join(format!("{name}.txt.tmp")))?);
        for (local, (meta, text)) in docs.iter().enumerate() {
            let norm = normalize(text);
            for fp in fingerprints(&norm.chars, params) {
                if fp.pos >= MAX_POS {
                    break;
                }
                let (bucket, residual) = split_hash(fp.hash, bucket_bits);
                let entry = (residual << 48) | ((local as u64) << 24) | fp.pos as u64;
                keyed.push(((bucket as u128) << 64) | entry as u128);
            }
            texts.write_all(text.as_bytes())?;
            seg_docs.push(SegDoc {
                meta: meta.clone(),
                text_offset,
                text_len: text.len() as u64,
            });
            text_offset += text.len() as u64;
        }
        texts.flush()?;
        texts.get_ref().sync_all()?;
        drop(texts);
        keyed.sort_unstable();
        let buckets = 1usize << bucket_bits;
        let mut idx = BufWriter::new(File::create(self.dir.join(format!("{name}.idx.tmp")))?);
        idx.write_all(MAGIC)?;
        idx.write_all(&bucket_bits.to_le_bytes())?;
        idx.write_all(&0u32.to_le_bytes())?;
        idx.write_all(&(keyed.len() as u64).to_le_bytes())?;
        idx.write_all(&(docs.len() as u64).to_le_bytes())?;
        let mut at = 0usize;
        for b in 0..=buckets {
            while at < keyed.len() && ((keyed[at] >> 64) as usize) < b {
                at += 1;
            }
            idx.write_all(&(at as u32).to_le_bytes())?;
        }
        for k in &keyed {
            idx.write_all(&(*k as u64).to_le_bytes())?;
        }
        idx.flush()?;
        idx.get_ref().sync_all()?;
        drop(idx);
        fs::write(
            self.dir.join(format!("{name}.docs.json.tmp")),
            serde_json::to_vec(&seg_docs).expect("serialisable"),
        )?;
        for ext in ["idx", "txt", "docs.json"] {
            fs::rename(
                self.dir.join(format!("{name}.{ext}.tmp")),
                self.dir.join(format!("{name}.{ext}")),
            )?;
        }
        Ok(())
    }

    fn add_sync(&self, docs: Vec<NewDoc>) -> LibraryResult<Vec<DocId>> {
        if docs.is_empty() {
            return Ok(vec![]);
        }
        self.write(|manifest, snap| {
            let params = manifest.params;
            let added_at = now_ms();
            let mut ids = Vec::with_capacity(docs.len());
            let mut metas = Vec::with_capacity(docs.len());
            for d in &docs {
                let id = manifest.next_doc_id;
                manifest.next_doc_id += 1;
                ids.push(id);
                metas.push(DocMeta {
                    id,
                    title: d.title.clone(),
                    author: d.author.clone(),
                    year: d.year,
                    source: d.source.clone(),
                    owner: d.owner,
                    scope: d.scope,
                    chars: count_chars(&d.text) as u64,
                    added_at,
                    bib: d.bib.clone(),
                });
            }
            let name = format!("seg-{:06}", manifest.next_segment);
            manifest.next_segment += 1;
            let batch: Vec<(DocMeta, &str)> = metas
                .into_iter()
                .zip(docs.iter().map(|d| d.text.as_str()))
                .collect();
            self.build_segment(&name, params, &batch)?;
            manifest.segments.push(name);
            if manifest.segments.len() > MAX_SEGMENTS {
                self.merge_all(manifest, snap, &batch)?;
            }
            Ok(ids)
        })
    }

    /// Rewrites every live document into one segment.
    fn merge_all(
        &self,
        manifest: &mut Manifest,
        snap: &Snapshot,
        just_added: &[(DocMeta, &str)],
    ) -> LibraryResult<()> {
        let mut owned: Vec<(DocMeta, String)> = Vec::new();
        for seg in &snap.segments {
            for (li, d) in seg.docs.iter().enumerate() {
                if snap.deleted.contains(&d.meta.id) {
                    continue;
                }
                let text = seg.text(li).ok_or_else(|| {
                    LibraryError::Corrupt(format!("{}: text of {}", seg.name, d.meta.id))
                })?;
                owned.push((d.meta.clone(), text));
            }
        }
        for (meta, text) in just_added {
            owned.push((meta.clone(), text.to_string()));
        }
        let name = format!("seg-{:06}", manifest.next_segment);
        manifest.next_segment += 1;
        let batch: Vec<(DocMeta, &str)> =
            owned.iter().map(|(m, t)| (m.clone(), t.as_str())).collect();
        self.build_segment(&name, manifest.params, &batch)?;
        let dropped: Vec<String> = std::mem::take(&mut manifest.segments);
        manifest.segments.push(name);
        manifest.deleted.clear();
        // The just-written segment of this add is among `dropped`; delete its files too.
        for old in dropped {
            if !snap.manifest.segments.contains(&old) {
                for ext in ["idx", "docs.json", "txt"] {
                    let _ = fs::remove_file(self.dir.join(format!("{old}.{ext}")));
                }
            }
        }
        Ok(())
    }

    fn remove_sync(&self, id: DocId) -> LibraryResult<bool> {
        self.write(|manifest, snap| {
            if !snap.locate.contains_key(&id) {
                return Ok(false);
            }
            manifest.deleted.push(id);
            Ok(true)
        })
    }

    /// The live documents' postings of `hash` in every segment: the document and the stream
    /// position of its fingerprint.
    fn postings<'s>(
        snap: &'s Snapshot,
        hash: u64,
    ) -> impl Iterator<Item = (&'s DocMeta, u32)> + 's {
        snap.segments
            .iter()
            .filter(|seg| seg.index.is_some())
            .flat_map(move |seg| {
                let (bucket, residual) = split_hash(hash, seg.bucket_bits);
                let (start, end) = seg.bucket_range(bucket);
                (start..end).filter_map(move |i| {
                    let e = seg.entry(i);
                    if e >> 48 != residual {
                        return None;
                    }
                    let d = seg.docs.get(((e >> 24) & 0xFF_FFFF) as usize)?;
                    (!snap.deleted.contains(&d.meta.id))
                        .then_some((&d.meta, (e & 0xFF_FFFF) as u32))
                })
            })
    }

    fn seeds_sync(
        &self,
        query_hashes: &[u64],
        filter: ScopeFilter,
        cap: usize,
    ) -> LibraryResult<Vec<Seed>> {
        let snap = self.current()?;
        let mut out = Vec::new();
        let mut hits: Vec<(u64, u32)> = Vec::new();
        for (qpos, &hash) in query_hashes.iter().enumerate() {
            hits.clear();
            hits.extend(
                Self::postings(&snap, hash)
                    .filter(|(meta, _)| filter.admits(meta.scope, meta.owner))
                    .map(|(meta, pos)| (meta.id, pos))
                    .take(cap + 1),
            );
            if hits.len() <= cap {
                out.extend(hits.iter().map(|&(doc, source_pos)| Seed {
                    doc,
                    source_pos,
                    query_pos: qpos as u32,
                }));
            }
        }
        Ok(out)
    }

    fn document_frequencies_sync(&self, hashes: &[u64], cap: u32) -> LibraryResult<Vec<u32>> {
        let snap = self.current()?;
        let mut docs: HashSet<DocId> = HashSet::new();
        Ok(hashes
            .iter()
            .map(|&hash| {
                docs.clear();
                for (meta, _) in
                    Self::postings(&snap, hash).filter(|(m, _)| m.scope == Scope::Public)
                {
                    docs.insert(meta.id);
                    if docs.len() as u32 >= cap {
                        break;
                    }
                }
                docs.len() as u32
            })
            .collect())
    }

    fn meta_sync(&self, id: DocId) -> LibraryResult<Option<DocMeta>> {
        let snap = self.current()?;
        Ok(snap
            .locate
            .get(&id)
            .map(|&(si, li)| snap.segments[si].docs[li].meta.clone()))
    }

    fn text_sync(&self, id: DocId) -> LibraryResult<Option<String>> {
        let snap = self.current()?;
        Ok(snap
            .locate
            .get(&id)
            .and_then(|&(si, li)| snap.segments[si].text(li)))
    }

    fn list_sync(&self) -> LibraryResult<Vec<DocMeta>> {
        let snap = self.current()?;
        let mut out: Vec<DocMeta> = snap
            .segments
            .iter()
            .flat_map(|s| s.docs.iter())
            .filter(|d| !snap.deleted.contains(&d.meta.id))
            .map(|d| d.meta.clone())
            .collect();
        out.sort_by_key(|m| m.id);
        Ok(out)
    }

    /// Bytes on disk of the fingerprint index (not the stored texts).
    pub fn index_bytes(&self) -> u64 {
        let snap = self.snapshot.load_full();
        snap.segments
            .iter()
            .filter_map(|s| s.index.as_ref())
            .map(|m| m.len() as u64)
            .sum()
    }

    pub fn segment_count(&self) -> usize {
        self.snapshot.load_full().segments.len()
    }
}

impl Library for EmbeddedLibrary {
    fn params(&self) -> FingerprintParams {
        self.snapshot.load().manifest.params
    }

    async fn add(&self, docs: Vec<NewDoc>) -> LibraryResult<Vec<DocId>> {
        self.add_sync(docs)
    }

    async fn remove(&self, id: DocId) -> LibraryResult<bool> {
        self.remove_sync(id)
    }

    async fn list(&self) -> LibraryResult<Vec<DocMeta>> {
        self.list_sync()
    }

    async fn meta(&self, id: DocId) -> LibraryResult<Option<DocMeta>> {
        self.meta_sync(id)
    }

    async fn text(&self, id: DocId) -> LibraryResult<Option<String>> {
        self.text_sync(id)
    }

    async fn doc_count(&self) -> LibraryResult<u64> {
        Ok(self.current()?.locate.len() as u64)
    }

    async fn index_bytes(&self) -> LibraryResult<u64> {
        Ok(EmbeddedLibrary::index_bytes(self))
    }

    async fn document_frequencies(&self, hashes: &[u64], cap: u32) -> LibraryResult<Vec<u32>> {
        self.document_frequencies_sync(hashes, cap)
    }

    async fn seeds(
        &self,
        query_hashes: &[u64],
        filter: ScopeFilter,
        max_postings_per_hash: usize,
    ) -> LibraryResult<Vec<Seed>> {
        self.seeds_sync(query_hashes, filter, max_postings_per_hash)
    }
}
