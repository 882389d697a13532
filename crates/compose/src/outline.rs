//! The thesis outline (论文大纲): chapters → sections → subsections, each node with a word
//! budget (字数, counted in Chinese characters) and the library records retrieved for it.
//!
//! Outlines arrive as text — pasted or uploaded by the user, or written by the model — in
//! every numbering style Chinese theses use. `parse_outline_text` reads them into a tree
//! without the numbering (Word's list numbering produces it again in the document) and with
//! any "（约800字）" annotations as budgets. `allocate_budgets` then fills in the budgets so
//! that they add up exactly at every level, and `validate` checks the result against the
//! limits before any writing starts.

use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// Shortest target length accepted, in characters.
pub const MIN_WORDS: u32 = 1_000;
/// Longest target length accepted, in characters.
pub const MAX_WORDS: u32 = 50_000;
/// Most chapters an outline may have.
pub const MAX_CHAPTERS: usize = 12;
/// Most nodes below the chapters (sections and subsections together).
pub const MAX_SECTIONS: usize = 60;
/// Longest node title, in characters.
pub const MAX_TITLE_CHARS: usize = 40;
/// Smallest budget of a node that gets written (a leaf), in characters.
pub const MIN_NODE_BUDGET: u32 = 100;

/// Chapters, sections, subsections: deeper headings in a text are dropped.
const MAX_LEVEL: usize = 3;

/// What kind of paper is being written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PaperKind {
    /// 毕业论文
    Thesis,
    /// 学术论文 / 期刊论文
    Article,
}

impl PaperKind {
    pub fn label(self) -> &'static str {
        match self {
            PaperKind::Thesis => "毕业论文",
            PaperKind::Article => "学术论文",
        }
    }

    /// Accepts the serde name or the Chinese label, ignoring surrounding whitespace and ASCII
    /// case.
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "thesis" | "毕业论文" => Some(PaperKind::Thesis),
            "article" | "学术论文" | "期刊论文" => Some(PaperKind::Article),
            _ => None,
        }
    }
}

/// The degree a thesis is written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Degree {
    /// 专科
    Associate,
    /// 本科
    Bachelor,
    /// 硕士
    Master,
}

impl Degree {
    pub fn label(self) -> &'static str {
        match self {
            Degree::Associate => "专科",
            Degree::Bachelor => "本科",
            Degree::Master => "硕士",
        }
    }

    /// Accepts the serde name or the Chinese label, ignoring surrounding whitespace and ASCII
    /// case.
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "associate" | "专科" => Some(Degree::Associate),
            "bachelor" | "本科" => Some(Degree::Bachelor),
            "master" | "硕士" => Some(Degree::Master),
            _ => None,
        }
    }
}

/// One chapter, section or subsection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Node {
    /// Without numbering: "研究背景", not "1.1 研究背景".
    pub title: String,
    /// Target length in characters; 0 means not yet allocated. A leaf's budget is what gets
    /// written, a parent's is the sum of its children's.
    #[serde(default)]
    pub budget: u32,
    /// Library record ids retrieved for this node.
    #[serde(default)]
    pub references: Vec<u64>,
    #[serde(default)]
    pub children: Vec<Node>,
}

impl Node {
    /// A node without budget, references or children.
    pub fn new(title: impl Into<String>) -> Self {
        Node {
            title: title.into(),
            budget: 0,
            references: Vec::new(),
            children: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Outline {
    pub chapters: Vec<Node>,
}

/// Why an outline cannot be written as it stands.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OutlineError {
    #[error("大纲为空：至少需要一章")]
    Empty,
    #[error("大纲的章太多：最多 {max} 章，现有 {found} 章")]
    TooManyChapters { max: usize, found: usize },
    #[error("大纲的节太多：最多 {max} 节，现有 {found} 节")]
    TooManySections { max: usize, found: usize },
    /// `index` counts every node from 1 in reading order, chapters included.
    #[error("第 {index} 个标题为空")]
    EmptyTitle { index: usize },
    /// `title` is shortened to its first 20 characters so the message stays readable.
    #[error("标题“{title}”过长：最多 {max} 字")]
    TitleTooLong { title: String, max: usize },
    #[error("目标字数须在 {min} 到 {max} 字之间，现为 {found} 字")]
    WordsOutOfRange { min: u32, max: u32, found: u64 },
    #[error("各部分字数之和（{sum} 字）与目标字数（{target} 字）相差超过 10%")]
    BudgetMismatch { sum: u64, target: u32 },
    #[error("“{title}”的字数太少：至少 {min} 字")]
    BudgetTooSmall { title: String, min: u32 },
}

impl OutlineError {
    /// Stable machine-readable code for the API.
    pub fn code(&self) -> &'static str {
        match self {
            OutlineError::Empty => "outline_empty",
            OutlineError::TooManyChapters { .. } => "outline_too_many_chapters",
            OutlineError::TooManySections { .. } => "outline_too_many_sections",
            OutlineError::EmptyTitle { .. } => "outline_empty_title",
            OutlineError::TitleTooLong { .. } => "outline_title_too_long",
            OutlineError::WordsOutOfRange { .. } => "words_out_of_range",
            OutlineError::BudgetMismatch { .. } => "outline_budget_mismatch",
            OutlineError::BudgetTooSmall { .. } => "outline_budget_too_small",
        }
    }
}

impl Outline {
    /// The nodes that get written (those without children), with their index paths, in
    /// reading order. A chapter without sections is a leaf.
    pub fn leaves(&self) -> Vec<(Vec<usize>, &Node)> {
        let mut out = Vec::new();
        walk(&self.chapters, &mut Vec::new(), &mut |path, node| {
            if node.children.is_empty() {
                out.push((path.to_vec(), node));
            }
        });
        out
    }

    /// Nodes below the chapters: sections and subsections together.
    pub fn node_count(&self) -> usize {
        fn below(nodes: &[Node]) -> usize {
            nodes
                .iter()
                .map(|n| n.children.len() + below(&n.children))
                .sum()
        }
        below(&self.chapters)
    }

    /// Sum of the chapters' budgets, wide enough never to overflow.
    pub fn total_budget(&self) -> u64 {
        self.chapters.iter().map(|c| u64::from(c.budget)).sum()
    }

    /// ("第1章" / "1.1" / "1.1.1", title, level 1..=3) for every node in reading order.
    pub fn numbered_titles(&self) -> Vec<(String, String, usize)> {
        let mut out = Vec::new();
        walk(&self.chapters, &mut Vec::new(), &mut |path, node| {
            out.push((number_label(path), node.title.clone(), path.len()));
        });
        out
    }

    /// One line per node, "第1章 绪论（约1200字）", "1.1 研究背景（约400字）", so that
    /// `parse_outline_text` reads back the same titles, levels and budgets (for titles that
    /// `clean_title` leaves unchanged, and at most three levels).
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        walk(&self.chapters, &mut Vec::new(), &mut |path, node| {
            let _ = write!(out, "{} {}", number_label(path), node.title);
            if node.budget > 0 {
                let _ = write!(out, "（约{}字）", node.budget);
            }
            out.push('\n');
        });
        out
    }
}

/// Pre-order traversal with the index path of each node.
fn walk<'a>(nodes: &'a [Node], path: &mut Vec<usize>, f: &mut dyn FnMut(&[usize], &'a Node)) {
    for (i, node) in nodes.iter().enumerate() {
        path.push(i);
        f(path, node);
        walk(&node.children, path, f);
        path.pop();
    }
}

fn number_label(path: &[usize]) -> String {
    match path {
        [chapter] => format!("第{}章", chapter + 1),
        _ => path
            .iter()
            .map(|i| (i + 1).to_string())
            .collect::<Vec<_>>()
            .join("."),
    }
}

// ---------------------------------------------------------------------------------------------
// Parsing

// Numbering styles ranked from the highest level down. Levels are given relative to the
// enclosing heading rather than fixed per style, so "第一章 / 一、 / （一）" and
// "1 / 1.1 / 1.1.1" both come out as three levels, and a style that starts the text (a "1.1"
// before any chapter) becomes a chapter.
const RANK_CHAPTER: u8 = 0; // 第X章, 第X部分, Chapter N, `#`
const RANK_CN_ENUM: u8 = 1; // 一、, 第X节
const RANK_ARABIC_1: u8 = 2; // 1 / 1. / 1、
const RANK_ARABIC_2: u8 = 3; // 1.1, `##`
const RANK_CN_PAREN: u8 = 4; // （一）
const RANK_ARABIC_3: u8 = 5; // 1.1.1, `###`
const RANK_PAREN_NUM: u8 = 6; // （1）, 1), ①
const RANK_DEEP: u8 = 7; // 1.1.1.1, `####` and deeper
/// Bullets and plain lines: their level comes from indentation alone.
const RANK_IMPLICIT: u8 = u8::MAX;

