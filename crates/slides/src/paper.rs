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
    /// The paper's tables, each in the section it sits in.
    #[serde(default)]
    pub tables: Vec<Table>,
    /// The paper's figures (pictures of a .docx), each in the section it sits in.
    #[serde(default)]
    pub figures: Vec<Figure>,
}

/// A table of the paper: its caption ("表4-1 …", or empty) and its rows, the first the header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Table {
    /// Index in `Paper::sections`.
    pub section: usize,
    pub caption: String,
    pub rows: Vec<Vec<String>>,
}

/// A figure of the paper: its caption ("图3-1 …", or empty), its size in pixels, and where its
/// bytes are: `image`, the index in `docio::Extracted::images` it was read from, until the
/// caller keeps them and names the place in `file`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Figure {
    pub section: usize,
    pub caption: String,
    pub image: usize,
    pub ext: String,
    pub width: u32,
    pub height: u32,
    #[serde(default)]
    pub file: String,
}

/// A caption line: "表4-1 …", "图 3.2 …", "Table 2 …", "Fig. 3 …"; not a sentence about one
/// ("图3所示为系统架构。").
fn is_caption(line: &str, marks: &[&str]) -> bool {
    let line = line.trim();
    marks.iter().any(|m| {
        line.strip_prefix(m).is_some_and(|rest| {
            rest.trim_start()
                .starts_with(|c: char| c.is_ascii_digit() || "一二三四五六七八九十".contains(c))
        })
    }) && line.chars().count() <= 60
        && !line.contains("所示")
        && !line.ends_with(['。', '；'])
}

const TABLE_MARKS: [&str; 3] = ["表", "Table", "TABLE"];
const FIGURE_MARKS: [&str; 5] = ["图", "Fig.", "Fig", "Figure", "FIGURE"];

/// Smallest side of a picture worth a slide: smaller ones are icons, formula images, bullets.
const FIGURE_MIN_PX: u32 = 120;

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
        // Lines that are a table's cells or the caption beside a table or a picture: shown with
        // them, not as text. A line like a caption with nothing beside it stays text.
        let mut object_lines = vec![false; lines.len()];
        let mut mark = |k: Option<usize>, marks: &[&str]| {
            if let Some(k) = k.filter(|k| *k < lines.len())
                && (marks.is_empty() || is_caption(lines[k], marks))
            {
                object_lines[k] = true;
            }
        };
        for t in &doc.tables {
            for k in t.start_line..t.end_line.min(lines.len()) {
                mark(Some(k), &[]);
            }
            mark(t.start_line.checked_sub(1), &TABLE_MARKS);
            mark(Some(t.end_line), &TABLE_MARKS);
        }
        for i in &doc.images {
            mark(Some(i.line), &FIGURE_MARKS);
            mark(i.line.checked_sub(1), &FIGURE_MARKS);
        }
        // The section each line belongs to, when it is a section's text.
        let mut owner: Vec<Option<usize>> = vec![None; lines.len()];
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
            } else if let Some(last) = sections.len().checked_sub(1) {
                owner[index] = Some(last);
                if !object_lines[index] {
                    let section = &mut sections[last];
                    section.paragraphs.push(line.to_string());
                }
            }
        }
        let (tables, figures) = objects(doc, &lines, &owner);
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
            tables,
            figures,
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
            tables: Vec::new(),
            figures: Vec::new(),
        })
    }

    /// The pictures of the paper's figures, from the images they were read from.
    pub fn pictures(&self, images: &[docio::Image]) -> crate::pptx::Figures {
        self.figures
            .iter()
            .enumerate()
            .filter_map(|(index, f)| {
                let picture = crate::pptx::Picture::figure(&images.get(f.image)?.bytes)?;
                Some((index, picture))
            })
            .collect()
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

/// The tables and figures of the body (those of the cover, the abstract or the back matter are
/// not the work's), with their captions: a table's the line above it (else below), a figure's
/// the line below it (else above).
fn objects(
    doc: &docio::Extracted,
    lines: &[&str],
    owner: &[Option<usize>],
) -> (Vec<Table>, Vec<Figure>) {
    let line = |k: usize| lines.get(k).map_or("", |l| l.trim());
    let owner_of = |k: usize| owner.get(k).copied().flatten();
    let caption = |k: Option<usize>, marks: &[&str]| {
        k.map(line)
            .filter(|l| is_caption(l, marks))
            .map(str::to_string)
    };
    let tables = doc
        .tables
        .iter()
        .filter_map(|t| {
            let section = owner_of(t.start_line)?;
            let caption = caption(t.start_line.checked_sub(1), &TABLE_MARKS)
                .or_else(|| caption(Some(t.end_line), &TABLE_MARKS))
                .unwrap_or_default();
            Some(Table {
                section,
                caption,
                rows: t.rows.clone(),
            })
        })
        .collect();
    let figures = doc
        .images
        .iter()
        .enumerate()
        .filter_map(|(image, i)| {
            // The line at or after the picture; a picture closing the body belongs to the last.
            let section = owner_of(i.line).or_else(|| owner_of(i.line.checked_sub(1)?))?;
            let picture = crate::pptx::Picture::figure(&i.bytes)?;
            if picture.width.min(picture.height) < FIGURE_MIN_PX {
                return None;
            }
            let caption = caption(Some(i.line), &FIGURE_MARKS)
                .or_else(|| caption(i.line.checked_sub(1), &FIGURE_MARKS))
                .unwrap_or_default();
            Some(Figure {
                section,
                caption,
                image,
                ext: picture.ext.to_string(),
                width: picture.width,
                height: picture.height,
                file: String::new(),
            })
        })
        .collect();
    (tables, figures)
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
            tables: vec![],
            images: vec![],
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
