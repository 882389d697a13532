//! Grounding a section's citations in what it says.
//!
//! Measured on the bench, the local model read the records it was offered and used their terms
//! and findings, but almost never wrote a `[ref:n]` marker — and when it did mark, it often wrote a
//! bare `[1]`, which could equally be a list number of its own. So before markers are resolved:
//!
//! - a bare `[n]` stays a citation of offered record n only when its sentence shares wording
//!   specific to that record; otherwise it is left to be removed as untraceable;
//! - an offered record that no marker names is cited at the one sentence that shares the most
//!   wording specific to it, when that sentence shares enough (`PLACE_MIN_SHARED`).
//!
//! "Specific" wording is a record's character trigrams minus those of the paper's title, the
//! section heading and keywords, and minus trigrams more than half of the offered records share:
//! the topic words every sentence of the section uses say nothing about which record it draws on. A marker the
//! model wrote as `[ref:n]` is kept as written (it is what the prompt asks for).

use crate::citations::{CitationMap, bare_marker_at, has_marker};
use std::collections::HashSet;

/// Distinct record-specific trigrams a sentence must share with a record before the engine
/// places a citation of that record on it (about a six-character term, or two shorter ones).
pub const PLACE_MIN_SHARED: usize = 4;
/// Distinct record-specific trigrams that confirm a bare `[n]` the model wrote.
pub const BARE_MIN_SHARED: usize = 1;

/// A section's text with its citations grounded, and what grounding did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grounded {
    pub text: String,
    /// Citations placed by the engine on sentences that share a record's specific wording.
    pub placed: usize,
    /// Bare `[n]` marks confirmed as citations of offered record n.
    pub confirmed: usize,
}

type Trigram = [char; 3];

/// Particles and connectives: a trigram holding one bridges two words ("颗粒的", "的质量") and says
/// nothing about a term. Read on the bench: such trigrams made up three of the four a weak
/// citation shared with its record.
const FUNCTION_CHARS: &[char] = &[
    '的', '了', '和', '与', '及', '或', '在', '是', '对', '为', '等', '其', '之', '以', '于', '并',
    '而', '也', '将', '被', '把', '从', '中', '上', '下', '这', '那', '个', '一', '有',
];

/// Trigrams within runs of letters and digits (punctuation and spaces break a run), lowercased,
/// leaving out those that hold a function character.
fn trigrams(text: &str) -> HashSet<Trigram> {
    let mut out = HashSet::new();
    let mut run: Vec<char> = Vec::new();
    let mut flush = |run: &mut Vec<char>| {
        for w in run.windows(3) {
            if !w.iter().any(|c| FUNCTION_CHARS.contains(c)) {
                out.insert([w[0], w[1], w[2]]);
            }
        }
        run.clear();
    };
    for c in text.chars() {
        if c.is_alphanumeric() {
            run.extend(c.to_lowercase());
        } else {
            flush(&mut run);
        }
    }
    flush(&mut run);
    out
}

/// Each record's trigrams that the common text does not have and that at most half of the
/// offered records have. A method two of four records share ("高效液相色谱法") still tells a
/// sentence using it from the records that do not; what most of them say is the section's topic.
fn specific_trigrams(records: &[String], common: &str) -> Vec<HashSet<Trigram>> {
    let common = trigrams(common);
    let all: Vec<HashSet<Trigram>> = records.iter().map(|r| trigrams(r)).collect();
    let most = records.len() / 2;
    all.iter()
        .map(|own| {
            own.iter()
                .filter(|t| !common.contains(*t))
                .filter(|t| all.iter().filter(|other| other.contains(*t)).count() <= most.max(1))
                .copied()
                .collect()
        })
        .collect()
}

/// Byte ranges of the sentences of `text` worth a citation (more than one visible character).
fn sentences(text: &str) -> Vec<(usize, usize)> {
    sentences_with_gaps(text)
        .into_iter()
        .filter(|&(s, e)| text[s..e].trim().chars().count() > 1)
        .collect()
}

