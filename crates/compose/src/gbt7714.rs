//! Reference records and their GB/T 7714-2015 form (顺序编码制): `format` writes one entry of
//! the reference list, `parse_line` reads back an entry a student pasted.
//!
//! The punctuation follows the standard's own examples (ASCII ". ", ", ", ": ", "//") even for
//! Chinese entries. Every field is trimmed, and a field that is empty after trimming counts as
//! missing, so a record with gaps still gives an entry without dangling separators.

use serde::{Deserialize, Serialize};

/// 文献类型标识 (GB/T 7714-2015 appendix B).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefKind {
    /// 期刊 [J].
    Journal,
    /// 学位论文 [D].
    Thesis,
    /// 专著 [M].
    Book,
    /// 会议录 [C].
    Conference,
    /// 报纸 [N].
    Newspaper,
    /// 报告 [R].
    Report,
    /// 标准 [S].
    Standard,
    /// 专利 [P].
    Patent,
    /// 电子资源 [EB/OL].
    Online,
}

impl RefKind {
    pub const ALL: [RefKind; 9] = [
        RefKind::Journal,
        RefKind::Thesis,
        RefKind::Book,
        RefKind::Conference,
        RefKind::Newspaper,
        RefKind::Report,
        RefKind::Standard,
        RefKind::Patent,
        RefKind::Online,
    ];

    /// The code written in brackets after the title.
    pub fn code(self) -> &'static str {
        match self {
            RefKind::Journal => "J",
            RefKind::Thesis => "D",
            RefKind::Book => "M",
            RefKind::Conference => "C",
            RefKind::Newspaper => "N",
            RefKind::Report => "R",
            RefKind::Standard => "S",
            RefKind::Patent => "P",
            RefKind::Online => "EB/OL",
        }
    }

    /// The kind behind a code, case-insensitive; database and electronic-bulletin codes
    /// ("DB/OL", "EB", "DB") are all online resources here.
    pub fn from_code(code: &str) -> Option<Self> {
        let code = code.trim().to_ascii_uppercase();
        Some(match code.as_str() {
            "J" => RefKind::Journal,
            "D" => RefKind::Thesis,
            "M" => RefKind::Book,
            "C" => RefKind::Conference,
            "N" => RefKind::Newspaper,
            "R" => RefKind::Report,
            "S" => RefKind::Standard,
            "P" => RefKind::Patent,
            "EB/OL" | "DB/OL" | "EB" | "DB" => RefKind::Online,
            _ => return None,
        })
    }
}

/// One bibliographic record, as kept in the library and as parsed from a pasted line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reference {
    pub kind: RefKind,
    /// Names as given; a trailing "等" or "et al" entry stands for further, unnamed authors.
    #[serde(default)]
    pub authors: Vec<String>,
    pub title: String,
    /// Journal, proceedings or newspaper name.
    #[serde(default)]
    pub container: Option<String>,
    /// Publisher, or the degree-granting school for a thesis.
    #[serde(default)]
    pub publisher: Option<String>,
    /// City of publication.
    #[serde(default)]
    pub place: Option<String>,
    /// Year; the full date for newspapers and online resources.
    #[serde(default)]
    pub year: Option<String>,
    #[serde(default)]
    pub volume: Option<String>,
    /// Issue; the page (版次) for newspapers.
    #[serde(default)]
    pub issue: Option<String>,
    #[serde(default)]
    pub pages: Option<String>,
    #[serde(default)]
    pub doi: Option<String>,
    #[serde(default)]
    pub url: Option<String>,
    /// Date the online resource was consulted (引用日期).
    #[serde(default)]
    pub accessed: Option<String>,
}

impl Reference {
    /// A record with only its kind and title; the rest is filled in field by field.
    pub fn new(kind: RefKind, title: impl Into<String>) -> Self {
        Reference {
            kind,
            authors: Vec::new(),
            title: title.into(),
            container: None,
            publisher: None,
            place: None,
            year: None,
            volume: None,
            issue: None,
            pages: None,
            doi: None,
            url: None,
            accessed: None,
        }
    }
}

/// Whether `s` has a CJK ideograph (the entry is then Chinese and uses "等").
pub fn is_chinese(s: &str) -> bool {
    s.chars().any(is_ideograph)
}

/// Whether `c` is a CJK ideograph.
pub fn is_ideograph(c: char) -> bool {
    matches!(c as u32,
        0x3007
        | 0x3400..=0x4DBF
        | 0x4E00..=0x9FFF
        | 0xF900..=0xFAFF
        | 0x20000..=0x2A6DF
        | 0x2A700..=0x2EBEF
        | 0x30000..=0x323AF)
}

