//! The report: CNKI-style figures computed from matched spans, all over one character-counting
//! rule (`normalize::is_counted`), so every figure agrees with the others.

use crate::align::SpanClass;
use crate::library::{DocId, DocMeta, Scope};
use crate::normalize::is_counted;
use crate::segment::{Document, SectionKind};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// One matched passage. Offsets are characters (Unicode scalar values) into the submitted text
/// and into the source's text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Span {
    pub start: usize,
    pub end: usize,
    pub source_id: DocId,
    pub source_start: usize,
    pub source_end: usize,
    pub class: SpanClass,
    /// Counted characters inside `[start, end)`.
    pub chars: usize,
    /// The source's passage `[source_start, source_end)`, kept with the report so 全文对照
    /// works after the library changes.
    #[serde(default)]
    pub source_text: String,
    /// For a common phrase: how many library documents use it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub docs: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceShare {
    pub id: DocId,
    pub title: String,
    pub author: String,
    pub year: Option<i32>,
    pub scope: Scope,
    /// Counted characters of the submission this source covers.
    pub copied_chars: usize,
    /// `copied_chars` as a percentage of `total_chars`.
    pub ratio: f64,
    /// Indexes into `Report::spans`.
    pub spans: Vec<usize>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartRatio {
    pub title: String,
    pub start: usize,
    pub end: usize,
    pub section: SectionKind,
    pub total_chars: usize,
    pub copied_chars: usize,
    pub ratio: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Counted characters that were checked (excluded sections left out).
    pub total_chars: usize,
    /// Counted characters in excluded sections (table of contents, reference list).
    pub excluded_chars: usize,
    /// Counted characters covered by at least one copy, light-edit or quoted span.
    pub copied_chars: usize,
    /// 总文字复制比, percent.
    pub ratio_total: f64,
    /// 去除引用文献复制比: without quoted and cited passages, percent.
    pub ratio_excluding_quotes: f64,
    /// 去除本人已发表文献复制比: without matches found only in the author's own published work.
    pub ratio_excluding_own: f64,
    /// 单篇最大文字复制比, percent, and its source.
    pub ratio_max_single_source: f64,
    pub max_single_source: Option<DocId>,
    /// Counted characters in suspected paraphrases (never part of the ratios above).
    pub paraphrase_chars: usize,
    /// Counted characters in suspected translations (never part of the ratios above).
    #[serde(default)]
    pub translated_chars: usize,
    /// Counted characters in common phrases (常用表述): when they are not counted, those no
    /// counted span covers; when they are, all of them.
    #[serde(default)]
    pub common_chars: usize,
    /// Whether common phrases are counted in the ratios (a report option; off by default).
    #[serde(default)]
    pub common_counted: bool,
    pub sources: Vec<SourceShare>,
    pub spans: Vec<Span>,
    pub chapters: Vec<PartRatio>,
    pub paragraphs: Vec<PartRatio>,
}

pub fn percent(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

pub(crate) struct ReportInput<'a> {
    pub text_chars: &'a [char],
    pub doc: &'a Document,
    /// Original characters in sections left out of the check.
    pub excluded: &'a [bool],
    pub spans: Vec<Span>,
    pub sources: HashMap<DocId, DocMeta>,
    /// Count common phrases in the ratios, as copies.
    pub count_common: bool,
}

