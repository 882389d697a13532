//! simcheck (查重): the similarity engine. Plain Rust, no HTTP or SQL.
//!
//! normalise (offsets kept) → segment (chapters, paragraphs, sentences, sections, quotations,
//! citations) → fingerprint (k-grams, winnowing) → library lookup (seeds) → align (maximal
//! spans, light edits) → report (总文字复制比 and the rest).

pub mod align;
pub mod conformance;
pub mod embedded;
pub mod fingerprint;
pub mod library;
pub mod normalize;
pub mod paraphrase;
pub mod report;
pub mod segment;

pub use align::SpanClass;
pub use embedded::EmbeddedLibrary;
pub use fingerprint::FingerprintParams;
pub use library::{DocId, DocMeta, Library, LibraryError, NewDoc, Scope, ScopeFilter};
pub use paraphrase::SentenceEmbedder;
pub use report::{Report, SourceShare, Span};

use align::AlignParams;
use fingerprint::kgram_hashes;
use normalize::normalize;
use segment::{SectionKind, segment_with};
use std::collections::HashMap;

/// Engine version, printed on reports.
pub const ENGINE_VERSION: &str = concat!("simcheck ", env!("CARGO_PKG_VERSION"));

#[derive(Debug, Clone)]
pub struct CheckOptions {
    /// Shortest reported match in characters (default 13, CNKI's rule).
    pub min_span: usize,
    /// Largest edit gap bridged inside one light-edit match.
    pub max_gap: usize,
    pub exclude_bibliography: bool,
    pub exclude_toc: bool,
    pub scope: ScopeFilter,
    /// How many library documents with the most shared k-grams are aligned.
    pub max_candidates: usize,
    /// k-grams found in more places than this are too common to count as evidence.
    pub max_postings_per_hash: usize,
    /// How many library documents (most shared k-grams first) the paraphrase layer compares.
    pub paraphrase_candidates: usize,
    /// Cosine similarity from which a sentence pair is a suspected paraphrase.
    pub paraphrase_threshold: f32,
    /// The headings the document marks, `(line, level)` (a .docx's heading styles): they decide
    /// the chapters (see `segment_with`). Empty: chapters are recognised from the text.
    pub headings: Vec<(usize, u8)>,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            min_span: 13,
            max_gap: 6,
            exclude_bibliography: true,
            exclude_toc: true,
            scope: ScopeFilter::default(),
            max_candidates: 200,
            max_postings_per_hash: 2_000,
            paraphrase_candidates: 10,
            paraphrase_threshold: PARAPHRASE_THRESHOLD,
            headings: Vec::new(),
        }
    }
}

/// The cosine similarity from which two sentences are a suspected paraphrase, chosen with
/// `bench/…/paraphrase-calibration` (see docs/simcheck.md).
pub const PARAPHRASE_THRESHOLD: f32 = 0.92;

/// Checks `text` against `library` for copies (no paraphrase layer).
pub async fn check<L: Library>(
    text: &str,
    library: &L,
    options: &CheckOptions,
) -> Result<Report, LibraryError> {
    check_with(text, library, options, None).await
}

