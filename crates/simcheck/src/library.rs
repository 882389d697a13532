//! The reference library: documents with metadata, and their fingerprints. `Library` is the one
//! interface the checker uses; the embedded backend (`EmbeddedLibrary`) keeps on-disk segments,
//! and a PostgreSQL backend (postings table) implements the same trait in `store`.

use crate::fingerprint::FingerprintParams;
use serde::{Deserialize, Serialize};
use std::future::Future;

pub type DocId = u64;

/// Who may be matched against a document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// The public library, matched for everyone.
    Public,
    /// A user's private library (for comparing drafts), matched only for its owner.
    Private,
    /// A user's own published work: matched for its owner and left out of 去除本人已发表文献复制比.
    OwnPublished,
}

/// What a reference list needs of a record beyond title, authors, year and source (all
/// optional; the library imports what it is given and never guesses).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BibInfo {
    /// A GB/T 7714 type code (J, D, M, C, …) or name; absent: a journal article.
    #[serde(
        default,
        deserialize_with = "text_or_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub kind: Option<String>,
    #[serde(
        default,
        deserialize_with = "text_or_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub volume: Option<String>,
    #[serde(
        default,
        deserialize_with = "text_or_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub issue: Option<String>,
    #[serde(
        default,
        deserialize_with = "text_or_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub pages: Option<String>,
    #[serde(
        default,
        deserialize_with = "text_or_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub doi: Option<String>,
    /// Publisher, or the school of a thesis.
    #[serde(
        default,
        deserialize_with = "text_or_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub publisher: Option<String>,
    #[serde(
        default,
        deserialize_with = "text_or_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub place: Option<String>,
}

/// A field imported as `"36"` or `36` alike (JSON Lines from other tools write numbers).
fn text_or_number<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Option::<serde_json::Value>::deserialize(d)? {
        Some(serde_json::Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_string()),
        Some(serde_json::Value::Number(n)) => Some(n.to_string()),
        _ => None,
    })
}

impl BibInfo {
    pub fn is_empty(&self) -> bool {
        *self == BibInfo::default()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocMeta {
    pub id: DocId,
    pub title: String,
    #[serde(default)]
    pub author: String,
    #[serde(default)]
    pub year: Option<i32>,
    /// Where it came from (journal, school, URL, file name).
    #[serde(default)]
    pub source: String,
    #[serde(default)]
    pub owner: Option<i64>,
    pub scope: Scope,
    /// Counted characters of its text.
    pub chars: u64,
    /// Unix milliseconds.
    pub added_at: i64,
    #[serde(default, skip_serializing_if = "BibInfo::is_empty")]
    pub bib: BibInfo,
}

#[derive(Debug, Clone)]
pub struct NewDoc {
    pub title: String,
    pub author: String,
    pub year: Option<i32>,
    pub source: String,
    pub owner: Option<i64>,
    pub scope: Scope,
    pub text: String,
    pub bib: BibInfo,
}

impl NewDoc {
    pub fn public(title: impl Into<String>, text: impl Into<String>) -> Self {
        NewDoc {
            title: title.into(),
            author: String::new(),
            year: None,
            source: String::new(),
            owner: None,
            scope: Scope::Public,
            text: text.into(),
            bib: BibInfo::default(),
        }
    }
}

/// One line of a JSON Lines import (`wenjian corpus import`, the console's library upload): a
/// document and what reference lists need of it (volume, issue, pages, doi, kind, publisher,
/// place).
#[derive(Debug, Deserialize)]
pub struct LibraryRecord {
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub author: String,
    #[serde(default)]
    pub year: Option<i32>,
    #[serde(default)]
    pub source: String,
    pub text: String,
    #[serde(flatten)]
    pub bib: BibInfo,
}

impl LibraryRecord {
    pub fn into_doc(self, scope: Scope, owner: Option<i64>) -> NewDoc {
        NewDoc {
            title: self.title.trim().to_string(),
            author: self.author.trim().to_string(),
            // A year no paper can have is left out rather than printed in a reference.
            year: self.year.filter(|y| (1000..=2100).contains(y)),
            source: self.source.trim().to_string(),
            owner,
            scope,
            text: self.text,
            bib: self.bib,
        }
    }
}

/// Which documents a check may match: always the public library, plus the private library and
/// own published work of `owner` when given.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScopeFilter {
    pub owner: Option<i64>,
}

impl ScopeFilter {
    pub fn admits(&self, meta_scope: Scope, meta_owner: Option<i64>) -> bool {
        match meta_scope {
            Scope::Public => true,
            Scope::Private | Scope::OwnPublished => {
                self.owner.is_some() && self.owner == meta_owner
            }
        }
    }
}

/// A shared k-gram: the library fingerprint at `source_pos` of `doc` has the hash of the query
/// k-gram at `query_pos` (stream positions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Seed {
    pub doc: DocId,
    pub source_pos: u32,
    pub query_pos: u32,
}

