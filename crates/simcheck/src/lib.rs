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
pub mod related;
pub mod report;
pub mod segment;
pub mod sentence_index;

pub use align::SpanClass;
pub use embedded::EmbeddedLibrary;
pub use fingerprint::FingerprintParams;
pub use library::{
    BibInfo, DocId, DocMeta, Library, LibraryError, LibraryRecord, NewDoc, Scope, ScopeFilter,
    SentenceHit,
};
pub use paraphrase::SentenceEmbedder;
pub use report::{Report, SourceShare, Span};
pub use sentence_index::{SemanticLibrary, SentenceIndex, sentence_vectors};

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
    /// Cosine similarity from which a sentence and a library sentence in another language are
    /// a suspected translation.
    pub translation_threshold: f32,
    /// A light-edit match needs an identical run at least this long (see `AlignParams`).
    pub min_anchor: usize,
    /// A sentence the sentence layer pairs with a library sentence of the same language is a
    /// light edit (counted like copying), not a paraphrase, when their longest common
    /// subsequence of letters and characters covers at least this share of the longer one: its
    /// characters are the source's, only scattered edits broke the fingerprints.
    pub light_edit_overlap: f32,
    /// The overlap a shorter sentence (`paraphrase::MIN_SHORT_LIGHT_EDIT_LETTERS` to 24
    /// letters) needs to be a light edit: nearly every character kept, as a copied sentence
    /// is and a filled-in template is not (`f32::INFINITY`: shorter sentences are never light
    /// edits).
    pub short_light_edit_overlap: f32,
    /// The cosine from which a long sentence (25 letters or more) with `light_edit_overlap` of a
    /// library sentence's characters is a light edit even below `paraphrase_threshold`: scattered
    /// edits (eight in fifty letters) move the encoder more than they move the characters
    /// (`f32::INFINITY`: only pairs above the threshold are light edits).
    pub edited_copy_floor: f32,
    /// The headings the document marks, `(line, level)` (a .docx's heading styles): they decide
    /// the chapters (see `segment_with`). Empty: chapters are recognised from the text.
    pub headings: Vec<(usize, u8)>,
    /// A match whose fingerprints are used by at least this many library documents is a common
    /// phrase (常用表述). `None`: `common_phrase_docs(library size)`.
    pub common_phrase_docs: Option<usize>,
    /// Ask the sentence layer again about matches common only by the two-document rule: one
    /// that is a light edit of a single library sentence is a copy (see `check_with`).
    pub recheck_two_document_commons: bool,
    /// Inside a match marked common, a run at least this long (characters) that fewer documents
    /// share is the source's own wording and stays counted (`usize::MAX`: the whole match is
    /// common; see `split_off_rare_runs`).
    pub rare_run_chars: usize,
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
            translation_threshold: TRANSLATION_THRESHOLD,
            min_anchor: align::LIGHT_EDIT_ANCHOR,
            light_edit_overlap: LIGHT_EDIT_OVERLAP,
            short_light_edit_overlap: SHORT_LIGHT_EDIT_OVERLAP,
            edited_copy_floor: EDITED_COPY_FLOOR,
            headings: Vec::new(),
            common_phrase_docs: None,
            recheck_two_document_commons: true,
            rare_run_chars: RARE_RUN_CHARS,
        }
    }
}

/// The cosine similarity from which two sentences are a suspected paraphrase, chosen with
/// `bench/…/paraphrase-calibration` (see docs/simcheck.md).
pub const PARAPHRASE_THRESHOLD: f32 = 0.80;

/// The cosine similarity from which a sentence is a suspected translation of a library sentence
/// in another language, chosen with `simcheck-realprose` (docs/simcheck.md).
pub const TRANSLATION_THRESHOLD: f32 = 0.60;

/// The character overlap from which a sentence-layer pair is a light edit, chosen with
/// `simcheck-realprose` (docs/simcheck.md): the 2025 model's 降重 rewordings of
/// `csl-paraphrases.json` reach at most 0.75, sentences with one character in twelve edited at
/// least 0.80.
pub const LIGHT_EDIT_OVERLAP: f32 = 0.80;

