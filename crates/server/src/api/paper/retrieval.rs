//! The library as paper generation's reference source: the sentences of library records closest
//! in meaning to a section's query, grouped by record. Every reference the generator can cite
//! is a record found here, so none can be invented.

use compose::gbt7714::{RefKind, Reference};
use compose::generate::{Candidate, ReferenceSource};
use llm::chat::BoxFuture;
use simcheck::related::{
    RELATED_RULE, TOPIC_SENTENCES, best_per_record, mentions_topic, related_records,
};
use simcheck::{DocId, DocMeta, Library, ScopeFilter, SentenceEmbedder};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::OnceCell;

/// Library sentences looked at per query, before grouping by record.
const SENTENCES_PER_QUERY: usize = 48;
/// The snippet offered to the model, in characters.
const SNIPPET_CHARS: usize = 200;

pub struct LibrarySource<L> {
    library: Arc<L>,
    encoder: Arc<dyn SentenceEmbedder>,
    /// Public records, plus this user's own uploads.
    scope: ScopeFilter,
    /// The paper's title and keywords: a record is offered only if it is about them.
    topic: String,
    /// Words of the title and keywords of which a record must use one
    /// (`simcheck::related::topic_terms`).
    terms: Vec<String>,
    /// Each record's closest sentence to the topic, and the topic's vector, found once per
    /// paper.
    topic_hits: OnceCell<(HashMap<DocId, f32>, Vec<f32>)>,
    /// Each record's title's cosine to the topic: a record found for several sections has its
    /// title read by the encoder once.
    title_cosines: Mutex<HashMap<DocId, f32>>,
}

impl<L: Library> LibrarySource<L> {
    pub fn new(
        library: Arc<L>,
        encoder: Arc<dyn SentenceEmbedder>,
        owner: Option<i64>,
        topic: String,
        terms: Vec<String>,
    ) -> Self {
        LibrarySource {
            library,
            encoder,
            scope: ScopeFilter { owner },
            topic,
            terms,
            topic_hits: OnceCell::new(),
            title_cosines: Mutex::new(HashMap::new()),
        }
    }

    /// The library's sentences closest to `query`.
    async fn closest(&self, query: &str, k: usize) -> Result<Vec<simcheck::SentenceHit>, String> {
        let vector = self.encoder.embed(query);
        Ok(self
            .library
            .similar_sentences(&[vector], k)
            .await
            .map_err(|e| e.to_string())?
            // A library without a sentence index offers nothing to cite.
            .unwrap_or_default()
            .into_iter()
            .flatten()
            .collect())
    }

    async fn find(&self, query: &str, limit: usize) -> Result<Vec<Candidate>, String> {
        let (topic, topic_vector) = self
            .topic_hits
            .get_or_try_init(|| async {
                Ok::<_, String>((
                    best_per_record(&self.closest(&self.topic, TOPIC_SENTENCES).await?),
                    self.encoder.embed(&self.topic),
                ))
            })
            .await?;
        let section = self.closest(query, SENTENCES_PER_QUERY).await?;
        let ranked = related_records(&section, topic, RELATED_RULE);
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
            let cached = self
                .title_cosines
                .lock()
                .ok()
                .and_then(|c| c.get(&id).copied());
            let title_cosine = cached.unwrap_or_else(|| {
                let cosine = embed::cosine(&self.encoder.embed(meta.title.trim()), topic_vector);
                if let Ok(mut cache) = self.title_cosines.lock() {
                    cache.insert(id, cosine);
                }
                cosine
            });
            let closest = topic.get(&id).copied().unwrap_or(f32::MIN);
            if !RELATED_RULE.admits_title(title_cosine, closest) {
                continue;
            }
            let text = self
                .library
                .text(id)
                .await
                .map_err(|e| e.to_string())?
                .unwrap_or_default();
            if !mentions_topic(&meta.title, &text, &self.terms) {
                continue;
            }
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

/// A library record as a reference, from what was imported with it: title, authors, year and
/// source, and (where the import gave them) type, volume, issue, pages, DOI, publisher and
/// place. Nothing missing is guessed; the entry leaves it out. The source is the journal, or
/// for a thesis (or a book with a publisher given) where it was published.
pub fn reference_of(meta: &DocMeta) -> Reference {
    let authors = meta
        .author
        .split(['，', ',', ';', '；', '、'])
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .map(str::to_string)
        .collect();
    let bib = &meta.bib;
    let kind = bib
        .kind
        .as_deref()
        .and_then(|k| {
            let k = k.trim().trim_matches(['[', ']']);
            RefKind::from_code(k).or(match k {
                "期刊" | "期刊论文" => Some(RefKind::Journal),
                "学位论文" | "硕士论文" | "博士论文" => Some(RefKind::Thesis),
                "专著" | "图书" => Some(RefKind::Book),
                "会议" | "会议论文" => Some(RefKind::Conference),
                _ => None,
            })
        })
        .unwrap_or(RefKind::Journal);
    let source = Some(meta.source.trim().to_string()).filter(|s| !s.is_empty());
    let mut reference = Reference::new(kind, meta.title.trim());
    reference.authors = authors;
    match kind {
        RefKind::Journal | RefKind::Conference | RefKind::Newspaper => {
            reference.container = source;
            reference.publisher = bib.publisher.clone();
        }
        _ => reference.publisher = bib.publisher.clone().or(source),
    }
    reference.place = bib.place.clone();
    reference.year = meta.year.map(|y| y.to_string());
    reference.volume = bib.volume.clone();
    reference.issue = bib.issue.clone();
    reference.pages = bib.pages.clone();
    reference.doi = bib.doi.clone();
    reference
}

#[cfg(test)]
mod tests {
    use super::*;
    use simcheck::{BibInfo, Scope};

    fn meta(bib: BibInfo, source: &str) -> DocMeta {
        DocMeta {
            id: 1,
            title: "丹参注射液质量控制研究".into(),
            author: "张三，李四".into(),
            year: Some(2021),
            source: source.into(),
            owner: None,
            scope: Scope::Public,
            chars: 0,
            added_at: 0,
            bib,
        }
    }

    #[test]
    fn imported_details_make_a_full_entry_and_missing_ones_are_left_out() {
        let full = BibInfo {
            volume: Some("56".into()),
            issue: Some("3".into()),
            pages: Some("201-205".into()),
            doi: Some("10.11669/cpj.2021.03.007".into()),
            ..BibInfo::default()
        };
        assert_eq!(
            compose::gbt7714::format(&reference_of(&meta(full, "中国药学杂志"))),
            "张三, 李四. 丹参注射液质量控制研究[J]. 中国药学杂志, 2021, 56(3): 201-205. DOI:10.11669/cpj.2021.03.007."
        );
        assert_eq!(
            compose::gbt7714::format(&reference_of(&meta(BibInfo::default(), "中国药学杂志"))),
            "张三, 李四. 丹参注射液质量控制研究[J]. 中国药学杂志, 2021."
        );
        let thesis = BibInfo {
            kind: Some("D".into()),
            place: Some("北京".into()),
            ..BibInfo::default()
        };
        assert_eq!(
            compose::gbt7714::format(&reference_of(&meta(thesis, "北京中医药大学"))),
            "张三, 李四. 丹参注射液质量控制研究[D]. 北京: 北京中医药大学, 2021."
        );
    }
}