/// How far from the end of a line an unbracketed budget ("— 800字") is looked for.
const BUDGET_SCAN_CHARS: usize = 40;

fn md_rank(level: usize) -> u8 {
    match level {
        0 | 1 => RANK_CHAPTER,
        2 => RANK_ARABIC_2,
        3 => RANK_ARABIC_3,
        _ => RANK_DEEP,
    }
}

/// One line taken apart.
#[derive(Debug, Default)]
struct LineParts {
    /// Number of `#` of a markdown heading.
    md_level: Option<usize>,
    bullet: bool,
    /// Rank of the numbering the line started with.
    rank: Option<u8>,
    /// "[1] 张三. …": an entry of a reference list.
    reference_entry: bool,
    /// Last character before tidying, for telling sentences from headings.
    last_char: Option<char>,
    title: String,
    budget: Option<u32>,
}

/// Trims, collapses whitespace, and strips markdown/bullet markers, the numbering, a trailing
/// budget annotation and surrounding quotes or brackets: "第一章 “绪论”（约800字）" → "绪论".
pub fn clean_title(s: &str) -> String {
    split_line(s).title
}

fn split_line(line: &str) -> LineParts {
    let mut parts = LineParts::default();
    // Bold markers are formatting, wherever the model put them.
    let unbolded = line.replace("**", "");
    let mut s = unbolded.trim().trim_start_matches('>').trim_start();
    let hashes = s.bytes().take_while(|&b| b == b'#').count();
    if (1..=6).contains(&hashes) {
        parts.md_level = Some(hashes);
        s = s[hashes..].trim_start();
    } else if let Some(rest) = strip_bullet(s) {
        parts.bullet = true;
        s = rest;
    }
    parts.reference_entry = is_reference_entry(s);
    if let Some((rank, rest)) = numbering(s) {
        parts.rank = Some(rank);
        s = rest.trim_start_matches(is_heading_separator);
    }
    let (head, budget) = split_budget(s);
    parts.budget = budget;
    parts.last_char = head.trim_end().chars().last();
    parts.title = tidy(head);
    parts
}

fn strip_bullet(s: &str) -> Option<&str> {
    let mut chars = s.chars();
    let c = chars.next()?;
    let rest = chars.as_str();
    match c {
        // ASCII markers need a space, or "-1" and "*注" would count.
        '-' | '*' | '+' => rest
            .starts_with(char::is_whitespace)
            .then(|| rest.trim_start()),
        '•' | '·' | '・' | '●' | '○' | '■' | '□' | '◆' | '◇' | '▪' | '►' | '▶' | '➢' => {
            Some(rest.trim_start())
        }
        _ => None,
    }
}

fn is_reference_entry(s: &str) -> bool {
    let Some(rest) = s.strip_prefix(['[', '［']) else {
        return false;
    };
    let digits = rest.chars().take_while(|&c| digit(c).is_some()).count();
    digits > 0
        && rest
            .chars()
            .nth(digits)
            .is_some_and(|c| c == ']' || c == '］')
}

fn is_heading_separator(c: char) -> bool {
    c.is_whitespace() || matches!(c, ':' | '：' | '、' | '.' | '．' | '-' | '—' | '–')
}

fn digit(c: char) -> Option<u32> {
    match c {
        '0'..='9' => Some(c as u32 - '0' as u32),
        '０'..='９' => Some(c as u32 - '０' as u32),
        _ => None,
    }
}

fn is_dot(c: char) -> bool {
    c == '.' || c == '．'
}

fn is_cn_numeral(c: char) -> bool {
    "零〇一二三四五六七八九十百两".contains(c)
}

/// Leading (chars, bytes) satisfying `pred`.
fn leading(s: &str, pred: impl Fn(char) -> bool) -> (usize, usize) {
    let mut chars = 0;
    let mut bytes = 0;
    for c in s.chars().take_while(|&c| pred(c)) {
        chars += 1;
        bytes += c.len_utf8();
    }
    (chars, bytes)
}

/// The rank of the numbering `s` starts with, and the text after it.
fn numbering(s: &str) -> Option<(u8, &str)> {
    if let Some(rest) = s.strip_prefix('第') {
        let rest = rest.trim_start();
        let (n, bytes) = leading(rest, |c| is_cn_numeral(c) || digit(c).is_some());
        if n > 0 {
            let after = rest[bytes..].trim_start();
            for (unit, rank) in [
                ("章", RANK_CHAPTER),
                ("部分", RANK_CHAPTER),
                ("篇", RANK_CHAPTER),
                ("节", RANK_CN_ENUM),
            ] {
                if let Some(r) = after.strip_prefix(unit) {
                    return Some((rank, r));
                }
            }
        }
        // A small model mixes the styles: "第3.1 研究方法", "第2.1节 背景".
        if let Some((rank, r)) = arabic_numbering(rest)
            && rank >= RANK_ARABIC_2
        {
            return Some((rank, r.strip_prefix(['节', '章']).unwrap_or(r)));
        }
        return None;
    }
    if let Some(word) = s.get(..7)
        && word.eq_ignore_ascii_case("chapter")
    {
        let rest = s[7..].trim_start();
        let (n, bytes) = leading(rest, |c| digit(c).is_some());
        let after = &rest[bytes..];
        if n > 0 && !after.starts_with(|c: char| c.is_ascii_alphanumeric()) {
            return Some((RANK_CHAPTER, after));
        }
        return None;
    }
    let first = s.chars().next()?;
    if ('\u{2460}'..='\u{2473}').contains(&first) {
        // ① … ⑳
        return Some((RANK_PAREN_NUM, &s[first.len_utf8()..]));
    }
    if first == '(' || first == '（' {
        let inner = &s[first.len_utf8()..];
        let (cn, cn_bytes) = leading(inner, is_cn_numeral);
        let (ar, ar_bytes) = leading(inner, |c| digit(c).is_some());
        let (rank, bytes) = match (cn, ar) {
            (1..=4, _) => (RANK_CN_PAREN, cn_bytes),
            (_, 1..=3) => (RANK_PAREN_NUM, ar_bytes),
            _ => return None,
        };
        let after = &inner[bytes..];
        return after.strip_prefix([')', '）']).map(|rest| (rank, rest));
    }
    let (cn, cn_bytes) = leading(s, is_cn_numeral);
    if (1..=4).contains(&cn) {
        let after = &s[cn_bytes..];
        return after
            .strip_prefix(|c: char| c == '、' || is_dot(c))
            .map(|rest| (RANK_CN_ENUM, rest));
    }
    arabic_numbering(s)
}

/// "1 ", "1.", "1、", "1)", "1.1", "1.1.1", "1．1" and deeper.
fn arabic_numbering(s: &str) -> Option<(u8, &str)> {
    let mut rest = s;
    let mut depth = 0usize;
    loop {
        let (n, bytes) = leading(rest, |c| digit(c).is_some());
        // Two digits for the first group keeps "2020 年…" a title, not chapter 2020.
        let max = if depth == 0 { 2 } else { 3 };
        if n == 0 || n > max {
            return None;
        }
        rest = &rest[bytes..];
        depth += 1;
        let mut chars = rest.chars();
        match chars.next() {
            Some(c) if is_dot(c) && chars.next().is_some_and(|d| digit(d).is_some()) => {
                rest = &rest[c.len_utf8()..];
            }
            _ => break,
        }
    }
    let mut chars = rest.chars();
    let separated = match chars.next() {
        None => true,
        Some(')' | '）') if depth == 1 => return Some((RANK_PAREN_NUM, chars.as_str())),
        Some(c) if is_dot(c) || c == '、' => {
            rest = chars.as_str();
            true
        }
        Some(c) if c.is_whitespace() => true,
        // "1.1研究背景" is common; "1绪论" is too close to "3D打印" or "5G网络" to trust.
        Some(c) => depth >= 2 && !c.is_ascii_alphanumeric() && c != '%',
    };
    if !separated {
        return None;
    }
    let rank = match depth {
        1 => RANK_ARABIC_1,
        2 => RANK_ARABIC_2,
        3 => RANK_ARABIC_3,
        _ => RANK_DEEP,
    };
    Some((rank, rest))
}

fn is_budget_separator(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '—' | '-' | '–' | '~' | '～' | ':' | '：' | '，' | ',' | '|' | '/' | '、' | '='
        )
}