/// The character overlap from which a shorter sentence-layer pair is a light edit
/// (`CheckOptions::short_light_edit_overlap`), chosen with `simcheck-realprose`.
pub const SHORT_LIGHT_EDIT_OVERLAP: f32 = 0.90;

/// The cosine from which an edited copy is judged on its characters
/// (`CheckOptions::edited_copy_floor`), chosen with `simcheck-realprose` (docs/simcheck.md).
pub const EDITED_COPY_FLOOR: f32 = 0.50;

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
        min_anchor: options.min_anchor,
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
    // The shared k-grams each aligned span was found by, parallel to `spans`.
    let mut span_seeds: Vec<Vec<SeedAt>> = Vec::new();
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
        let matches = align::align(&query.chars, &source.chars, &mut doc_seeds, &align);
        for m in matches {
            for (qs, qe) in checkable_runs(&checkable, m.q_start, m.q_end, options.min_span) {
                // Source bounds follow the query piece along the match.
                let ss = (m.s_start + (qs - m.q_start)).min(m.s_end - 1);
                let se = (m.s_end.saturating_sub(m.q_end - qe))
                    .max(ss + 1)
                    .min(source.len());
                let (start, end) = query.original_range(qs, qe);
                let (source_start, source_end) = source.original_range(ss, se);
                let ((start, end), (source_start, source_end), edges_edited) =
                    extend_to_sentence_edges(
                        &doc,
                        &text_chars,
                        &excluded,
                        (start, end),
                        &source_chars,
                        (source_start, source_end),
                    );
                let class = classify(
                    &doc,
                    start,
                    end,
                    if m.edited || edges_edited {
                        SpanClass::LightEdit
                    } else {
                        SpanClass::Copy
                    },
                );
                let mut seeds_in: Vec<SeedAt> = doc_seeds
                    .iter()
                    .map(|&(q, s)| (q as usize, s as usize))
                    .filter(|&(q, s)| qs <= q && q + params.k <= qe && s + params.k <= source.len())
                    .map(|(q, s)| SeedAt {
                        hash: hashes[q],
                        at: query.original_range(q, q + params.k),
                        source_at: source.original_range(s, s + params.k),
                    })
                    .collect();
                seeds_in.sort_by_key(|seed| seed.at);
                span_seeds.push(seeds_in);
                spans.push(Span {
                    start,
                    end,
                    source_id: doc_id,
                    source_start,
                    source_end,
                    class,
                    chars: 0,
                    source_text: passage(&source_chars, source_start, source_end),
                    docs: 0,
                });
                found = true;
            }
        }
        if found {
            sources.insert(doc_id, meta);
        }
    }
    let common_docs = match options.common_phrase_docs {
        Some(n) => n,
        None => common_phrase_docs(library.doc_count().await?),
    };
    mark_common_phrases(
        library,
        &mut spans,
        &span_seeds,
        common_docs,
        options.rare_run_chars,
    )
    .await?;
    if let Some(embedder) = embedder {
        // Common phrases count as covered: stock wording is not re-reported as a paraphrase.
        // A match common only by the two-document rule (short, or a short light edit) is
        // looked at once more: a sentence that is a light edit of one library sentence, and
        // close to no other document's, is a copy whose words other abstracts happen to use.
        let by_two_documents = |s: &Span| {
            options.recheck_two_document_commons
                && s.class == SpanClass::Common
                && (s.docs as usize) < common_docs
        };
        let closed = |skip_weak: bool| {
            let mut covered = vec![false; text_chars.len()];
            for s in spans.iter().filter(|s| !(skip_weak && by_two_documents(s))) {
                covered[s.start..s.end].iter_mut().for_each(|c| *c = true);
            }
            let excluded = &excluded;
            move |s: usize, e: usize| {
                let hit = covered[s..e].iter().filter(|c| **c).count();
                hit * 2 >= e - s || excluded[s]
            }
        };
        let strictly_open = paraphrase::sentences(&doc, &text_chars, closed(false));
        let open_sentences = if options.recheck_two_document_commons {
            paraphrase::sentences(&doc, &text_chars, closed(true))
        } else {
            strictly_open.clone()
        };
        let found = paraphrase::find_in_library(
            library,
            &text_chars,
            &open_sentences,
            &paraphrase_candidates,
            embedder,
            options,
        )
        .await?;
        // On a sentence opened again only a light edit without figures is taken, and it stands
        // for the common phrases it holds: a template is filled in with figures ("在2.0～40.0
        // μg·mL-1范围内与峰面积呈良好线性关系"), and the one document whose sentence is closest
        // is no evidence that it was copied.
        let reopened =
            |f: &paraphrase::Found| !strictly_open.iter().any(|&(s, e)| s < f.end && f.start < e);
        let found: Vec<paraphrase::Found> = found
            .into_iter()
            .filter(|f| {
                !reopened(f)
                    || (f.kind == paraphrase::FoundKind::LightEdit
                        && !text_chars[f.start..f.end].iter().any(|c| c.is_numeric()))
            })
            .collect();
        spans.retain(|s| {
            !(by_two_documents(s)
                && found.iter().any(|f| {
                    f.kind == paraphrase::FoundKind::LightEdit
                        && overlap((s.start, s.end), (f.start, f.end)) * 2 >= s.end - s.start
                }))
        });
        for f in found {
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
                class: match f.kind {
                    paraphrase::FoundKind::Translated => SpanClass::Translated,
                    paraphrase::FoundKind::Paraphrase => SpanClass::Paraphrase,
                    paraphrase::FoundKind::LightEdit => {
                        classify(&doc, f.start, f.end, SpanClass::LightEdit)
                    }
                },
                chars: 0,
                source_text: f.source_text,
                docs: 0,
            });
        }
    }
    join_passages(library, &mut spans).await?;
    Ok(report::build(report::ReportInput {
        text_chars: &text_chars,
        doc: &doc,
        excluded: &excluded,
        spans,
        sources,
        count_common: false,
    }))
}