/// Formats one entry of the reference list (without its "[n]" number).
pub fn format(r: &Reference) -> String {
    let title = clean(&r.title);
    let container = field(&r.container);
    let publisher = field(&r.publisher);
    let place = field(&r.place);
    let year = field(&r.year);
    let volume = field(&r.volume);
    let issue = field(&r.issue);
    let pages = field(&r.pages);
    let doi = field(&r.doi)
        .map(|d| strip_doi_prefix(&d))
        .filter(|d| !d.is_empty());
    let url = field(&r.url);
    let accessed = field(&r.accessed);

    let chinese =
        is_chinese(&title) || (title.is_empty() && r.authors.iter().any(|a| is_chinese(a)));
    let mut blocks: Vec<String> = Vec::new();
    if let Some(authors) = authors_block(&r.authors, chinese) {
        blocks.push(authors);
    }

    let mut head = format!("{title}[{}]", r.kind.code());
    let publication = match r.kind {
        RefKind::Journal => {
            let volume_issue = with_issue(volume, issue);
            let dated = match (year, volume_issue) {
                // "2020(5)": without a volume the issue follows the year directly.
                (Some(y), Some(vi)) if vi.starts_with('(') => Some(format!("{y}{vi}")),
                (y, vi) => join(y, ", ", vi),
            };
            join(join(container, ", ", dated), ": ", pages)
        }
        RefKind::Thesis | RefKind::Report | RefKind::Standard | RefKind::Patent => {
            join(join(place, ": ", publisher), ", ", year)
        }
        RefKind::Book => join(join(join(place, ": ", publisher), ", ", year), ": ", pages),
        RefKind::Conference => {
            if let Some(c) = container {
                head.push_str("//");
                head.push_str(&c);
            }
            join(join(join(place, ": ", publisher), ", ", year), ": ", pages)
        }
        RefKind::Newspaper => {
            let dated = match (year, issue) {
                (Some(y), Some(i)) => Some(format!("{y}({i})")),
                (y, None) => y,
                (None, Some(i)) => Some(format!("({i})")),
            };
            join(container, ", ", dated)
        }
        RefKind::Online => {
            let dates = format!(
                "{}{}",
                year.map(|y| format!("({y})")).unwrap_or_default(),
                accessed.map(|a| format!("[{a}]")).unwrap_or_default()
            );
            Some(dates).filter(|d| !d.is_empty())
        }
    };
    blocks.push(head);
    blocks.extend(publication);
    if r.kind == RefKind::Online {
        blocks.extend(url);
    }

    let mut out = blocks.join(". ");
    out.push('.');
    if let Some(doi) = doi {
        out.push_str(" DOI:");
        out.push_str(&doi);
        out.push('.');
    }
    out
}

/// "v(i)", "v", "(i)" or nothing.
fn with_issue(volume: Option<String>, issue: Option<String>) -> Option<String> {
    match (volume, issue) {
        (Some(v), Some(i)) => Some(format!("{v}({i})")),
        (v, None) => v,
        (None, Some(i)) => Some(format!("({i})")),
    }
}

/// Joins two optional parts; a separator only appears between two present parts.
fn join(a: Option<String>, sep: &str, b: Option<String>) -> Option<String> {
    match (a, b) {
        (Some(a), Some(b)) => Some(format!("{a}{sep}{b}")),
        (a, None) => a,
        (None, b) => b,
    }
}

/// Characters the formatter writes itself after a field; a field ending in one would double it.
fn is_separator(c: char) -> bool {
    c.is_whitespace() || ".,;:。，；：、".contains(c)
}

/// Whitespace runs collapsed, and the separators around the value dropped (a trailing "." on a
/// title or a leading ": " on pages are the common copy-paste leftovers).
fn clean(s: &str) -> String {
    let collapsed = s.split_whitespace().collect::<Vec<_>>().join(" ");
    collapsed
        .trim_end_matches(is_separator)
        .trim_start_matches(|c: char| c != '.' && is_separator(c))
        .to_string()
}

fn field(value: &Option<String>) -> Option<String> {
    value.as_deref().map(clean).filter(|v| !v.is_empty())
}

fn strip_doi_prefix(doi: &str) -> String {
    let lower = doi.to_ascii_lowercase();
    for prefix in [
        "https://doi.org/",
        "http://doi.org/",
        "https://dx.doi.org/",
        "http://dx.doi.org/",
        "doi:",
    ] {
        if lower.starts_with(prefix) {
            // ASCII lowercasing keeps byte offsets, so the prefix length applies to `doi`.
            return doi[prefix.len()..].trim().to_string();
        }
    }
    doi.to_string()
}

/// Whether an author entry stands for "and others" rather than a name.
fn is_et_al(name: &str) -> bool {
    let squeezed: String = name
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '.')
        .collect::<String>()
        .to_lowercase();
    matches!(squeezed.as_str(), "等" | "等人" | "etal" | "etc")
}

fn authors_block(authors: &[String], chinese: bool) -> Option<String> {
    let mut more = false;
    let mut names = Vec::new();
    for author in authors {
        if is_et_al(author) {
            more = true;
            continue;
        }
        let name = format_author(author);
        if !name.is_empty() {
            names.push(name);
        }
    }
    if names.is_empty() {
        return None;
    }
    // The standard lists the first three and marks the rest.
    more |= names.len() > 3;
    names.truncate(3);
    let mut out = names.join(", ");
    if more {
        out.push_str(if chinese { ", 等" } else { ", et al" });
    }
    Some(out)
}

