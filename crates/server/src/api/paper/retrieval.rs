//! The library as paper generation's reference source: the sentences of library records closest
//! in meaning to a section's query, grouped by record. Every reference the generator can cite
//! is a record found here, so none can be invented.

use compose::gbt7714::{RefKind, Reference};
use compose::generate::{Candidate, ReferenceSource};
use llm::chat::BoxFuture;
use simcheck::{DocMeta, Library, ScopeFilter, SentenceEmbedder};
use std::collections::HashMap;
use std::sync::Arc;

/// Library sentences looked at per query, before grouping by record.
const SENTENCES_PER_QUERY: usize = 48;
/// A record below this cosine similarity to the query is not about the section.
const MIN_SIMILARITY: f32 = 0.45;
/// The snippet offered to the model, in characters.
const SNIPPET_CHARS: usize = 200;

pub struct LibrarySource<L> {
    library: Arc<L>,
    encoder: Arc<dyn SentenceEmbedder>,
    /// Public records, plus this user's own uploads.
    scope: ScopeFilter,
}

impl<L: Library> LibrarySource<L> {
    pub fn new(library: Arc<L>, encoder: Arc<dyn SentenceEmbedder>, owner: Option<i64>) -> Self {
        LibrarySource {
            library,
            encoder,
            scope: ScopeFilter { owner },
        }
    }

    async fn find(&self, query: &str, limit: usize) -> Result<Vec<Candidate>, String> {
        let vector = self.encoder.embed(query);
        let hits = self
            .library
            .similar_sentences(&[vector], SENTENCES_PER_QUERY)
            .await
            .map_err(|e| e.to_string())?
            // A library without a sentence index offers nothing to cite.
            .unwrap_or_default();
        let mut best: HashMap<u64, f32> = HashMap::new();
        for hit in hits.into_iter().flatten() {
            if hit.similarity >= MIN_SIMILARITY {
                let score = best.entry(hit.doc).or_insert(0.0);
                *score = score.max(hit.similarity);
            }
        }
        let mut ranked: Vec<(u64, f32)> = best.into_iter().collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let mut out = Vec::new();
        for (id, _) in ranked {
            if out.len() >= limit {
                break;
            }
            let Some(meta) = self.library.meta(id).await.map_err(|e| e.to_string())? else {
                continue;
            };
            if !self.scope.admits(meta.scope, meta.owner) || meta.title.trim().is_empty() {
                continue;
            }
            let text = self
                .library
                .text(id)
                .await
                .map_err(|e| e.to_string())?
                .unwrap_or_default();
            out.push(Candidate {
                id,
                reference: reference_of(&meta),
                snippet: text.chars().take(SNIPPET_CHARS).collect(),
            });
        }
        Ok(out)
    }
}

impl<L: Library + 'static> ReferenceSource for LibrarySource<L> {
    fn search<'a>(
        &'a self,
        query: &'a str,
        limit: usize,
    ) -> BoxFuture<'a, Result<Vec<Candidate>, String>> {
        Box::pin(self.find(query, limit))
    }
}

/// A library record as a reference: a journal article when its source names a journal. The
/// library keeps title, authors, year and source; volume, issue, pages and DOI are not imported
/// yet, so the entries leave them out rather than guess.
pub fn reference_of(meta: &DocMeta) -> Reference {
    let authors = meta
        .author
        .split(['，', ',', ';', '；', '、'])
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .map(str::to_string)
        .collect();
    let mut reference = Reference::new(RefKind::Journal, meta.title.trim());
    reference.authors = authors;
    reference.container = Some(meta.source.trim().to_string()).filter(|s| !s.is_empty());
    reference.year = meta.year.map(|y| y.to_string());
    reference
}
