//! A written draft as a Chinese thesis .docx (docio writes the file): headings for every outline
//! node, the sections' paragraphs and tables, the abstracts and the reference list.

use crate::generate::{Draft, PaperRequest};
use crate::outline::{Node, PaperKind};
use docio::thesis::{Block, Cover, Heading, Thesis};

/// What the user fills in beyond the paper: the cover (title and kind come from the request
/// when left empty; empty fields print as blanks to fill by hand) and the acknowledgements.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CoverFields {
    #[serde(flatten)]
    pub cover: Cover,
    #[serde(default)]
    pub acknowledgements: String,
}

pub fn to_thesis(request: &PaperRequest, draft: &Draft, cover: &CoverFields) -> Thesis {
    let kind_label = match request.kind {
        PaperKind::Thesis => format!("{}毕业论文", request.degree.label()),
        PaperKind::Article => request.kind.label().to_string(),
    };
    let mut body = Vec::new();
    let mut written = draft.sections.iter();
    for chapter in &draft.outline.chapters {
        push_node(&mut body, chapter, 1, &mut written);
    }
    Thesis {
        cover: Cover {
            title: or(&cover.cover.title, &request.title),
            major: or(&cover.cover.major, &request.field),
            kind_label: or(&cover.cover.kind_label, &kind_label),
            ..cover.cover.clone()
        },
        abstract_zh: draft.abstract_zh.clone(),
        keywords_zh: draft.keywords.clone(),
        abstract_en: draft.abstract_en.clone(),
        keywords_en: draft.keywords_en.clone(),
        body,
        references: draft
            .references()
            .into_iter()
            .map(|r| r.formatted)
            .collect(),
        acknowledgements: cover.acknowledgements.clone(),
        short_form: false,
    }
}

fn or(given: &str, otherwise: &str) -> String {
    if given.trim().is_empty() {
        otherwise.to_string()
    } else {
        given.to_string()
    }
}

/// The node's heading, then its own text when it is a leaf (sections are written in reading
/// order, one per leaf), then its children.
fn push_node<'a>(
    body: &mut Vec<Heading>,
    node: &Node,
    level: u8,
    written: &mut impl Iterator<Item = &'a crate::generate::SectionText>,
) {
    let blocks = if node.children.is_empty() {
        written
            .next()
            .map(|s| blocks_of(&s.text))
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    body.push(Heading {
        level,
        title: node.title.clone(),
        blocks,
    });
    for child in &node.children {
        push_node(body, child, (level + 1).min(3), written);
    }
}

/// Paragraphs, with runs of `|`-separated lines as tables (first row the header) and a short
/// "表…" line just before a table as its caption.
pub fn blocks_of(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut caption = String::new();
    let flush = |rows: &mut Vec<Vec<String>>, caption: &mut String, blocks: &mut Vec<Block>| {
        if rows.is_empty() {
            return;
        }
        let mut all = std::mem::take(rows);
        let header = all.remove(0);
        let width = header.len();
        for row in &mut all {
            row.resize(width, String::new());
        }
        blocks.push(Block::Table {
            caption: std::mem::take(caption),
            header,
            rows: all,
        });
    };
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if line.starts_with('|') || line.matches('|').count() >= 2 {
            let cells: Vec<String> = line
                .trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_string())
                .collect();
            // A markdown rule line ("|---|:--:|") only separates the header.
            if cells
                .iter()
                .all(|c| !c.is_empty() && c.chars().all(|ch| matches!(ch, '-' | ':' | ' ')))
            {
                continue;
            }
            if rows.is_empty()
                && let Some(Block::Paragraph(previous)) = blocks.last()
                && is_caption(previous)
            {
                caption = strip_table_number(previous);
                blocks.pop();
            }
            rows.push(cells);
            continue;
        }
        flush(&mut rows, &mut caption, &mut blocks);
        blocks.push(Block::Paragraph(line.to_string()));
    }
    flush(&mut rows, &mut caption, &mut blocks);
    blocks
}

fn is_caption(line: &str) -> bool {
    line.starts_with('表') && line.chars().count() <= 40 && !line.ends_with('。')
}

/// "表1 各组数据" → "各组数据": the writer numbers tables itself.
fn strip_table_number(line: &str) -> String {
    let rest = line.trim_start_matches('表');
    let rest = rest.trim_start_matches(|c: char| {
        c.is_ascii_digit() || matches!(c, '.' | '-' | '：' | ':' | ' ')
    });
    rest.trim().to_string()
}

/// The draft as .docx bytes.
pub fn to_docx(
    request: &PaperRequest,
    draft: &Draft,
    cover: &CoverFields,
) -> Result<Vec<u8>, std::io::Error> {
    docio::thesis::write_thesis_docx(&to_thesis(request, draft, cover))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_draft_becomes_a_word_file_whose_headings_read_back() {
        use crate::generate::{Draft, SectionText};
        use crate::outline::{self, Degree};
        let mut outline =
            outline::parse_outline_text("第1章 绪论\n1.1 背景\n1.2 意义\n第2章 方法\n第3章 结论");
        outline::allocate_budgets(&mut outline, 1000);
        let sections = outline
            .leaves()
            .iter()
            .map(|(path, node)| SectionText {
                path: path.clone(),
                heading: node.title.clone(),
                text: format!("{}的正文[1]。", node.title),
                cited: vec![],
                removed_citations: 0,
                placed_citations: 0,
                weak: false,
            })
            .collect();
        let draft = Draft {
            outline,
            sections,
            abstract_zh: "摘要正文。".into(),
            ..Draft::default()
        };
        let request = PaperRequest {
            title: "图像识别研究".into(),
            field: "计算机".into(),
            kind: PaperKind::Thesis,
            degree: Degree::Bachelor,
            words: 1000,
            keywords: vec![],
            own_references: vec![],
        };
        let bytes = to_docx(&request, &draft, &CoverFields::default()).unwrap();
        let read = docio::extract(&bytes, "paper.docx", &docio::Limits::default()).unwrap();
        assert_eq!(read.title.as_deref(), Some("图像识别研究"));
        let headings: Vec<String> = read
            .headings
            .iter()
            .map(|h| read.text.lines().nth(h.line).unwrap_or("").to_string())
            .collect();
        for title in ["绪论", "背景", "意义", "方法", "结论"] {
            assert!(headings.iter().any(|h| h.contains(title)), "{headings:?}");
        }
        assert!(read.text.contains("背景的正文"));
        assert!(read.text.contains("本科毕业论文"));
    }

    #[test]
    fn tables_and_captions_are_recognised() {
        let blocks = blocks_of(
            "第一段。\n表1 各组结果\n| 组别 | 人数 |\n|---|---|\n| 甲 | 10 |\n| 乙 |\n最后一段。",
        );
        assert_eq!(blocks.len(), 3, "{blocks:?}");
        let Block::Table {
            caption,
            header,
            rows,
        } = &blocks[1]
        else {
            panic!("{blocks:?}")
        };
        assert_eq!(caption, "各组结果");
        assert_eq!(header, &vec!["组别".to_string(), "人数".to_string()]);
        // The rule line is dropped; a short row is padded to the header's width.
        assert_eq!(
            rows,
            &vec![
                vec!["甲".to_string(), "10".to_string()],
                vec!["乙".to_string(), String::new()]
            ]
        );
        assert_eq!(blocks[2], Block::Paragraph("最后一段。".into()));
    }
}