/// One name in the standard's form: Chinese names as given, Latin names as "SURNAME I I".
fn format_author(name: &str) -> String {
    let name = clean(name);
    if name.is_empty() || is_chinese(&name) {
        return name;
    }
    if let Some((surname, given)) = name.split_once(',') {
        let surname = surname.trim().to_uppercase();
        return [surname, initials(given.split_whitespace())]
            .into_iter()
            .filter(|p| !p.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
    }
    let tokens: Vec<&str> = name.split_whitespace().collect();
    if tokens.len() == 1 {
        return name.to_uppercase();
    }
    // Long or numbered names are organisations ("World Health Organization"): as given.
    if tokens.len() > 4 || name.chars().any(|c| c.is_ascii_digit()) {
        return name;
    }
    let first = tokens[0];
    let shouting =
        |t: &str| t.chars().filter(|c| c.is_alphabetic()).count() >= 2 && t == t.to_uppercase();
    let surname_first = tokens[1..].iter().all(|t| is_initial(t))
        || (shouting(first) && !tokens[1..].iter().all(|t| shouting(t)));
    let (surname, given) = if surname_first {
        (first, &tokens[1..])
    } else {
        (tokens[tokens.len() - 1], &tokens[..tokens.len() - 1])
    };
    let initials = initials(given.iter().copied());
    if initials.is_empty() {
        surname.to_uppercase()
    } else {
        format!("{} {initials}", surname.to_uppercase())
    }
}

/// "A.", "J.R." — given names already reduced to initials.
fn is_initial(token: &str) -> bool {
    let mut parts = token.split('.').filter(|p| !p.is_empty()).peekable();
    parts.peek().is_some()
        && parts.all(|p| {
            let mut chars = p.chars();
            matches!((chars.next(), chars.next()), (Some(c), None) if c.is_alphabetic())
        })
}

/// "John A." → "J A"; hyphenated and dotted given names give one initial per part.
fn initials<'a>(given: impl Iterator<Item = &'a str>) -> String {
    given
        .flat_map(|t| t.split(['.', '-']))
        .filter_map(|part| part.chars().find(|c| c.is_alphabetic()))
        .map(|c| c.to_uppercase().collect::<String>())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Parses one pasted reference line; `None` when there is no title and type code to be found.
pub fn parse_line(line: &str) -> Option<Reference> {
    let text = normalise(line);
    let text = strip_number_prefix(text.trim()).trim();
    let (open, close, kind) = find_code(text)?;
    let (authors, title) = split_authors_title(text[..open].trim());
    if title.is_empty() {
        return None;
    }
    let mut r = Reference::new(kind, title);
    r.authors = authors;

    let mut rest = text[close + 1..].trim_start();
    if kind == RefKind::Conference
        && let Some(after) = rest.strip_prefix("//")
    {
        let (container, after) = after.split_once(". ").unwrap_or((after, ""));
        r.container = Some(clean(container)).filter(|c| !c.is_empty());
        rest = after;
    }
    let rest = rest
        .trim_start_matches(|c: char| c == '.' || c.is_whitespace())
        .trim_end_matches(|c: char| c == '.' || c.is_whitespace());
    let rest = match rest.to_ascii_lowercase().find("doi:") {
        Some(at) => {
            r.doi = Some(clean(&rest[at + 4..])).filter(|d| !d.is_empty());
            rest[..at].trim_end_matches(|c: char| c == '.' || c.is_whitespace())
        }
        None => rest,
    };

    let mut publication: Option<&str> = None;
    for block in rest.split(". ").map(str::trim).filter(|b| !b.is_empty()) {
        let lower = block.to_ascii_lowercase();
        if ["http://", "https://", "ftp://", "www."]
            .iter()
            .any(|p| lower.starts_with(p))
        {
            r.url.get_or_insert_with(|| clean(block));
        } else if let Some((published, accessed)) = parse_dates(block) {
            if kind == RefKind::Online {
                r.year = r.year.take().or(published);
            }
            r.accessed = r.accessed.take().or(accessed);
        } else if publication.is_none() {
            publication = Some(block);
        }
    }
    if let Some(block) = publication {
        // "…: 1-5[2021-01-01]": an online version's citation date trails the pages.
        let block = match block.strip_suffix(']').and_then(|b| b.rsplit_once('[')) {
            Some((before, date)) if !before.trim().is_empty() => {
                r.accessed = r.accessed.take().or(opt(date));
                before.trim()
            }
            _ => block,
        };
        match kind {
            RefKind::Journal => parse_journal(block, &mut r),
            RefKind::Newspaper => {
                let (name, dated) = match block.rsplit_once(',') {
                    Some((name, dated)) if starts_with_digit(dated) => (Some(name), dated),
                    _ if starts_with_digit(block) => (None, block),
                    _ => (Some(block), ""),
                };
                r.container = name.and_then(opt);
                let (date, page) = split_parenthesised(dated);
                r.year = opt(date);
                r.issue = page.and_then(opt);
            }
            _ => parse_publication(block, &mut r),
        }
    }
    Some(r)
}

/// Full-width forms (．，：［］（）and full-width digits and letters) to ASCII, so one parser
/// serves lines copied from Word or CNKI alike.
fn normalise(line: &str) -> String {
    line.chars()
        .map(|c| match c {
            '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
            '\u{3000}' => ' ',
            '【' => '[',
            '】' => ']',
            _ => c,
        })
        .collect()
}

/// Drops a list number: "[12]", "12." or "12、".
fn strip_number_prefix(s: &str) -> &str {
    if let Some(inner) = s.strip_prefix('[')
        && let Some((number, rest)) = inner.split_once(']')
        && !number.trim().is_empty()
        && number.trim().chars().all(|c| c.is_ascii_digit())
    {
        return rest.trim_start();
    }
    let digits = s.len() - s.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if (1..=4).contains(&digits) {
        let rest = &s[digits..];
        if let Some(rest) = rest
            .strip_prefix('.')
            .or_else(|| rest.strip_prefix('、'))
            .or_else(|| rest.strip_prefix(')'))
        {
            return rest.trim_start();
        }
    }
    s
}

/// The first "[X]" whose X is a type code (carrier suffixes like "J/OL" allowed): its bracket
/// positions and kind.
fn find_code(text: &str) -> Option<(usize, usize, RefKind)> {
    for (open, _) in text.match_indices('[') {
        let Some(len) = text[open + 1..].find(']') else {
            break;
        };
        let inner = &text[open + 1..open + 1 + len];
        if inner.len() > 8 {
            continue;
        }
        let kind = RefKind::from_code(inner).or_else(|| {
            inner
                .split_once('/')
                .and_then(|(base, _)| RefKind::from_code(base))
        });
        if let Some(kind) = kind {
            return Some((open, open + 1 + len, kind));
        }
    }
    None
}

/// "作者1, 作者2. 题名" → authors and title; without a plausible author list, all is title.
fn split_authors_title(before: &str) -> (Vec<String>, String) {
    let split = before
        .find(". ")
        .map(|at| (&before[..at], &before[at + 2..]))
        .or_else(|| {
            // Chinese lines pasted with a full-width full stop lose the space after it.
            let (names, title) = before.split_once('.')?;
            is_chinese(names).then_some((names, title))
        });
    if let Some((names, title)) = split {
        let names: Vec<&str> = names
            .split([',', ';', '、'])
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .collect();
        // A long piece before ". " is a sentence of the title, not a name.
        let plausible = !names.is_empty()
            && names
                .iter()
                .all(|n| n.chars().count() <= 60 && n.split_whitespace().count() <= 6);
        if plausible {
            let authors = names
                .iter()
                .map(|n| {
                    if is_et_al(n) {
                        if is_chinese(n) { "等" } else { "et al" }.to_string()
                    } else {
                        clean(n)
                    }
                })
                .collect();
            return (authors, clean(title));
        }
    }
    (Vec::new(), clean(before))
}

fn opt(s: &str) -> Option<String> {
    Some(clean(s)).filter(|s| !s.is_empty())
}

/// "2020" or "2020a" (a second work by the same author in one year).
fn is_year(s: &str) -> bool {
    let digits = s.chars().take_while(char::is_ascii_digit).count();
    digits == 4 && s.chars().skip(4).all(|c| c.is_ascii_lowercase()) && s.len() <= 5
}

fn starts_with_digit(s: &str) -> bool {
    s.trim_start().starts_with(|c: char| c.is_ascii_digit())
}

/// "43(5)" → ("43", Some("5")); "43" → ("43", None).
fn split_parenthesised(s: &str) -> (&str, Option<&str>) {
    let s = s.trim();
    match s.strip_suffix(')').and_then(|b| b.split_once('(')) {
        Some((head, inner)) => (head.trim(), Some(inner.trim())),
        None => (s, None),
    }
}

/// "(2001-12-19)[2002-04-15]", "(2001-12-19)" or "[2002-04-15]".
fn parse_dates(block: &str) -> Option<(Option<String>, Option<String>)> {
    let mut rest = block.trim();
    let mut published = None;
    if let Some(after) = rest.strip_prefix('(') {
        let (inner, tail) = after.split_once(')')?;
        published = Some(inner);
        rest = tail.trim_start();
    }
    let mut accessed = None;
    if let Some(after) = rest.strip_prefix('[') {
        let (inner, tail) = after.split_once(']')?;
        accessed = Some(inner);
        rest = tail.trim_start();
    }
    if !rest.is_empty() || (published.is_none() && accessed.is_none()) {
        return None;
    }
    Some((published.and_then(opt), accessed.and_then(opt)))
}

/// Pages after the last ':' when they look like pages ("100-110", "e1001", "12, 15").
fn split_pages(block: &str) -> (&str, Option<String>) {
    if let Some((head, tail)) = block.rsplit_once(':') {
        let tail = tail.trim();
        let looks_like_pages = tail.chars().any(|c| c.is_ascii_digit())
            && tail.chars().count() <= 30
            && tail
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || " -–—~,+".contains(c));
        if looks_like_pages {
            return (head.trim(), opt(tail));
        }
    }
    (block, None)
}