/// The common-phrase threshold for a library of `docs` documents: a match is 常用表述 when
/// most of its fingerprints occur in at least this many documents. Chosen with
/// `simcheck-realprose` (docs/simcheck.md): it grows with the square root of the library, since
/// a field's stock phrases spread over more documents as the field's share grows.
pub fn common_phrase_docs(docs: u64) -> usize {
    ((docs as f64).sqrt() * COMMON_PHRASE_SQRT_FACTOR)
        .round()
        .max(COMMON_PHRASE_MIN_DOCS as f64) as usize
}

const COMMON_PHRASE_MIN_DOCS: usize = 4;
/// Matches shorter than this (characters) are common from `SHORT_SPAN_COMMON_DOCS` documents.
const SHORT_SPAN_CHARS: usize = 25;
const SHORT_SPAN_COMMON_DOCS: usize = 2;
const COMMON_PHRASE_SQRT_FACTOR: f64 = 0.12;
/// A light edit this long needs as many documents as an exact passage to be common (measured in
/// docs/simcheck.md: 40 counts the own text's filled-in templates, 100 misses duplicates).
const LONG_LIGHT_EDIT_CHARS: usize = 60;

/// A k-gram a span shares with its source: where it lies in the paper and in the source
/// (character ranges of the original texts).
struct SeedAt {
    hash: u64,
    at: Range,
    source_at: Range,
}

/// Characters `[start, end)` of a text.
type Range = (usize, usize);

/// A run of rare k-grams at least this long inside a common match is the source's own wording
/// between stock phrases ("…差异均无统计学意义（P>0.05）。T2～T4时点，N组患者的血糖、ACTH、NE、SVR、
/// EVLW和PVPI均显著高于其余3组…差异均有统计学意义"): it stays a copy.
pub const RARE_RUN_CHARS: usize = 25;

