//! Mapping the model's citation markers onto real library records.
//!
//! Each section is written from a numbered list of retrieved records, and the model cites them
//! as `[ref:3]` (tolerated: `[ref3]`, `[REF:3]`, `［ref：3］`, `[ref:3,5]`, `[ref:3-5]`). A
//! `CitationMap` lives for the whole paper: the first time a record is cited it gets the next
//! GB/T 7714 sequence number, and later citations reuse it. Anything that cannot be traced to a
//! record — an out-of-range number, a malformed marker, or a bare `[1]` the model wrote itself —
//! is removed rather than left as an unverifiable citation.

use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

/// Global citation numbering for one paper.
#[derive(Debug, Clone, Default)]
pub struct CitationMap {
    order: Vec<u64>,
    numbers: HashMap<u64, usize>,
}

/// One section after its markers were resolved.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resolved {
    /// The section with GB/T-style `[n]` marks in place of the markers.
    pub text: String,
    /// Record ids cited in this section, in order of first citation, without repeats.
    pub cited: Vec<u64>,
    /// Citations dropped: each out-of-range number, each malformed marker, each bare
    /// bracketed number.
    pub removed: usize,
}

/// The text split around markers while resolving.
#[derive(Debug, Clone)]
enum Piece {
    Text(String),
    /// Record ids, in the order the marker named them.
    Cite(Vec<u64>),
    /// A marker removed without replacement; marks where whitespace needs tidying.
    Dropped,
}

/// What a bracket turned out to hold.
enum Marker {
    /// `[ref:…]`: the numbers it names (1-based) and how many entries could not be read.
    Ref { numbers: Vec<usize>, bad: usize },
    /// `[1]`, `[1, 2]`, `[1-3]` written without `ref`.
    Plain,
}

/// A range wider than this is a typo or an attack, not a citation.
const MAX_RANGE: usize = 100;
/// How far to look for the closing bracket of a `[ref…` marker.
const MAX_MARKER_CHARS: usize = 200;

impl CitationMap {
    pub fn new() -> Self {
        Self::default()
    }

    /// Continues a numbering already given out (e.g. a paper whose generation resumes).
    pub fn from_order(order: impl IntoIterator<Item = u64>) -> Self {
        let mut map = Self::new();
        for id in order {
            map.number_for(id);
        }
        map
    }

    /// Record ids in global citation order: reference list item k is `order()[k - 1]`.
    pub fn order(&self) -> &[u64] {
        &self.order
    }

    /// The sequence number a record was given, if it has been cited.
    pub fn number(&self, id: u64) -> Option<usize> {
        self.numbers.get(&id).copied()
    }

    /// Replaces the markers in one section's text; `available[i]` is the record behind
    /// marker number `i + 1` in this section.
    pub fn resolve(&mut self, text: &str, available: &[u64]) -> Resolved {
        let mut removed = 0;
        let mut pieces = vec![Piece::Text(text.to_string())];
        // Removing a marker can join the text around it into a new marker ("[[ref:9]ref:2]"),
        // so scan again until a pass finds nothing. Each pass that finds a marker shortens
        // the text, so this ends.
        loop {
            let mut found = false;
            let mut next = Vec::with_capacity(pieces.len());
            for piece in pieces {
                match piece {
                    Piece::Text(t) => found |= scan(&t, available, &mut removed, &mut next),
                    other => next.push(other),
                }
            }
            pieces = tidy(next);
            if !found {
                break;
            }
        }
        self.render(&pieces, removed)
    }

    fn number_for(&mut self, id: u64) -> usize {
        if let Some(&n) = self.numbers.get(&id) {
            return n;
        }
        self.order.push(id);
        let n = self.order.len();
        self.numbers.insert(id, n);
        n
    }

