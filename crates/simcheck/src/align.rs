//! Alignment: seeds (shared k-grams) → verified, maximal exact matches on both sides →
//! chains of matches separated by small edits (light-edit matches).

use serde::Serialize;

/// What kind of match a span is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpanClass {
    /// Copied verbatim (after normalisation).
    Copy,
    /// Copied with a few characters inserted, deleted or substituted.
    LightEdit,
    /// Inside quotation marks or in a sentence carrying a citation mark.
    Quoted,
    /// Same meaning in other words; reported apart, never added to the copy ratio.
    Paraphrase,
    /// A phrase that many library documents use (常用表述, e.g. a method's standard wording):
    /// listed with how many documents use it, left out of the ratios unless the reader counts it.
    Common,
    /// A translation of a library sentence in another language; reported apart like a
    /// paraphrase, never added to the copy ratio.
    Translated,
}

/// A match in stream positions: query `[q_start, q_end)` against source `[s_start, s_end)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Match {
    pub q_start: usize,
    pub q_end: usize,
    pub s_start: usize,
    pub s_end: usize,
    /// Characters that are identical on both sides (all of them for an exact match).
    pub matched: usize,
    pub edited: bool,
    /// The longest run of identical characters inside the match.
    pub longest_exact: usize,
}

impl Match {
    pub fn len(&self) -> usize {
        self.q_end - self.q_start
    }

    pub fn is_empty(&self) -> bool {
        self.q_end == self.q_start
    }
}

#[derive(Debug, Clone, Copy)]
pub struct AlignParams {
    pub k: usize,
    /// Shortest reported span, in stream characters (CNKI's 13-character rule).
    pub min_span: usize,
    /// Largest gap (inserted, deleted or substituted characters) bridged inside one match.
    pub max_gap: usize,
    /// Share of identical characters a light-edit match must keep.
    pub min_identity: f64,
    /// A light-edit match must contain an identical run at least this long; otherwise only its
    /// exact part stands, so a short formula with one character changed is not a copy.
    pub min_anchor: usize,
}

impl Default for AlignParams {
    fn default() -> Self {
        AlignParams {
            k: 5,
            min_span: 13,
            max_gap: 6,
            min_identity: 0.7,
            min_anchor: LIGHT_EDIT_ANCHOR,
        }
    }
}

/// The default `AlignParams::min_anchor`, chosen with `simcheck-realprose` (docs/simcheck.md).
pub const LIGHT_EDIT_ANCHOR: usize = 10;

/// Maximal exact matches grown from seeds `(query_pos, source_pos)`; seeds whose k-grams differ
/// (hash collisions) are dropped.
pub fn exact_matches(
    query: &[char],
    source: &[char],
    seeds: &mut [(u32, u32)],
    k: usize,
) -> Vec<Match> {
    // Sort by diagonal, then query position, so one extension covers every seed it contains.
    seeds.sort_unstable_by_key(|&(q, s)| ((s as i64 - q as i64), q));
    let mut out = Vec::new();
    let mut covered: Option<(i64, usize)> = None; // (diagonal, query end) of the last match
    for &(q, s) in seeds.iter() {
        let (q, s) = (q as usize, s as usize);
        let diag = s as i64 - q as i64;
        if let Some((d, end)) = covered
            && d == diag
            && q + k <= end
        {
            continue;
        }
        if q + k > query.len() || s + k > source.len() || query[q..q + k] != source[s..s + k] {
            continue;
        }
        let (mut qs, mut ss) = (q, s);
        while qs > 0 && ss > 0 && query[qs - 1] == source[ss - 1] {
            qs -= 1;
            ss -= 1;
        }
        let (mut qe, mut se) = (q + k, s + k);
        while qe < query.len() && se < source.len() && query[qe] == source[se] {
            qe += 1;
            se += 1;
        }
        covered = Some((diag, qe));
        out.push(Match {
            q_start: qs,
            q_end: qe,
            s_start: ss,
            s_end: se,
            matched: qe - qs,
            edited: false,
            longest_exact: qe - qs,
        });
    }
    out.sort_unstable_by_key(|m| (m.q_start, m.s_start));
    out.dedup();
    out
}