/// `span` as the pieces of a common match (used by `docs` documents): its runs of rare k-grams
/// (`rare[i]` for `seeds[i]`) of `rare_run_chars` or more keep the span's class, the rest is
/// common. In text order; the whole span, common, when it has no such run.
fn split_off_rare_runs(
    span: &Span,
    seeds: &[SeedAt],
    rare: &[bool],
    docs: u32,
    rare_run_chars: usize,
) -> Vec<Span> {
    let class = span.class;
    // Only the k-grams on the match's own diagonal: a stock phrase the source repeats elsewhere
    // is shared there too.
    let drift = |seed: &SeedAt| {
        (seed.at.0 - span.start).abs_diff(seed.source_at.0.saturating_sub(span.source_start))
    };
    let tolerance = ((span.end - span.start) / 10).max(8);
    let on_path = seeds.iter().zip(rare).filter(|(seed, _)| {
        span.start <= seed.at.0
            && seed.at.1 <= span.end
            && span.source_start <= seed.source_at.0
            && seed.source_at.1 <= span.source_end
            && drift(seed) <= tolerance
    });
    // Rare runs: consecutive rare k-grams, as paper and source ranges.
    let mut runs: Vec<(Range, Range)> = Vec::new();
    let mut open: Option<(Range, Range)> = None;
    for (seed, &is_rare) in on_path {
        match (&mut open, is_rare) {
            (Some(run), true) => {
                run.0.1 = run.0.1.max(seed.at.1);
                run.1.1 = run.1.1.max(seed.source_at.1);
            }
            (None, true) => open = Some((seed.at, seed.source_at)),
            (_, false) => runs.extend(open.take()),
        }
    }
    runs.extend(open);
    runs.retain(|(at, source_at)| at.1 - at.0 >= rare_run_chars && source_at.0 < source_at.1);
    // Pieces in order, each with its source range: common, rare, common, …
    let mut bounds: Vec<(Range, Range, SpanClass)> = Vec::new();
    let (mut at, mut source_at) = (span.start, span.source_start);
    for (rare_at, rare_source) in runs {
        if rare_at.0 < at || rare_source.0 < source_at {
            continue;
        }
        if rare_at.0 > at {
            bounds.push((
                (at, rare_at.0),
                (source_at, rare_source.0),
                SpanClass::Common,
            ));
        }
        bounds.push((rare_at, rare_source, class));
        (at, source_at) = (rare_at.1, rare_source.1);
    }
    if at < span.end {
        bounds.push((
            (at, span.end),
            (source_at, span.source_end),
            SpanClass::Common,
        ));
    }
    let source_chars: Vec<char> = span.source_text.chars().collect();
    bounds
        .into_iter()
        .map(|((start, end), (source_start, source_end), class)| Span {
            start,
            end,
            source_id: span.source_id,
            source_start,
            source_end,
            class,
            chars: 0,
            source_text: passage(
                &source_chars,
                source_start - span.source_start,
                source_end.max(source_start) - span.source_start,
            ),
            docs: if class == SpanClass::Common { docs } else { 0 },
        })
        .collect()
}