pub(crate) fn build(input: ReportInput<'_>) -> Report {
    let ReportInput {
        text_chars,
        doc,
        excluded,
        mut spans,
        sources,
        count_common,
    } = input;
    let n = text_chars.len();
    let counted = |i: usize| is_counted(text_chars[i]) && !excluded[i];
    spans.sort_by_key(|s| (s.start, s.end, s.source_id));
    for s in &mut spans {
        s.chars = (s.start..s.end).filter(|&i| counted(i)).count();
    }

    let mut any = vec![false; n];
    let mut not_quoted = vec![false; n];
    let mut not_own = vec![false; n];
    let mut paraphrase = vec![false; n];
    let mut translated = vec![false; n];
    let mut common = vec![false; n];
    let mut per_source: HashMap<DocId, (Vec<bool>, Vec<usize>)> = HashMap::new();
    for (idx, s) in spans.iter().enumerate() {
        let own = sources
            .get(&s.source_id)
            .map(|m| m.scope == Scope::OwnPublished)
            .unwrap_or(false);
        if s.class == SpanClass::Translated {
            translated[s.start..s.end]
                .iter_mut()
                .for_each(|x| *x = true);
        }
        let (cover, list) = per_source
            .entry(s.source_id)
            .or_insert_with(|| (vec![false; n], vec![]));
        list.push(idx);
        // Common phrases keep their example source but count only when the reader asks.
        if s.class == SpanClass::Common {
            common[s.start..s.end].iter_mut().for_each(|x| *x = true);
            if !count_common {
                continue;
            }
        }
        // Suspected paraphrases list their source but never count towards any ratio.
        if matches!(s.class, SpanClass::Paraphrase | SpanClass::Translated) {
            paraphrase[s.start..s.end]
                .iter_mut()
                .for_each(|x| *x = true);
            continue;
        }
        for i in s.start..s.end {
            any[i] = true;
            cover[i] = true;
            if s.class != SpanClass::Quoted {
                not_quoted[i] = true;
            }
            if !own {
                not_own[i] = true;
            }
        }
    }
    let count = |flags: &[bool]| (0..n).filter(|&i| flags[i] && counted(i)).count();
    let total_chars = (0..n).filter(|&i| counted(i)).count();
    let excluded_chars = (0..n)
        .filter(|&i| is_counted(text_chars[i]) && excluded[i])
        .count();
    let copied_chars = count(&any);

    let mut shares: Vec<SourceShare> = per_source
        .into_iter()
        .map(|(id, (cover, spans_of))| {
            let copied = count(&cover);
            let meta = sources.get(&id);
            SourceShare {
                id,
                title: meta.map(|m| m.title.clone()).unwrap_or_default(),
                author: meta.map(|m| m.author.clone()).unwrap_or_default(),
                year: meta.and_then(|m| m.year),
                scope: meta.map(|m| m.scope).unwrap_or(Scope::Public),
                copied_chars: copied,
                ratio: percent(copied, total_chars),
                spans: spans_of,
            }
        })
        .collect();
    shares.sort_by(|a, b| {
        b.copied_chars
            .cmp(&a.copied_chars)
            .then(b.spans.len().cmp(&a.spans.len()))
            .then(a.id.cmp(&b.id))
    });
    let max = shares.first().filter(|s| s.copied_chars > 0);

    let part = |title: String, start: usize, end: usize, section: SectionKind| {
        let total = (start..end).filter(|&i| counted(i)).count();
        let copied = (start..end).filter(|&i| any[i] && counted(i)).count();
        PartRatio {
            title,
            start,
            end,
            section,
            total_chars: total,
            copied_chars: copied,
            ratio: percent(copied, total),
        }
    };
    let chapters = doc
        .chapters
        .iter()
        .map(|c| part(c.title.clone(), c.start, c.end, c.section))
        .collect();
    let paragraphs = doc
        .paragraphs
        .iter()
        .map(|p| part(String::new(), p.start, p.end, p.section))
        .collect();

    Report {
        total_chars,
        excluded_chars,
        copied_chars,
        ratio_total: percent(copied_chars, total_chars),
        ratio_excluding_quotes: percent(count(&not_quoted), total_chars),
        ratio_excluding_own: percent(count(&not_own), total_chars),
        ratio_max_single_source: max.map(|s| s.ratio).unwrap_or(0.0),
        max_single_source: max.map(|s| s.id),
        paraphrase_chars: (0..n)
            .filter(|&i| paraphrase[i] && !translated[i] && counted(i) && !any[i])
            .count(),
        translated_chars: (0..n)
            .filter(|&i| translated[i] && counted(i) && !any[i])
            .count(),
        common_chars: (0..n)
            .filter(|&i| common[i] && counted(i) && (count_common || !any[i]))
            .count(),
        common_counted: count_common,
        sources: shares,
        spans,
        chapters,
        paragraphs,
    }
}
