//! Reference files a student brings: BibTeX (.bib), RIS (.ris), EndNote tagged text (.enw, and
//! CNKI's "EndNote" export, a .txt), CNKI's NoteExpress export, and plain reference lists — the
//! 参考文献 section of a .docx or .pdf, or pasted GB/T 7714 lines. Each becomes `Reference`
//! records; what cannot be read is listed, never guessed.
//!
//! The structured formats are read with `biblib`; this module only maps its records onto the
//! GB/T 7714 fields and finds the reference list inside a whole paper.

use crate::gbt7714::{self, RefKind, Reference};
use biblib::{BibParser, Citation, CitationParser, EnwParser, RisParser};
use serde::Serialize;

/// Most entries read from one file; a longer file is cut here and says so.
pub const MAX_ENTRIES: usize = 200;

/// The longest entry kept (characters); longer is not one reference.
const MAX_ENTRY_CHARS: usize = 600;

/// How a file was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RefFormat {
    Bibtex,
    Ris,
    Endnote,
    NoteExpress,
    /// One reference per entry of a numbered or line-by-line list.
    Lines,
}

impl RefFormat {
    pub fn label(self) -> &'static str {
        match self {
            RefFormat::Bibtex => "BibTeX",
            RefFormat::Ris => "RIS",
            RefFormat::Endnote => "EndNote",
            RefFormat::NoteExpress => "NoteExpress",
            RefFormat::Lines => "参考文献列表",
        }
    }
}

/// What a reference file gave.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReadReferences {
    pub format: RefFormat,
    pub references: Vec<Reference>,
    /// The beginnings of the entries that could not be read as a reference.
    pub skipped: Vec<String>,
    /// Entries past `MAX_ENTRIES`, not read.
    pub truncated: usize,
}

/// The format of a reference file: by its extension, else by what its text looks like.
pub fn sniff(text: &str, file_name: &str) -> RefFormat {
    let lower = file_name.to_ascii_lowercase();
    if lower.ends_with(".bib") {
        return RefFormat::Bibtex;
    }
    if lower.ends_with(".ris") {
        return RefFormat::Ris;
    }
    if lower.ends_with(".enw") {
        return RefFormat::Endnote;
    }
    let lines = || {
        text.lines()
            .map(|l| l.trim_start_matches('\u{feff}').trim())
    };
    let first = lines().find(|l| !l.is_empty()).unwrap_or("");
    if first.starts_with('@') && text.contains('{') {
        return RefFormat::Bibtex;
    }
    if lines().any(|l| l.starts_with("TY  -")) && lines().any(|l| l.starts_with("ER  -")) {
        return RefFormat::Ris;
    }
    if lines().any(|l| l.starts_with("%0 ")) && lines().any(|l| l.starts_with("%T ")) {
        return RefFormat::Endnote;
    }
    if lines().any(|l| l.starts_with("{Reference Type}:")) {
        return RefFormat::NoteExpress;
    }
    RefFormat::Lines
}

/// Reads every reference of a file's text (already decoded).
pub fn read(text: &str, file_name: &str) -> ReadReferences {
    let format = sniff(text, file_name);
    let structured = match format {
        RefFormat::Bibtex => Some(BibParser::new().parse(text)),
        RefFormat::Ris => Some(RisParser::new().parse(text)),
        RefFormat::Endnote => Some(EnwParser::new().parse(text)),
        RefFormat::NoteExpress => return collect(format, note_express(text)),
        RefFormat::Lines => None,
    };
    match structured {
        Some(Ok(citations)) => collect(format, citations.iter().map(from_citation).collect()),
        // A structured file that does not parse is still offered as lines: pasted entries
        // under a .txt name are common, and the entries that fail are listed.
        Some(Err(_)) | None => {
            let entries = list_entries(text);
            let read = entries
                .into_iter()
                .map(|e| gbt7714::parse_line(&e).ok_or(e))
                .collect();
            collect(RefFormat::Lines, read)
        }
    }
}

fn collect(format: RefFormat, entries: Vec<Result<Reference, String>>) -> ReadReferences {
    let truncated = entries.len().saturating_sub(MAX_ENTRIES);
    let mut references = Vec::new();
    let mut skipped = Vec::new();
    for entry in entries.into_iter().take(MAX_ENTRIES) {
        match entry {
            Ok(r) if !gbt7714::format(&r).trim().is_empty() => references.push(r),
            Ok(r) => skipped.push(head(&r.title)),
            Err(text) => skipped.push(head(&text)),
        }
    }
    ReadReferences {
        format,
        references,
        skipped,
        truncated,
    }
}

fn head(text: &str) -> String {
    let text = text.trim();
    let mut out: String = text.chars().take(40).collect();
    if text.chars().count() > 40 {
        out.push('…');
    }
    out
}