/// Marks as common the spans most of whose fingerprints at least `threshold` public documents
/// use (but for the source's own wording between them), and keeps one entry per passage (its
/// most used source stands for all).
async fn mark_common_phrases<L: Library>(
    library: &L,
    spans: &mut Vec<Span>,
    span_seeds: &[Vec<SeedAt>],
    threshold: usize,
    rare_run_chars: usize,
) -> Result<(), LibraryError> {
    let mut distinct: Vec<u64> = span_seeds.iter().flatten().map(|s| s.hash).collect();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.is_empty() || threshold == usize::MAX {
        return Ok(());
    }
    let cap = u32::try_from(threshold.saturating_mul(4))
        .unwrap_or(u32::MAX)
        .max(1_000);
    let df: HashMap<u64, u32> = distinct
        .iter()
        .copied()
        .zip(library.document_frequencies(&distinct, cap).await?)
        .collect();
    // How many documents' matches cover each character of the paper: k-grams every field uses
    // can be common one by one while the passage they make up is one source's.
    let paper_chars = spans.iter().map(|s| s.end).max().unwrap_or(0);
    let mut sharing = vec![0u32; paper_chars];
    {
        let mut by_source: Vec<(DocId, usize, usize)> = spans
            .iter()
            .map(|s| (s.source_id, s.start, s.end))
            .collect();
        by_source.sort_unstable();
        // Spans of one source in text order: each character counts once per source.
        let mut reached: Option<(DocId, usize)> = None;
        for (doc, start, end) in by_source {
            let before = reached.filter(|r| r.0 == doc).map_or(0, |r| r.1);
            for n in &mut sharing[start.max(before).min(end)..end] {
                *n += 1;
            }
            reached = Some((doc, before.max(end)));
        }
    }
    let mut pieces: Vec<Span> = Vec::new();
    let mut rare_pieces: Vec<Span> = Vec::new();
    for (span, seeds) in spans.iter_mut().zip(span_seeds) {
        let mut used: Vec<u32> = seeds.iter().map(|s| df[&s.hash]).collect();
        // A short match, or a light edit (a template with other figures filled in), is a
        // formula as soon as two documents share most of it; a longer exact passage two
        // documents share (a paper and its thesis) is still copying until many use it.
        // A whole light-edited passage two documents share is a paper published twice, not a
        // template: templates are phrases, and their fill-ins break them into shorter matches.
        let length = span.end - span.start;
        let needed = if length < SHORT_SPAN_CHARS
            || (span.class == SpanClass::LightEdit && length < LONG_LIGHT_EDIT_CHARS)
        {
            threshold.min(SHORT_SPAN_COMMON_DOCS)
        } else {
            threshold
        };
        let common = used.iter().filter(|&&d| d as usize >= needed).count();
        if !used.is_empty() && common * 2 >= used.len() {
            let rare: Vec<bool> = seeds
                .iter()
                .zip(&used)
                .map(|(seed, &d)| {
                    (d as usize) < needed
                        || (span.class == SpanClass::Copy || length >= LONG_LIGHT_EDIT_CHARS)
                            && sharing[seed.at.0..seed.at.1]
                                .iter()
                                .any(|&n| (n as usize) < needed)
                })
                .collect();
            used.sort_unstable();
            let docs = used[used.len() / 2];
            for piece in split_off_rare_runs(span, seeds, &rare, docs, rare_run_chars) {
                if piece.class == SpanClass::Common {
                    pieces.push(piece);
                } else {
                    rare_pieces.push(piece);
                }
            }
            // Replaced by its pieces.
            span.end = span.start;
        }
    }
    spans.retain(|s| s.end > s.start);
    spans.extend(pieces);
    // A match over characters a common phrase already covers (found against another source,
    // often with no fingerprint of its own inside it) is that phrase again, not a copy.
    let common_ranges: Vec<(usize, usize, u32)> = spans
        .iter()
        .filter(|s| s.class == SpanClass::Common)
        .map(|s| (s.start, s.end, s.docs))
        .collect();
    for span in spans
        .iter_mut()
        .filter(|s| matches!(s.class, SpanClass::Copy | SpanClass::LightEdit))
    {
        let on: Vec<&(usize, usize, u32)> = common_ranges
            .iter()
            .filter(|c| c.0 < span.end && span.start < c.1)
            .collect();
        let covered = (span.start..span.end)
            .filter(|&i| on.iter().any(|c| c.0 <= i && i < c.1))
            .count();
        if !on.is_empty() && covered * 5 >= (span.end - span.start) * 4 {
            span.class = SpanClass::Common;
            span.docs = on.iter().map(|c| c.2).max().unwrap_or(0);
        }
    }
    // One entry per common passage: the longest span stands for those it mostly overlaps.
    let mut order: Vec<usize> = (0..spans.len()).collect();
    order.sort_by_key(|&i| {
        (
            std::cmp::Reverse(spans[i].end - spans[i].start),
            spans[i].start,
        )
    });
    let mut kept: Vec<(usize, usize)> = Vec::new();
    let mut drop = vec![false; spans.len()];
    for i in order
        .into_iter()
        .filter(|&i| spans[i].class == SpanClass::Common)
    {
        let s = &spans[i];
        let shared: usize = kept.iter().map(|&k| overlap(k, (s.start, s.end))).sum();
        if shared * 2 >= s.end - s.start {
            drop[i] = true;
        } else {
            kept.push((s.start, s.end));
        }
    }
    let mut i = 0;
    spans.retain(|_| {
        i += 1;
        !drop[i - 1]
    });
    // The source's own wording inside a common match was judged on its own characters.
    spans.extend(rare_pieces);
    Ok(())
}

