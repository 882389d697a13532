//! The paper a deck is made from: its title and its sections (heading, level, paragraphs), read
//! from what `docio` extracted or from an outline typed in.

use crate::SlidesError;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Section {
    pub heading: String,
    /// 1 = chapter, 2 = section, …
    pub level: u8,
    pub paragraphs: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Paper {
    pub title: String,
    /// The abstract (摘要), when the paper has one: the deck's summary is drawn from it first.
    pub summary: Vec<String>,
    pub sections: Vec<Section>,
}

/// Headings of the front and back matter: not chapters a defence presents.
fn is_matter(heading: &str) -> bool {
    let h: String = heading.chars().filter(|c| !c.is_whitespace()).collect();
    [
        "目录",
        "致谢",
        "参考文献",
        "附录",
        "声明",
        "原创性声明",
        "授权",
        "作者简介",
        "攻读",
        "ABSTRACT",
        "Abstract",
    ]
    .iter()
    .any(|m| h.starts_with(m))
}

fn is_abstract(heading: &str) -> bool {
    let h: String = heading.chars().filter(|c| !c.is_whitespace()).collect();
    h.starts_with("摘要") || h.starts_with("中文摘要") || h.starts_with("内容摘要")
}

impl Paper {
    /// The paper as `docio` read it. Text before the first heading is the cover and front
    /// matter; the abstract and the back matter are kept out of the sections.
    pub fn from_extracted(doc: &docio::Extracted) -> Result<Paper, SlidesError> {
        let lines: Vec<&str> = doc.text.lines().collect();
        // A PDF or a text file marks no heading styles: its numbered lines ("第1章 绪论",
        // "1.1 研究背景") are the headings, table-of-contents entries left out.
        let numbered: Vec<docio::Heading>;
        let doc_headings = if doc.headings.is_empty() {
            numbered = lines
                .iter()
                .enumerate()
                .filter(|(_, l)| !is_contents_entry(l))
                .filter_map(|(line, l)| {
                    heading_level(l).map(|level| docio::Heading { line, level })
                })
                .collect();
            &numbered
        } else {
            &doc.headings
        };
        let mut sections: Vec<Section> = Vec::new();
        let mut summary: Vec<String> = Vec::new();
        let mut in_abstract = false;
        let mut in_matter = false;
        let mut headings = doc_headings.iter().peekable();
        for (index, line) in lines.iter().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            if let Some(h) = headings.next_if(|h| h.line == index) {
                in_abstract = is_abstract(line);
                // The cover's title, styled as a heading, opens the cover, not a chapter.
                let is_cover = sections.is_empty() && doc.title.as_deref() == Some(line);
                in_matter = !in_abstract && (is_cover || is_matter(line));
                if !in_abstract && !in_matter {
                    sections.push(Section {
                        heading: line.to_string(),
                        level: h.level.max(1),
                        paragraphs: Vec::new(),
                    });
                }
                continue;
            }
            // An abstract often has no heading style: a paragraph opening with "摘要".
            if sections.is_empty()
                && !in_abstract
                && let Some(rest) = ["摘要：", "摘要:", "摘 要", "摘要"]
                    .iter()
                    .find_map(|p| line.strip_prefix(p))
            {
                let rest = rest.trim_start_matches(['：', ':', ' ']).trim();
                if !rest.is_empty() {
                    summary.push(rest.to_string());
                }
                in_abstract = true;
                continue;
            }
            if in_matter {
                continue;
            }
            if in_abstract {
                if line.starts_with("关键词") || line.starts_with("关键字") {
                    in_abstract = false;
                    continue;
                }
                summary.push(line.to_string());
            } else if let Some(section) = sections.last_mut() {
                section.paragraphs.push(line.to_string());
            }
        }
        sections.retain(|s| !s.heading.is_empty());
        if sections.is_empty() {
            return Err(SlidesError::NoHeadings);
        }
        if sections.iter().all(|s| s.paragraphs.is_empty()) {
            return Err(SlidesError::NoContent);
        }
        let title = doc
            .title
            .clone()
            .filter(|t| !t.trim().is_empty())
            .or_else(|| {
                lines
                    .iter()
                    .map(|l| l.trim())
                    .find(|l| !l.is_empty())
                    .map(str::to_string)
            })
            .unwrap_or_default();
        Ok(Paper {
            title: title.trim().to_string(),
            summary,
            sections,
        })
    }

    /// A title and an outline typed in: one heading per line, "1 绪论" / "1.1 研究背景" (the
    /// numbering gives the level), other lines the text of the heading above them.
    pub fn from_outline(title: &str, outline: &str) -> Result<Paper, SlidesError> {
        let mut sections: Vec<Section> = Vec::new();
        for line in outline.lines().map(str::trim).filter(|l| !l.is_empty()) {
            match heading_level(line) {
                Some(level) => sections.push(Section {
                    heading: line.to_string(),
                    level,
                    paragraphs: Vec::new(),
                }),
                None => match sections.last_mut() {
                    Some(s) => s.paragraphs.push(line.to_string()),
                    None => sections.push(Section {
                        heading: line.to_string(),
                        level: 1,
                        paragraphs: Vec::new(),
                    }),
                },
            }
        }
        if sections.is_empty() {
            return Err(SlidesError::NoHeadings);
        }
        Ok(Paper {
            title: title.trim().to_string(),
            summary: Vec::new(),
            sections,
        })
    }

    /// Counted characters of the body.
    pub fn chars(&self) -> usize {
        self.sections
            .iter()
            .flat_map(|s| &s.paragraphs)
            .map(|p| p.chars().filter(|c| !c.is_whitespace()).count())
            .sum()
    }
}