    /// Numbers are given out here, in reading order, once all markers are known.
    fn render(&mut self, pieces: &[Piece], removed: usize) -> Resolved {
        let mut text = String::new();
        let mut cited = Vec::new();
        let mut seen = HashSet::new();
        let mut i = 0;
        while i < pieces.len() {
            match &pieces[i] {
                Piece::Text(t) => {
                    text.push_str(t);
                    i += 1;
                }
                Piece::Dropped => i += 1,
                Piece::Cite(ids) => {
                    // Adjacent marks, at most spaces apart, read as one: [1][2] → [1,2].
                    let mut group = ids.clone();
                    let mut j = i + 1;
                    loop {
                        match (pieces.get(j), pieces.get(j + 1)) {
                            (Some(Piece::Cite(more)), _) => {
                                group.extend(more);
                                j += 1;
                            }
                            (Some(Piece::Text(t)), Some(Piece::Cite(more)))
                                if t.chars().all(is_hspace) =>
                            {
                                group.extend(more);
                                j += 2;
                            }
                            _ => break,
                        }
                    }
                    // Chinese prose puts its citation mark right after the character.
                    let kept = text.trim_end_matches(is_hspace).len();
                    if kept < text.len() && text[..kept].chars().next_back().is_some_and(is_cjk) {
                        text.truncate(kept);
                    }
                    let mut numbers = Vec::with_capacity(group.len());
                    for id in group {
                        numbers.push(self.number_for(id));
                        if seen.insert(id) {
                            cited.push(id);
                        }
                    }
                    text.push_str(&bracket(numbers));
                    i = j;
                }
            }
        }
        Resolved {
            text,
            cited,
            removed,
        }
    }
}

/// Numbers a paper's citations again after a section was edited, rewritten or deleted: each
/// section's `[n]` marks are read against `order` (the numbering they were written with), and
/// the records are numbered anew in order of first citation, so the list stays in citation
/// order and drops records no longer cited. A number that names no record (typed by hand, or
/// left after an edit) is removed and counted, like any marker that cannot be traced.
pub fn renumber(texts: &[String], order: &[u64]) -> (Vec<Resolved>, Vec<u64>) {
    let mut map = CitationMap::new();
    let resolved = texts
        .iter()
        .map(|text| map.resolve(&as_markers(text), order))
        .collect();
    (resolved, map.order)
}