/// Most letters and characters an edited sentence edge may hold for a match to be extended
/// over it with `EDGE_OVERLAP`.
const EDGE_CHARS: usize = 16;
/// The share of an edge's characters the source must have next to the match, in order.
const EDGE_OVERLAP: f32 = 0.6;

/// An edge longer than this is never joined: it bounds the comparison's cost on hostile text (one
/// long unpunctuated "sentence" holding many matches). Clause-long edited edges do occur (64 lost
/// two edited passages of the real-prose bench, 256 none).
const LONG_EDGE_MAX_LETTERS: usize = 256;

/// The share a sentence edge of `letters` letters and characters needs: a longer edge (a
/// cluster of edits left no fingerprint over it: "…为儦方便人们吉理倏某些俘非本族傉言…") needs as
/// much of the source's characters as a light-edited sentence does (`LIGHT_EDIT_OVERLAP`).
fn edge_needed(letters: usize) -> f32 {
    if letters <= EDGE_CHARS {
        EDGE_OVERLAP
    } else {
        LIGHT_EDIT_OVERLAP
    }
}

/// The source letters read next to a match for an edge of `letters`: a few more, since edits
/// may have taken some out.
fn edge_window(letters: usize) -> usize {
    letters + 2 + letters / 8
}

/// A match that stops a few characters short of its sentence's start or end, where the source
/// goes on with mostly the same characters, reaches the sentence edge: an edit close to the edge
/// left no fingerprint there. Returns the bounds and whether an edge was added.
fn extend_to_sentence_edges(
    doc: &segment::Document,
    text_chars: &[char],
    excluded: &[bool],
    (mut start, mut end): (usize, usize),
    source_chars: &[char],
    (mut source_start, mut source_end): (usize, usize),
) -> ((usize, usize), (usize, usize), bool) {
    let letters = |s: &[char]| s.iter().filter(|c| c.is_alphanumeric()).count();
    // Sentences are in text order and do not overlap.
    let sentence_of = |at: usize| {
        let after = doc.sentences.partition_point(|s| s.start <= at);
        after
            .checked_sub(1)
            .map(|i| &doc.sentences[i])
            .filter(|s| at < s.end)
    };
    let mut extended = false;
    // A short match is as likely a template whose neighbours differ.
    if end - start < SHORT_SPAN_CHARS {
        return ((start, end), (source_start, source_end), false);
    }
    if let Some(sentence) = sentence_of(start)
        && !excluded[sentence.start]
    {
        let head = &text_chars[sentence.start..start];
        let wanted = letters(head);
        if (1..=LONG_EDGE_MAX_LETTERS).contains(&wanted) {
            // The source's characters just before the match, a few more than the head holds.
            let mut from = source_start;
            let mut seen = 0;
            while from > 0 && seen < edge_window(wanted) {
                from -= 1;
                if source_chars[from].is_alphanumeric() {
                    seen += 1;
                }
            }
            if paraphrase::edge_overlap(head, &source_chars[from..source_start])
                >= edge_needed(wanted)
            {
                let mut at = source_start;
                let mut seen = 0;
                while at > from && seen < wanted {
                    at -= 1;
                    if source_chars[at].is_alphanumeric() {
                        seen += 1;
                    }
                }
                start = sentence.start;
                source_start = at;
                extended = true;
            }
        }
    }
    if end > 0
        && let Some(sentence) = sentence_of(end - 1)
        && !excluded[sentence.end - 1]
    {
        let tail = &text_chars[end..sentence.end];
        let wanted = letters(tail);
        if (1..=LONG_EDGE_MAX_LETTERS).contains(&wanted) {
            let mut to = source_end;
            let mut seen = 0;
            while to < source_chars.len() && seen < edge_window(wanted) {
                if source_chars[to].is_alphanumeric() {
                    seen += 1;
                }
                to += 1;
            }
            if paraphrase::edge_overlap(tail, &source_chars[source_end..to]) >= edge_needed(wanted)
            {
                let mut at = source_end;
                let mut seen = 0;
                while at < to && seen < wanted {
                    if source_chars[at].is_alphanumeric() {
                        seen += 1;
                    }
                    at += 1;
                }
                end = sentence.end;
                source_end = at;
                extended = true;
            }
        }
    }
    ((start, end), (source_start, source_end), extended)
}