/// Checks `text` against `library`; with an `embedder`, sentences no copy covers are also
/// compared by meaning with the closest library documents (suspected paraphrases).
pub async fn check_with<L: Library>(
    text: &str,
    library: &L,
    options: &CheckOptions,
    embedder: Option<&dyn SentenceEmbedder>,
) -> Result<Report, LibraryError> {
    let text_chars: Vec<char> = text.chars().collect();
    let doc = segment_with(text, &options.headings);
    let excluded = excluded_mask(&doc, text_chars.len(), options);
    let query = normalize(text);
    let checkable: Vec<bool> = query
        .offsets
        .iter()
        .map(|&o| !excluded[o as usize])
        .collect();
    let params = library.params();
    let align = AlignParams {
        k: params.k,
        min_span: options.min_span,
        max_gap: options.max_gap,
        ..AlignParams::default()
    };

    let hashes = kgram_hashes(&query.chars, params.k);
    let seeds = library
        .seeds(&hashes, options.scope, options.max_postings_per_hash)
        .await?;
    let mut by_doc: HashMap<DocId, Vec<(u32, u32)>> = HashMap::new();
    for s in seeds {
        let q = s.query_pos as usize;
        if checkable[q] && checkable[q + params.k - 1] {
            by_doc
                .entry(s.doc)
                .or_default()
                .push((s.query_pos, s.source_pos));
        }
    }
    let mut candidates: Vec<(DocId, Vec<(u32, u32)>)> = by_doc.into_iter().collect();
    candidates.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
    candidates.truncate(options.max_candidates);
    let paraphrase_candidates: Vec<DocId> = candidates
        .iter()
        .take(options.paraphrase_candidates)
        .map(|c| c.0)
        .collect();

    let mut spans = Vec::new();
    let mut sources = HashMap::new();
    for (doc_id, mut doc_seeds) in candidates {
        let (Some(meta), Some(source_text)) =
            (library.meta(doc_id).await?, library.text(doc_id).await?)
        else {
            continue;
        };
        let source = normalize(&source_text);
        let source_chars: Vec<char> = source_text.chars().collect();
        let mut found = false;
        for m in align::align(&query.chars, &source.chars, &mut doc_seeds, &align) {
            for (qs, qe) in checkable_runs(&checkable, m.q_start, m.q_end, options.min_span) {
                // Source bounds follow the query piece along the match.
                let ss = (m.s_start + (qs - m.q_start)).min(m.s_end - 1);
                let se = (m.s_end.saturating_sub(m.q_end - qe))
                    .max(ss + 1)
                    .min(source.len());
                let (start, end) = query.original_range(qs, qe);
                let (source_start, source_end) = source.original_range(ss, se);
                let class = classify(
                    &doc,
                    start,
                    end,
                    if m.edited {
                        SpanClass::LightEdit
                    } else {
                        SpanClass::Copy
                    },
                );
                spans.push(Span {
                    start,
                    end,
                    source_id: doc_id,
                    source_start,
                    source_end,
                    class,
                    chars: 0,
                    source_text: passage(&source_chars, source_start, source_end),
                });
                found = true;
            }
        }
        if found {
            sources.insert(doc_id, meta);
        }
    }
    if let Some(embedder) = embedder {
        let mut covered = vec![false; text_chars.len()];
        for s in &spans {
            covered[s.start..s.end].iter_mut().for_each(|c| *c = true);
        }
        let open_sentences = paraphrase::sentences(&doc, &text_chars, |s, e| {
            let hit = covered[s..e].iter().filter(|c| **c).count();
            hit * 2 >= e - s || excluded[s]
        });
        let mut texts = Vec::new();
        for id in paraphrase_candidates {
            if let Some(t) = library.text(id).await? {
                texts.push((id, t));
            }
        }
        let texts_by_id: HashMap<DocId, Vec<char>> = texts
            .iter()
            .map(|(id, t)| (*id, t.chars().collect()))
            .collect();
        for f in paraphrase::find(
            &text_chars,
            &open_sentences,
            &texts,
            embedder,
            options.paraphrase_threshold,
        ) {
            if !sources.contains_key(&f.source_id)
                && let Some(meta) = library.meta(f.source_id).await?
            {
                sources.insert(f.source_id, meta);
            }
            spans.push(Span {
                start: f.start,
                end: f.end,
                source_id: f.source_id,
                source_start: f.source_start,
                source_end: f.source_end,
                class: SpanClass::Paraphrase,
                chars: 0,
                source_text: texts_by_id
                    .get(&f.source_id)
                    .map(|c| passage(c, f.source_start, f.source_end))
                    .unwrap_or_default(),
            });
        }
    }
    Ok(report::build(report::ReportInput {
        text_chars: &text_chars,
        doc: &doc,
        excluded: &excluded,
        spans,
        sources,
    }))
}

fn passage(chars: &[char], start: usize, end: usize) -> String {
    chars[start.min(chars.len())..end.min(chars.len())]
        .iter()
        .collect()
}

/// What a reader of a report chooses to leave out (CNKI's report options); the figures are
/// computed again from the stored spans, so no second check runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReportFilter {
    /// Leave out quoted and cited passages.
    pub exclude_quoted: bool,
    /// Leave out matches with the author's own published work.
    pub exclude_own: bool,
    /// Leave out matches shorter than this many counted characters.
    pub min_chars: usize,
}