/// One structured record as a GB/T 7714 reference; `Err` with its title when it has none.
fn from_citation(c: &Citation) -> Result<Reference, String> {
    let title = tidy(&c.title);
    if title.is_empty() {
        let who: Vec<String> = c.authors.iter().map(|a| tidy(&a.name)).collect();
        let what = [
            who.join("、"),
            c.journal.as_deref().map(tidy).unwrap_or_default(),
        ]
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("，");
        return Err(format!(
            "缺少题名的一条记录{}",
            match what.as_str() {
                "" => String::new(),
                what => format!("（{what}）"),
            }
        ));
    }
    let extra = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| c.extra_fields.get(*k).and_then(|v| v.first()))
            .map(|v| tidy(v))
            .filter(|v| !v.is_empty())
    };
    let kind = kind_of(
        c.citation_type.first().map_or("", String::as_str),
        c.journal.is_some(),
        !c.urls.is_empty(),
    );
    let mut r = Reference::new(kind, title);
    r.authors = c
        .authors
        .iter()
        .map(|a| {
            let given = [a.given_name.as_deref(), a.middle_name.as_deref()]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(" ");
            match given.trim() {
                "" => tidy(&a.name),
                given => format!("{}, {given}", tidy(&a.name)),
            }
        })
        .filter(|a| !a.is_empty())
        .collect();
    r.container = c
        .journal
        .as_deref()
        .map(tidy)
        .filter(|j| !j.is_empty())
        .or_else(|| extra(&["booktitle", "T2", "%B"]));
    r.publisher = c
        .publisher
        .as_deref()
        .map(tidy)
        .filter(|p| !p.is_empty())
        .or_else(|| extra(&["school", "institution", "organization", "%I"]));
    r.place = extra(&["address", "location", "CY", "%C"]);
    r.year = c.date.as_ref().map(|d| d.year.to_string());
    r.volume = c.volume.as_deref().map(tidy).filter(|v| !v.is_empty());
    r.issue = c.issue.as_deref().map(tidy).filter(|v| !v.is_empty());
    r.pages = c
        .pages
        .as_deref()
        .map(|p| tidy(p).replace("--", "-").replace('–', "-"))
        .filter(|v| !v.is_empty());
    r.doi = c.doi.as_deref().map(tidy).filter(|v| !v.is_empty());
    if kind == RefKind::Online {
        r.url = c.urls.first().map(|u| tidy(u));
    }
    Ok(r)
}

/// The GB/T 7714 type of a record type named by BibTeX, RIS, EndNote or NoteExpress.
fn kind_of(declared: &str, has_journal: bool, has_url: bool) -> RefKind {
    let t = declared.to_ascii_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| t.contains(w));
    if has(&["thesis", "thes", "dissertation", "学位"]) {
        RefKind::Thesis
    } else if has(&["proceed", "conf", "会议"]) {
        RefKind::Conference
    } else if has(&["report", "rprt", "报告"]) {
        RefKind::Report
    } else if has(&["patent", "pat", "专利"]) {
        RefKind::Patent
    } else if has(&["standard", "stand", "标准"]) {
        RefKind::Standard
    } else if has(&["news", "报纸"]) {
        RefKind::Newspaper
    } else if has(&["book", "chap", "collection", "图书", "专著"]) {
        RefKind::Book
    } else if has(&["article", "jour", "期刊"]) || has_journal {
        RefKind::Journal
    } else if has(&["elec", "web", "online", "misc"]) || has_url {
        RefKind::Online
    } else {
        RefKind::Journal
    }
}

/// Braces and runs of white space left by BibTeX protection, and stray separators.
fn tidy(s: &str) -> String {
    s.replace(['{', '}'], "")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .trim_matches(|c: char| c == ',' || c == ';')
        .trim()
        .to_string()
}