/// "刊名, 年, 卷(期): 页" and its gappy variants.
fn parse_journal(block: &str, r: &mut Reference) {
    let (main, pages) = split_pages(block);
    r.pages = pages;
    let parts: Vec<&str> = main.split(',').map(str::trim).collect();
    // The journal name may itself hold commas; the year is the first later part that
    // starts with a digit, or a bare year first when the name is missing.
    let year_at = (0..parts.len()).find(|&i| {
        if i == 0 {
            is_year(split_parenthesised(parts[0]).0)
        } else {
            starts_with_digit(parts[i])
        }
    });
    let Some(year_at) = year_at else {
        r.container = opt(main);
        return;
    };
    r.container = opt(&parts[..year_at].join(", "));
    let (year, issue) = split_parenthesised(parts[year_at]);
    r.year = opt(year);
    r.issue = issue.and_then(opt);
    if let Some(volume_issue) = parts.get(year_at + 1) {
        let (volume, issue) = split_parenthesised(volume_issue);
        r.volume = opt(volume);
        if let Some(issue) = issue.and_then(opt) {
            r.issue = Some(issue);
        }
    }
}

/// "地点: 出版者, 年: 页" and its gappy variants.
fn parse_publication(block: &str, r: &mut Reference) {
    let (who, when) = match block.rsplit_once(',') {
        Some((who, when)) if starts_with_digit(when) => (who, Some(when)),
        _ if starts_with_digit(block) => ("", Some(block)),
        _ => (block, None),
    };
    if let Some(when) = when {
        let (year, pages) = when.split_once(':').unwrap_or((when, ""));
        r.year = opt(year);
        r.pages = opt(pages);
    }
    match who.split_once(':') {
        Some((place, publisher)) => {
            r.place = opt(place);
            r.publisher = opt(publisher);
        }
        None => r.publisher = opt(who),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn s(v: &str) -> Option<String> {
        Some(v.to_string())
    }

    fn journal() -> Reference {
        Reference {
            authors: vec!["王明".into(), "李华".into(), "张强".into(), "赵刚".into()],
            container: s("计算机学报"),
            year: s("2020"),
            volume: s("43"),
            issue: s("5"),
            pages: s("100-110"),
            ..Reference::new(RefKind::Journal, "基于深度学习的图像识别研究")
        }
    }

    fn thesis() -> Reference {
        Reference {
            authors: vec!["陈静".into()],
            publisher: s("清华大学"),
            place: s("北京"),
            year: s("2019"),
            ..Reference::new(RefKind::Thesis, "图神经网络在推荐系统中的应用")
        }
    }

    fn book() -> Reference {
        Reference {
            authors: vec!["Donald E. Knuth".into()],
            publisher: s("Addison-Wesley"),
            place: s("Reading"),
            year: s("1997"),
            pages: s("1-650"),
            ..Reference::new(RefKind::Book, "The art of computer programming")
        }
    }

    /// The punctuation faults a gappy record must never produce.
    fn assert_clean(entry: &str) {
        for bad in ["..", ". .", ", .", ": .", ", ,", ": ,", ",.", ":.", "  "] {
            assert!(!entry.contains(bad), "{bad:?} in {entry:?}");
        }
        assert!(entry.ends_with('.'), "{entry:?}");
        assert!(!entry.starts_with(['.', ',', ':', ' ']), "{entry:?}");
    }

    #[test]
    fn codes_round_trip_and_tolerate_variants() {
        for kind in RefKind::ALL {
            assert_eq!(RefKind::from_code(kind.code()), Some(kind));
            assert_eq!(RefKind::from_code(&kind.code().to_lowercase()), Some(kind));
        }
        assert_eq!(RefKind::from_code("DB/OL"), Some(RefKind::Online));
        assert_eq!(RefKind::from_code(" eb "), Some(RefKind::Online));
        assert_eq!(RefKind::from_code("Z"), None);
        assert_eq!(RefKind::from_code(""), None);
    }

    #[test]
    fn serde_uses_snake_case_and_defaults_missing_fields() {
        assert_eq!(
            serde_json::to_string(&RefKind::Online).unwrap(),
            "\"online\""
        );
        let r: Reference =
            serde_json::from_str(r#"{"kind":"thesis","title":"题名","year":"2019"}"#).unwrap();
        assert_eq!(r.kind, RefKind::Thesis);
        assert!(r.authors.is_empty());
        assert_eq!(r.year.as_deref(), Some("2019"));
        assert_eq!(r.publisher, None);
        let back: Reference =
            serde_json::from_str(&serde_json::to_string(&journal()).unwrap()).unwrap();
        assert_eq!(back, journal());
    }

    #[test]
    fn is_chinese_sees_ideographs_only() {
        assert!(is_chinese("深度学习"));
        assert!(is_chinese("Deep 学习"));
        assert!(!is_chinese("Deep learning"));
        assert!(!is_chinese("，。：")); // CJK punctuation is not an ideograph
    }

    #[test]
    fn journal_matches_the_standard_example() {
        assert_eq!(
            format(&journal()),
            "王明, 李华, 张强, 等. 基于深度学习的图像识别研究[J]. 计算机学报, 2020, 43(5): 100-110."
        );
    }

    #[test]
    fn journal_gaps_leave_no_dangling_separators() {
        let mut r = journal();
        r.volume = None;
        assert!(format(&r).ends_with("计算机学报, 2020(5): 100-110."));
        r.pages = s("  ");
        assert!(format(&r).ends_with("计算机学报, 2020(5)."));
        r.issue = None;
        assert!(format(&r).ends_with("计算机学报, 2020."));
        r.year = None;
        r.container = None;
        assert_eq!(
            format(&r),
            "王明, 李华, 张强, 等. 基于深度学习的图像识别研究[J]."
        );
    }

    #[test]
    fn doi_is_appended_once_without_its_url_prefix() {
        let mut r = journal();
        r.doi = s("https://doi.org/10.1000/xyz123.");
        let entry = format(&r);
        assert!(
            entry.ends_with("43(5): 100-110. DOI:10.1000/xyz123."),
            "{entry}"
        );
        assert_clean(&entry);
    }

    #[test]
    fn latin_names_become_surname_and_initials() {
        assert_eq!(format_author("Smith, John A."), "SMITH J A");
        assert_eq!(format_author("John A. Smith"), "SMITH J A");
        assert_eq!(format_author("SMITH J A"), "SMITH J A");
        assert_eq!(format_author("Smith J.A."), "SMITH J A");
        assert_eq!(format_author("J. R. R. Tolkien"), "TOLKIEN J R R");
        assert_eq!(format_author("Jean-Paul Sartre"), "SARTRE J P");
        assert_eq!(format_author("Plato"), "PLATO");
        assert_eq!(format_author(" 王明 "), "王明");
        assert_eq!(
            format_author("World Health Organization Regional Office"),
            "World Health Organization Regional Office"
        );
    }

    #[test]
    fn latin_entries_use_et_al() {
        let r = Reference {
            authors: vec![
                "Smith, John".into(),
                "Jane Doe".into(),
                "Richard Roe".into(),
                "Max Mustermann".into(),
            ],
            container: s("Nature"),
            year: s("2021"),
            volume: s("590"),
            pages: s("1-5"),
            ..Reference::new(RefKind::Journal, "A study of things")
        };
        assert_eq!(
            format(&r),
            "SMITH J, DOE J, ROE R, et al. A study of things[J]. Nature, 2021, 590: 1-5."
        );
    }

    #[test]
    fn an_explicit_et_al_entry_is_kept() {
        let mut r = thesis();
        r.authors = vec!["陈静".into(), "等".into()];
        assert!(format(&r).starts_with("陈静, 等. 图神经网络"));
    }

    #[test]
    fn thesis_with_and_without_place() {
        assert_eq!(
            format(&thesis()),
            "陈静. 图神经网络在推荐系统中的应用[D]. 北京: 清华大学, 2019."
        );
        let mut r = thesis();
        r.place = s("");
        assert_eq!(
            format(&r),
            "陈静. 图神经网络在推荐系统中的应用[D]. 清华大学, 2019."
        );
    }

    #[test]
    fn book_carries_pages() {
        assert_eq!(
            format(&book()),
            "KNUTH D E. The art of computer programming[M]. Reading: Addison-Wesley, 1997: 1-650."
        );
    }

    #[test]
    fn conference_names_its_proceedings_after_slashes() {
        let r = Reference {
            authors: vec!["刘洋".into()],
            container: s("第十届全国计算机大会论文集"),
            place: s("上海"),
            publisher: s("上海交通大学出版社"),
            year: s("2018"),
            pages: s("23-30"),
            ..Reference::new(RefKind::Conference, "一种新的检索方法")
        };
        assert_eq!(
            format(&r),
            "刘洋. 一种新的检索方法[C]//第十届全国计算机大会论文集. 上海: 上海交通大学出版社, 2018: 23-30."
        );
    }

    #[test]
    fn newspaper_report_standard_patent() {
        let r = Reference {
            authors: vec!["李明".into()],
            container: s("人民日报"),
            year: s("2020-01-01"),
            issue: s("3"),
            ..Reference::new(RefKind::Newspaper, "科技创新引领发展")
        };
        assert_eq!(
            format(&r),
            "李明. 科技创新引领发展[N]. 人民日报, 2020-01-01(3)."
        );
        for (kind, code) in [
            (RefKind::Report, "R"),
            (RefKind::Standard, "S"),
            (RefKind::Patent, "P"),
        ] {
            let r = Reference {
                place: s("北京"),
                publisher: s("中国标准出版社"),
                year: s("2015"),
                ..Reference::new(kind, "信息与文献 参考文献著录规则")
            };
            assert_eq!(
                format(&r),
                format!("信息与文献 参考文献著录规则[{code}]. 北京: 中国标准出版社, 2015.")
            );
        }
    }

    #[test]
    fn online_with_and_without_dates() {
        let mut r = Reference {
            authors: vec!["萧钰".into()],
            year: s("2001-12-19"),
            accessed: s("2002-04-15"),
            url: s("http://www.creader.com/news/20011219/200112190019.html"),
            ..Reference::new(RefKind::Online, "出版业信息化迈入快车道")
        };
        assert_eq!(
            format(&r),
            "萧钰. 出版业信息化迈入快车道[EB/OL]. (2001-12-19)[2002-04-15]. http://www.creader.com/news/20011219/200112190019.html."
        );
        r.year = None;
        assert!(format(&r).contains("[EB/OL]. [2002-04-15]. http://"));
        r.accessed = None;
        r.url = None;
        assert_eq!(format(&r), "萧钰. 出版业信息化迈入快车道[EB/OL].");
    }

    #[test]
    fn no_authors_starts_with_the_title_and_fields_are_trimmed() {
        let r = Reference {
            authors: vec!["  ".into(), String::new()],
            container: s(" 软件学报 "),
            year: s(" 2022 "),
            volume: s(""),
            issue: s(" 7 "),
            ..Reference::new(RefKind::Journal, "  大模型综述. ")
        };
        assert_eq!(format(&r), "大模型综述[J]. 软件学报, 2022(7).");
    }

    #[test]
    fn parses_a_journal_line_fully() {
        let r = parse_line(
            "[12] 王明, 李华, 张强, 等. 基于深度学习的图像识别研究[J]. 计算机学报, 2020, 43(5): 100-110. DOI:10.1000/abc.",
        )
        .unwrap();
        assert_eq!(r.kind, RefKind::Journal);
        assert_eq!(r.authors, ["王明", "李华", "张强", "等"]);
        assert_eq!(r.title, "基于深度学习的图像识别研究");
        assert_eq!(r.container.as_deref(), Some("计算机学报"));
        assert_eq!(r.year.as_deref(), Some("2020"));
        assert_eq!(r.volume.as_deref(), Some("43"));
        assert_eq!(r.issue.as_deref(), Some("5"));
        assert_eq!(r.pages.as_deref(), Some("100-110"));
        assert_eq!(r.doi.as_deref(), Some("10.1000/abc"));
    }

    #[test]
    fn parses_full_width_punctuation_and_prefixes() {
        let line =
            "［3］王明，李华．基于深度学习的图像识别研究［J］．计算机学报，2020（5）：100-110．";
        let r = parse_line(line).unwrap();
        assert_eq!(r.authors, ["王明", "李华"]);
        assert_eq!(r.title, "基于深度学习的图像识别研究");
        assert_eq!(r.container.as_deref(), Some("计算机学报"));
        assert_eq!(r.year.as_deref(), Some("2020"));
        assert_eq!(r.volume, None);
        assert_eq!(r.issue.as_deref(), Some("5"));
        assert_eq!(r.pages.as_deref(), Some("100-110"));

        let r = parse_line("7. 陈静. 图神经网络[D]. 北京: 清华大学, 2019.").unwrap();
        assert_eq!(r.kind, RefKind::Thesis);
        assert_eq!(r.place.as_deref(), Some("北京"));
        assert_eq!(r.publisher.as_deref(), Some("清华大学"));
        assert_eq!(r.year.as_deref(), Some("2019"));
    }

    #[test]
    fn parses_conference_newspaper_and_online() {
        let r = parse_line(
            "刘洋. 一种新的检索方法[C]//第十届全国计算机大会论文集. 上海: 上海交通大学出版社, 2018: 23-30.",
        )
        .unwrap();
        assert_eq!(r.kind, RefKind::Conference);
        assert_eq!(r.container.as_deref(), Some("第十届全国计算机大会论文集"));
        assert_eq!(r.place.as_deref(), Some("上海"));
        assert_eq!(r.publisher.as_deref(), Some("上海交通大学出版社"));
        assert_eq!(r.year.as_deref(), Some("2018"));
        assert_eq!(r.pages.as_deref(), Some("23-30"));

        let r = parse_line("李明. 科技创新引领发展[N]. 人民日报, 2020-01-01(3).").unwrap();
        assert_eq!(r.container.as_deref(), Some("人民日报"));
        assert_eq!(r.year.as_deref(), Some("2020-01-01"));
        assert_eq!(r.issue.as_deref(), Some("3"));

        let r = parse_line(
            "萧钰. 出版业信息化迈入快车道[EB/OL]. (2001-12-19)[2002-04-15]. http://www.creader.com/a.html.",
        )
        .unwrap();
        assert_eq!(r.kind, RefKind::Online);
        assert_eq!(r.year.as_deref(), Some("2001-12-19"));
        assert_eq!(r.accessed.as_deref(), Some("2002-04-15"));
        assert_eq!(r.url.as_deref(), Some("http://www.creader.com/a.html"));

        let r = parse_line("Smith J. Online journal[J/OL]. Nature, 2020, 1(2): 3-4.").unwrap();
        assert_eq!(r.kind, RefKind::Journal);
    }

    #[test]
    fn unparseable_lines_are_none() {
        for line in [
            "",
            "   ",
            "[12]",
            "just some text",
            "王明. 没有类型标识的题名. 计算机学报, 2020.",
            "[J]. 计算机学报, 2020.",
            "作者. [Z]. 其他",
            "[",
            "］［",
        ] {
            assert_eq!(parse_line(line), None, "{line:?}");
        }
    }

    #[test]
    fn typical_records_round_trip() {
        let mut latin_journal = journal();
        latin_journal.title = "Deep residual learning for image recognition".into();
        latin_journal.authors = vec!["Kaiming He".into(), "Zhang, Xiangyu".into()];
        latin_journal.container = s("Proceedings of the IEEE, Part B");
        for r in [journal(), thesis(), book(), latin_journal] {
            let entry = format(&r);
            let back = parse_line(&entry).unwrap_or_else(|| panic!("{entry}"));
            assert_eq!(back.kind, r.kind, "{entry}");
            assert_eq!(back.title, r.title, "{entry}");
            let expected: Vec<String> = entry
                .split(". ")
                .next()
                .unwrap()
                .split(", ")
                .map(String::from)
                .collect();
            assert_eq!(back.authors, expected, "{entry}");
            assert_eq!(back.year, r.year, "{entry}");
            // Formatting what was parsed gives the same line again.
            assert_eq!(format(&back), entry);
        }
    }

    fn word() -> impl Strategy<Value = String> {
        prop_oneof!["[a-zA-Z]{1,8}", "[一-龥]{1,6}", "[0-9]{1,4}"]
    }

    /// Names and titles; they start with a letter, as a leading number would read as a year.
    fn text() -> impl Strategy<Value = String> {
        (
            "[a-zA-Z]{1,8}|[一-龥]{1,6}",
            proptest::collection::vec(word(), 0..3),
        )
            .prop_map(|(first, rest)| {
                std::iter::once(first)
                    .chain(rest)
                    .collect::<Vec<_>>()
                    .join(" ")
            })
    }

    fn maybe(field: impl Strategy<Value = String>) -> impl Strategy<Value = Option<String>> {
        prop_oneof![
            Just(None),
            Just(Some(String::new())),
            Just(Some("  ".to_string())),
            field.prop_map(Some),
        ]
    }

    fn kind() -> impl Strategy<Value = RefKind> {
        proptest::sample::select(RefKind::ALL.to_vec())
    }

    fn record() -> impl Strategy<Value = Reference> {
        (
            kind(),
            proptest::collection::vec(
                prop_oneof![
                    "[一-龥]{2,3}",
                    "[A-Z][a-z]{1,6} [A-Z][a-z]{1,6}",
                    Just(" ".to_string())
                ],
                0..6,
            ),
            text(),
            (
                maybe(text()),
                maybe(text()),
                maybe(text()),
                maybe("[12][0-9]{3}"),
            ),
            (
                maybe("[0-9]{1,3}"),
                maybe("[0-9]{1,2}"),
                maybe("[0-9]{1,3}-[0-9]{1,3}"),
            ),
            (
                maybe("10\\.[0-9]{4}/[a-z0-9]{1,8}"),
                maybe("https://[a-z]{1,8}\\.com/[a-z]{0,5}"),
                maybe("20[0-9]{2}-0[1-9]-1[0-9]"),
            ),
        )
            .prop_map(
                |(
                    kind,
                    authors,
                    title,
                    (container, publisher, place, year),
                    (volume, issue, pages),
                    (doi, url, accessed),
                )| Reference {
                    kind,
                    authors,
                    title,
                    container,
                    publisher,
                    place,
                    year,
                    volume,
                    issue,
                    pages,
                    doi,
                    url,
                    accessed,
                },
            )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// Whatever fields are missing, the entry has no doubled or dangling punctuation.
        #[test]
        fn gappy_records_format_cleanly(r in record()) {
            let entry = format(&r);
            assert_clean(&entry);
            let code = format!("[{}]", r.kind.code());
            prop_assert!(entry.contains(&code), "{}", entry);
        }

        /// Kind, title, authors (as formatted) and year survive format → parse.
        #[test]
        fn formatted_records_parse_back(r in record()) {
            let entry = format(&r);
            let back = parse_line(&entry);
            prop_assert!(back.is_some(), "{}", entry);
            let back = back.unwrap();
            prop_assert_eq!(back.kind, r.kind);
            prop_assert_eq!(&back.title, &clean(&r.title));
            let formatted: Vec<String> = r.authors.iter().map(|a| format_author(a)).filter(|a| !a.is_empty()).collect();
            let listed = formatted.len().min(3);
            prop_assert_eq!(&back.authors[..listed.min(back.authors.len())], &formatted[..listed]);
            if matches!(r.kind, RefKind::Journal | RefKind::Thesis | RefKind::Book) && field(&r.year).is_some() {
                prop_assert_eq!(back.year, field(&r.year), "{}", entry);
            }
        }

        #[test]
        fn parse_never_panics(line in "\\PC{0,80}") {
            let _ = parse_line(&line);
        }

        #[test]
        fn parse_never_panics_on_reference_like_noise(
            parts in proptest::collection::vec(prop_oneof![
                Just("[J]"), Just("[EB/OL]"), Just("［"), Just("］"), Just(". "), Just("．"),
                Just(", "), Just(": "), Just("//"), Just("("), Just(")"), Just("DOI:"),
                Just("2020"), Just("王明"), Just("[12]"), Just("http://a.b"), Just("、"),
            ], 0..16)
        ) {
            let _ = parse_line(&parts.concat());
        }
    }
}
