//! The document model: chapters, paragraphs and sentences with character offsets into the
//! original text, the recognised sections (摘要, Abstract, 目录, 参考文献, 致谢), quotations and
//! citation marks.

use regex::Regex;
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// Which part of a thesis a paragraph belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SectionKind {
    /// Before the first recognised heading (title page and the like).
    Front,
    Abstract,
    Toc,
    Body,
    References,
    Acknowledgements,
}

#[derive(Debug, Clone, Serialize)]
pub struct Chapter {
    pub title: String,
    pub section: SectionKind,
    /// Character offsets `[start, end)` into the original text.
    pub start: usize,
    pub end: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Paragraph {
    pub start: usize,
    pub end: usize,
    pub chapter: usize,
    pub section: SectionKind,
    pub is_heading: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct Sentence {
    pub start: usize,
    pub end: usize,
    pub paragraph: usize,
    /// Carries a citation mark such as [1] or （张三，2020）.
    pub cited: bool,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Document {
    pub chapters: Vec<Chapter>,
    pub paragraphs: Vec<Paragraph>,
    pub sentences: Vec<Sentence>,
    /// Inner ranges of quotations: “…”, 「…」, 『…』 and "…".
    pub quotations: Vec<(usize, usize)>,
    /// Ranges of citation marks.
    pub citations: Vec<(usize, usize)>,
}

/// A section's heading word at the start of a line (摘要, Abstract, 目录, 参考文献, 致谢): the
/// section it opens and the word as printed, without spaces ("摘 要" → "摘要").
fn special_heading(line: &str) -> Option<(SectionKind, String)> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(
            r"(?i)^(摘\s*要|abstract|目\s*录|contents|table of contents|参考文献|references|bibliography|致\s*谢|acknowledge?ments?)\s*[:：]?",
        )
        .expect("valid regex")
    });
    let m = re.captures(line)?;
    let printed: String = m[1].chars().filter(|c| !c.is_whitespace()).collect();
    let word = printed.to_lowercase();
    let kind = match word.as_str() {
        "摘要" | "abstract" => SectionKind::Abstract,
        "目录" | "contents" | "tableofcontents" => SectionKind::Toc,
        "参考文献" | "references" | "bibliography" => SectionKind::References,
        _ => SectionKind::Acknowledgements,
    };
    Some((kind, printed))
}

fn chapter_heading(line: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(r"^(第[一二三四五六七八九十百零〇\d]+章|[一二三四五六七八九十]+、|\d{1,2}[\s、.．]\s*\D|chapter\s+\d+)")
            .expect("valid regex")
    });
    let chars = line.chars().count();
    chars <= 40 && !line.ends_with('。') && re.is_match(&line.to_lowercase())
}

fn sub_heading(line: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(r"^(\d{1,2}(\.\d{1,2}){1,3}|（[一二三四五六七八九十]+）)\s*\S")
            .expect("valid regex")
    });
    line.chars().count() <= 40 && !line.ends_with('。') && re.is_match(line)
}

/// A table-of-contents line: dot leaders or a trailing page number.
fn toc_line(line: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(r"(\.{3,}|…{2,}|·{3,}|\s)\s*[IVXivx\d]+\s*$").expect("valid regex")
    });
    re.is_match(line)
}

fn citation_ranges(text: &str) -> Vec<(usize, usize)> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(
            r"\[\s*\d{1,3}(\s*[,，、\-–~]\s*\d{1,3})*\s*\]|[（(][^（()）\n]{1,30}?[,，]\s*(19|20)\d{2}[a-z]?\s*[）)]",
        )
        .expect("valid regex")
    });
    byte_to_char_ranges(text, re.find_iter(text).map(|m| (m.start(), m.end())))
}

fn quotation_ranges(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut open: Option<(char, usize)> = None;
    for (i, c) in text.chars().enumerate() {
        match (open, c) {
            (None, '“' | '「' | '『' | '"') => open = Some((c, i + 1)),
            (Some(('“', s)), '”')
            | (Some(('「', s)), '」')
            | (Some(('『', s)), '』')
            | (Some(('"', s)), '"') => {
                if i > s {
                    out.push((s, i));
                }
                open = None;
            }
            // Quotations do not run across paragraphs.
            (Some(_), '\n') => open = None,
            _ => {}
        }
    }
    out
}