/// Splits a trailing budget annotation off: "研究背景（约800字）", "研究背景 — 800字",
/// "研究背景 800 字". Bracketed text that is not a budget ("研究（以某市为例）") stays.
fn split_budget(s: &str) -> (&str, Option<u32>) {
    let s = s.trim_end();
    if let Some(close) = s
        .chars()
        .last()
        .filter(|c| matches!(c, ')' | '）' | ']' | '】'))
    {
        let body = &s[..s.len() - close.len_utf8()];
        if let Some(open) = body.rfind(['(', '（', '[', '【']) {
            let open_len = body[open..].chars().next().map_or(1, char::len_utf8);
            if let Some(budget) = parse_budget(&body[open + open_len..]) {
                return (body[..open].trim_end(), Some(budget));
            }
        }
        return (s, None);
    }
    if !(s.ends_with('字') || s.ends_with("字左右") || s.contains("字数")) {
        return (s, None);
    }
    let starts: Vec<usize> = s.char_indices().map(|(i, _)| i).collect();
    let from = starts.len().saturating_sub(BUDGET_SCAN_CHARS);
    // Longest suffix first, so "— 800字" is taken whole.
    for &i in &starts[from..] {
        let (head, tail) = s.split_at(i);
        // Without a separator, "常用3500字" is a title, not a budget.
        let separated = head.chars().last().is_none_or(is_budget_separator)
            || tail.trim_start().starts_with('约');
        if separated && let Some(budget) = parse_budget(tail) {
            return (head.trim_end_matches(is_budget_separator), Some(budget));
        }
    }
    (s, None)
}

/// "约800字", "800 字", "0.5万字", "800-1000字"（the middle）, "字数：800" → characters.
fn parse_budget(s: &str) -> Option<u32> {
    let norm: String = s
        .chars()
        .map(|c| match c {
            '０'..='９' => char::from_u32(c as u32 - '０' as u32 + '0' as u32).unwrap_or(c),
            '．' => '.',
            '，' => ',',
            '～' => '~',
            '－' => '-',
            '：' => ':',
            _ => c,
        })
        .collect();
    let mut t = norm.trim();
    let mut labelled = false;
    'prefixes: loop {
        for prefix in ["大约", "约", "建议", "预计", "共", "字数", "篇幅", ":"] {
            if let Some(rest) = t.strip_prefix(prefix) {
                labelled |= prefix == "字数";
                t = rest.trim_start();
                continue 'prefixes;
            }
        }
        break;
    }
    let t = t.strip_suffix("左右").unwrap_or(t).trim_end();
    let has_unit = t.ends_with('字');
    let t = t.strip_suffix('字').unwrap_or(t).trim_end();
    if !(has_unit || labelled) {
        return None;
    }
    let milli = match t.split_once(['-', '~', '–', '—', '至', '到']) {
        Some((a, b)) => {
            let (b, b_mult) = amount(b)?;
            let (a, a_mult) = amount(a)?;
            // "1-2万字": the unit written once covers both ends.
            let a_mult = if a_mult == 1 { b_mult } else { a_mult };
            a.saturating_mul(a_mult)
                .saturating_add(b.saturating_mul(b_mult))
                / 2
        }
        None => {
            let (n, mult) = amount(t)?;
            n.saturating_mul(mult)
        }
    };
    let chars = milli.saturating_add(500) / 1000;
    Some(u32::try_from(chars).unwrap_or(u32::MAX))
}

/// A number in thousandths and the multiplier of its unit (万, 千).
fn amount(s: &str) -> Option<(u128, u128)> {
    let t = s.trim();
    let t = t.strip_suffix('字').unwrap_or(t).trim_end();
    let (t, mult) = if let Some(r) = t.strip_suffix('万') {
        (r.trim_end(), 10_000)
    } else if let Some(r) = t.strip_suffix('千') {
        (r.trim_end(), 1_000)
    } else {
        (t, 1)
    };
    Some((number_milli(t)?, mult))
}

/// "1,200" or "0.5" in thousandths; nothing but digits, inner commas and one dot.
fn number_milli(s: &str) -> Option<u128> {
    let chars: Vec<char> = s.chars().collect();
    let mut whole: u128 = 0;
    let mut frac: u128 = 0;
    let mut frac_digits = 0u32;
    let mut seen_dot = false;
    let mut digits = 0usize;
    for (i, &c) in chars.iter().enumerate() {
        if let Some(d) = digit(c) {
            digits += 1;
            if seen_dot {
                if frac_digits < 3 {
                    frac = frac * 10 + u128::from(d);
                    frac_digits += 1;
                }
            } else {
                whole = whole.saturating_mul(10).saturating_add(u128::from(d));
            }
        } else if c == ',' {
            let between = i > 0
                && digit(chars[i - 1]).is_some()
                && chars.get(i + 1).is_some_and(|&n| digit(n).is_some());
            if !between || seen_dot {
                return None;
            }
        } else if c == '.' && !seen_dot && digits > 0 {
            seen_dot = true;
        } else {
            return None;
        }
    }
    if digits == 0 {
        return None;
    }
    let frac = frac * 10u128.pow(3 - frac_digits);
    Some(whole.saturating_mul(1000).saturating_add(frac))
}

/// Collapses whitespace, drops a trailing colon and unwraps quotes or brackets around the
/// whole title.
fn tidy(s: &str) -> String {
    let mut t = s.split_whitespace().collect::<Vec<_>>().join(" ");
    loop {
        let trimmed = t.trim_end_matches([':', '：']).trim_end();
        let next = unwrap_pair(trimmed).unwrap_or(trimmed).trim().to_string();
        if next == t {
            return t;
        }
        t = next;
    }
}

fn unwrap_pair(s: &str) -> Option<&str> {
    // 《》 is left alone: a book title mark is part of the title.
    const PAIRS: [(char, char); 10] = [
        ('“', '”'),
        ('"', '"'),
        ('‘', '’'),
        ('\'', '\''),
        ('「', '」'),
        ('『', '』'),
        ('【', '】'),
        ('[', ']'),
        ('(', ')'),
        ('（', '）'),
    ];
    let first = s.chars().next()?;
    let (open, close) = PAIRS.into_iter().find(|&(open, _)| open == first)?;
    let inner = s[open.len_utf8()..].strip_suffix(close)?;
    // "(a) 与 (b)" is not wrapped as a whole.
    (!inner.contains(close) && !inner.contains(open)).then_some(inner)
}

/// Lowercase, without whitespace, with full-width colon and bracket folded.
fn fold(title: &str) -> String {
    title
        .chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| match c {
            '：' => ':',
            '（' => '(',
            _ => c.to_ascii_lowercase(),
        })
        .collect()
}

/// Front and back matter: the writer adds these itself, so they and anything under them are
/// skipped.
fn is_front_back_matter(title: &str) -> bool {
    const EXACT: &[&str] = &[
        "摘要",
        "中文摘要",
        "英文摘要",
        "内容摘要",
        "abstract",
        "关键词",
        "关键字",
        "keywords",
        "keyword",
        "参考文献",
        "主要参考文献",
        "references",
        "reference",
        "bibliography",
        "致谢",
        "谢辞",
        "致谢词",
        "acknowledgements",
        "acknowledgments",
        "acknowledgement",
        "acknowledgment",
    ];
    // Followed by a colon or bracket: "关键词：…", "摘要（中文）".
    const LEADING: &[&str] = &[
        "摘要",
        "abstract",
        "关键词",
        "关键字",
        "keywords",
        "keyword",
        "参考文献",
        "references",
        "致谢",
    ];
    let t = fold(title);
    EXACT.contains(&t.as_str())
        || t.starts_with("附录")
        || t.starts_with("appendix")
        || t.starts_with("appendices")
        || LEADING
            .iter()
            .any(|w| t.strip_prefix(w).is_some_and(|r| r.starts_with([':', '('])))
}

/// Lines that label the outline or talk about it rather than being part of it; unlike front
/// matter, what follows them is kept.
fn is_label(title: &str) -> bool {
    const EXACT: &[&str] = &[
        "大纲",
        "论文大纲",
        "提纲",
        "论文提纲",
        "写作大纲",
        "outline",
        "目录",
        "contents",
        "tableofcontents",
        "全文",
        "总字数",
        "字数",
        "全文字数",
        "合计",
        "总计",
    ];
    const PREFIXES: &[&str] = &[
        "题目:",
        "论文题目",
        "标题:",
        "以上大纲",
        "以上是",
        "以上为",
        "以上内容",
        "以上仅",
        "注:",
        "说明:",
        "备注",
        "note:",
    ];
    let t = fold(title);
    EXACT.contains(&t.as_str()) || PREFIXES.iter().any(|p| t.starts_with(p))
}