/// CNKI's NoteExpress export: records of `{Field}: value` lines, one blank line apart.
fn note_express(text: &str) -> Vec<Result<Reference, String>> {
    let mut out = Vec::new();
    let mut fields: Vec<(String, String)> = Vec::new();
    let mut flush = |fields: &mut Vec<(String, String)>| {
        if fields.is_empty() {
            return;
        }
        let get = |key: &str| {
            fields
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(key))
                .map(|(_, v)| tidy(v))
                .filter(|v| !v.is_empty())
        };
        let title = get("Title").unwrap_or_default();
        if title.is_empty() {
            let what = get("Author").or_else(|| get("Journal")).unwrap_or_default();
            out.push(Err(format!("缺少题名的一条记录（{what}）")));
        } else {
            let declared = get("Reference Type").unwrap_or_default();
            let journal = get("Journal");
            let mut r = Reference::new(kind_of(&declared, journal.is_some(), false), title);
            r.authors = get("Author")
                .unwrap_or_default()
                .split([';', '；', ','])
                .map(tidy)
                .filter(|a| !a.is_empty())
                .collect();
            r.container = journal;
            r.publisher = get("Publisher").or_else(|| get("Tertiary Author"));
            r.place = get("Place Published");
            r.year = get("Year");
            r.volume = get("Volume");
            r.issue = get("Issue");
            r.pages = get("Pages");
            r.doi = get("DOI");
            out.push(Ok(r));
        }
        fields.clear();
    };
    for line in text.lines() {
        let line = line.trim_start_matches('\u{feff}').trim();
        if line.is_empty() {
            flush(&mut fields);
            continue;
        }
        if let Some(rest) = line.strip_prefix('{')
            && let Some((key, value)) = rest.split_once("}:")
        {
            if key.eq_ignore_ascii_case("Reference Type") {
                flush(&mut fields);
            }
            fields.push((key.trim().to_string(), value.trim().to_string()));
        }
    }
    flush(&mut fields);
    out
}

/// The entries of a reference list inside a document's text: the lines after its last
/// "参考文献" / "References" heading (up to 致谢 or an appendix), or every line when there is
/// no such heading. A numbered list's unnumbered lines continue the entry before them (a PDF
/// wraps long entries).
pub fn list_entries(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let compact = |l: &str| l.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    let start = lines
        .iter()
        .rposition(|l| {
            let c = compact(l).to_lowercase();
            let c = c.trim_end_matches([':', '：']);
            matches!(
                c,
                "参考文献" | "主要参考文献" | "references" | "bibliography" | "参考资料"
            )
        })
        .map_or(0, |i| i + 1);
    let end = lines[start..]
        .iter()
        .position(|l| {
            let c = compact(l).to_lowercase();
            c == "致谢"
                || c.starts_with("附录")
                || c.starts_with("acknowledg")
                || c.starts_with("appendix")
        })
        .map_or(lines.len(), |i| start + i);
    let body: Vec<&str> = lines[start..end]
        .iter()
        .copied()
        .filter(|l| !l.is_empty())
        .collect();
    let numbered = body.iter().filter(|l| starts_numbered(l)).count();
    let mut entries: Vec<String> = Vec::new();
    for line in body {
        let continues = numbered > 0 && !starts_numbered(line);
        match entries.last_mut() {
            Some(last) if continues && last.chars().count() < MAX_ENTRY_CHARS => {
                let joins_words = last.ends_with(|c: char| c.is_ascii_alphanumeric())
                    && line.starts_with(|c: char| c.is_ascii_alphanumeric());
                if joins_words {
                    last.push(' ');
                }
                last.push_str(line);
            }
            _ => entries.push(line.chars().take(MAX_ENTRY_CHARS).collect()),
        }
    }
    entries
}