/// Shortest exact piece that may continue a match across an edit.
const MIN_PIECE: usize = 4;

/// Grows a match across small edits: past each end, looks for the nearest place within
/// `max_gap` characters on both sides where at least `MIN_PIECE` characters agree again, and
/// continues the exact match from there.
pub fn bridge(query: &[char], source: &[char], mut m: Match, max_gap: usize) -> Match {
    // Rightwards.
    loop {
        let found = nearest_piece(max_gap, |dq, ds| {
            let (a, b) = (m.q_end + dq, m.s_end + ds);
            a + MIN_PIECE <= query.len()
                && b + MIN_PIECE <= source.len()
                && query[a..a + MIN_PIECE] == source[b..b + MIN_PIECE]
        });
        let Some((dq, ds)) = found else { break };
        let (mut a, mut b) = (m.q_end + dq + MIN_PIECE, m.s_end + ds + MIN_PIECE);
        while a < query.len() && b < source.len() && query[a] == source[b] {
            a += 1;
            b += 1;
        }
        m.matched += a - (m.q_end + dq);
        m.longest_exact = m.longest_exact.max(a - (m.q_end + dq));
        m.q_end = a;
        m.s_end = b;
        m.edited = true;
    }
    // Leftwards.
    loop {
        let found = nearest_piece(max_gap, |dq, ds| {
            m.q_start >= dq + MIN_PIECE
                && m.s_start >= ds + MIN_PIECE
                && query[m.q_start - dq - MIN_PIECE..m.q_start - dq]
                    == source[m.s_start - ds - MIN_PIECE..m.s_start - ds]
        });
        let Some((dq, ds)) = found else { break };
        let (mut a, mut b) = (m.q_start - dq - MIN_PIECE, m.s_start - ds - MIN_PIECE);
        while a > 0 && b > 0 && query[a - 1] == source[b - 1] {
            a -= 1;
            b -= 1;
        }
        m.matched += (m.q_start - dq) - a;
        m.longest_exact = m.longest_exact.max((m.q_start - dq) - a);
        m.q_start = a;
        m.s_start = b;
        m.edited = true;
    }
    m
}

/// The offsets `(dq, ds)`, not both zero and each at most `max_gap`, with the smallest total
/// for which `agrees` holds.
fn nearest_piece(max_gap: usize, agrees: impl Fn(usize, usize) -> bool) -> Option<(usize, usize)> {
    for total in 1..=2 * max_gap {
        for dq in total.saturating_sub(max_gap)..=total.min(max_gap) {
            let ds = total - dq;
            if agrees(dq, ds) {
                return Some((dq, ds));
            }
        }
    }
    None
}