/// Leading whitespace in columns: a tab counts 4, an ideographic space 2.
fn indent_width(line: &str) -> usize {
    line.chars()
        .take_while(|c| c.is_whitespace())
        .map(|c| match c {
            '\t' => 4,
            '\u{3000}' => 2,
            _ => 1,
        })
        .sum()
}

/// A heading still open while later lines are placed.
struct Open {
    indent: usize,
    rank: u8,
    level: usize,
    /// Front/back matter, or under it: nothing is created for it or below it.
    skip: bool,
}

/// Reads an outline written one heading per line, in any of the usual numbering styles
/// ("第1章"/"第一章"/"1"/"1."/"一、"/"Chapter 1"/`#` for chapters, "1.1"/"（一）"/`##` for
/// sections, "1.1.1"/"（1）"/"1)"/`###` for subsections), as markdown, or as an indented or
/// bulleted list. Numbering is dropped from the titles and "（约800字）"-style annotations
/// become budgets. Front and back matter, chatter around the outline and headings deeper
/// than subsections are skipped. Never panics.
pub fn parse_outline_text(text: &str) -> Outline {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let lines: Vec<(usize, LineParts)> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| (indent_width(l), split_line(l)))
        .collect();

    let explicit = |p: &LineParts| p.rank.is_some() || p.md_level.is_some();
    let md_top = |p: &LineParts| p.rank.is_none() && p.md_level == Some(1);
    let first_explicit = lines.iter().position(|(_, p)| explicit(p));
    // A lone unnumbered `#` heading at the top, followed by other headings, is the paper's
    // title: drop it and read `##` as chapters.
    let drop_title = first_explicit.is_some_and(|i| md_top(&lines[i].1))
        && lines.iter().filter(|(_, p)| md_top(p)).count() == 1
        && lines.iter().filter(|(_, p)| explicit(p)).count() >= 2;
    let body_start = lines
        .iter()
        .enumerate()
        .position(|(i, (_, p))| explicit(p) && !(drop_title && Some(i) == first_explicit));
    let has_explicit = body_start.is_some();

    let mut outline = Outline::default();
    let mut stack: Vec<Open> = Vec::new();
    for (i, (width, p)) in lines.iter().enumerate() {
        if drop_title && Some(i) == first_explicit {
            continue;
        }
        let rank = match (p.rank, p.md_level) {
            (Some(rank), _) => rank,
            (None, Some(level)) if drop_title => md_rank(level.saturating_sub(1)),
            (None, Some(level)) => md_rank(level),
            (None, None) => RANK_IMPLICIT,
        };
        // A numbered heading without a title ("第一章" alone) is kept, so that validation
        // points at it rather than its sections silently moving to another chapter.
        let untitled = p.title.is_empty() && p.rank.is_some();
        if !untitled && !p.title.chars().any(char::is_alphanumeric)
            || p.reference_entry
            || p.title.starts_with('|')
            || p.title.starts_with("```")
            || is_label(&p.title)
        {
            continue;
        }
        let matter = is_front_back_matter(&p.title);
        // An unnumbered "参考文献" or "致谢" line still closes the chapter above it.
        let rank = if matter && rank == RANK_IMPLICIT && !p.bullet {
            RANK_CHAPTER
        } else {
            rank
        };
        let implicit = rank == RANK_IMPLICIT;
        if !matter {
            let sentence =
                p.last_char == Some('。') || (implicit && matches!(p.last_char, Some('！' | '!')));
            // With numbered headings present, unnumbered lines before the first are preamble
            // ("好的，以下是大纲"); without any, a top line like "以下是论文大纲：" introduces
            // the list while "绪论：" is a heading.
            let preamble = implicit
                && if has_explicit {
                    body_start.is_some_and(|b| i < b)
                } else {
                    !p.bullet
                        && *width == 0
                        && matches!(p.last_char, Some(':' | '：'))
                        && ["以下", "如下", "大纲", "提纲", "，", ","]
                            .iter()
                            .any(|w| p.title.contains(w))
                };
            let prose = implicit && p.title.chars().count() > 2 * MAX_TITLE_CHARS;
            if sentence || preamble || prose {
                continue;
            }
        }
        // A bullet sits below an unbulleted line at the same indentation; so does a plain
        // line among numbered headings ("第一章 绪论" then "研究背景").
        let nested = p.bullet || (implicit && has_explicit);
        let indent = 2 * width + usize::from(nested);
        while let Some(top) = stack.last() {
            let is_parent =
                indent > top.indent || (indent == top.indent && !implicit && top.rank < rank);
            if is_parent {
                break;
            }
            stack.pop();
        }
        let (level, parent_skipped) = stack.last().map_or((1, false), |t| (t.level + 1, t.skip));
        if level > MAX_LEVEL {
            continue;
        }
        let skip = matter || parent_skipped;
        stack.push(Open {
            indent,
            rank,
            level,
            skip,
        });
        if !skip {
            let mut node = Node::new(p.title.clone());
            node.budget = p.budget.unwrap_or(0);
            attach(&mut outline, level, node);
        }
    }
    outline
}

/// Appends under the last node one level up; the stack guarantees it exists, and if it did
/// not the node would go one level higher rather than be lost.
fn attach(outline: &mut Outline, level: usize, node: Node) {
    let chapters = &mut outline.chapters;
    if level <= 1 {
        chapters.push(node);
        return;
    }
    let Some(chapter) = chapters.last_mut() else {
        chapters.push(node);
        return;
    };
    if level == 2 {
        chapter.children.push(node);
        return;
    }
    match chapter.children.last_mut() {
        Some(section) => section.children.push(node),
        None => chapter.children.push(node),
    }
}

// ---------------------------------------------------------------------------------------------
// Budgets

/// Default weight of a body chapter, and of an introduction or conclusion (0.6 of it).
const BODY_WEIGHT: u64 = 10;
const FRAMING_WEIGHT: u64 = 6;
const INTRO_WORDS: &[&str] = &["绪论", "引言", "前言", "导论", "introduction"];
const CONCLUSION_WORDS: &[&str] = &["结论", "总结", "展望", "结语", "conclusion"];

/// Gives every node a budget: the chapters add up to exactly `target`, and every node's
/// children add up to exactly its budget. Budgets already set (by the user or from the text)
/// are kept as relative weights; a zero-budget parent weighs what its children's budgets add
/// up to. Unset nodes weigh the same as their set siblings on average, except that a first
/// chapter named like an introduction (绪论/引言) and a last one named like a conclusion
/// (结论/总结/展望) weigh 0.6 of a body chapter. Rounding is by largest remainder.
pub fn allocate_budgets(outline: &mut Outline, target: u32) {
    let n = outline.chapters.len();
    let defaults: Vec<u64> = outline
        .chapters
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let framing = n >= 2
                && ((i == 0 && mentions(&c.title, INTRO_WORDS))
                    || (i + 1 == n && mentions(&c.title, CONCLUSION_WORDS)));
            if framing { FRAMING_WEIGHT } else { BODY_WEIGHT }
        })
        .collect();
    distribute(&mut outline.chapters, target, &defaults);
}

fn mentions(title: &str, words: &[&str]) -> bool {
    let t = title.to_lowercase();
    words.iter().any(|w| t.contains(w))
}

fn distribute(nodes: &mut [Node], total: u32, defaults: &[u64]) {
    let given: Vec<u128> = nodes
        .iter()
        .map(|n| u128::from(effective_budget(n)))
        .collect();
    let given_sum: u128 = given.iter().sum();
    let given_defaults: u128 = given
        .iter()
        .zip(defaults)
        .filter(|&(&g, _)| g > 0)
        .map(|(_, &d)| u128::from(d))
        .sum();
    // In units of given_sum / given_defaults: an unset node is worth its default weight times
    // the budget per unit of default weight among its set siblings.
    let weights: Vec<u128> = given
        .iter()
        .zip(defaults)
        .map(|(&g, &d)| match (given_sum, g) {
            (0, _) => u128::from(d),
            (_, 0) => u128::from(d) * given_sum,
            _ => g * given_defaults,
        })
        .collect();
    let shares = largest_remainder(total, &weights);
    for (node, share) in nodes.iter_mut().zip(shares) {
        node.budget = share;
        let equal = vec![1; node.children.len()];
        distribute(&mut node.children, share, &equal);
    }
}