/// A line of a table of contents: a heading followed by dot leaders or a page number.
fn is_contents_entry(line: &str) -> bool {
    let line = line.trim_end();
    let leaders =
        line.contains("……") || line.contains("...") || line.contains("··") || line.contains('\t');
    let page_number = line
        .rsplit([' ', '\t', '.', '…', '·'])
        .next()
        .is_some_and(|last| {
            !last.is_empty()
                && last.len() <= 4
                && last
                    .chars()
                    .all(|c| c.is_ascii_digit() || "IVXivx".contains(c))
        });
    leaders && page_number
}

/// The level a numbered heading's number gives ("第1章"/"一、"/"1" → 1, "1.2" → 2), or none
/// for a line that is not a numbered heading.
pub fn heading_level(line: &str) -> Option<u8> {
    let line = line.trim();
    if line.chars().count() > 40 || line.ends_with(['。', '；', '，']) {
        return None;
    }
    if line.starts_with('第') && line.contains(['章', '部']) {
        return Some(1);
    }
    let chinese_numeral = line
        .chars()
        .take_while(|c| "一二三四五六七八九十".contains(*c))
        .count();
    if chinese_numeral > 0 && line.chars().nth(chinese_numeral) == Some('、') {
        return Some(1);
    }
    let number: String = line
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    let number = number.trim_end_matches('.');
    if number.is_empty() || !number.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let rest = line[number.len()..].trim_start_matches('.');
    // "1 绪论", "1.2 研究现状", "1.2研究现状"; not "2020年…" or "3.5%…".
    let spaced = rest.starts_with([' ', '\u{3000}', '\t']);
    let dotted_cjk = number.contains('.')
        && rest
            .chars()
            .next()
            .is_some_and(|c| !c.is_ascii() && !"年月日倍个%％万亿".contains(c));
    if !spaced && !dotted_cjk {
        return None;
    }
    Some((number.split('.').count()).min(4) as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn extracted(text: &str, headings: &[(usize, u8)]) -> docio::Extracted {
        docio::Extracted {
            text: text.into(),
            format: docio::Format::Text,
            reader: "test".into(),
            headings: headings
                .iter()
                .map(|&(line, level)| docio::Heading { line, level })
                .collect(),
            title: None,
        }
    }

    #[test]
    fn front_and_back_matter_are_not_sections_and_the_abstract_is_the_summary() {
        let doc = extracted(
            "基于深度学习的图像识别研究\n摘要\n本文研究图像识别。\n关键词：深度学习\n1 绪论\n图像识别很重要。\n2 方法\n采用卷积网络。\n参考文献\n[1] 张三. 某文[J]. 2020.\n致谢\n感谢导师。",
            &[(1, 1), (4, 1), (6, 1), (8, 1), (10, 1)],
        );
        let paper = Paper::from_extracted(&doc).unwrap();
        assert_eq!(paper.title, "基于深度学习的图像识别研究");
        assert_eq!(paper.summary, vec!["本文研究图像识别。"]);
        let headings: Vec<&str> = paper.sections.iter().map(|s| s.heading.as_str()).collect();
        assert_eq!(headings, vec!["1 绪论", "2 方法"]);
        assert_eq!(paper.sections[1].paragraphs, vec!["采用卷积网络。"]);
    }

    #[test]
    fn a_pdf_or_text_file_is_read_by_its_numbered_headings_and_its_contents_list_is_skipped() {
        let doc = extracted(
            "道路裂缝检测方法研究\n目 录\n第1章 绪论\t1\n1.1 研究背景……………1\n第1章 绪论\n裂缝是路面病害。\n1.1 研究背景\n巡检效率低。\n第2章 方法\n本文采用卷积网络。",
            &[],
        );
        let paper = Paper::from_extracted(&doc).unwrap();
        let headings: Vec<(&str, u8)> = paper
            .sections
            .iter()
            .map(|s| (s.heading.as_str(), s.level))
            .collect();
        assert_eq!(
            headings,
            vec![("第1章 绪论", 1), ("1.1 研究背景", 2), ("第2章 方法", 1)]
        );
        assert_eq!(paper.sections[0].paragraphs, vec!["裂缝是路面病害。"]);
    }

    #[test]
    fn a_paper_without_headings_is_refused() {
        let doc = extracted("只有一段文字，没有任何标题。\n第二段。", &[]);
        assert_eq!(
            Paper::from_extracted(&doc).unwrap_err(),
            SlidesError::NoHeadings
        );
    }

    #[test]
    fn numbered_lines_of_an_outline_are_headings_at_their_level() {
        assert_eq!(heading_level("1 绪论"), Some(1));
        assert_eq!(heading_level("第二章 相关工作"), Some(1));
        assert_eq!(heading_level("三、研究方法"), Some(1));
        assert_eq!(heading_level("1.2 研究现状"), Some(2));
        assert_eq!(heading_level("2.1.3 数据集"), Some(3));
        assert_eq!(heading_level("2020年数据显示增长"), None);
        assert_eq!(heading_level("3.5%的样本"), None);
        let paper =
            Paper::from_outline("题目", "1 绪论\n背景很重要。\n1.1 研究意义\n2 方法").unwrap();
        assert_eq!(paper.sections.len(), 3);
        assert_eq!(paper.sections[1].level, 2);
        assert_eq!(paper.sections[0].paragraphs, vec!["背景很重要。"]);
    }
}