/// A library sentence found close in meaning to a query sentence: the `sentence`-th checkable
/// sentence of `doc` (as `paraphrase::sentences` lists them), with its cosine similarity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SentenceHit {
    pub doc: DocId,
    pub sentence: u32,
    pub similarity: f32,
}

#[derive(Debug, thiserror::Error)]
pub enum LibraryError {
    #[error("library I/O: {0}")]
    Io(#[from] std::io::Error),
    #[error("library data is damaged: {0}")]
    Corrupt(String),
    #[error("library backend: {0}")]
    Backend(String),
}

pub type LibraryResult<T> = Result<T, LibraryError>;

pub trait Library: Send + Sync {
    fn params(&self) -> FingerprintParams;
    fn add(&self, docs: Vec<NewDoc>) -> impl Future<Output = LibraryResult<Vec<DocId>>> + Send;
    /// `false` when there was no such document.
    fn remove(&self, id: DocId) -> impl Future<Output = LibraryResult<bool>> + Send;
    fn list(&self) -> impl Future<Output = LibraryResult<Vec<DocMeta>>> + Send;
    fn meta(&self, id: DocId) -> impl Future<Output = LibraryResult<Option<DocMeta>>> + Send;
    fn text(&self, id: DocId) -> impl Future<Output = LibraryResult<Option<String>>> + Send;
    /// How many live documents the library holds (all scopes).
    fn doc_count(&self) -> impl Future<Output = LibraryResult<u64>> + Send;
    /// Bytes the library's index takes on disk (0 when it cannot tell).
    fn index_bytes(&self) -> impl Future<Output = LibraryResult<u64>> + Send {
        async { Ok(0) }
    }
    /// For each hash, in how many live public documents it is a fingerprint, counted up to
    /// `cap`. Read from the postings themselves, so every import and removal keeps it current.
    fn document_frequencies(
        &self,
        hashes: &[u64],
        cap: u32,
    ) -> impl Future<Output = LibraryResult<Vec<u32>>> + Send;
    /// The library sentences closest in meaning to each query vector (at most `k` each, best
    /// first), when the library keeps a sentence index; `None` when it keeps none.
    fn similar_sentences(
        &self,
        queries: &[Vec<f32>],
        k: usize,
    ) -> impl Future<Output = LibraryResult<Option<Vec<Vec<SentenceHit>>>>> + Send {
        let _ = (queries, k);
        async { Ok(None) }
    }
    /// Seeds for the query's k-gram hashes (`query_hashes[i]` starts at stream position i).
    /// Hashes found in more than `max_postings_per_hash` places are too common to be evidence and
    /// are skipped.
    fn seeds(
        &self,
        query_hashes: &[u64],
        filter: ScopeFilter,
        max_postings_per_hash: usize,
    ) -> impl Future<Output = LibraryResult<Vec<Seed>>> + Send;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn details_import_from_text_or_numbers_and_blank_is_absent() {
        let bib: BibInfo =
            serde_json::from_str(r#"{"volume": 36, "issue": "2", "pages": " ", "doi": null}"#)
                .unwrap();
        assert_eq!(bib.volume.as_deref(), Some("36"));
        assert_eq!(bib.issue.as_deref(), Some("2"));
        assert_eq!((bib.pages, bib.doi), (None, None));
        let meta: DocMeta = serde_json::from_str(
            r#"{"id": 1, "title": "t", "scope": "public", "chars": 1, "added_at": 0}"#,
        )
        .unwrap();
        assert!(
            meta.bib.is_empty(),
            "a library written before keeps opening"
        );
    }
}