/// The budget a node asks for: its own, or else what its children ask for together (unset
/// children counted at the average of the set ones). Capped at `u32::MAX` so the weights in
/// `distribute` stay far from overflow.
fn effective_budget(node: &Node) -> u64 {
    if node.budget > 0 {
        return u64::from(node.budget);
    }
    let asked: Vec<u64> = node.children.iter().map(effective_budget).collect();
    let known = asked.iter().filter(|&&a| a > 0).count();
    if known == 0 {
        return 0;
    }
    let sum: u128 = asked.iter().map(|&a| u128::from(a)).sum();
    let estimate = sum * asked.len() as u128 / known as u128;
    u64::try_from(estimate.min(u128::from(u32::MAX))).unwrap_or(u64::from(u32::MAX))
}

/// Splits `total` in proportion to `weights` so that the shares add up exactly: everyone gets
/// the floor of their exact share, and the units left over go to the largest remainders
/// (earlier nodes first on ties).
fn largest_remainder(total: u32, weights: &[u128]) -> Vec<u32> {
    if weights.is_empty() {
        return Vec::new();
    }
    let ones;
    let weights = if weights.iter().all(|&w| w == 0) {
        ones = vec![1u128; weights.len()];
        &ones[..]
    } else {
        weights
    };
    let sum: u128 = weights.iter().sum();
    let mut shares = Vec::with_capacity(weights.len());
    let mut rests = Vec::with_capacity(weights.len());
    for (i, &w) in weights.iter().enumerate() {
        let exact = u128::from(total) * w;
        shares.push(u32::try_from(exact / sum).unwrap_or(u32::MAX));
        rests.push((exact % sum, i));
    }
    let handed: u64 = shares.iter().map(|&s| u64::from(s)).sum();
    let left = usize::try_from(u64::from(total).saturating_sub(handed)).unwrap_or(usize::MAX);
    rests.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    for &(_, i) in rests.iter().take(left) {
        shares[i] = shares[i].saturating_add(1);
    }
    shares
}

// ---------------------------------------------------------------------------------------------
// Validation

/// Checks an outline against the limits before writing: the target length, the number of
/// chapters and sections, the titles (in reading order), the chapters' budgets against the
/// target (within 10%) and every leaf's budget against `MIN_NODE_BUDGET`.
pub fn validate(outline: &Outline, target: u32) -> Result<(), OutlineError> {
    if !(MIN_WORDS..=MAX_WORDS).contains(&target) {
        return Err(OutlineError::WordsOutOfRange {
            min: MIN_WORDS,
            max: MAX_WORDS,
            found: u64::from(target),
        });
    }
    if outline.chapters.is_empty() {
        return Err(OutlineError::Empty);
    }
    if outline.chapters.len() > MAX_CHAPTERS {
        return Err(OutlineError::TooManyChapters {
            max: MAX_CHAPTERS,
            found: outline.chapters.len(),
        });
    }
    let sections = outline.node_count();
    if sections > MAX_SECTIONS {
        return Err(OutlineError::TooManySections {
            max: MAX_SECTIONS,
            found: sections,
        });
    }
    let mut title_error = None;
    let mut index = 0;
    walk(&outline.chapters, &mut Vec::new(), &mut |_, node| {
        index += 1;
        if title_error.is_some() {
            return;
        }
        let title = node.title.trim();
        if title.is_empty() {
            title_error = Some(OutlineError::EmptyTitle { index });
        } else if title.chars().count() > MAX_TITLE_CHARS {
            title_error = Some(OutlineError::TitleTooLong {
                title: preview(title),
                max: MAX_TITLE_CHARS,
            });
        }
    });
    if let Some(e) = title_error {
        return Err(e);
    }
    let sum = outline.total_budget();
    // |sum − target| > 10% of target, in integers.
    if u128::from(sum.abs_diff(u64::from(target))) * 10 > u128::from(target) {
        return Err(OutlineError::BudgetMismatch { sum, target });
    }
    if let Some((_, leaf)) = outline
        .leaves()
        .into_iter()
        .find(|(_, n)| n.budget < MIN_NODE_BUDGET)
    {
        return Err(OutlineError::BudgetTooSmall {
            title: leaf.title.trim().to_string(),
            min: MIN_NODE_BUDGET,
        });
    }
    Ok(())
}