/// Aligns one source: exact matches grown from seeds, bridged across small edits, with matches
/// inside a longer one dropped; keeps those at least `min_span` long with enough identical
/// characters.
pub fn align(
    query: &[char],
    source: &[char],
    seeds: &mut [(u32, u32)],
    params: &AlignParams,
) -> Vec<Match> {
    let mut grown: Vec<Match> = exact_matches(query, source, seeds, params.k)
        .into_iter()
        .map(|m| {
            let bridged = bridge(query, source, m, params.max_gap);
            if bridged.longest_exact >= params.min_anchor {
                bridged
            } else {
                m
            }
        })
        .collect();
    grown.sort_unstable_by(|a, b| b.len().cmp(&a.len()).then(a.q_start.cmp(&b.q_start)));
    let mut kept: Vec<Match> = Vec::new();
    for m in grown {
        // Within one source, a passage of the submission is reported once, at its longest match.
        let inside = kept
            .iter()
            .any(|k| k.q_start <= m.q_start && m.q_end <= k.q_end);
        if !inside {
            kept.push(m);
        }
    }
    kept.retain(|c| {
        c.len() >= params.min_span && c.matched as f64 >= params.min_identity * c.len() as f64
    });
    kept.sort_unstable_by_key(|m| (m.q_start, m.s_start));
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fingerprint::{FingerprintParams, fingerprints, kgram_hashes};

    fn chars(s: &str) -> Vec<char> {
        s.chars().collect()
    }

    /// Seeds as the library lookup would produce them.
    fn seeds(query: &[char], source: &[char]) -> Vec<(u32, u32)> {
        let lib = fingerprints(source, FingerprintParams::default());
        let qh = kgram_hashes(query, 5);
        let mut out = Vec::new();
        for (qi, h) in qh.iter().enumerate() {
            for f in &lib {
                if f.hash == *h {
                    out.push((qi as u32, f.pos));
                }
            }
        }
        out
    }

    #[test]
    fn finds_an_exact_copy_with_exact_bounds() {
        let source = chars("甲乙丙丁戊己庚辛壬癸子丑寅卯辰巳午未申酉戌亥天地玄黄宇宙洪荒");
        let query = chars("这里是我自己写的开头部分丙丁戊己庚辛壬癸子丑寅卯辰巳午这里是结尾");
        let mut s = seeds(&query, &source);
        let spans = align(&query, &source, &mut s, &AlignParams::default());
        assert_eq!(spans.len(), 1);
        let m = spans[0];
        let copied: String = query[m.q_start..m.q_end].iter().collect();
        assert_eq!(copied, "丙丁戊己庚辛壬癸子丑寅卯辰巳午");
        assert_eq!(
            source[m.s_start..m.s_end].iter().collect::<String>(),
            copied
        );
        assert!(!m.edited);
    }

    #[test]
    fn bridges_small_edits_into_one_light_edit_match() {
        let source = chars(
            "深度学习模型在自然语言处理任务中取得了显著的进展并且被广泛应用于机器翻译与文本分类",
        );
        let query = chars(
            "深度学习模型在自然语言处理任务里取得了明显的进展并且被广泛应用在机器翻译与文本分类",
        );
        let mut s = seeds(&query, &source);
        let spans = align(&query, &source, &mut s, &AlignParams::default());
        assert_eq!(spans.len(), 1, "{spans:?}");
        assert!(spans[0].edited);
        assert_eq!((spans[0].q_start, spans[0].q_end), (0, query.len()));
    }

    #[test]
    fn drops_short_and_colliding_matches() {
        let source = chars("一二三四五六七八九十");
        let query = chars("零一二三四五六七八九");
        let mut s = seeds(&query, &source);
        assert!(align(&query, &source, &mut s, &AlignParams::default()).is_empty());
        // A seed whose characters differ (a hash collision) is ignored.
        let mut bogus = vec![(0u32, 0u32)];
        assert!(exact_matches(&chars("abcdefgh"), &chars("zzzzzzzz"), &mut bogus, 5).is_empty());
    }
}
#[cfg(test)]
mod containment_tests {
    use super::*;
    use crate::fingerprint::{FingerprintParams, fingerprints, kgram_hashes};
    #[test]
    fn one_passage_one_match_per_source() {
        let source: Vec<char> = "区分名词与动词的标准方法及后果本文探讨区分名词和动词的标准方法及其对语法理论的影响基本观点是实词的分类应该".chars().collect();
        let query: Vec<char> = "我们自己写的句子在这里本文探讨区分名词和动词的标准方法及其对语法理论的影响基本观点是实词的分类应该".chars().collect();
        let lib = fingerprints(&source, FingerprintParams::default());
        let mut seeds = Vec::new();
        for (qi, h) in kgram_hashes(&query, 5).iter().enumerate() {
            for f in &lib {
                if f.hash == *h {
                    seeds.push((qi as u32, f.pos));
                }
            }
        }
        let out = align(&query, &source, &mut seeds, &AlignParams::default());
        assert_eq!(out.len(), 1, "{out:?}");
    }
}