/// Grounds the citations of one section written from `records` (the offered records' titles
/// and snippets, marker number i + 1 for `records[i]`); `common` is the paper's title, the
/// section's heading and the keywords.
pub fn ground(text: &str, records: &[String], common: &str) -> Grounded {
    if records.is_empty() {
        return Grounded {
            text: text.to_string(),
            ..Grounded::default()
        };
    }
    let specific = specific_trigrams(records, common);
    let shared = |sentence: &str, record: usize| -> usize {
        trigrams(sentence).intersection(&specific[record]).count()
    };

    // Bare marks become `[ref:n]` where the sentence bears them out.
    let mut confirmed = 0;
    let mut out = String::with_capacity(text.len() + 32);
    for (start, end) in sentences_with_gaps(text) {
        let sentence = &text[start..end];
        let mut i = 0;
        while let Some(c) = sentence[i..].chars().next() {
            if let Some((len, numbers)) = bare_marker_at(&sentence[i..]) {
                let kept: Vec<String> = numbers
                    .iter()
                    .filter(|&&n| {
                        n >= 1 && n <= records.len() && shared(sentence, n - 1) >= BARE_MIN_SHARED
                    })
                    .map(|n| n.to_string())
                    .collect();
                if kept.is_empty() {
                    out.push_str(&sentence[i..i + len]);
                } else {
                    confirmed += 1;
                    out.push_str(&format!("[ref:{}]", kept.join(",")));
                }
                i += len;
            } else {
                out.push(c);
                i += c.len_utf8();
            }
        }
    }

    // Records still uncited go to the sentence that draws on them most, if any draws enough.
    let numbers: Vec<u64> = (1..=records.len() as u64).collect();
    let cited: HashSet<u64> = CitationMap::new()
        .resolve(&out, &numbers)
        .cited
        .into_iter()
        .collect();
    let spans = sentences(&out);
    let mut placements: Vec<(usize, usize)> = Vec::new(); // (byte offset, record number)
    for record in 0..records.len() {
        if cited.contains(&(record as u64 + 1)) {
            continue;
        }
        let best = spans
            .iter()
            .filter(|(s, e)| !has_marker(&out[*s..*e]))
            .map(|&(s, e)| (shared(&out[s..e], record), s, e))
            .filter(|(n, _, _)| *n >= PLACE_MIN_SHARED)
            // Most shared; the earlier sentence on a tie.
            .max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        if let Some((_, s, e)) = best {
            placements.push((mark_position(&out[s..e]) + s, record + 1));
        }
    }
    // Inserted from the end, so earlier offsets stay valid; two records on one sentence read
    // as one mark ("[ref:1][ref:3]" → "[1,3]").
    placements.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
    for &(at, number) in &placements {
        out.insert_str(at, &format!("[ref:{number}]"));
    }
    Grounded {
        text: out,
        placed: placements.len(),
        confirmed,
    }
}

/// Consecutive byte ranges covering all of `text`, split after sentence ends, so a bare mark
/// is judged by the sentence it stands in.
fn sentences_with_gaps(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in text.char_indices() {
        if matches!(c, '。' | '！' | '？' | '!' | '?' | '\n') {
            out.push((start, i + c.len_utf8()));
            start = i + c.len_utf8();
        }
    }
    if start < text.len() {
        out.push((start, text.len()));
    }
    out
}