fn preview(title: &str) -> String {
    const SHOWN: usize = 20;
    if title.chars().count() <= SHOWN {
        title.to_string()
    } else {
        title.chars().take(SHOWN).chain(['…']).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// (level, title, budget) for every node, in reading order.
    fn flat(o: &Outline) -> Vec<(usize, String, u32)> {
        let mut out = Vec::new();
        walk(&o.chapters, &mut Vec::new(), &mut |path, n| {
            out.push((path.len(), n.title.clone(), n.budget));
        });
        out
    }

    fn shape(o: &Outline) -> Vec<(usize, &str)> {
        let mut out = Vec::new();
        walk(&o.chapters, &mut Vec::new(), &mut |path, n| {
            out.push((path.len(), n.title.as_str()));
        });
        out
    }

    fn node(title: &str, budget: u32, children: Vec<Node>) -> Node {
        Node {
            title: title.to_string(),
            budget,
            references: Vec::new(),
            children,
        }
    }

    fn leaf(title: &str, budget: u32) -> Node {
        node(title, budget, Vec::new())
    }

    /// Every parent's children add up to it exactly.
    fn sums_exact(nodes: &[Node]) -> bool {
        nodes.iter().all(|n| {
            (n.children.is_empty()
                || n.children.iter().map(|c| u64::from(c.budget)).sum::<u64>()
                    == u64::from(n.budget))
                && sums_exact(&n.children)
        })
    }

    #[test]
    fn labels_and_parsing_of_kinds() {
        assert_eq!(PaperKind::Thesis.label(), "毕业论文");
        assert_eq!(PaperKind::Article.label(), "学术论文");
        assert_eq!(PaperKind::parse("thesis"), Some(PaperKind::Thesis));
        assert_eq!(PaperKind::parse(" 毕业论文 "), Some(PaperKind::Thesis));
        assert_eq!(PaperKind::parse("Article"), Some(PaperKind::Article));
        assert_eq!(PaperKind::parse("学术论文"), Some(PaperKind::Article));
        assert_eq!(PaperKind::parse("期刊论文"), Some(PaperKind::Article));
        assert_eq!(PaperKind::parse("novel"), None);
        assert_eq!(Degree::Associate.label(), "专科");
        assert_eq!(Degree::Bachelor.label(), "本科");
        assert_eq!(Degree::Master.label(), "硕士");
        for d in [Degree::Associate, Degree::Bachelor, Degree::Master] {
            assert_eq!(Degree::parse(d.label()), Some(d));
        }
        assert_eq!(Degree::parse("associate"), Some(Degree::Associate));
        assert_eq!(Degree::parse("bachelor"), Some(Degree::Bachelor));
        assert_eq!(Degree::parse("MASTER"), Some(Degree::Master));
        assert_eq!(Degree::parse("博士"), None);
        assert_eq!(
            serde_json::to_string(&PaperKind::Thesis).unwrap(),
            "\"thesis\""
        );
        assert_eq!(
            serde_json::from_str::<Degree>("\"bachelor\"").unwrap(),
            Degree::Bachelor
        );
    }

    #[test]
    fn node_json_defaults_missing_fields() {
        let o: Outline =
            serde_json::from_str(r#"{"chapters":[{"title":"绪论","budget":800}]}"#).unwrap();
        assert_eq!(o.chapters, vec![leaf("绪论", 800)]);
        let back: Outline = serde_json::from_str(&serde_json::to_string(&o).unwrap()).unwrap();
        assert_eq!(back, o);
    }

    #[test]
    fn arabic_and_chapter_numbering() {
        let o = parse_outline_text(
            "第1章 绪论\n1.1 研究背景\n1.1.1 国外研究\n1．1．2 国内研究\n1.2、研究意义\n\
             第二章 相关理论\n2.1研究方法\n第 3 章 结论",
        );
        assert_eq!(
            shape(&o),
            vec![
                (1, "绪论"),
                (2, "研究背景"),
                (3, "国外研究"),
                (3, "国内研究"),
                (2, "研究意义"),
                (1, "相关理论"),
                (2, "研究方法"),
                (1, "结论"),
            ]
        );
    }

    #[test]
    fn plain_arabic_chapters() {
        let o = parse_outline_text("1 绪论\n1.1 研究背景\n2. 系统设计\n2.1 总体架构\n3、结论");
        assert_eq!(
            shape(&o),
            vec![
                (1, "绪论"),
                (2, "研究背景"),
                (1, "系统设计"),
                (2, "总体架构"),
                (1, "结论"),
            ]
        );
    }

    #[test]
    fn chinese_enumeration_styles() {
        let o = parse_outline_text(
            "一、绪论\n（一）研究背景\n(二)研究意义\n1) 国内\n（1）国外\n②方法\n二、结论",
        );
        assert_eq!(
            shape(&o),
            vec![
                (1, "绪论"),
                (2, "研究背景"),
                (2, "研究意义"),
                (3, "国内"),
                (3, "国外"),
                (3, "方法"),
                (1, "结论"),
            ]
        );
        // Under "第一章", "一、" and "（一）" are the next levels down.
        let o =
            parse_outline_text("第一章 绪论\n一、研究背景\n（一）国外\n二、研究意义\n第二章 方法");
        assert_eq!(
            shape(&o),
            vec![
                (1, "绪论"),
                (2, "研究背景"),
                (3, "国外"),
                (2, "研究意义"),
                (1, "方法"),
            ]
        );
    }

    #[test]
    fn english_chapters() {
        let o = parse_outline_text("Chapter 1 Introduction\n1.1 Background\nCHAPTER 2: Methods");
        assert_eq!(
            shape(&o),
            vec![(1, "Introduction"), (2, "Background"), (1, "Methods")]
        );
    }

    #[test]
    fn markdown_headings_with_a_title_line() {
        let o = parse_outline_text(
            "# 基于深度学习的图像识别研究\n\n## 第一章 绪论（约1500字）\n### 1.1 研究背景\n\
             #### 1.1.1 国外现状\n## 第二章 方法\n## 参考文献\n## 致谢",
        );
        assert_eq!(
            flat(&o),
            vec![
                (1, "绪论".into(), 1500),
                (2, "研究背景".into(), 0),
                (3, "国外现状".into(), 0),
                (1, "方法".into(), 0),
            ]
        );
        let o = parse_outline_text("# 图像识别研究\n## 绪论\n### 研究背景\n## 结论");
        assert_eq!(shape(&o), vec![(1, "绪论"), (2, "研究背景"), (1, "结论")]);
        // Several `#` headings are chapters, not a title.
        let o = parse_outline_text("# 绪论\n## 研究背景\n### 国外\n# 结论");
        assert_eq!(
            shape(&o),
            vec![(1, "绪论"), (2, "研究背景"), (3, "国外"), (1, "结论")]
        );
    }

    #[test]
    fn bullets_and_indentation() {
        let o = parse_outline_text(
            "绪论\n  - 研究背景\n    * 国外研究\n  * 研究意义\n系统设计\n\t• 总体架构",
        );
        assert_eq!(
            shape(&o),
            vec![
                (1, "绪论"),
                (2, "研究背景"),
                (3, "国外研究"),
                (2, "研究意义"),
                (1, "系统设计"),
                (2, "总体架构"),
            ]
        );
        // Bullets at column 0 still belong to the chapter above them.
        let o = parse_outline_text("第一章 绪论\n- 研究背景\n- 研究意义\n第二章 方法");
        assert_eq!(
            shape(&o),
            vec![(1, "绪论"), (2, "研究背景"), (2, "研究意义"), (1, "方法")]
        );
        // Plain lines indented under a chapter are sections.
        let o = parse_outline_text("第一章 绪论\n  研究背景\n  研究意义\n第二章 方法");
        assert_eq!(
            shape(&o),
            vec![(1, "绪论"), (2, "研究背景"), (2, "研究意义"), (1, "方法")]
        );
        // A numbered markdown list with bold chapters.
        let o = parse_outline_text("1. **绪论**\n   - 研究背景\n2. **方法**");
        assert_eq!(shape(&o), vec![(1, "绪论"), (2, "研究背景"), (1, "方法")]);
    }

    #[test]
    fn front_and_back_matter_are_skipped() {
        let o = parse_outline_text(
            "摘要\n关键词：深度学习；图像识别\nAbstract\n目录\n第一章 绪论\n1.1 研究背景\n\
             第二章 结论\n参考文献\n[1] 张三. 图像识别研究[J]. 计算机学报, 2020.\n\
             - 李四. 深度学习[M]. 北京: 科学出版社, 2019.\n致 谢\n附录A 调查问卷\n  问卷内容",
        );
        assert_eq!(shape(&o), vec![(1, "绪论"), (2, "研究背景"), (1, "结论")]);
        // Numbered back matter and what is under it go too.
        let o = parse_outline_text("# 绪论\n# 参考文献\n## 中文文献\n# 附录\n## 附录一");
        assert_eq!(shape(&o), vec![(1, "绪论")]);
        // "摘要" inside a real title is not front matter.
        let o = parse_outline_text("第一章 摘要生成算法研究");
        assert_eq!(shape(&o), vec![(1, "摘要生成算法研究")]);
    }

    #[test]
    fn chatter_and_garbage_are_skipped() {
        let o = parse_outline_text(
            "好的，以下是为您生成的论文大纲：\n论文题目：基于深度学习的图像识别研究\n\n---\n\
             ***\n第一章 绪论\n本章主要介绍研究背景。\n1.1 研究背景\n| 章 | 字数 |\n\
             第二章 结论\n以上大纲仅供参考\n希望对您有帮助！",
        );
        assert_eq!(shape(&o), vec![(1, "绪论"), (2, "研究背景"), (1, "结论")]);
        // A plain title line above numbered chapters is not a chapter.
        let o = parse_outline_text("基于深度学习的图像识别研究\n第一章 绪论\n第二章 结论");
        assert_eq!(shape(&o), vec![(1, "绪论"), (1, "结论")]);
        // Numbers that are part of a title are not numbering.
        let o = parse_outline_text("2020年以来的研究\n5G网络\n3D打印");
        assert_eq!(
            shape(&o),
            vec![(1, "2020年以来的研究"), (1, "5G网络"), (1, "3D打印")]
        );
        // Without numbered headings, only a top line that introduces the list is chatter.
        let o = parse_outline_text("以下是论文大纲：\n绪论：\n  研究背景：\n结论");
        assert_eq!(shape(&o), vec![(1, "绪论"), (2, "研究背景"), (1, "结论")]);
        assert_eq!(parse_outline_text(""), Outline::default());
        assert_eq!(parse_outline_text("\n \n\t\n"), Outline::default());
    }

    #[test]
    fn a_chapter_without_title_keeps_its_sections() {
        let o = parse_outline_text("第一章\n1.1 背景\n第二章 方法");
        assert_eq!(shape(&o), vec![(1, ""), (2, "背景"), (1, "方法")]);
        assert_eq!(
            validate(&o, 10_000),
            Err(OutlineError::EmptyTitle { index: 1 })
        );
    }

    #[test]
    fn sections_before_any_chapter_are_promoted() {
        let o = parse_outline_text("1.1 研究背景\n1.2 研究意义\n第2章 方法\n2.1 设计");
        assert_eq!(
            shape(&o),
            vec![(1, "研究背景"), (1, "研究意义"), (1, "方法"), (2, "设计")]
        );
    }

    #[test]
    fn headings_below_subsections_are_dropped() {
        let o = parse_outline_text(
            "第一章 绪论\n1.1 背景\n1.1.1 国外\n（1）美国\n1.1.1.1 英国\n1.2 意义",
        );
        assert_eq!(
            shape(&o),
            vec![(1, "绪论"), (2, "背景"), (3, "国外"), (2, "意义")]
        );
    }

    #[test]
    fn budget_annotations_are_read() {
        let o = parse_outline_text(
            "第一章 绪论（约800字）\n1.1 研究背景(800字)\n1.2 研究意义 — 600字\n1.3 研究现状 500 字\n\
             第二章 方法（约0.5万字）\n2.1 设计（800-1000字）\n2.2 实现（以A市为例）\n\
             2.3 测试【约1,200字】\n2.4 部署，约300字左右\n第三章 结论（字数：1000）\n\
             3.1 展望（约４００字）",
        );
        assert_eq!(
            flat(&o),
            vec![
                (1, "绪论".into(), 800),
                (2, "研究背景".into(), 800),
                (2, "研究意义".into(), 600),
                (2, "研究现状".into(), 500),
                (1, "方法".into(), 5000),
                (2, "设计".into(), 900),
                (2, "实现（以A市为例）".into(), 0),
                (2, "测试".into(), 1200),
                (2, "部署".into(), 300),
                (1, "结论".into(), 1000),
                (2, "展望".into(), 400),
            ]
        );
        // Absurd numbers saturate instead of overflowing.
        let o = parse_outline_text("第一章 绪论（99999999999999999999999999999999999999999字）");
        assert_eq!(o.chapters[0].budget, u32::MAX);
        // A number without a separator belongs to the title.
        let o = parse_outline_text("第一章 常用3500字研究");
        assert_eq!(flat(&o), vec![(1, "常用3500字研究".into(), 0)]);
    }

    #[test]
    fn clean_title_strips_everything_around_the_title() {
        assert_eq!(clean_title("  第一章   “绪论”（约800字） "), "绪论");
        assert_eq!(clean_title("1.1　研究　背景"), "研究 背景");
        assert_eq!(clean_title("## 1.2 【研究意义】"), "研究意义");
        assert_eq!(clean_title("- 研究方法：— 800字"), "研究方法");
        assert_eq!(clean_title("《红楼梦》人物研究"), "《红楼梦》人物研究");
        assert_eq!(clean_title("(a) 与 (b)"), "(a) 与 (b)");
        assert_eq!(clean_title("第一性原理研究"), "第一性原理研究");
        assert_eq!(clean_title("第3.1 研究方法"), "研究方法");
        assert_eq!(clean_title("第2.1节 研究背景"), "研究背景");
        assert_eq!(clean_title("第2.1.3节研究背景"), "研究背景");
        assert_eq!(clean_title("第3代半导体材料"), "第3代半导体材料");
        assert_eq!(clean_title(""), "");
    }

    #[test]
    fn helpers_number_count_and_list_leaves() {
        let o = Outline {
            chapters: vec![
                node("绪论", 300, vec![leaf("背景", 100), leaf("意义", 200)]),
                node(
                    "方法",
                    500,
                    vec![node(
                        "设计",
                        500,
                        vec![leaf("架构", 250), leaf("接口", 250)],
                    )],
                ),
                leaf("结论", 200),
            ],
        };
        assert_eq!(o.node_count(), 5);
        assert_eq!(o.total_budget(), 1000);
        let leaves: Vec<(Vec<usize>, &str)> = o
            .leaves()
            .into_iter()
            .map(|(p, n)| (p, n.title.as_str()))
            .collect();
        assert_eq!(
            leaves,
            vec![
                (vec![0, 0], "背景"),
                (vec![0, 1], "意义"),
                (vec![1, 0, 0], "架构"),
                (vec![1, 0, 1], "接口"),
                (vec![2], "结论"),
            ]
        );
        let numbered = o.numbered_titles();
        let expected = [
            ("第1章", "绪论", 1),
            ("1.1", "背景", 2),
            ("1.2", "意义", 2),
            ("第2章", "方法", 1),
            ("2.1", "设计", 2),
            ("2.1.1", "架构", 3),
            ("2.1.2", "接口", 3),
            ("第3章", "结论", 1),
        ];
        assert_eq!(numbered.len(), expected.len());
        for ((n, t, l), (en, et, el)) in numbered.iter().zip(expected) {
            assert_eq!((n.as_str(), t.as_str(), *l), (en, et, el));
        }
        let text = o.to_text();
        assert!(
            text.starts_with("第1章 绪论（约300字）\n1.1 背景（约100字）\n"),
            "{text}"
        );
        assert!(text.contains("2.1.2 接口（约250字）\n"), "{text}");
        assert_eq!(parse_outline_text(&text), o);
    }

    #[test]
    fn to_text_round_trips_without_budgets() {
        let o = Outline {
            chapters: vec![
                node("引言", 0, vec![leaf("研究背景（以A市为例）", 0)]),
                leaf("结论", 0),
            ],
        };
        assert_eq!(
            o.to_text(),
            "第1章 引言\n1.1 研究背景（以A市为例）\n第2章 结论\n"
        );
        assert_eq!(parse_outline_text(&o.to_text()), o);
    }

    fn seven_chapters() -> Outline {
        let titles = [
            "绪论",
            "相关理论",
            "需求分析",
            "系统设计",
            "系统实现",
            "系统测试",
            "结论与展望",
        ];
        let children = [3, 0, 2, 3, 0, 2, 3];
        Outline {
            chapters: titles
                .iter()
                .zip(children)
                .map(|(t, n)| {
                    let kids = (0..n).map(|k| leaf(&format!("{t}{k}"), 0)).collect();
                    node(t, 0, kids)
                })
                .collect(),
        }
    }

    #[test]
    fn allocation_is_exact_for_an_awkward_target() {
        let mut o = seven_chapters();
        allocate_budgets(&mut o, 10_007);
        let chapters: Vec<u32> = o.chapters.iter().map(|c| c.budget).collect();
        // Weights 6,10,10,10,10,10,6 of 62: 968.4 and 1614.0; the spare unit goes to the
        // largest remainder, the first chapter.
        assert_eq!(chapters, vec![969, 1614, 1614, 1614, 1614, 1614, 968]);
        assert_eq!(o.total_budget(), 10_007);
        assert!(sums_exact(&o.chapters));
        let last: Vec<u32> = o.chapters[6].children.iter().map(|c| c.budget).collect();
        assert_eq!(last, vec![323, 323, 322]);
        let third: Vec<u32> = o.chapters[2].children.iter().map(|c| c.budget).collect();
        assert_eq!(third, vec![807, 807]);
        // Without framing chapters everything weighs the same.
        let mut o = Outline {
            chapters: vec![leaf("甲", 0), leaf("乙", 0), leaf("丙", 0)],
        };
        allocate_budgets(&mut o, 1001);
        let got: Vec<u32> = o.chapters.iter().map(|c| c.budget).collect();
        assert_eq!(got, vec![334, 334, 333]);
    }

    #[test]
    fn allocation_keeps_user_weights() {
        let mut o = Outline {
            chapters: vec![
                node("绪论", 1000, vec![leaf("背景", 300), leaf("意义", 100)]),
                leaf("方法", 3000),
            ],
        };
        allocate_budgets(&mut o, 8000);
        assert_eq!(
            flat(&o),
            vec![
                (1, "绪论".into(), 2000),
                (2, "背景".into(), 1500),
                (2, "意义".into(), 500),
                (1, "方法".into(), 6000),
            ]
        );
        // Unset chapters weigh as much as the set ones on average.
        let mut o = Outline {
            chapters: vec![leaf("甲", 2000), leaf("乙", 0), leaf("丙", 0)],
        };
        allocate_budgets(&mut o, 10_000);
        let got: Vec<u32> = o.chapters.iter().map(|c| c.budget).collect();
        assert_eq!(got, vec![3334, 3333, 3333]);
        // An unset chapter weighs what its sections ask for.
        let mut o = Outline {
            chapters: vec![
                node("甲", 0, vec![leaf("一", 3000), leaf("二", 1000)]),
                leaf("乙", 1000),
            ],
        };
        allocate_budgets(&mut o, 10_000);
        assert_eq!(
            flat(&o),
            vec![
                (1, "甲".into(), 8000),
                (2, "一".into(), 6000),
                (2, "二".into(), 2000),
                (1, "乙".into(), 2000),
            ]
        );
        // Huge weights neither overflow nor break the sums.
        let mut o = Outline {
            chapters: vec![
                node("甲", u32::MAX, vec![leaf("一", u32::MAX), leaf("二", 1)]),
                leaf("乙", u32::MAX),
            ],
        };
        allocate_budgets(&mut o, MAX_WORDS);
        assert_eq!(o.total_budget(), u64::from(MAX_WORDS));
        assert!(sums_exact(&o.chapters));
    }

    fn valid_outline() -> Outline {
        let mut o = seven_chapters();
        allocate_budgets(&mut o, 10_000);
        o
    }

    #[test]
    fn validate_accepts_an_allocated_outline() {
        assert_eq!(validate(&valid_outline(), 10_000), Ok(()));
    }

    #[test]
    fn validate_rejects_each_problem() {
        let err = validate(&Outline::default(), 10_000).unwrap_err();
        assert_eq!(err, OutlineError::Empty);
        assert_eq!(err.to_string(), "大纲为空：至少需要一章");

        let mut o = Outline {
            chapters: (0..13).map(|i| leaf(&format!("第{i}部分"), 800)).collect(),
        };
        assert_eq!(
            validate(&o, 10_000),
            Err(OutlineError::TooManyChapters { max: 12, found: 13 })
        );

        o.chapters = (0..4)
            .map(|c| {
                let kids = (0..20).map(|s| leaf(&format!("节{c}{s}"), 125)).collect();
                node(&format!("章{c}"), 2500, kids)
            })
            .collect();
        let err = validate(&o, 10_000).unwrap_err();
        assert_eq!(err, OutlineError::TooManySections { max: 60, found: 80 });
        assert_eq!(err.to_string(), "大纲的节太多：最多 60 节，现有 80 节");

        let mut o = valid_outline();
        o.chapters[0].children[1].title = "  ".into();
        // Reading order: 绪论, its first section, then the blank one.
        assert_eq!(
            validate(&o, 10_000),
            Err(OutlineError::EmptyTitle { index: 3 })
        );

        let mut o = valid_outline();
        o.chapters[1].title = "长".repeat(300);
        let err = validate(&o, 10_000).unwrap_err();
        assert_eq!(
            err,
            OutlineError::TitleTooLong {
                title: format!("{}…", "长".repeat(20)),
                max: MAX_TITLE_CHARS
            }
        );
        let mut o = valid_outline();
        o.chapters[1].title = "长".repeat(MAX_TITLE_CHARS);
        assert_eq!(validate(&o, 10_000), Ok(()));

        let mut o = valid_outline();
        allocate_budgets(&mut o, 200_000);
        assert_eq!(
            validate(&o, 10_000),
            Err(OutlineError::BudgetMismatch {
                sum: 200_000,
                target: 10_000
            })
        );
        // Exactly 10% off is still accepted; one more character is not.
        allocate_budgets(&mut o, 11_000);
        assert_eq!(validate(&o, 10_000), Ok(()));
        allocate_budgets(&mut o, 11_001);
        assert!(matches!(
            validate(&o, 10_000),
            Err(OutlineError::BudgetMismatch { sum: 11_001, .. })
        ));

        let o = Outline {
            chapters: vec![
                leaf("甲", u32::MAX),
                leaf("乙", u32::MAX),
                leaf("丙", u32::MAX),
            ],
        };
        assert_eq!(
            validate(&o, 10_000),
            Err(OutlineError::BudgetMismatch {
                sum: 3 * u64::from(u32::MAX),
                target: 10_000
            })
        );

        let err = validate(&valid_outline(), 200_000).unwrap_err();
        assert_eq!(
            err,
            OutlineError::WordsOutOfRange {
                min: 1_000,
                max: 50_000,
                found: 200_000
            }
        );
        assert_eq!(
            err.to_string(),
            "目标字数须在 1000 到 50000 字之间，现为 200000 字"
        );
        assert!(validate(&valid_outline(), 999).is_err());

        let mut o = valid_outline();
        // Same total, but one leaf too small to write.
        o.chapters[1].budget -= 50;
        o.chapters.push(leaf("附加", 50));
        assert_eq!(
            validate(&o, 10_000),
            Err(OutlineError::BudgetTooSmall {
                title: "附加".into(),
                min: MIN_NODE_BUDGET
            })
        );
    }

    #[test]
    fn error_codes_are_distinct() {
        let errors = [
            OutlineError::Empty,
            OutlineError::TooManyChapters { max: 1, found: 2 },
            OutlineError::TooManySections { max: 1, found: 2 },
            OutlineError::EmptyTitle { index: 1 },
            OutlineError::TitleTooLong {
                title: "x".into(),
                max: 1,
            },
            OutlineError::WordsOutOfRange {
                min: 1,
                max: 2,
                found: 3,
            },
            OutlineError::BudgetMismatch { sum: 1, target: 2 },
            OutlineError::BudgetTooSmall {
                title: "x".into(),
                min: 1,
            },
        ];
        let codes: Vec<&str> = errors.iter().map(OutlineError::code).collect();
        assert_eq!(
            codes,
            vec![
                "outline_empty",
                "outline_too_many_chapters",
                "outline_too_many_sections",
                "outline_empty_title",
                "outline_title_too_long",
                "words_out_of_range",
                "outline_budget_mismatch",
                "outline_budget_too_small",
            ]
        );
    }

    /// Lines built from the pieces real outlines are made of, so that the parser's branches
    /// get exercised together rather than only by random bytes.
    fn outline_line() -> impl Strategy<Value = String> {
        let indent = prop::sample::select(vec!["", "  ", "    ", "\t", "　"]);
        let marker = prop::sample::select(vec![
            "",
            "- ",
            "* ",
            "• ",
            "# ",
            "## ",
            "### ",
            "#### ",
            "第1章 ",
            "第十二章 ",
            "第三节 ",
            "Chapter 2 ",
            "1 ",
            "2. ",
            "3、",
            "1.1 ",
            "2.3、",
            "1．1．1 ",
            "1.2.3.4 ",
            "一、",
            "（一）",
            "(二)",
            "1) ",
            "（3）",
            "①",
            "**",
            "> ",
        ]);
        let title = "[绪论研究背景方法结论摘要参考文献致谢附录AB1 。：（）]{0,10}";
        let budget = prop::sample::select(vec![
            "",
            "（约800字）",
            "(1200字)",
            " — 600字",
            " 500 字",
            "（约0.5万字）",
            "（800-1000字）",
            "（约4294967295字）",
            "（99999999999999字）",
            "（以A为例）",
            "**",
        ]);
        (indent, marker, title, budget).prop_map(|(a, b, c, d)| format!("{a}{b}{c}{d}"))
    }

    fn outline_text() -> impl Strategy<Value = String> {
        prop::collection::vec(outline_line(), 0..30).prop_map(|lines| lines.join("\n"))
    }

    fn title() -> impl Strategy<Value = String> {
        "[研究背景方法系统设计实现一AB]{1,12}"
    }

    fn any_outline() -> impl Strategy<Value = Outline> {
        let budget = prop_oneof![Just(0u32), 1u32..5_000, Just(u32::MAX)];
        let sub = (title(), budget.clone()).prop_map(|(t, b)| leaf(&t, b));
        let section = (title(), budget.clone(), prop::collection::vec(sub, 0..3))
            .prop_map(|(t, b, kids)| node(&t, b, kids));
        let chapter = (title(), budget, prop::collection::vec(section, 0..4))
            .prop_map(|(t, b, kids)| node(&t, b, kids));
        prop::collection::vec(chapter, 1..6).prop_map(|chapters| Outline { chapters })
    }

    fn check_parsed(o: &Outline) -> Result<(), TestCaseError> {
        for (_, title, level) in o.numbered_titles() {
            prop_assert!((1..=MAX_LEVEL).contains(&level));
            prop_assert_eq!(title.trim(), title.as_str());
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn parse_never_panics_on_arbitrary_text(text in "\\PC{0,200}") {
            check_parsed(&parse_outline_text(&text))?;
        }

        #[test]
        fn parse_never_panics_on_any_string(text in any::<String>()) {
            check_parsed(&parse_outline_text(&text))?;
            let _ = clean_title(&text);
        }

        #[test]
        fn allocation_is_exact_on_parsed_outlines(
            text in outline_text(),
            target in MIN_WORDS..=MAX_WORDS,
        ) {
            let mut o = parse_outline_text(&text);
            check_parsed(&o)?;
            prop_assume!(!o.chapters.is_empty());
            allocate_budgets(&mut o, target);
            prop_assert_eq!(o.total_budget(), u64::from(target));
            prop_assert!(sums_exact(&o.chapters), "{:?}", o);
        }

        #[test]
        fn allocation_is_exact_on_any_outline(o in any_outline(), target in 0u32..=u32::MAX) {
            let mut o = o;
            allocate_budgets(&mut o, target);
            prop_assert_eq!(o.total_budget(), u64::from(target));
            prop_assert!(sums_exact(&o.chapters), "{:?}", o);
            let _ = validate(&o, target);
        }

        #[test]
        fn to_text_round_trips(o in any_outline()) {
            prop_assert_eq!(parse_outline_text(&o.to_text()), o);
        }

        #[test]
        fn allocation_is_proportional_to_user_budgets(
            budgets in prop::collection::vec(1u32..10_000, 1..8),
            target in MIN_WORDS..=MAX_WORDS,
        ) {
            let mut o = Outline {
                chapters: budgets.iter().map(|&b| leaf("章", b)).collect(),
            };
            allocate_budgets(&mut o, target);
            let sum: u64 = budgets.iter().map(|&b| u64::from(b)).sum();
            for (c, &b) in o.chapters.iter().zip(&budgets) {
                // Within one character of the exact proportional share.
                let exact = u64::from(target) * u64::from(b);
                let got = u64::from(c.budget) * sum;
                prop_assert!(got.abs_diff(exact) <= sum, "{} vs {}/{}", c.budget, exact, sum);
            }
        }
    }
}