fn byte_to_char_ranges(
    text: &str,
    ranges: impl Iterator<Item = (usize, usize)>,
) -> Vec<(usize, usize)> {
    let mut ranges: Vec<(usize, usize)> = ranges.collect();
    if ranges.is_empty() {
        return ranges;
    }
    let mut byte_to_char = std::collections::HashMap::new();
    let mut count = 0;
    for (b, _) in text.char_indices() {
        byte_to_char.insert(b, count);
        count += 1;
    }
    byte_to_char.insert(text.len(), count);
    for r in &mut ranges {
        *r = (byte_to_char[&r.0], byte_to_char[&r.1]);
    }
    ranges
}

const SENTENCE_END: &[char] = &['。', '！', '？', '!', '?', '；', ';'];
const CLOSERS: &[char] = &['”', '」', '』', '"', '）', ')'];

/// The lines longer than this are prose even when they start like a heading.
const HEADING_MAX_CHARS: usize = 20;

/// How the front part (before the first chapter or section) is named when it holds the title.
pub const TITLE_CHAPTER: &str = "题名";

pub fn segment(text: &str) -> Document {
    segment_with(text, &[])
}

/// Segments `text` with the headings its document marks: `(line, level)` pairs, the line's index
/// in `text` and its level (1 = chapter), from a .docx's heading styles. With them, chapters are
/// the document's own level-1 headings (the title line among them names the front part 题名),
/// lower levels are sub-headings, and numbered lines in a styled document are not guessed to be
/// chapters; section names (摘要, 参考文献, …) are recognised either way. Without them, chapters
/// are recognised from the text.
pub fn segment_with(text: &str, headings: &[(usize, u8)]) -> Document {
    let chars: Vec<char> = text.chars().collect();
    let citations = citation_ranges(text);
    let styled = headings.iter().any(|&(_, level)| level == 1);
    // A hostile document may style every line a heading: look levels up, never scan.
    let levels: std::collections::HashMap<usize, u8> = headings.iter().copied().collect();
    let level_of = |line: usize| levels.get(&line).copied();
    let mut doc = Document {
        quotations: quotation_ranges(text),
        ..Document::default()
    };
    let mut section = SectionKind::Front;
    let mut start = 0;
    let mut line_no = 0;
    // Prose seen yet: a styled first line after prose is no longer the title.
    let mut prose_seen = false;
    while start < chars.len() {
        let mut end = start;
        while end < chars.len() && chars[end] != '\n' {
            end += 1;
        }
        let line: String = chars[start..end].iter().collect();
        let trimmed = line.trim();
        let level = level_of(line_no);
        if !trimmed.is_empty() {
            // Offsets of the trimmed paragraph.
            let lead = line.chars().take_while(|c| c.is_whitespace()).count();
            let p_start = start + lead;
            let p_end = p_start + trimmed.chars().count();
            let short = trimmed.chars().count() <= HEADING_MAX_CHARS;
            let mut is_heading = false;
            let mut new_chapter: Option<String> = None;
            if let Some((kind, word)) = special_heading(trimmed) {
                section = kind;
                // "摘要：本文研究……。" is the abstract's first paragraph, not its heading.
                let prose = trimmed.contains(['。', '！', '？', '；']);
                is_heading = level.is_some() || (short && !prose);
                // "摘要：本文……" opens the abstract and is its first paragraph: the chapter is
                // named 摘要, not after the paragraph's first characters.
                new_chapter = Some(if is_heading {
                    trimmed.to_string()
                } else {
                    word
                });
            } else if level == Some(1)
                && section == SectionKind::Front
                && doc.chapters.is_empty()
                && !prose_seen
                && !chapter_heading(trimmed)
            {
                // The paper's title, styled as a heading: it names the front part.
                is_heading = true;
                new_chapter = Some(TITLE_CHAPTER.to_string());
            } else if level == Some(1)
                || (!styled
                    && chapter_heading(trimmed)
                    && !(section == SectionKind::Toc && toc_line(trimmed)))
            {
                if level.is_none()
                    && matches!(
                        section,
                        SectionKind::References | SectionKind::Acknowledgements
                    )
                    && !trimmed.starts_with('第')
                {
                    // Numbered entries of a reference list are not chapters.
                } else {
                    section = SectionKind::Body;
                    is_heading = true;
                    new_chapter = Some(trimmed.to_string());
                }
            } else if level.is_some_and(|l| l > 1)
                || (sub_heading(trimmed) && section == SectionKind::Body)
            {
                is_heading = true;
            }
            if !is_heading {
                prose_seen = true;
            }
            if let Some(title) = new_chapter {
                doc.chapters.push(Chapter {
                    title: title.chars().take(30).collect(),
                    section,
                    start: p_start,
                    end: p_end,
                });
            }
            if doc.chapters.is_empty() {
                doc.chapters.push(Chapter {
                    title: String::new(),
                    section,
                    start: p_start,
                    end: p_end,
                });
            }
            let chapter = doc.chapters.len() - 1;
            doc.chapters[chapter].end = p_end;
            let paragraph = doc.paragraphs.len();
            doc.paragraphs.push(Paragraph {
                start: p_start,
                end: p_end,
                chapter,
                section,
                is_heading,
            });
            split_sentences(
                &chars,
                p_start,
                p_end,
                paragraph,
                &citations,
                &mut doc.sentences,
            );
        }
        start = end + 1;
        line_no += 1;
    }
    doc.citations = citations;
    doc
}