/// Where a citation mark goes in a sentence: before its closing punctuation (and closing quotes),
/// as GB/T 7714 prose puts it, or at its end.
fn mark_position(sentence: &str) -> usize {
    let body = sentence.trim_end_matches(|c: char| {
        c.is_whitespace() || matches!(c, '。' | '！' | '？' | '!' | '?' | '”' | '’' | '」' | '』')
    });
    body.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records() -> Vec<String> {
        vec![
            "龙胆配方颗粒的质量标准研究。目的：建立龙胆配方颗粒的质量标准。方法：采用高效液相色谱法测定龙胆苦苷的含量，薄层色谱法进行鉴别。".to_string(),
            "卡莫氟固体脂质纳米粒的制备。目的：制备卡莫氟固体脂质纳米粒并考察其药剂性质。方法：采用高压均质法制备。".to_string(),
        ]
    }

    const COMMON: &str = "中药配方颗粒质量控制方法研究 1.2 研究现状 质量控制";

    #[test]
    fn a_sentence_drawing_on_a_record_is_cited_and_one_that_does_not_is_left_alone() {
        let text = "近年来中药配方颗粒的质量控制受到广泛关注。已有研究采用高效液相色谱法测定龙胆苦苷含量，并以薄层色谱法鉴别龙胆配方颗粒。这些工作为后续研究奠定了基础。";
        let g = ground(text, &records(), COMMON);
        assert_eq!(g.placed, 1, "{}", g.text);
        assert!(
            g.text.contains("龙胆配方颗粒[ref:1]。"),
            "mark before the full stop: {}",
            g.text
        );
        // The nanoparticle record shares nothing specific with this section: not cited.
        assert!(!g.text.contains("[ref:2]"), "{}", g.text);
        // Topic words alone ("质量控制", "研究") never earn a citation.
        let generic = "中药配方颗粒的质量控制研究具有重要意义。质量控制方法不断发展。";
        assert_eq!(ground(generic, &records(), COMMON).placed, 0);
    }

    #[test]
    fn a_bare_number_stays_a_citation_only_where_its_sentence_bears_it_out() {
        let text = "有学者采用高压均质法制备了卡莫氟固体脂质纳米粒[2]。传统工艺存在诸多不足[1]。";
        let g = ground(text, &records(), COMMON);
        assert_eq!(g.confirmed, 1);
        assert!(g.text.contains("纳米粒[ref:2]。"), "{}", g.text);
        // "[1]" stands in a sentence that says nothing of record 1: left bare, so resolving
        // removes it as untraceable.
        assert!(g.text.contains("不足[1]。"), "{}", g.text);
        let resolved = CitationMap::new().resolve(&g.text, &[10, 20]);
        assert_eq!(resolved.cited, vec![20]);
        assert_eq!(resolved.removed, 1);
        assert_eq!(
            resolved.text,
            "有学者采用高压均质法制备了卡莫氟固体脂质纳米粒[1]。传统工艺存在诸多不足。"
        );
    }

    #[test]
    fn a_record_the_model_cited_is_not_placed_again_and_nothing_offered_means_nothing_placed() {
        let text = "采用高效液相色谱法测定龙胆苦苷[ref:1]。另有研究以薄层色谱法鉴别龙胆配方颗粒中的龙胆苦苷含量。";
        let g = ground(text, &records(), COMMON);
        assert_eq!(g.placed, 0, "{}", g.text);
        assert_eq!(g.text, text);
        let none = ground(text, &[], COMMON);
        assert_eq!(none.text, text);
    }

    #[test]
    fn two_records_on_one_sentence_read_as_one_mark() {
        let text = "相关研究以高效液相色谱法测定龙胆苦苷，并以高压均质法制备卡莫氟固体脂质纳米粒。";
        let g = ground(text, &records(), COMMON);
        assert_eq!(g.placed, 2, "{}", g.text);
        let resolved = CitationMap::new().resolve(&g.text, &[10, 20]);
        assert_eq!(
            resolved.text,
            "相关研究以高效液相色谱法测定龙胆苦苷，并以高压均质法制备卡莫氟固体脂质纳米粒[1,2]。"
        );
    }

    #[test]
    fn a_method_two_of_four_records_share_cites_both_and_a_word_most_share_cites_none() {
        let four = vec![
            "龙胆配方颗粒的质量标准研究。采用高效液相色谱法测定龙胆苦苷的含量。".to_string(),
            "牛蒡子配方颗粒的质量标准研究。采用高效液相色谱法测定牛蒡苷的含量。".to_string(),
            "卡莫氟固体脂质纳米粒的制备。采用高压均质法制备。".to_string(),
            "氟康唑粘附凝胶的质量标准研究。以卡波姆为辅料制备凝胶。".to_string(),
        ];
        let text = "现有标准多采用高效液相色谱法进行含量测定。";
        let g = ground(text, &four, COMMON);
        let resolved = CitationMap::new().resolve(&g.text, &[1, 2, 3, 4]);
        assert_eq!(resolved.cited, vec![1, 2], "{}", g.text);
        // "质量标准研究" is in three of the four: the topic, not a source.
        let topic = "配方颗粒的质量标准研究尚不充分，质量标准研究亟待加强。";
        assert_eq!(ground(topic, &four, COMMON).placed, 0);
    }

    #[test]
    fn words_bridged_by_particles_are_not_a_source() {
        // From the bench: a generic sentence shared "颗粒的", "的质量", "粒的质" and "色谱法" with
        // a record on 龙胆配方颗粒 and was cited to it. Only "色谱法" is a term.
        let text = "目前一些中药配方颗粒的质量控制方法主要依赖于传统的色谱法和化学分析法，而这些方法存在一定的局限性。";
        let g = ground(text, &records(), "中药配方颗粒质量标准的问题研究与对策探讨");
        assert_eq!(g.placed, 0, "{}", g.text);
    }

    proptest::proptest! {
        /// Any text grounds without panicking, and grounding only ever adds marks: with them
        /// taken out, a text that had none comes back unchanged.
        #[test]
        fn grounding_only_adds_marks(text in "[龙胆苦苷高效液相色谱法卡莫氟纳米粒。，\\[\\]0-9a-z\n ]{0,80}") {
            let g = ground(&text, &records(), COMMON);
            if !text.contains('[') {
                let mut back = g.text.clone();
                for n in 1..=records().len() {
                    back = back.replace(&format!("[ref:{n}]"), "");
                }
                proptest::prop_assert_eq!(back, text);
            }
        }
    }
}