/// Most characters between two pieces of one passage, on either side, for them to be joined.
const JOIN_GAP: usize = 12;

/// Matches with one source that follow each other closely in the submission and in the source
/// are one passage whose middle was edited more heavily than the alignment bridges (or a
/// sentence the sentence layer found next to a fingerprint match): they become one light-edit
/// span, so the passage is listed once and its edited middle counts with it.
async fn join_passages<L: Library>(library: &L, spans: &mut Vec<Span>) -> Result<(), LibraryError> {
    let joinable = |s: &Span| matches!(s.class, SpanClass::Copy | SpanClass::LightEdit);
    let mut order: Vec<usize> = (0..spans.len()).filter(|&i| joinable(&spans[i])).collect();
    order.sort_by_key(|&i| (spans[i].source_id, spans[i].start, spans[i].end));
    let mut removed = vec![false; spans.len()];
    let mut changed = Vec::new();
    let mut open: Option<usize> = None;
    for i in order {
        if let Some(o) = open {
            let (first, next) = (&spans[o], &spans[i]);
            // Two pieces extended over one edited sentence to its edges can end up as the same
            // passage, their source bounds a character or two apart: the later is part of the
            // first. (Joining pieces that merely overlap raised a held-out draw's ratio error
            // from 1.75 to 3.42 points: docs/simcheck.md.)
            let within = first.source_id == next.source_id
                && next.end <= first.end
                && next.source_start < first.source_end
                && first.source_start < next.source_end;
            if within {
                removed[i] = true;
                continue;
            }
            // Two short matches near each other are a field's template filled in differently
            // more often than one edited passage.
            let long_enough =
                (first.end - first.start) + (next.end - next.start) >= 2 * SHORT_SPAN_CHARS;
            let follows = long_enough
                && first.source_id == next.source_id
                && next.start <= first.end + JOIN_GAP
                && next.source_start <= first.source_end + JOIN_GAP
                && next.source_end > first.source_end
                && next.source_start + JOIN_GAP >= first.source_start;
            if follows {
                let exact = first.class == SpanClass::Copy
                    && next.class == SpanClass::Copy
                    && next.start <= first.end
                    && next.source_start <= first.source_end;
                let (end, source_end) = (next.end.max(first.end), next.source_end);
                let span = &mut spans[o];
                span.end = end;
                span.source_end = source_end;
                if !exact {
                    span.class = SpanClass::LightEdit;
                }
                removed[i] = true;
                if !changed.contains(&o) {
                    changed.push(o);
                }
                continue;
            }
        }
        open = Some(i);
    }
    // Each joined source's text is read once, however many of its passages were joined.
    changed.sort_by_key(|&o| spans[o].source_id);
    let mut text: Option<(DocId, Vec<char>)> = None;
    for o in changed {
        let id = spans[o].source_id;
        if text.as_ref().is_none_or(|(read, _)| *read != id) {
            text = library.text(id).await?.map(|t| (id, t.chars().collect()));
        }
        if let Some((_, chars)) = &text {
            spans[o].source_text = passage(chars, spans[o].source_start, spans[o].source_end);
        }
    }
    let mut index = 0;
    spans.retain(|_| {
        index += 1;
        !removed[index - 1]
    });
    Ok(())
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
    /// Count common phrases (常用表述) in the ratios, as copies.
    pub count_common: bool,
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
                bib: Default::default(),
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
        count_common: filter.count_common,
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