fn split_sentences(
    chars: &[char],
    start: usize,
    end: usize,
    paragraph: usize,
    citations: &[(usize, usize)],
    out: &mut Vec<Sentence>,
) {
    let mut s = start;
    let mut i = start;
    while i < end {
        let c = chars[i];
        let terminal = SENTENCE_END.contains(&c)
            || (c == '.' && (i + 1 == end || chars[i + 1].is_whitespace()));
        i += 1;
        if terminal {
            while i < end && CLOSERS.contains(&chars[i]) {
                i += 1;
            }
            // A citation right after the full stop belongs to the sentence: "……。[3]".
            while let Some(&(cs, ce)) = citations.iter().find(|(cs, _)| *cs == i) {
                let _ = cs;
                i = ce.min(end);
            }
            push_sentence(s, i, paragraph, citations, out);
            while i < end && chars[i].is_whitespace() {
                i += 1;
            }
            s = i;
        }
    }
    if s < end {
        push_sentence(s, end, paragraph, citations, out);
    }
}

fn push_sentence(
    start: usize,
    end: usize,
    paragraph: usize,
    citations: &[(usize, usize)],
    out: &mut Vec<Sentence>,
) {
    let cited = citations.iter().any(|&(cs, ce)| cs >= start && ce <= end);
    out.push(Sentence {
        start,
        end,
        paragraph,
        cited,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chapter_titles(doc: &Document) -> Vec<(&str, SectionKind)> {
        doc.chapters
            .iter()
            .map(|c| (c.title.as_str(), c.section))
            .collect()
    }

    const THESIS: &str = "基于深度学习的文本相似度研究\n摘要：本文研究文本相似度。\n目录\n第一章 绪论 ........ 1\n第二章 方法 ........ 5\n第一章 绪论\n1.1 研究背景\n正如张三所言“相似度检测至关重要”。已有研究[1]表明这一点。另有工作（李四，2020）。\n第二章 方法\n本章介绍方法。\n参考文献\n[1] 王五. 文本相似度. 2019.\n致谢\n感谢导师。";

    #[test]
    fn recognises_sections_and_chapters() {
        let doc = segment(THESIS);
        let titles = chapter_titles(&doc);
        assert_eq!(
            titles,
            vec![
                ("", SectionKind::Front),
                ("摘要", SectionKind::Abstract),
                ("目录", SectionKind::Toc),
                ("第一章 绪论", SectionKind::Body),
                ("第二章 方法", SectionKind::Body),
                ("参考文献", SectionKind::References),
                ("致谢", SectionKind::Acknowledgements),
            ]
        );
        let toc: Vec<_> = doc
            .paragraphs
            .iter()
            .filter(|p| p.section == SectionKind::Toc)
            .collect();
        assert_eq!(toc.len(), 3);
        let refs: Vec<_> = doc
            .paragraphs
            .iter()
            .filter(|p| p.section == SectionKind::References)
            .collect();
        assert_eq!(refs.len(), 2);
    }

    #[test]
    fn offsets_map_back_to_the_text() {
        let doc = segment(THESIS);
        let chars: Vec<char> = THESIS.chars().collect();
        for p in &doc.paragraphs {
            let s: String = chars[p.start..p.end].iter().collect();
            assert_eq!(s, s.trim());
            assert!(!s.is_empty());
        }
        let quoted: String = chars[doc.quotations[0].0..doc.quotations[0].1]
            .iter()
            .collect();
        assert_eq!(quoted, "相似度检测至关重要");
    }

    #[test]
    fn citations_and_cited_sentences() {
        let doc = segment(THESIS);
        let chars: Vec<char> = THESIS.chars().collect();
        let marks: Vec<String> = doc
            .citations
            .iter()
            .map(|&(s, e)| chars[s..e].iter().collect())
            .collect();
        assert!(marks.contains(&"[1]".to_string()));
        assert!(marks.contains(&"（李四，2020）".to_string()));
        let cited: Vec<String> = doc
            .sentences
            .iter()
            .filter(|s| s.cited)
            .map(|s| chars[s.start..s.end].iter().collect())
            .collect();
        assert!(
            cited.contains(&"已有研究[1]表明这一点。".to_string()),
            "{cited:?}"
        );
        assert!(
            cited.contains(&"另有工作（李四，2020）。".to_string()),
            "{cited:?}"
        );
        for mark in ["[1-3]", "[1,4]", "[2，5]", "(Smith et al., 2019)"] {
            assert_eq!(citation_ranges(mark).len(), 1, "{mark}");
        }
    }

    #[test]
    fn empty_and_odd_input() {
        assert!(segment("").paragraphs.is_empty());
        assert_eq!(segment("\n\n  \n").paragraphs.len(), 0);
        assert_eq!(segment("“未闭合的引号\n下一段”").quotations.len(), 0);
    }

    /// A .docx's lines as the reader gives them, with the heading levels of its styles.
    const STYLED: &str = "面向中小企业的云存储安全机制研究\n摘要：本文研究云存储的安全问题，提出一种新的机制。\n一、研究背景与意义\n云存储发展迅速。\n1. 数据来源\n本文数据来自公开数据集。\n二、方法设计\n方法如下。\n参考文献\n[1] 张三. 云存储. 2020.";

    #[test]
    fn a_styled_document_takes_its_chapters_from_its_heading_styles() {
        // Title (styled as level 1), two level-1 chapters, a level-2 heading "1. 数据来源".
        let doc = segment_with(STYLED, &[(0, 1), (2, 1), (4, 2), (6, 1)]);
        let titles = chapter_titles(&doc);
        assert_eq!(
            titles,
            vec![
                (TITLE_CHAPTER, SectionKind::Front),
                ("摘要", SectionKind::Abstract),
                ("一、研究背景与意义", SectionKind::Body),
                ("二、方法设计", SectionKind::Body),
                ("参考文献", SectionKind::References),
            ]
        );
        let heading_lines: Vec<usize> = doc
            .paragraphs
            .iter()
            .enumerate()
            .filter(|(_, p)| p.is_heading)
            .map(|(i, _)| i)
            .collect();
        // The title, both chapters, the sub-heading and 参考文献; the abstract's paragraph is prose.
        assert_eq!(heading_lines, vec![0, 2, 4, 6, 8]);
        // Unstyled, the numbered "1. 数据来源" would have been guessed to be a chapter.
        let guessed = segment(STYLED);
        assert!(guessed.chapters.iter().any(|c| c.title == "1. 数据来源"));
        assert_eq!(guessed.chapters[0].title, "");
    }

    #[test]
    fn a_styled_chapter_heading_on_the_first_line_is_not_taken_for_the_title() {
        let doc = segment_with("第一章 绪论\n正文。", &[(0, 1)]);
        assert_eq!(doc.chapters[0].title, "第一章 绪论");
        assert_eq!(doc.chapters[0].section, SectionKind::Body);
    }
}