/// `[1,3-4]` written back as `[ref:1,3-4]`, so `resolve` reads the numbers against a list.
fn as_markers(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut i = 0;
    while let Some(c) = text[i..].chars().next() {
        if is_open(c)
            && let Some((len, Marker::Plain)) = parse_marker(&text[i..])
        {
            let inner = &text[i + c.len_utf8()..i + len];
            let inner = inner.trim_end_matches(is_close);
            out.push_str("[ref:");
            out.push_str(inner);
            out.push(']');
            i += len;
        } else {
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// Splits `text` around the markers it holds, appending to `out`; whether it found any.
fn scan(text: &str, available: &[u64], removed: &mut usize, out: &mut Vec<Piece>) -> bool {
    let mut found = false;
    let mut plain_from = 0;
    let mut i = 0;
    while let Some(c) = text[i..].chars().next() {
        if is_open(c)
            && let Some((len, marker)) = parse_marker(&text[i..])
        {
            if plain_from < i {
                out.push(Piece::Text(text[plain_from..i].to_string()));
            }
            out.push(map_marker(marker, available, removed));
            found = true;
            i += len;
            plain_from = i;
        } else {
            i += c.len_utf8();
        }
    }
    if plain_from < text.len() {
        out.push(Piece::Text(text[plain_from..].to_string()));
    }
    found
}

fn map_marker(marker: Marker, available: &[u64], removed: &mut usize) -> Piece {
    match marker {
        Marker::Plain => {
            *removed += 1;
            Piece::Dropped
        }
        Marker::Ref { numbers, bad } => {
            let mut dropped = bad;
            let mut ids: Vec<u64> = Vec::new();
            for n in numbers {
                match n.checked_sub(1).and_then(|i| available.get(i)) {
                    Some(&id) if !ids.contains(&id) => ids.push(id),
                    Some(_) => {}
                    None => dropped += 1,
                }
            }
            if ids.is_empty() {
                *removed += dropped.max(1);
                Piece::Dropped
            } else {
                *removed += dropped;
                Piece::Cite(ids)
            }
        }
    }
}

/// Whether `sentence` holds a citation marker anywhere.
pub(crate) fn has_marker(sentence: &str) -> bool {
    sentence
        .char_indices()
        .any(|(i, _)| marker_len(&sentence[i..]).is_some())
}

/// The length of the citation marker (`[ref:…]` or a bare number list) at the start of `s`.
pub(crate) fn marker_len(s: &str) -> Option<usize> {
    parse_marker(s).map(|(len, _)| len)
}

/// A bare number list (`[1]`, `[1,3-4]`) at the start of `s`: its length and the numbers it
/// names.
pub(crate) fn bare_marker_at(s: &str) -> Option<(usize, Vec<usize>)> {
    match parse_marker(s)? {
        (len, Marker::Plain) => {
            let open = s.chars().next()?.len_utf8();
            let inner = s[open..len].trim_end_matches(is_close);
            Some((len, parse_numbers(inner).0))
        }
        _ => None,
    }
}

/// Reads a marker at the start of `s` (which starts with an opening bracket): its length in
/// bytes and content, or `None` when the bracket holds ordinary text such as "[J]".
fn parse_marker(s: &str) -> Option<(usize, Marker)> {
    let open = s.chars().next().filter(|&c| is_open(c))?;
    let inner = &s[open.len_utf8()..];
    let after_space = inner.trim_start_matches(is_hspace);

    if let Some(after_ref) = strip_ref(after_space) {
        let ref_end = s.len() - after_ref.len();
        let mut close = None;
        for (n, (j, c)) in after_ref.char_indices().enumerate() {
            if is_close(c) {
                close = Some((j, c));
                break;
            }
            if is_open(c) || c == '\n' || n > MAX_MARKER_CHARS {
                break;
            }
        }
        return Some(match close {
            Some((j, c)) => {
                let (numbers, bad) = parse_numbers(strip_separator(&after_ref[..j]));
                (ref_end + j + c.len_utf8(), Marker::Ref { numbers, bad })
            }
            None => {
                // Unclosed (the model stopped mid-marker): take the separator and the
                // number list right after it, and no more.
                let list_start = strip_separator(after_ref);
                let list_len =
                    list_start.len() - list_start.trim_start_matches(is_number_list_char).len();
                let list = list_start[..list_len].trim_end_matches(char::is_whitespace);
                let len = ref_end + (after_ref.len() - list_start.len()) + list.len();
                let (numbers, bad) = parse_numbers(list);
                (len, Marker::Ref { numbers, bad })
            }
        });
    }

    // A bare number list: only digits and separators up to the closing bracket.
    let body_len = inner.len() - inner.trim_start_matches(is_number_list_char).len();
    let body = &inner[..body_len];
    let close = inner[body_len..].chars().next().filter(|&c| is_close(c))?;
    if !body.chars().any(|c| to_digit(c).is_some()) {
        return None;
    }
    Some((open.len_utf8() + body_len + close.len_utf8(), Marker::Plain))
}

/// After "ref" (or "refs"), unless the bracket starts a word like "[reflection]".
fn strip_ref(s: &str) -> Option<&str> {
    let head = s.get(..3)?;
    if !head.eq_ignore_ascii_case("ref") {
        return None;
    }
    let mut rest = &s[3..];
    if let Some(after) = rest.strip_prefix(['s', 'S'])
        && !after.starts_with(|c: char| c.is_ascii_alphabetic())
    {
        rest = after;
    }
    (!rest.starts_with(|c: char| c.is_ascii_alphabetic())).then_some(rest)
}

fn strip_separator(s: &str) -> &str {
    s.trim_start_matches(|c: char| matches!(c, ':' | '：' | '=' | '#' | '＃') || is_hspace(c))
}

/// Numbers and ranges separated by commas, enumeration commas, semicolons or spaces; entries
/// that are not a number or a sane range are counted as bad.
fn parse_numbers(body: &str) -> (Vec<usize>, usize) {
    let mut numbers = Vec::new();
    let mut bad = 0;
    for token in body
        .split(|c: char| matches!(c, ',' | '，' | '、' | ';' | '；') || c.is_whitespace())
        .filter(|t| !t.is_empty())
    {
        match token.split_once(['-', '–', '—', '~', '～']) {
            None => match number(token) {
                Some(n) => numbers.push(n),
                None => bad += 1,
            },
            Some((lo, hi)) => match (number(lo), number(hi)) {
                (Some(lo), Some(hi)) if lo <= hi && hi - lo <= MAX_RANGE => {
                    numbers.extend(lo..=hi);
                }
                _ => bad += 1,
            },
        }
    }
    (numbers, bad)
}

/// A decimal number in ASCII or full-width digits; too large to be an index reads as
/// `usize::MAX`, which is then out of range.
fn number(token: &str) -> Option<usize> {
    if token.is_empty() {
        return None;
    }
    let mut n: usize = 0;
    for c in token.chars() {
        let d = to_digit(c)?;
        n = n.saturating_mul(10).saturating_add(d as usize);
    }
    Some(n)
}

fn to_digit(c: char) -> Option<u32> {
    match c {
        '0'..='9' => c.to_digit(10),
        '０'..='９' => Some(c as u32 - '０' as u32),
        _ => None,
    }
}

fn is_number_list_char(c: char) -> bool {
    to_digit(c).is_some()
        || matches!(
            c,
            ',' | '，' | '、' | ';' | '；' | '-' | '–' | '—' | '~' | '～'
        )
        || is_hspace(c)
}

fn is_open(c: char) -> bool {
    matches!(c, '[' | '［' | '【')
}

fn is_close(c: char) -> bool {
    matches!(c, ']' | '］' | '】')
}

/// Whitespace within a line.
fn is_hspace(c: char) -> bool {
    c.is_whitespace() && c != '\n' && c != '\r'
}

/// Punctuation that attaches to the word before it, so no space may precede it.
fn is_closing_punct(c: char) -> bool {
    ".,;:!?)]}".contains(c) || "。，、；：！？）】」』》…".contains(c)
}

/// CJK ideographs and the full-width punctuation of Chinese prose.
fn is_cjk(c: char) -> bool {
    crate::gbt7714::is_chinese(c.encode_utf8(&mut [0; 4]))
        || matches!(c as u32, 0x3000..=0x303F | 0xFF00..=0xFFEF)
}

/// Joins neighbouring text, drops empty text, and removes the `Dropped` markers, tidying the
/// whitespace they leave so no double space or " 。" remains.
fn tidy(pieces: Vec<Piece>) -> Vec<Piece> {
    let mut pieces = merge_texts(pieces);
    let mut out: Vec<Piece> = Vec::with_capacity(pieces.len());
    let mut k = 0;
    while k < pieces.len() {
        if !matches!(pieces[k], Piece::Dropped) {
            out.push(std::mem::replace(&mut pieces[k], Piece::Dropped));
            k += 1;
            continue;
        }
        // Dropped markers with only spaces, or only a joining word ("[5]和[6]"), between them
        // go as one: "根据文献[5]和[6]的结果" must not become "根据文献和的结果".
        let mut end = k + 1;
        loop {
            match pieces.get(end) {
                Some(Piece::Dropped) => end += 1,
                Some(Piece::Text(t))
                    if (t.chars().all(is_hspace)
                        || matches!(
                            t.trim(),
                            "和" | "与" | "及" | "以及" | "或" | "、" | "，" | ","
                        ))
                        && matches!(pieces.get(end + 1), Some(Piece::Dropped)) =>
                {
                    end += 2
                }
                _ => break,
            }
        }
        k = end;

        let only = out.len() == 1;
        match (out.last_mut(), pieces.get_mut(end)) {
            (Some(Piece::Text(before)), Some(Piece::Text(after))) => {
                // "([ref:9])" would leave an empty "()".
                for (o, c) in [('(', ')'), ('（', '）')] {
                    if before.ends_with(o) && after.starts_with(c) {
                        before.pop();
                        after.drain(..c.len_utf8());
                    }
                }
                tidy_gap(before, after.chars().next());
                if before.ends_with('\n') || (before.is_empty() && only) {
                    let kept = after.trim_start_matches(is_hspace).len();
                    after.drain(..after.len() - kept);
                }
            }
            // The citation mark that follows keeps its space ("see [1]"); Chinese text loses
            // it when rendered.
            (Some(Piece::Text(_)), Some(Piece::Cite(_))) => {}
            (Some(Piece::Text(before)), _) => tidy_gap(before, None),
            (None, Some(Piece::Text(after))) => {
                let kept = after.trim_start_matches(is_hspace).len();
                after.drain(..after.len() - kept);
            }
            _ => {}
        }
    }
    merge_texts(out)
}

/// Drops the spaces before a removed marker when what follows supplies its own spacing or is
/// punctuation ("文本 [1]。" → "文本。", "a [1] b" → "a b").
fn tidy_gap(before: &mut String, next: Option<char>) {
    let next_spaces = next.is_none_or(|c| c.is_whitespace() || is_closing_punct(c));
    if next_spaces {
        let kept = before.trim_end_matches(is_hspace).len();
        before.truncate(kept);
    }
}

fn merge_texts(pieces: Vec<Piece>) -> Vec<Piece> {
    let mut out: Vec<Piece> = Vec::with_capacity(pieces.len());
    for piece in pieces {
        match piece {
            Piece::Text(t) if t.is_empty() => {}
            Piece::Text(t) => match out.last_mut() {
                Some(Piece::Text(last)) => last.push_str(&t),
                _ => out.push(Piece::Text(t)),
            },
            other => out.push(other),
        }
    }
    out
}

/// "[1]", "[1,3]", "[1-3]", "[1,3-5]": sorted, with runs of three or more as ranges.
fn bracket(mut numbers: Vec<usize>) -> String {
    numbers.sort_unstable();
    numbers.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < numbers.len() {
        let mut j = i;
        while j + 1 < numbers.len() && numbers[j + 1] == numbers[j] + 1 {
            j += 1;
        }
        if j - i >= 2 {
            parts.push(format!("{}-{}", numbers[i], numbers[j]));
        } else {
            parts.extend(numbers[i..=j].iter().map(|n| n.to_string()));
        }
        i = j + 1;
    }
    format!("[{}]", parts.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn numbers_follow_first_citation_across_sections() {
        let mut map = CitationMap::new();
        let a = map.resolve("甲[ref:2]，乙[ref:1]。", &[100, 200]);
        assert_eq!(a.text, "甲[1]，乙[2]。");
        assert_eq!(a.cited, [200, 100]);
        assert_eq!(a.removed, 0);

        // Section two has its own numbering of its records; 100 keeps its number 2.
        let b = map.resolve("丙[ref:1]，丁[ref:2]，再次[ref:1]。", &[300, 100]);
        assert_eq!(b.text, "丙[3]，丁[2]，再次[3]。");
        assert_eq!(b.cited, [300, 100]);
        assert_eq!(map.order(), [200, 100, 300]);
        assert_eq!(map.number(300), Some(3));
        assert_eq!(map.number(999), None);
    }

    #[test]
    fn marker_spellings_are_tolerated() {
        let mut map = CitationMap::new();
        let r = map.resolve(
            "a[ref:1] b[ref2] c［ref：3］ d[REF:4] e[ref:1,2] f[ref: 3, 4] g【ref 1】 h[refs:2]",
            &[10, 20, 30, 40],
        );
        assert_eq!(r.text, "a[1] b[2] c[3] d[4] e[1,2] f[3,4] g[1] h[2]");
        assert_eq!(r.removed, 0);
    }

    #[test]
    fn several_records_are_sorted_and_runs_become_ranges() {
        let mut map = CitationMap::new();
        let r = map.resolve("x[ref:1,2,3] y[ref:5, 4] z[ref:1-3,5]", &[1, 2, 3, 4, 5]);
        assert_eq!(r.text, "x[1-3] y[4,5] z[1-4]");
        // Adjacent marks merge into one.
        let r = map.resolve("w[ref:1][ref:2] [ref:3]。", &[1, 2, 3]);
        assert_eq!(r.text, "w[1-3]。");
        assert_eq!(bracket(vec![7, 1, 2, 4, 5, 6, 2]), "[1,2,4-7]");
    }

    #[test]
    fn out_of_range_and_malformed_markers_are_removed_and_counted() {
        let mut map = CitationMap::new();
        let r = map.resolve("文本 [ref:9]。下一句[ref:0]，又[ref:]！", &[1, 2]);
        assert_eq!(r.text, "文本。下一句，又！");
        assert_eq!(r.removed, 3);
        assert!(r.cited.is_empty());
        assert!(map.order().is_empty());

        // One good and one bad number: the good one stays.
        let r = map.resolve("text [ref:1, 7] and [ref:abc] more", &[1, 2]);
        assert_eq!(r.text, "text [1] and more");
        assert_eq!(r.removed, 2);
    }

    #[test]
    fn bare_numbers_are_removed_but_other_brackets_kept() {
        let mut map = CitationMap::new();
        let r = map.resolve(
            "见文献 [1]，以及[2, 3]和［4］。题名[J]. 说明[注]、[Reflection]、[1.5]、[a1] 与 [ref:1]。",
            &[42],
        );
        assert_eq!(
            r.text,
            "见文献，以及。题名[J]. 说明[注]、[Reflection]、[1.5]、[a1] 与[1]。"
        );
        assert_eq!(r.removed, 3);
        assert_eq!(r.cited, [42]);
    }

    #[test]
    fn whitespace_around_removed_markers_is_tidied() {
        let mut map = CitationMap::new();
        let cases = [
            ("a [9] b", "a b"),
            ("a [9]. b", "a. b"),
            ("a [9] [8] b", "a b"),
            ("[9] starts", "starts"),
            ("line\n[9] next", "line\nnext"),
            ("ends [9]", "ends"),
            ("a ([ref:9]) b", "a b"),
            ("一（[ref:9]）二", "一二"),
            ("a[9]b", "ab"),
            ("x[ref:1] ([ref:9]) b", "x[1] b"),
            ("see [9][ref:1]", "see [1]"),
            ("见 [9][ref:1]", "见[1]"),
            ("[ref:1][9] b", "[1] b"),
            ("根据文献[ref:5]和[ref:6]的结果", "根据文献的结果"),
            ("见[ref:7]、[ref:8]。", "见。"),
            ("甲[ref:1]和[ref:9]乙", "甲[1]和乙"),
        ];
        for (input, expected) in cases {
            assert_eq!(map.resolve(input, &[1]).text, expected, "{input:?}");
        }
    }

    #[test]
    fn markers_formed_by_removal_are_caught() {
        let mut map = CitationMap::new();
        let r = map.resolve("a[[ref:9]ref:1]b [[ref:9]5]", &[7]);
        assert_eq!(r.text, "a[1]b");
        assert_eq!(map.order(), [7]);
    }

    #[test]
    fn unclosed_markers_do_not_survive() {
        let mut map = CitationMap::new();
        let r = map.resolve("end [ref:1", &[5]);
        assert_eq!(r.text, "end [1]");
        let r = map.resolve("end [ref: and more", &[5]);
        assert_eq!(r.text, "end and more");
        assert_eq!(r.removed, 1);
    }

    #[test]
    fn huge_numbers_and_ranges_do_not_blow_up() {
        let mut map = CitationMap::new();
        let r = map.resolve(
            "[ref:99999999999999999999999] [ref:1-1000000000] [ref:3-1]",
            &[1],
        );
        assert_eq!(r.text, "");
        assert_eq!(r.removed, 3);
    }

    #[test]
    fn a_resumed_map_continues_its_numbering() {
        let mut map = CitationMap::from_order([5, 6, 5]);
        assert_eq!(map.order(), [5, 6]);
        let r = map.resolve("x[ref:1][ref:2]", &[7, 5]);
        assert_eq!(r.text, "x[1,3]");
        assert_eq!(map.order(), [5, 6, 7]);
    }

    #[test]
    fn renumbering_follows_first_citation_and_drops_what_is_gone() {
        // Written as [1] = 10, [2] = 20, [3] = 30; the first section now cites only 30 and
        // the second section was deleted.
        let texts = vec![
            "新的第一节[3]。".to_string(),
            String::new(),
            "第三节[1,2]，又见[3]，手写的[9]。".to_string(),
        ];
        let (resolved, order) = renumber(&texts, &[10, 20, 30]);
        assert_eq!(order, [30, 10, 20]);
        assert_eq!(resolved[0].text, "新的第一节[1]。");
        assert_eq!(resolved[1].text, "");
        assert_eq!(resolved[2].text, "第三节[2,3]，又见[1]，手写的。");
        assert_eq!(resolved[2].removed, 1);
        assert_eq!(resolved[2].cited, [10, 20, 30]);
    }

    /// Whether `s` still holds something the resolver would read as a `ref` marker.
    fn has_ref_marker(s: &str) -> bool {
        s.char_indices().any(|(i, c)| {
            is_open(c) && {
                let rest = s[i + c.len_utf8()..].trim_start_matches(is_hspace);
                let alpha = |t: &str| t.starts_with(|c: char| c.is_ascii_alphabetic());
                rest.get(..3).is_some_and(|h| h.eq_ignore_ascii_case("ref")) && {
                    let after = &rest[3..];
                    let after = after
                        .strip_prefix(['s', 'S'])
                        .filter(|a| !alpha(a))
                        .unwrap_or(after);
                    !alpha(after)
                }
            }
        })
    }

    /// Every bracketed bare number list in `s`, as its numbers.
    fn numeric_brackets(s: &str) -> Vec<Vec<usize>> {
        let mut found = Vec::new();
        for (i, c) in s.char_indices() {
            if !is_open(c) {
                continue;
            }
            let rest = &s[i + c.len_utf8()..];
            let Some(end) = rest.find(is_close) else {
                continue;
            };
            let body = &rest[..end];
            if body.chars().any(|c| to_digit(c).is_some()) && body.chars().all(is_number_list_char)
            {
                let digits: String = body
                    .chars()
                    .map(|c| if to_digit(c).is_some() { c } else { ' ' })
                    .collect();
                found.push(digits.split_whitespace().filter_map(number).collect());
            }
        }
        found
    }

    fn noisy_text() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![
                "[a-z 。，]{0,6}",
                "\\[ref:[0-9]{1,2}\\]",
                "\\[ref[0-9](,[0-9])?\\]",
                "［ref：[0-9]］",
                "\\[REF: ?[0-9]-[0-9]\\]",
                "\\[[0-9]{1,2}\\]",
                "［[0-9]］",
                Just("[".to_string()),
                Just("]".to_string()),
                Just("［".to_string()),
                Just("ref".to_string()),
                Just(":".to_string()),
                Just(" ".to_string()),
                Just("\n".to_string()),
                Just("(".to_string()),
                Just(")".to_string()),
                Just("[J]".to_string()),
                Just("[注]".to_string()),
                "[0-9]",
            ],
            0..24,
        )
        .prop_map(|parts| parts.concat())
    }

    fn check(map: &mut CitationMap, text: &str, available: &[u64]) -> Result<(), TestCaseError> {
        let r = map.resolve(text, available);
        prop_assert!(!has_ref_marker(&r.text), "{:?} → {:?}", text, r.text);
        for numbers in numeric_brackets(&r.text) {
            for n in numbers {
                prop_assert!(
                    n >= 1 && n <= map.order().len(),
                    "{:?} → {:?}",
                    text,
                    r.text
                );
            }
        }
        for id in &r.cited {
            prop_assert!(available.contains(id));
            prop_assert!(map.order().contains(id));
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn arbitrary_text_never_panics_or_keeps_markers(
            text in "\\PC{0,120}",
            available in proptest::collection::vec(0u64..20, 0..6),
        ) {
            let mut map = CitationMap::new();
            check(&mut map, &text, &available)?;
        }

        #[test]
        fn marker_heavy_text_resolves_cleanly(
            sections in proptest::collection::vec(
                (noisy_text(), proptest::collection::vec(0u64..20, 0..6)),
                1..4,
            ),
        ) {
            let mut map = CitationMap::new();
            for (text, available) in &sections {
                check(&mut map, text, available)?;
            }
            // Numbers are given out densely: the list has no gaps or repeats.
            let unique: HashSet<_> = map.order().iter().collect();
            prop_assert_eq!(unique.len(), map.order().len());
        }
    }
}