/// The report of `text` again, with only the spans `filter` keeps. `options` must be the ones the
/// check ran with (they decide which sections were excluded).
pub fn refigure(
    text: &str,
    report: &Report,
    options: &CheckOptions,
    filter: &ReportFilter,
) -> Report {
    let text_chars: Vec<char> = text.chars().collect();
    let doc = segment_with(text, &options.headings);
    let excluded = excluded_mask(&doc, text_chars.len(), options);
    let sources: HashMap<DocId, DocMeta> = report
        .sources
        .iter()
        .map(|s| {
            let meta = DocMeta {
                id: s.id,
                title: s.title.clone(),
                author: s.author.clone(),
                year: s.year,
                source: String::new(),
                owner: None,
                scope: s.scope,
                chars: 0,
                added_at: 0,
            };
            (s.id, meta)
        })
        .collect();
    let own = |id: DocId| {
        sources
            .get(&id)
            .is_some_and(|m| m.scope == Scope::OwnPublished)
    };
    let spans = report
        .spans
        .iter()
        .filter(|s| s.end <= text_chars.len() && s.start < s.end)
        .filter(|s| !(filter.exclude_quoted && s.class == SpanClass::Quoted))
        .filter(|s| !(filter.exclude_own && own(s.source_id)))
        .filter(|s| s.chars >= filter.min_chars)
        .cloned()
        .collect();
    report::build(report::ReportInput {
        text_chars: &text_chars,
        doc: &doc,
        excluded: &excluded,
        spans,
        sources,
    })
}

/// The characters that are not the paper's own prose — headings, the table of contents and the
/// reference list — by the check's segmentation: AI-text detection and rewriting leave them
/// out, so every engine reads the paper the same way. `headings` as in `CheckOptions::headings`.
pub fn not_prose_mask(text: &str, headings: &[(usize, u8)]) -> Vec<bool> {
    let doc = segment_with(text, headings);
    let mut mask = excluded_mask(&doc, text.chars().count(), &CheckOptions::default());
    for p in doc.paragraphs.iter().filter(|p| p.is_heading) {
        mask[p.start..p.end].iter_mut().for_each(|x| *x = true);
    }
    mask
}

/// Characters in sections the options leave out (reference list, table of contents).
fn excluded_mask(doc: &segment::Document, len: usize, options: &CheckOptions) -> Vec<bool> {
    let mut excluded = vec![false; len];
    for p in &doc.paragraphs {
        let skip = (options.exclude_bibliography && p.section == SectionKind::References)
            || (options.exclude_toc && p.section == SectionKind::Toc);
        if skip {
            excluded[p.start..p.end].iter_mut().for_each(|x| *x = true);
        }
    }
    excluded
}

/// The characters a check with these options counts: the number shown before payment, used for
/// the price, and reported as `total_chars`.
pub fn checked_chars(text: &str, options: &CheckOptions) -> usize {
    let chars: Vec<char> = text.chars().collect();
    let excluded = excluded_mask(&segment_with(text, &options.headings), chars.len(), options);
    chars
        .iter()
        .zip(&excluded)
        .filter(|(c, x)| normalize::is_counted(**c) && !**x)
        .count()
}

/// Maximal runs of checkable stream positions inside `[from, to)` at least `min` long.
fn checkable_runs(checkable: &[bool], from: usize, to: usize, min: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = from;
    while i < to {
        while i < to && !checkable[i] {
            i += 1;
        }
        let s = i;
        while i < to && checkable[i] {
            i += 1;
        }
        if i - s >= min {
            out.push((s, i));
        }
    }
    out
}

fn overlap(a: (usize, usize), b: (usize, usize)) -> usize {
    a.1.min(b.1).saturating_sub(a.0.max(b.0))
}

/// A span mostly inside quotation marks, or mostly inside a sentence that carries a citation
/// mark, is "quoted or cited".
fn classify(doc: &segment::Document, start: usize, end: usize, default: SpanClass) -> SpanClass {
    let len = end - start;
    let quoted: usize = doc
        .quotations
        .iter()
        .map(|&q| overlap(q, (start, end)))
        .sum();
    let cited: usize = doc
        .sentences
        .iter()
        .filter(|s| s.cited)
        .map(|s| overlap((s.start, s.end), (start, end)))
        .sum();
    if quoted * 2 >= len || cited * 2 >= len {
        SpanClass::Quoted
    } else {
        default
    }
}