/// "[1]", "［1］", "1.", "1、", "(1)" at the start of a line.
fn starts_numbered(line: &str) -> bool {
    let line = line.trim_start_matches(['[', '［', '(', '（']);
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    if digits == 0 || digits > 3 {
        return false;
    }
    let next = line[digits..].chars().next();
    matches!(
        next,
        Some(']' | '］' | ')' | '）' | '.' | '、' | '．' | ' ')
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn formatted(r: &ReadReferences) -> Vec<String> {
        r.references.iter().map(gbt7714::format).collect()
    }

    #[test]
    fn bibtex_records_become_gbt_entries() {
        let bib = "@article{zhang2020,\n title={基于深度学习的图像识别研究},\n author={张三 and 李四 and 王五 and 赵六},\n journal={计算机学报},\n year={2020},\n volume={43},\n number={5},\n pages={100--110},\n doi={10.11897/SP.J.1016.2020.00100}\n}\n\
            @book{gf, title={Deep Learning}, author={Goodfellow, Ian and Bengio, Yoshua}, publisher={MIT Press}, address={Cambridge}, year=2016}\n\
            @mastersthesis{w, title={中药注射液质量控制方法研究}, author={王五}, school={北京中医药大学}, address={北京}, year={2019}}";
        let read = read(bib, "my.bib");
        assert_eq!(read.format, RefFormat::Bibtex);
        // (The reader writes DOIs in lower case; they are case-insensitive.)
        assert!(read.skipped.is_empty(), "{:?}", read.skipped);
        assert_eq!(
            formatted(&read),
            [
                "张三, 李四, 王五, 等. 基于深度学习的图像识别研究[J]. 计算机学报, 2020, 43(5): 100-110. DOI:10.11897/sp.j.1016.2020.00100.",
                "GOODFELLOW I, BENGIO Y. Deep Learning[M]. Cambridge: MIT Press, 2016.",
                "王五. 中药注射液质量控制方法研究[D]. 北京: 北京中医药大学, 2019.",
            ]
        );
    }

    #[test]
    fn ris_endnote_and_noteexpress_exports_read_alike() {
        let ris = "TY  - JOUR\r\nAU  - 张三\r\nAU  - 李四\r\nTI  - 丹参注射液质量控制研究\r\nT2  - 中国药学杂志\r\nPY  - 2021\r\nVL  - 56\r\nIS  - 3\r\nSP  - 201\r\nEP  - 205\r\nER  - \r\n";
        let enw = "%0 Journal Article\n%A 张三\n%A 李四\n%T 丹参注射液质量控制研究\n%J 中国药学杂志\n%D 2021\n%V 56\n%N 3\n%P 201-205\n\n";
        let nx = "{Reference Type}: Journal Article\n{Title}: 丹参注射液质量控制研究\n{Author}: 张三;李四;\n{Journal}: 中国药学杂志\n{Year}: 2021\n{Volume}: 56\n{Issue}: 3\n{Pages}: 201-205\n\n";
        let want = "张三, 李四. 丹参注射液质量控制研究[J]. 中国药学杂志, 2021, 56(3): 201-205.";
        for (text, name, format) in [
            (ris, "cnki.ris", RefFormat::Ris),
            (enw, "CNKI-EndNote.txt", RefFormat::Endnote),
            (nx, "CNKI-NoteExpress.txt", RefFormat::NoteExpress),
        ] {
            let read = read(text, name);
            assert_eq!(read.format, format, "{name}");
            assert_eq!(formatted(&read), [want], "{name}");
        }
    }

    #[test]
    fn a_papers_reference_section_is_found_and_wrapped_entries_joined() {
        let text = "第5章 结论\n本文研究了……参考文献的重要性。\n参 考 文 献\n[1] 张三, 李四. 丹参注射液质量控制研究[J]. 中国药学杂志,\n2021, 56(3): 201-205.\n[2] GOODFELLOW I, BENGIO Y. Deep\nlearning[M]. Cambridge: MIT Press, 2016.\n[3] 这一条不是参考文献\n致  谢\n感谢导师[J]的指导。";
        let read = read(text, "thesis.docx");
        assert_eq!(read.format, RefFormat::Lines);
        assert_eq!(
            formatted(&read),
            [
                "张三, 李四. 丹参注射液质量控制研究[J]. 中国药学杂志, 2021, 56(3): 201-205.",
                "GOODFELLOW I, BENGIO Y. Deep learning[M]. Cambridge: MIT Press, 2016.",
            ]
        );
        assert_eq!(read.skipped, ["[3] 这一条不是参考文献"]);
    }

    #[test]
    fn unnumbered_pasted_lines_are_one_entry_each() {
        let text =
            "张三. 题目一[J]. 期刊甲, 2020, 1(2): 3-4.\n李四. 题目二[M]. 北京: 科学出版社, 2019.\n";
        let read = read(text, "");
        assert_eq!(read.references.len(), 2);
        assert!(read.skipped.is_empty());
    }

    #[test]
    fn a_broken_bib_file_is_read_as_lines_and_says_what_it_skipped() {
        let read = read("@article{x, title={没有闭合", "x.bib");
        assert!(read.references.is_empty());
        assert_eq!(read.skipped.len(), 1);
        let read = super::read("@book{b, author={王五}}", "x.bib");
        assert_eq!(read.skipped, ["缺少题名的一条记录（王五）"]);
        let long: String = (0..MAX_ENTRIES + 5)
            .map(|i| format!("作者{i}. 题目{i}[J]. 期刊, 2020.\n"))
            .collect();
        let read = super::read(&long, "list.txt");
        assert_eq!(read.references.len(), MAX_ENTRIES);
        assert_eq!(read.truncated, 5);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn any_text_reads_without_panicking(bytes in proptest::collection::vec(any::<u8>(), 0..2000),
                                            name in prop::sample::select(vec!["a.bib", "a.ris", "a.enw", "a.txt", ""])) {
            let text = String::from_utf8_lossy(&bytes);
            let read = read(&text, name);
            prop_assert!(read.references.len() <= MAX_ENTRIES);
        }

        #[test]
        fn tagged_looking_text_reads_without_panicking(body in "(@article\\{[a-z]{0,3}, ?(title|author|year|pages)=\\{[^}]{0,20}\\}?,?\\}?|TY  - [A-Z]{0,4}\n|ER  - \n|%[0ATJDP] [^\n]{0,10}\n|\\{(Title|Author|Reference Type)\\}: [^\n]{0,10}\n|\\[[0-9]\\] [^\n]{0,30}\n){0,12}") {
            let _ = read(&body, "");
        }
    }
}
