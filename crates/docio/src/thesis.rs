//! A generated paper written as a .docx in the form of a Chinese thesis: a cover page, front
//! matter (摘要, Abstract, 目录) numbered I, II, … and a body numbered 1, 2, … with the paper's
//! title in the header, chapters numbered 第1章 / 1.1 / 1.1.1 by a multilevel list, three-line
//! tables, superscript citation marks, 参考文献 and 致谢.
//!
//! The table of contents is a real TOC field whose cached result already lists every heading with
//! an estimated page, so Word and LibreOffice show a table of contents before any update; the
//! settings ask Word to refresh it (and the page numbers) on open.

use crate::docx_write::escape;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::io::Write as _;

/// What the cover page says.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cover {
    pub title: String,
    pub school: String,
    pub major: String,
    pub name: String,
    pub student_number: String,
    pub supervisor: String,
    pub date: String,
    /// The kind of paper, e.g. "本科毕业论文"; "毕业论文" when empty.
    #[serde(default)]
    pub kind_label: String,
}

/// A piece of a section's content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Block {
    /// Text; each line is a paragraph, and marks like "[1]" or "[2-4]" are set as superscript.
    Paragraph(String),
    Table {
        caption: String,
        header: Vec<String>,
        rows: Vec<Vec<String>>,
    },
    /// A picture (PNG or JPEG) of `width` × `height` pixels, centred, its numbered caption
    /// below.
    Figure {
        caption: String,
        #[serde(with = "crate::base64_bytes")]
        image: Vec<u8>,
        width: u32,
        height: u32,
    },
}

/// A chapter (level 1), section (2) or subsection (3) with its content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Heading {
    pub level: u8,
    /// The title without its number: the numbering list adds "第1章" / "1.1" / "1.1.1".
    pub title: String,
    pub blocks: Vec<Block>,
}

/// A whole paper.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Thesis {
    pub cover: Cover,
    pub abstract_zh: String,
    pub keywords_zh: Vec<String>,
    pub abstract_en: String,
    pub keywords_en: Vec<String>,
    /// Headings in reading order, levels 1 to 3.
    pub body: Vec<Heading>,
    /// Formatted GB/T 7714 entries without their "[n]".
    pub references: Vec<String>,
    pub acknowledgements: String,
    /// A short document about a paper (开题报告, 任务书, 文献综述): no abstracts and no table of
    /// contents, parts numbered "一、二、…" running on without page breaks.
    #[serde(default)]
    pub short_form: bool,
}

const W_NS: &str = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";
const R_NS: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
const XML_HEAD: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>"#;

// Page geometry in twips: A4, margins 2.54 cm (top, bottom) and 3.17 cm (left, right), header
// 1.5 cm and footer 1.75 cm from the edge.
const PAGE_W: u32 = 11906;
const PAGE_H: u32 = 16838;
const MARGIN_TB: u32 = 1440;
const MARGIN_LR: u32 = 1797;
const HEADER_AT: u32 = 851;
const FOOTER_AT: u32 = 992;
const TEXT_W: u32 = PAGE_W - 2 * MARGIN_LR;

/// Latin text in Times New Roman, Chinese in `east`.
fn fonts(east: &str) -> String {
    format!(
        r#"<w:rFonts w:ascii="Times New Roman" w:hAnsi="Times New Roman" w:eastAsia="{east}" w:cs="Times New Roman"/>"#
    )
}

fn size(half_points: u32) -> String {
    format!(r#"<w:sz w:val="{half_points}"/><w:szCs w:val="{half_points}"/>"#)
}

/// Run properties of a label in bold 黑体 (关键词, cover fields, …).
fn hei_bold(half_points: Option<u32>) -> String {
    format!(
        "<w:rPr>{}<w:b/><w:bCs/>{}</w:rPr>",
        fonts("黑体"),
        half_points.map(size).unwrap_or_default()
    )
}

const SUPERSCRIPT: &str = r#"<w:rPr><w:vertAlign w:val="superscript"/></w:rPr>"#;

/// A run of text; `rpr` is a whole `<w:rPr>` or empty.
fn run(text: &str, rpr: &str) -> String {
    format!(
        r#"<w:r>{rpr}<w:t xml:space="preserve">{}</w:t></w:r>"#,
        escape(text)
    )
}

/// A paragraph in `style` (empty: Normal) with more paragraph properties (in schema order after
/// `w:pStyle`) and content.
fn para(style: &str, ppr: &str, content: &str) -> String {
    let style = if style.is_empty() {
        String::new()
    } else {
        format!(r#"<w:pStyle w:val="{style}"/>"#)
    };
    if style.is_empty() && ppr.is_empty() {
        format!("<w:p>{content}</w:p>")
    } else {
        format!("<w:p><w:pPr>{style}{ppr}</w:pPr>{content}</w:p>")
    }
}

/// Text meant for one line (a title, a field, a reference): runs of whitespace, line breaks
/// included, become one space.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The non-blank lines of a text, trimmed (a typed full-width indent is left to the style's
/// first-line indent).
fn lines(text: &str) -> impl Iterator<Item = &str> {
    text.split(['\n', '\r'])
        .map(str::trim)
        .filter(|l| !l.is_empty())
}

/// Whether the inside of a bracket is a citation of the 顺序编码制: numbers of at most three
/// digits (so a year "[2024]" stays text) joined by commas, dashes or tildes.
fn is_citation(inner: &str) -> bool {
    let mut digits = 0;
    let mut any = false;
    for c in inner.chars() {
        if c.is_ascii_digit() {
            digits += 1;
            any = true;
            if digits > 3 {
                return false;
            }
        } else if matches!(c, ',' | '，' | '、' | '-' | '–' | '—' | '~' | '～' | ' ') {
            digits = 0;
        } else {
            return false;
        }
    }
    any && inner.trim_start().starts_with(|c: char| c.is_ascii_digit())
}

/// The text cut into pieces, each marked whether it is a citation mark ("[1]", "[2,3]", "[2-4]").
fn citation_pieces(text: &str) -> Vec<(&str, bool)> {
    let mut out = Vec::new();
    let mut plain_from = 0;
    let mut at = 0;
    while let Some(found) = text[at..].find(['[', '［']) {
        let open = at + found;
        let inner_from = open
            + if text[open..].starts_with('[') {
                1
            } else {
                '［'.len_utf8()
            };
        let rest = &text[inner_from..];
        // A citation closes soon and holds no other bracket.
        let close = rest
            .char_indices()
            .take(40)
            .find(|(_, c)| matches!(c, ']' | '］' | '[' | '［'));
        match close {
            Some((k, c)) if matches!(c, ']' | '］') && is_citation(&rest[..k]) => {
                let end = inner_from + k + c.len_utf8();
                if open > plain_from {
                    out.push((&text[plain_from..open], false));
                }
                out.push((&text[open..end], true));
                plain_from = end;
                at = end;
            }
            _ => at = inner_from,
        }
    }
    if plain_from < text.len() {
        out.push((&text[plain_from..], false));
    }
    out
}

/// The runs of a body paragraph, citation marks in superscript.
fn cited_runs(text: &str) -> String {
    citation_pieces(text)
        .into_iter()
        .map(|(piece, cite)| run(piece, if cite { SUPERSCRIPT } else { "" }))
        .collect()
}

fn roman(n: u32) -> String {
    if n == 0 || n >= 4000 {
        return n.to_string();
    }
    const TABLE: [(u32, &str); 13] = [
        (1000, "M"),
        (900, "CM"),
        (500, "D"),
        (400, "CD"),
        (100, "C"),
        (90, "XC"),
        (50, "L"),
        (40, "XL"),
        (10, "X"),
        (9, "IX"),
        (5, "V"),
        (4, "IV"),
        (1, "I"),
    ];
    let mut n = n;
    let mut out = String::new();
    for (value, letters) in TABLE {
        while n >= value {
            out.push_str(letters);
            n -= value;
        }
    }
    out
}

/// Lines of body text (小四, 1.5 spacing) on one page, and 小四 characters on one line.
const LINES_PER_PAGE: f32 = 29.0;
const CHARS_PER_LINE: f32 = 34.0;
/// 五号 characters on one line, and a 五号 line at 1.5 spacing as a share of a body line.
const SMALL_CHARS_PER_LINE: f32 = 39.0;
const SMALL_LINE: f32 = 0.875;

/// Width of a text in Chinese characters: Latin letters and digits count half.
fn width(text: &str) -> f32 {
    text.chars()
        .map(|c| if c.is_ascii() { 0.5 } else { 1.0 })
        .sum()
}

fn wrapped(units: f32, per_line: f32) -> f32 {
    (units / per_line).ceil().max(1.0)
}

/// A rough page count from the lines written so far, for the table of contents' cached page
/// numbers; Word replaces them with true ones when it updates the field.
struct Pager {
    page: u32,
    used: f32,
}

impl Pager {
    fn new() -> Self {
        Pager { page: 1, used: 0.0 }
    }

    fn new_page(&mut self) {
        if self.used > 0.0 {
            self.page = self.page.saturating_add(1);
            self.used = 0.0;
        }
    }

    fn add(&mut self, lines: f32) {
        self.used += lines;
        // Full pages passed; a page filled exactly is still the current one.
        let full = ((self.used - 1e-3) / LINES_PER_PAGE).floor().max(0.0);
        // `as` saturates, so a huge text cannot overflow.
        self.page = self.page.saturating_add(full as u32);
        self.used -= full * LINES_PER_PAGE;
    }

    /// Where a block kept together (a heading and its following line) starts: on the next page
    /// when it no longer fits on this one.
    fn place(&mut self, lines: f32) -> u32 {
        if self.used + lines > LINES_PER_PAGE {
            self.new_page();
        }
        let page = self.page;
        self.add(lines);
        page
    }
}

/// One line of the table of contents.
struct TocEntry {
    level: u8,
    text: String,
    anchor: String,
    page: String,
}

/// 一, 二, … 九十九 (a short document's parts).
pub fn chinese_number(n: u32) -> String {
    const DIGITS: [&str; 10] = ["零", "一", "二", "三", "四", "五", "六", "七", "八", "九"];
    match n {
        0..=9 => DIGITS[n as usize].to_string(),
        10..=19 => format!(
            "十{}",
            if n == 10 {
                ""
            } else {
                DIGITS[(n - 10) as usize]
            }
        ),
        20..=99 => format!(
            "{}十{}",
            DIGITS[(n / 10) as usize],
            if n.is_multiple_of(10) {
                ""
            } else {
                DIGITS[(n % 10) as usize]
            }
        ),
        _ => n.to_string(),
    }
}

/// Heading numbers as the numbering list shows them.
#[derive(Default)]
struct Numbers([u32; 3]);

impl Numbers {
    /// The number of the next heading of `level` (1..=3): "第1章", "1.2", "1.2.3". A level above
    /// that has not started shows 0, as Word does.
    fn next(&mut self, level: u8) -> String {
        let i = usize::from(level.clamp(1, 3)) - 1;
        self.0[i] = self.0[i].saturating_add(1);
        for deeper in &mut self.0[i + 1..] {
            *deeper = 0;
        }
        let [a, b, c] = self.0;
        match i {
            0 => format!("第{a}章"),
            1 => format!("{a}.{b}"),
            _ => format!("{a}.{b}.{c}"),
        }
    }
}

/// The document's paragraphs as they are written, with the table of contents gathered on the way.
#[derive(Default)]
struct Writer {
    xml: String,
    toc: Vec<TocEntry>,
    bookmarks: u32,
    tables: u32,
    /// The pictures of figures, in order: their extension and bytes.
    figures: Vec<(&'static str, Vec<u8>)>,
    /// `Thesis::short_form`.
    short: bool,
}

/// The relationship id of figure `n` (from 1), after the fixed ones.
fn figure_rel(n: usize) -> String {
    format!("rIdFigure{n}")
}

impl Writer {
    /// A heading paragraph holding a bookmark the table of contents links to.
    fn heading(&mut self, style: &str, text: &str) -> String {
        self.bookmarks = self.bookmarks.saturating_add(1);
        let id = self.bookmarks;
        let anchor = format!("_Toc{id:09}");
        let content = format!(
            r#"<w:bookmarkStart w:id="{id}" w:name="{anchor}"/>{}<w:bookmarkEnd w:id="{id}"/>"#,
            run(text, "")
        );
        // A short document's parts run on, numbered in their text rather than by the list.
        let ppr = if self.short {
            r#"<w:pageBreakBefore w:val="0"/><w:numPr><w:ilvl w:val="0"/><w:numId w:val="0"/></w:numPr>"#
        } else {
            ""
        };
        self.xml.push_str(&para(style, ppr, &content));
        anchor
    }

    /// An unnumbered heading that looks like a chapter's and is listed in the contents.
    fn unnumbered(&mut self, text: &str, page: String) {
        let anchor = self.heading("UnnumberedHeading", text);
        self.toc.push(TocEntry {
            level: 1,
            text: text.into(),
            anchor,
            page,
        });
    }

    /// Body paragraphs, one per line of `text`; the lines they take are added to `pager`.
    fn body_text(&mut self, text: &str, cite: bool, pager: &mut Pager) {
        for line in lines(text) {
            let runs = if cite {
                cited_runs(line)
            } else {
                run(line, "")
            };
            self.xml.push_str(&para("BodyText", "", &runs));
            pager.add(wrapped(width(line) + 2.0, CHARS_PER_LINE));
        }
    }

    /// "关键词：A；B；C" with the label in bold 黑体.
    fn keywords(&mut self, label: &str, words: &[String], separator: &str, label_rpr: &str) {
        let words: Vec<String> = words
            .iter()
            .map(|w| one_line(w))
            .filter(|w| !w.is_empty())
            .collect();
        let content = format!(
            "{}{}",
            run(label, label_rpr),
            run(&words.join(separator), "")
        );
        self.xml
            .push_str(&para("", r#"<w:spacing w:before="240"/>"#, &content));
    }

    /// 摘要 and Abstract, each on its own page, numbered I, II, … in the footer.
    fn abstracts(&mut self, thesis: &Thesis) {
        let mut pager = Pager::new();
        self.unnumbered("摘  要", roman(pager.page));
        pager.add(3.0);
        self.body_text(&thesis.abstract_zh, false, &mut pager);
        self.keywords("关键词：", &thesis.keywords_zh, "；", &hei_bold(None));
        pager.add(2.0);

        pager.new_page();
        self.unnumbered("Abstract", roman(pager.page));
        self.body_text(&thesis.abstract_en, false, &mut pager);
        self.keywords(
            "Key words: ",
            &thesis.keywords_en,
            "; ",
            "<w:rPr><w:b/><w:bCs/></w:rPr>",
        );
    }

    /// The chapters, then 参考文献 and 致谢.
    fn body(&mut self, thesis: &Thesis) {
        let mut pager = Pager::new();
        let mut numbers = Numbers::default();
        for heading in &thesis.body {
            let level = heading.level.clamp(1, 3);
            if level == 1 && !self.short {
                // Chapters start on a new page (page break before, in the style).
                pager.new_page();
            }
            let number = numbers.next(level);
            let title = match self.short {
                true => format!(
                    "{}、{}",
                    chinese_number(numbers.0[0]),
                    one_line(&heading.title)
                ),
                false => one_line(&heading.title),
            };
            let anchor = self.heading(&format!("Heading{level}"), &title);
            // A heading is kept with the first line after it.
            let page = pager.place(if level == 1 { 3.0 } else { 2.0 } + 1.0);
            pager.used -= 1.0;
            self.toc.push(TocEntry {
                level,
                text: format!("{number} {title}").trim_end().to_string(),
                anchor,
                page: page.to_string(),
            });
            for block in &heading.blocks {
                match block {
                    Block::Paragraph(text) => self.body_text(text, true, &mut pager),
                    Block::Table {
                        caption,
                        header,
                        rows,
                    } => self.table(caption, header, rows, &mut pager),
                    Block::Figure {
                        caption,
                        image,
                        width,
                        height,
                    } => self.figure(caption, image, (*width, *height), &mut pager),
                }
            }
        }

        if !self.short {
            pager.new_page();
        }
        self.unnumbered("参考文献", pager.page.to_string());
        pager.add(3.0);
        for (n, reference) in thesis.references.iter().enumerate() {
            let text = format!("[{}] {}", n + 1, one_line(reference));
            pager.add(wrapped(width(&text), SMALL_CHARS_PER_LINE) * SMALL_LINE);
            self.xml
                .push_str(&para("ReferenceEntry", "", &run(text.trim_end(), "")));
        }

        if !thesis.acknowledgements.trim().is_empty() {
            pager.new_page();
            self.unnumbered("致  谢", pager.page.to_string());
            pager.add(3.0);
            self.body_text(&thesis.acknowledgements, false, &mut pager);
        }
    }

    /// A picture as an inline drawing, at most the text's width and 9 cm high, its numbered
    /// caption below. Anything but a PNG or JPEG is left out (a viewer could not draw it).
    fn figure(
        &mut self,
        caption: &str,
        image: &[u8],
        (width, height): (u32, u32),
        pager: &mut Pager,
    ) {
        let Some(ext) = crate::picture_format(image) else {
            return;
        };
        if width == 0 || height == 0 {
            return;
        }
        self.figures.push((ext, image.to_vec()));
        let n = self.figures.len();
        // EMU: a twip is 635; 9 cm is 3,240,000.
        let max_w = f64::from(TEXT_W) * 635.0;
        let scale = (max_w / f64::from(width)).min(3_240_000.0 / f64::from(height));
        let (cx, cy) = (
            (f64::from(width) * scale) as u64,
            (f64::from(height) * scale) as u64,
        );
        let a = "http://schemas.openxmlformats.org/drawingml/2006/main";
        let pic = "http://schemas.openxmlformats.org/drawingml/2006/picture";
        let _ = write!(
            self.xml,
            r#"<w:p><w:pPr><w:keepNext/><w:spacing w:before="120" w:after="0"/><w:ind w:firstLine="0"/><w:jc w:val="center"/></w:pPr><w:r><w:drawing><wp:inline distT="0" distB="0" distL="0" distR="0"><wp:extent cx="{cx}" cy="{cy}"/><wp:docPr id="{n}" name="图片 {n}"/><wp:cNvGraphicFramePr><a:graphicFrameLocks xmlns:a="{a}" noChangeAspect="1"/></wp:cNvGraphicFramePr><a:graphic xmlns:a="{a}"><a:graphicData uri="{pic}"><pic:pic xmlns:pic="{pic}"><pic:nvPicPr><pic:cNvPr id="{n}" name="figure{n}.{ext}"/><pic:cNvPicPr/></pic:nvPicPr><pic:blipFill><a:blip r:embed="{}"/><a:stretch><a:fillRect/></a:stretch></pic:blipFill><pic:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="{cx}" cy="{cy}"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></pic:spPr></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>"#,
            figure_rel(n)
        );
        let caption = format!("图{n} {}", one_line(caption));
        self.xml
            .push_str(&para("Caption", "", &run(caption.trim_end(), "")));
        // A line is about 0.8 cm of the page.
        pager.add(cy as f32 / 288_000.0 + 1.5);
    }

    /// A three-line table with its numbered caption above: rules above and below the table and
    /// under the header row, none between columns. Direct borders rather than a table style, as
    /// LibreOffice applies table styles only in part.
    fn table(&mut self, caption: &str, header: &[String], rows: &[Vec<String>], pager: &mut Pager) {
        self.tables = self.tables.saturating_add(1);
        let caption = format!("表{} {}", self.tables, one_line(caption));
        self.xml
            .push_str(&para("Caption", "", &run(caption.trim_end(), "")));
        pager.add(1.0);

        let columns = rows
            .iter()
            .map(Vec::len)
            .chain([header.len()])
            .max()
            .unwrap_or(0);
        if columns == 0 {
            // Word refuses a table without cells.
            return;
        }
        let column_w = (TEXT_W / u32::try_from(columns).unwrap_or(u32::MAX)).max(1);
        let rule = |side: &str, size: u32| {
            format!(r#"<w:{side} w:val="single" w:sz="{size}" w:space="0" w:color="000000"/>"#)
        };
        let _ = write!(
            self.xml,
            r#"<w:tbl><w:tblPr><w:tblW w:w="5000" w:type="pct"/><w:jc w:val="center"/><w:tblBorders>{}<w:left w:val="nil"/>{}<w:right w:val="nil"/><w:insideH w:val="nil"/><w:insideV w:val="nil"/></w:tblBorders><w:tblLayout w:type="autofit"/><w:tblCellMar><w:left w:w="108" w:type="dxa"/><w:right w:w="108" w:type="dxa"/></w:tblCellMar></w:tblPr><w:tblGrid>"#,
            rule("top", 12),
            rule("bottom", 12)
        );
        for _ in 0..columns {
            let _ = write!(self.xml, r#"<w:gridCol w:w="{column_w}"/>"#);
        }
        self.xml.push_str("</w:tblGrid>");

        let cell_chars = (SMALL_CHARS_PER_LINE / columns as f32).max(1.0);
        let row = |xml: &mut String, cells: &[String], is_header: bool| {
            xml.push_str("<w:tr>");
            if is_header {
                // Repeated at the top of each page the table runs onto.
                xml.push_str("<w:trPr><w:tblHeader/></w:trPr>");
            }
            let mut tallest: f32 = 1.0;
            for k in 0..columns {
                let text = cells.get(k).map(String::as_str).unwrap_or("");
                let borders = if is_header {
                    format!("<w:tcBorders>{}</w:tcBorders>", rule("bottom", 6))
                } else {
                    String::new()
                };
                let _ = write!(
                    xml,
                    r#"<w:tc><w:tcPr><w:tcW w:w="{column_w}" w:type="dxa"/>{borders}<w:vAlign w:val="center"/></w:tcPr>"#
                );
                let mut any = false;
                let mut cell_lines = 0.0;
                for line in lines(text) {
                    any = true;
                    xml.push_str(&para("TableText", "", &run(line, "")));
                    cell_lines += wrapped(width(line), cell_chars);
                }
                if !any {
                    // A cell must hold a paragraph.
                    xml.push_str(&para("TableText", "", ""));
                }
                tallest = tallest.max(cell_lines);
                xml.push_str("</w:tc>");
            }
            xml.push_str("</w:tr>");
            tallest * 0.7
        };
        let mut lines_taken = 0.0;
        if !header.is_empty() {
            lines_taken += row(&mut self.xml, header, true);
        }
        for cells in rows {
            lines_taken += row(&mut self.xml, cells, false);
        }
        self.xml.push_str("</w:tbl>");
        pager.add(lines_taken + 0.5);
    }
}

/// The cover: school, kind of paper, title and a centred block of the student's details, whose
/// values sit on a rule so an empty one prints as a blank to fill in.
fn cover(c: &Cover) -> String {
    let mut xml = String::new();
    let centred = |text: &str, half_points: u32, before: u32, after: u32| {
        para(
            "",
            &format!(
                r#"<w:spacing w:before="{before}" w:after="{after}" w:line="240" w:lineRule="auto"/><w:jc w:val="center"/>"#
            ),
            &run(text, &hei_bold(Some(half_points))),
        )
    };
    // 小一 and 一号.
    xml.push_str(&centred(&one_line(&c.school), 48, 1200, 240));
    let kind = one_line(&c.kind_label);
    let kind = if kind.is_empty() {
        "毕业论文"
    } else {
        &kind
    };
    xml.push_str(&centred(kind, 52, 240, 1200));
    xml.push_str(&para("Title", "", &run(&one_line(&c.title), "")));

    const LABEL_W: u32 = 2000;
    const VALUE_W: u32 = 4600;
    let _ = write!(
        xml,
        r#"<w:tbl><w:tblPr><w:tblW w:w="{}" w:type="dxa"/><w:jc w:val="center"/><w:tblBorders><w:top w:val="nil"/><w:left w:val="nil"/><w:bottom w:val="nil"/><w:right w:val="nil"/><w:insideH w:val="nil"/><w:insideV w:val="nil"/></w:tblBorders><w:tblLayout w:type="fixed"/></w:tblPr><w:tblGrid><w:gridCol w:w="{LABEL_W}"/><w:gridCol w:w="{VALUE_W}"/></w:tblGrid>"#,
        LABEL_W + VALUE_W
    );
    let single = r#"<w:spacing w:before="0" w:after="0" w:line="240" w:lineRule="auto"/>"#;
    for (label, value) in [
        ("专业：", &c.major),
        ("姓名：", &c.name),
        ("学号：", &c.student_number),
        ("指导教师：", &c.supervisor),
        ("日期：", &c.date),
    ] {
        // Labels spread to one width (专    业：), values centred on a rule; 小三.
        let _ = write!(
            xml,
            r#"<w:tr><w:trPr><w:trHeight w:val="680"/></w:trPr><w:tc><w:tcPr><w:tcW w:w="{LABEL_W}" w:type="dxa"/><w:vAlign w:val="bottom"/></w:tcPr>{}</w:tc><w:tc><w:tcPr><w:tcW w:w="{VALUE_W}" w:type="dxa"/><w:tcBorders><w:bottom w:val="single" w:sz="6" w:space="0" w:color="000000"/></w:tcBorders><w:vAlign w:val="bottom"/></w:tcPr>{}</w:tc></w:tr>"#,
            para(
                "",
                &format!(r#"{single}<w:jc w:val="distribute"/>"#),
                &run(label, &hei_bold(Some(30)))
            ),
            para(
                "",
                &format!(r#"{single}<w:jc w:val="center"/>"#),
                &run(&one_line(value), &format!("<w:rPr>{}</w:rPr>", size(30)))
            ),
        );
    }
    xml.push_str("</w:tbl>");
    // The cover's own section: no header, no footer, no page number.
    let _ = write!(xml, "<w:p><w:pPr>{}</w:pPr></w:p>", sect_pr("", ""));
    xml
}

/// Section properties: A4 with the thesis margins, then `refs` (header and footer references)
/// first and `numbering` (a `w:pgNumType`) where the schema wants them.
fn sect_pr(refs: &str, numbering: &str) -> String {
    format!(
        r#"<w:sectPr>{refs}<w:pgSz w:w="{PAGE_W}" w:h="{PAGE_H}"/><w:pgMar w:top="{MARGIN_TB}" w:right="{MARGIN_LR}" w:bottom="{MARGIN_TB}" w:left="{MARGIN_LR}" w:header="{HEADER_AT}" w:footer="{FOOTER_AT}" w:gutter="0"/>{numbering}<w:cols w:space="425"/></w:sectPr>"#
    )
}

/// The TOC field. Its cached result holds one paragraph per entry, so the contents show before
/// Word updates the field, and LibreOffice (which keeps the cached result) shows them as they are.
fn toc(entries: &[TocEntry]) -> String {
    let begin = r#"<w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText xml:space="preserve"> TOC \o "1-3" \h \z \u </w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r>"#;
    let end = r#"<w:r><w:fldChar w:fldCharType="end"/></w:r>"#;
    let mut xml = String::new();
    for (i, entry) in entries.iter().enumerate() {
        let content = format!(
            r#"{}<w:hyperlink w:anchor="{}" w:history="1">{}<w:r><w:tab/></w:r>{}</w:hyperlink>"#,
            if i == 0 { begin } else { "" },
            entry.anchor,
            run(&entry.text, ""),
            run(&entry.page, "")
        );
        xml.push_str(&para(&format!("TOC{}", entry.level), "", &content));
    }
    if entries.is_empty() {
        xml.push_str(&para("", "", &format!("{begin}{end}")));
    } else {
        // Word ends the field in a paragraph of its own.
        xml.push_str(&para("", "", end));
    }
    xml
}

/// The body part, and the pictures its figures show.
fn document(thesis: &Thesis) -> (String, Vec<(&'static str, Vec<u8>)>) {
    let mut writer = Writer {
        short: thesis.short_form,
        ..Writer::default()
    };
    if !thesis.short_form {
        writer.abstracts(thesis);
    }
    let abstracts = std::mem::take(&mut writer.xml);
    writer.body(thesis);
    let body = std::mem::take(&mut writer.xml);

    let mut xml = format!(
        r#"{XML_HEAD}
<w:document xmlns:w="{W_NS}" xmlns:r="{R_NS}" xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"><w:body>"#
    );
    xml.push_str(&cover(&thesis.cover));
    if !thesis.short_form {
        xml.push_str(&abstracts);
        xml.push_str(&para("TOCHeading", "", &run("目  录", "")));
        xml.push_str(&toc(&writer.toc));
    }
    // Front matter: footer page numbers I, II, … from I; no header.
    let _ = write!(
        xml,
        "<w:p><w:pPr>{}</w:pPr></w:p>",
        sect_pr(
            r#"<w:footerReference w:type="default" r:id="rId6"/>"#,
            r#"<w:pgNumType w:fmt="upperRoman" w:start="1"/>"#
        )
    );
    xml.push_str(&body);
    // Body: the title in the header, page numbers 1, 2, … from 1.
    xml.push_str(&sect_pr(
        r#"<w:headerReference w:type="default" r:id="rId5"/><w:footerReference w:type="default" r:id="rId7"/>"#,
        r#"<w:pgNumType w:fmt="decimal" w:start="1"/>"#,
    ));
    xml.push_str("</w:body></w:document>");
    (xml, writer.figures)
}

fn header(title: &str) -> String {
    format!(
        r#"{XML_HEAD}
<w:hdr xmlns:w="{W_NS}" xmlns:r="{R_NS}">{}</w:hdr>"#,
        para("Header", "", &run(title, ""))
    )
}

/// A footer with the page number, centred; `format` is a PAGE field switch and `cached` the number
/// shown before the field is computed.
fn footer(format: &str, cached: &str) -> String {
    format!(
        r#"{XML_HEAD}
<w:ftr xmlns:w="{W_NS}" xmlns:r="{R_NS}">{}</w:ftr>"#,
        para(
            "Footer",
            "",
            &format!(
                r#"<w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText xml:space="preserve"> PAGE {format}</w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>{cached}</w:t></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r>"#
            )
        )
    )
}

/// The styles of a Chinese thesis. Normal is 宋体 小四 (Latin in Times New Roman), 1.5 lines,
/// justified, without indent; body text ("Body Text") adds the two-character first-line indent,
/// so headings, captions, table cells and references inherit no indent to undo.
fn styles() -> String {
    let hei = |half_points: u32| format!("{}<w:b/><w:bCs/>{}", fonts("黑体"), size(half_points));
    let paragraph = |id: &str, name: &str, next: &str, extra: &str, ppr: &str, rpr: &str| {
        let next = if next.is_empty() {
            String::new()
        } else {
            format!(r#"<w:next w:val="{next}"/>"#)
        };
        format!(
            r#"<w:style w:type="paragraph" w:styleId="{id}"><w:name w:val="{name}"/><w:basedOn w:val="Normal"/>{next}{extra}<w:pPr>{ppr}</w:pPr><w:rPr>{rpr}</w:rPr></w:style>"#
        )
    };
    let heading = |level: u8, ppr_before_num: &str, spacing: &str, jc: &str, half_points: u32| {
        paragraph(
            &format!("Heading{level}"),
            &format!("heading {level}"),
            "BodyText",
            r#"<w:uiPriority w:val="9"/><w:qFormat/>"#,
            &format!(
                r#"<w:keepNext/><w:keepLines/>{ppr_before_num}<w:numPr><w:ilvl w:val="{}"/><w:numId w:val="1"/></w:numPr>{spacing}<w:ind w:left="0" w:firstLine="0"/><w:jc w:val="{jc}"/><w:outlineLvl w:val="{}"/>"#,
                level - 1,
                level - 1
            ),
            &hei(half_points),
        )
    };
    let toc_level = |level: u8| {
        let indent = u32::from(level - 1) * 480;
        paragraph(
            &format!("TOC{level}"),
            &format!("toc {level}"),
            "Normal",
            r#"<w:uiPriority w:val="39"/>"#,
            &format!(
                r#"<w:tabs><w:tab w:val="right" w:leader="dot" w:pos="{TEXT_W}"/></w:tabs><w:spacing w:before="0" w:after="0"/><w:ind w:left="{indent}"/><w:jc w:val="left"/>"#
            ),
            "",
        )
    };
    let chapter_like = r#"<w:spacing w:before="240" w:after="360"/>"#;

    let mut xml = format!(
        r#"{XML_HEAD}
<w:styles xmlns:w="{W_NS}"><w:docDefaults><w:rPrDefault><w:rPr>{}{}<w:lang w:val="en-US" w:eastAsia="zh-CN" w:bidi="ar-SA"/></w:rPr></w:rPrDefault><w:pPrDefault><w:pPr/></w:pPrDefault></w:docDefaults>"#,
        fonts("宋体"),
        size(24)
    );
    let _ = write!(
        xml,
        r#"<w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/><w:qFormat/><w:pPr><w:widowControl/><w:spacing w:line="360" w:lineRule="auto"/><w:jc w:val="both"/></w:pPr><w:rPr>{}{}</w:rPr></w:style>"#,
        fonts("宋体"),
        size(24)
    );
    xml.push_str(r#"<w:style w:type="character" w:default="1" w:styleId="DefaultParagraphFont"><w:name w:val="Default Paragraph Font"/><w:uiPriority w:val="1"/><w:semiHidden/><w:unhideWhenUsed/></w:style><w:style w:type="table" w:default="1" w:styleId="TableNormal"><w:name w:val="Normal Table"/><w:uiPriority w:val="99"/><w:semiHidden/><w:unhideWhenUsed/><w:tblPr><w:tblInd w:w="0" w:type="dxa"/><w:tblCellMar><w:top w:w="0" w:type="dxa"/><w:left w:w="108" w:type="dxa"/><w:bottom w:w="0" w:type="dxa"/><w:right w:w="108" w:type="dxa"/></w:tblCellMar></w:tblPr></w:style>"#);
    for style in [
        paragraph(
            "BodyText",
            "Body Text",
            "BodyText",
            "<w:qFormat/>",
            r#"<w:spacing w:before="0" w:after="0"/><w:ind w:firstLineChars="200" w:firstLine="480"/>"#,
            "",
        ),
        // The cover title: 黑体 二号. No outline level, so the contents leave it out.
        paragraph(
            "Title",
            "Title",
            "Normal",
            r#"<w:uiPriority w:val="10"/><w:qFormat/>"#,
            r#"<w:spacing w:before="480" w:after="1200" w:line="240" w:lineRule="auto"/><w:jc w:val="center"/>"#,
            &hei(44),
        ),
        heading(1, "<w:pageBreakBefore/>", chapter_like, "center", 32),
        heading(
            2,
            "",
            r#"<w:spacing w:before="240" w:after="120"/>"#,
            "left",
            28,
        ),
        heading(
            3,
            "",
            r#"<w:spacing w:before="120" w:after="120"/>"#,
            "left",
            24,
        ),
        // 摘要, Abstract, 参考文献, 致谢: a chapter's look, no number, listed in the contents.
        paragraph(
            "UnnumberedHeading",
            "Unnumbered Heading",
            "BodyText",
            r#"<w:uiPriority w:val="9"/><w:qFormat/>"#,
            &format!(
                r#"<w:keepNext/><w:keepLines/><w:pageBreakBefore/>{chapter_like}<w:jc w:val="center"/><w:outlineLvl w:val="0"/>"#
            ),
            &hei(32),
        ),
        // 目录: a chapter's look, body-text outline level, so the contents leave it out.
        paragraph(
            "TOCHeading",
            "TOC Heading",
            "Normal",
            r#"<w:uiPriority w:val="39"/><w:qFormat/>"#,
            &format!(
                r#"<w:keepNext/><w:keepLines/><w:pageBreakBefore/>{chapter_like}<w:jc w:val="center"/><w:outlineLvl w:val="9"/>"#
            ),
            &hei(32),
        ),
        toc_level(1),
        toc_level(2),
        toc_level(3),
        // 黑体 五号, centred, kept with its table.
        paragraph(
            "Caption",
            "caption",
            "BodyText",
            r#"<w:uiPriority w:val="35"/><w:qFormat/>"#,
            r#"<w:keepNext/><w:spacing w:before="120" w:after="60" w:line="240" w:lineRule="auto"/><w:jc w:val="center"/>"#,
            &format!("{}{}", fonts("黑体"), size(21)),
        ),
        paragraph(
            "TableText",
            "Table Text",
            "",
            "",
            r#"<w:spacing w:before="0" w:after="0" w:line="240" w:lineRule="auto"/><w:jc w:val="center"/>"#,
            &size(21),
        ),
        // [n] entries in 五号, continuation lines under the text.
        paragraph(
            "ReferenceEntry",
            "Reference Entry",
            "ReferenceEntry",
            "",
            r#"<w:spacing w:before="0" w:after="0"/><w:ind w:left="420" w:hanging="420"/>"#,
            &size(21),
        ),
        // 宋体 五号 over a rule.
        paragraph(
            "Header",
            "header",
            "",
            r#"<w:uiPriority w:val="99"/><w:unhideWhenUsed/>"#,
            r#"<w:pBdr><w:bottom w:val="single" w:sz="6" w:space="1" w:color="auto"/></w:pBdr><w:spacing w:line="240" w:lineRule="auto"/><w:jc w:val="center"/>"#,
            &size(21),
        ),
        paragraph(
            "Footer",
            "footer",
            "",
            r#"<w:uiPriority w:val="99"/><w:unhideWhenUsed/>"#,
            r#"<w:spacing w:line="240" w:lineRule="auto"/><w:jc w:val="center"/>"#,
            &size(18),
        ),
    ] {
        xml.push_str(&style);
    }
    xml.push_str("</w:styles>");
    xml
}

/// One multilevel list for Heading 1–3: 第1章, 1.1, 1.1.1. `w:isLgl` keeps the lower levels in
/// Arabic numbers whatever the chapter level shows (a template may switch it to 第一章).
fn numbering() -> String {
    let level = |ilvl: u8, text: &str, legal: bool| {
        format!(
            r#"<w:lvl w:ilvl="{ilvl}"><w:start w:val="1"/><w:numFmt w:val="decimal"/><w:pStyle w:val="Heading{}"/>{}<w:suff w:val="space"/><w:lvlText w:val="{text}"/><w:lvlJc w:val="left"/><w:pPr><w:ind w:left="0" w:firstLine="0"/></w:pPr></w:lvl>"#,
            ilvl + 1,
            if legal { "<w:isLgl/>" } else { "" }
        )
    };
    format!(
        r#"{XML_HEAD}
<w:numbering xmlns:w="{W_NS}"><w:abstractNum w:abstractNumId="0"><w:nsid w:val="5E4A3C21"/><w:multiLevelType w:val="multilevel"/><w:tmpl w:val="7B2D9A10"/>{}{}{}</w:abstractNum><w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num></w:numbering>"#,
        level(0, "第%1章", false),
        level(1, "%1.%2", true),
        level(2, "%1.%2.%3", true)
    )
}

fn settings() -> String {
    format!(
        r#"{XML_HEAD}
<w:settings xmlns:w="{W_NS}"><w:zoom w:percent="100"/><w:defaultTabStop w:val="420"/><w:characterSpacingControl w:val="compressPunctuation"/><w:updateFields w:val="true"/><w:compat><w:useFELayout/><w:compatSetting w:name="compatibilityMode" w:uri="http://schemas.microsoft.com/office/word" w:val="15"/></w:compat><w:themeFontLang w:val="en-US" w:eastAsia="zh-CN"/></w:settings>"#
    )
}

/// The Chinese fonts with their Latin names, for systems that know them only by those.
fn font_table() -> String {
    format!(
        r#"{XML_HEAD}
<w:fonts xmlns:w="{W_NS}"><w:font w:name="宋体"><w:altName w:val="SimSun"/><w:panose1 w:val="02010600030101010101"/><w:charset w:val="86"/><w:family w:val="auto"/><w:pitch w:val="variable"/></w:font><w:font w:name="黑体"><w:altName w:val="SimHei"/><w:panose1 w:val="02010609060101010101"/><w:charset w:val="86"/><w:family w:val="modern"/><w:pitch w:val="fixed"/></w:font><w:font w:name="Times New Roman"><w:panose1 w:val="02020603050405020304"/><w:charset w:val="00"/><w:family w:val="roman"/><w:pitch w:val="variable"/></w:font></w:fonts>"#
    )
}

fn core_properties(cover: &Cover) -> String {
    format!(
        r#"{XML_HEAD}
<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" xmlns:dcmitype="http://purl.org/dc/dcmitype/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><dc:title>{}</dc:title><dc:creator>{}</dc:creator></cp:coreProperties>"#,
        escape(&one_line(&cover.title)),
        escape(&one_line(&cover.name))
    )
}

fn content_types() -> String {
    let main = "application/vnd.openxmlformats-officedocument.wordprocessingml";
    format!(
        r#"{XML_HEAD}
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Default Extension="png" ContentType="image/png"/><Default Extension="jpeg" ContentType="image/jpeg"/><Override PartName="/word/document.xml" ContentType="{main}.document.main+xml"/><Override PartName="/word/styles.xml" ContentType="{main}.styles+xml"/><Override PartName="/word/numbering.xml" ContentType="{main}.numbering+xml"/><Override PartName="/word/settings.xml" ContentType="{main}.settings+xml"/><Override PartName="/word/fontTable.xml" ContentType="{main}.fontTable+xml"/><Override PartName="/word/header1.xml" ContentType="{main}.header+xml"/><Override PartName="/word/footer1.xml" ContentType="{main}.footer+xml"/><Override PartName="/word/footer2.xml" ContentType="{main}.footer+xml"/><Override PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.core-properties+xml"/><Override PartName="/docProps/app.xml" ContentType="application/vnd.openxmlformats-officedocument.extended-properties+xml"/></Types>"#
    )
}

const ROOT_RELS: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" Target="docProps/core.xml"/><Relationship Id="rId3" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/extended-properties" Target="docProps/app.xml"/></Relationships>"#;

/// rId5 (header) and rId6, rId7 (front and body footers) are what the sections refer to.
const DOCUMENT_RELS: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/numbering" Target="numbering.xml"/><Relationship Id="rId3" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/settings" Target="settings.xml"/><Relationship Id="rId4" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/fontTable" Target="fontTable.xml"/><Relationship Id="rId5" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/header" Target="header1.xml"/><Relationship Id="rId6" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/footer" Target="footer1.xml"/><Relationship Id="rId7" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/footer" Target="footer2.xml"/></Relationships>"#;

const APP_PROPERTIES: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties" xmlns:vt="http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes"><Application>Wenjian</Application><DocSecurity>0</DocSecurity></Properties>"#;

/// The bytes of a .docx holding `thesis` in Chinese thesis form.
pub fn write_thesis_docx(thesis: &Thesis) -> Result<Vec<u8>, std::io::Error> {
    let title = one_line(&thesis.cover.title);
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    let (body, figures) = document(thesis);
    let mut document_rels = DOCUMENT_RELS.replace("</Relationships>", "");
    for (k, (ext, _)) in figures.iter().enumerate() {
        let _ = write!(
            document_rels,
            r#"<Relationship Id="{}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="media/figure{}.{ext}"/>"#,
            figure_rel(k + 1),
            k + 1
        );
    }
    document_rels.push_str("</Relationships>");
    for (k, (ext, bytes)) in figures.iter().enumerate() {
        zip.start_file(format!("word/media/figure{}.{ext}", k + 1), options)?;
        zip.write_all(bytes)?;
    }
    for (name, content) in [
        ("[Content_Types].xml", content_types()),
        ("_rels/.rels", ROOT_RELS.to_string()),
        ("word/document.xml", body),
        ("word/_rels/document.xml.rels", document_rels),
        ("word/styles.xml", styles()),
        ("word/numbering.xml", numbering()),
        ("word/settings.xml", settings()),
        ("word/fontTable.xml", font_table()),
        ("word/header1.xml", header(&title)),
        ("word/footer1.xml", footer(r"\* ROMAN ", "I")),
        ("word/footer2.xml", footer("", "1")),
        ("docProps/core.xml", core_properties(&thesis.cover)),
        ("docProps/app.xml", APP_PROPERTIES.to_string()),
    ] {
        zip.start_file(name, options)?;
        zip.write_all(content.as_bytes())?;
    }
    Ok(zip.finish()?.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Format, Limits, extract};
    use proptest::prelude::*;
    use quick_xml::events::Event;
    use std::collections::BTreeMap;
    use std::io::Read;

    fn sample() -> Thesis {
        let p = |text: &str| Block::Paragraph(text.into());
        let heading = |level: u8, title: &str, blocks: Vec<Block>| Heading {
            level,
            title: title.into(),
            blocks,
        };
        Thesis {
            cover: Cover {
                title: "基于深度学习的图像识别方法研究".into(),
                school: "某某大学".into(),
                major: "计算机科学与技术".into(),
                name: "张三".into(),
                student_number: "20200001".into(),
                supervisor: String::new(),
                date: "2024年5月".into(),
                kind_label: "本科毕业论文".into(),
            },
            abstract_zh: "本文研究图像识别问题。\n　　第二段摘要 <说明> & “引号”。".into(),
            keywords_zh: vec!["深度学习".into(), "图像识别".into(), "卷积神经网络".into()],
            abstract_en: "This thesis studies image recognition with deep learning.".into(),
            keywords_en: vec!["deep learning".into(), "image recognition".into()],
            body: vec![
                heading(
                    1,
                    "绪论",
                    vec![p(
                        "图像识别是计算机视觉的核心任务[1]。已有研究[2,3]表明深度模型效果显著。\n第二段在 2024 年[2024]发表。",
                    )],
                ),
                heading(2, "研究背景", vec![p("背景介绍[2-3]。")]),
                heading(3, "国内研究现状", vec![p("国内现状。")]),
                heading(2, "研究内容", vec![p("研究内容。")]),
                heading(
                    1,
                    "相关技术",
                    vec![
                        p("实验环境见表1。"),
                        Block::Table {
                            caption: "实验环境".into(),
                            header: vec!["项目".into(), "配置".into()],
                            rows: vec![vec!["CPU".into(), "Intel i7".into()], vec!["GPU".into()]],
                        },
                    ],
                ),
                heading(1, "实验与分析", vec![p("结果分析[3]。")]),
            ],
            references: vec![
                "王五. 深度学习[M]. 北京: 科学出版社, 2020.".into(),
                "LECUN Y, BENGIO Y, HINTON G. Deep learning[J]. Nature, 2015, 521(7553): 436-444."
                    .into(),
                "赵六. 图像识别综述[J]. 计算机学报, 2021, 44(1): 1-20.".into(),
            ],
            acknowledgements: "感谢导师的悉心指导。".into(),
            short_form: false,
        }
    }

    const PARTS: [&str; 13] = [
        "[Content_Types].xml",
        "_rels/.rels",
        "word/document.xml",
        "word/_rels/document.xml.rels",
        "word/styles.xml",
        "word/numbering.xml",
        "word/settings.xml",
        "word/fontTable.xml",
        "word/header1.xml",
        "word/footer1.xml",
        "word/footer2.xml",
        "docProps/core.xml",
        "docProps/app.xml",
    ];

    fn unzip(bytes: &[u8]) -> BTreeMap<String, String> {
        let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
        let mut parts = BTreeMap::new();
        for i in 0..archive.len() {
            let mut file = archive.by_index(i).unwrap();
            let mut text = String::new();
            file.read_to_string(&mut text).unwrap();
            parts.insert(file.name().to_string(), text);
        }
        parts
    }

    /// Parses a part fully: one root, matching tags, valid entities in text and attributes, and
    /// only characters XML 1.0 allows.
    fn assert_well_formed(name: &str, xml: &str) {
        assert!(
            xml.chars().all(|c| matches!(c,
                '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)),
            "{name}: a character XML 1.0 cannot carry"
        );
        let mut reader = quick_xml::Reader::from_str(xml);
        let (mut depth, mut roots) = (0i64, 0);
        loop {
            match reader.read_event() {
                Err(e) => panic!("{name}: {e}"),
                Ok(Event::Eof) => break,
                Ok(Event::Start(e)) => {
                    check_attributes(name, &e);
                    roots += i32::from(depth == 0);
                    depth += 1;
                }
                Ok(Event::Empty(e)) => {
                    check_attributes(name, &e);
                    roots += i32::from(depth == 0);
                }
                Ok(Event::End(_)) => depth -= 1,
                Ok(Event::Text(t)) => {
                    let text = t.unescape().unwrap_or_else(|e| panic!("{name}: {e}"));
                    assert!(
                        depth > 0 || text.trim().is_empty(),
                        "{name}: text outside the root"
                    );
                }
                Ok(_) => {}
            }
        }
        assert_eq!(depth, 0, "{name}: unclosed elements");
        assert_eq!(roots, 1, "{name}: one root element");
    }

    fn check_attributes(name: &str, e: &quick_xml::events::BytesStart<'_>) {
        for attr in e.attributes() {
            let attr = attr.unwrap_or_else(|e| panic!("{name}: {e}"));
            attr.unescape_value()
                .unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }

    #[test]
    fn citations_are_cut_out() {
        assert_eq!(
            citation_pieces("见[1]和[2-4]，[2,3]。"),
            vec![
                ("见", false),
                ("[1]", true),
                ("和", false),
                ("[2-4]", true),
                ("，", false),
                ("[2,3]", true),
                ("。", false)
            ]
        );
        assert_eq!(citation_pieces("[1]"), vec![("[1]", true)]);
        assert_eq!(
            citation_pieces("［12］末"),
            vec![("［12］", true), ("末", false)]
        );
        for plain in ["[2024]", "[a]", "[]", "[ ]", "[1", "x[J]. 2020", "[,1]"] {
            assert!(
                citation_pieces(plain).iter().all(|(_, cite)| !cite),
                "{plain}"
            );
        }
        assert_eq!(citation_pieces("[[1]"), vec![("[", false), ("[1]", true)]);
    }

    #[test]
    fn numbers_and_roman_numerals() {
        let mut n = Numbers::default();
        let got: Vec<String> = [1, 2, 3, 3, 2, 1, 2, 3]
            .into_iter()
            .map(|l| n.next(l))
            .collect();
        assert_eq!(
            got,
            [
                "第1章", "1.1", "1.1.1", "1.1.2", "1.2", "第2章", "2.1", "2.1.1"
            ]
        );
        assert_eq!(
            (1..=10).map(roman).collect::<Vec<_>>(),
            ["I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X"]
        );
        assert_eq!(roman(1994), "MCMXCIV");
        assert_eq!(roman(0), "0");
    }

    #[test]
    fn pages_are_estimated() {
        let mut pager = Pager::new();
        pager.add(LINES_PER_PAGE);
        assert_eq!(pager.page, 1);
        pager.add(0.5);
        assert_eq!(pager.page, 2);
        pager.add(LINES_PER_PAGE * 3.0);
        assert_eq!(pager.page, 5);
        pager.new_page();
        assert_eq!((pager.page, pager.used), (6, 0.0));
        pager.new_page();
        assert_eq!(pager.page, 6);
        pager.add(f32::MAX);
        assert_eq!(pager.page, u32::MAX);
    }

    #[test]
    fn a_sample_thesis_has_every_part_and_the_thesis_form() {
        let thesis = sample();
        let bytes = write_thesis_docx(&thesis).unwrap();
        let parts = unzip(&bytes);
        for name in PARTS {
            let part = parts.get(name).unwrap_or_else(|| panic!("{name} missing"));
            assert_well_formed(name, part);
        }
        let doc = &parts["word/document.xml"];

        // The TOC field, with its cached result listing the numbered headings.
        let instr = r#"<w:instrText xml:space="preserve"> TOC \o "1-3" \h \z \u </w:instrText>"#;
        assert!(doc.contains(instr));
        let separate = doc
            .find(r#"<w:fldChar w:fldCharType="separate"/>"#)
            .unwrap();
        let end = separate + doc[separate..].find(r#"w:fldCharType="end""#).unwrap();
        assert!(doc.find(instr).unwrap() < separate);
        let cached = &doc[separate..end];
        let mut last = 0;
        for entry in [
            "摘  要",
            "Abstract",
            "第1章 绪论",
            "1.1 研究背景",
            "1.1.1 国内研究现状",
            "1.2 研究内容",
            "第2章 相关技术",
            "第3章 实验与分析",
            "参考文献",
            "致  谢",
        ] {
            let at = cached
                .find(&format!(">{entry}</w:t>"))
                .unwrap_or_else(|| panic!("{entry} not in the contents"));
            assert!(at >= last, "{entry} out of order");
            last = at;
        }
        assert!(cached.contains(r#"<w:pStyle w:val="TOC1"/>"#));
        assert!(cached.contains(r#"<w:pStyle w:val="TOC2"/>"#));
        assert!(cached.contains(r#"<w:pStyle w:val="TOC3"/>"#));
        // Front matter pages in Roman numbers, the body from 1.
        assert!(cached.contains(r#"<w:t xml:space="preserve">I</w:t>"#));
        assert!(cached.contains(r#"<w:t xml:space="preserve">II</w:t>"#));
        assert!(cached.contains(r#"<w:t xml:space="preserve">1</w:t>"#));
        // Every link has its bookmark.
        for anchor in cached.split(r#"w:anchor=""#).skip(1) {
            let anchor = &anchor[..anchor.find('"').unwrap()];
            assert!(doc.contains(&format!(r#"w:name="{anchor}""#)), "{anchor}");
        }
        // The headings' own text carries no number: the list adds it.
        assert!(doc.contains(r#"<w:pStyle w:val="Heading1"/></w:pPr><w:bookmarkStart"#));
        assert!(!doc[end..].contains(">第1章"));

        // Three sections: cover, front matter (I, II, …), body (1, 2, …).
        let sections: Vec<&str> = doc.split("<w:sectPr>").skip(1).collect();
        assert_eq!(sections.len(), 3);
        assert!(
            !sections[0]
                .split("</w:sectPr>")
                .next()
                .unwrap()
                .contains("Reference")
        );
        assert!(!sections[0].contains("w:pgNumType"));
        assert!(sections[1].contains(r#"<w:pgNumType w:fmt="upperRoman" w:start="1"/>"#));
        assert!(sections[2].contains(r#"<w:pgNumType w:fmt="decimal" w:start="1"/>"#));
        assert!(sections[2].contains(r#"<w:headerReference w:type="default" r:id="rId5"/>"#));
        for section in &sections {
            assert!(section.contains(r#"<w:pgSz w:w="11906" w:h="16838"/>"#));
        }
        assert!(
            doc.trim_end()
                .ends_with("</w:sectPr></w:body></w:document>")
        );
        assert!(parts["word/header1.xml"].contains(&thesis.cover.title));
        assert!(parts["word/footer1.xml"].contains(r"PAGE \* ROMAN"));
        assert!(parts["word/footer2.xml"].contains("> PAGE </w:instrText>"));
        assert!(parts["docProps/core.xml"].contains(&thesis.cover.title));
        assert!(parts["word/settings.xml"].contains(r#"<w:updateFields w:val="true"/>"#));

        // Numbering: 第1章, 1.1, 1.1.1 in Arabic numbers, linked to the heading styles.
        let numbering = &parts["word/numbering.xml"];
        for text in ["第%1章", "%1.%2", "%1.%2.%3"] {
            assert!(numbering.contains(&format!(r#"<w:lvlText w:val="{text}"/>"#)));
        }
        assert_eq!(numbering.matches("<w:isLgl/>").count(), 2);
        let styles = &parts["word/styles.xml"];
        for level in 0..3 {
            assert!(styles.contains(&format!(
                r#"<w:numPr><w:ilvl w:val="{level}"/><w:numId w:val="1"/></w:numPr>"#
            )));
        }
        assert!(styles.contains(r#"w:eastAsia="黑体""#));
        assert!(styles.contains(r#"<w:ind w:firstLineChars="200" w:firstLine="480"/>"#));

        // Citations in superscript; a bracketed year stays text.
        for mark in ["[1]", "[2,3]", "[2-3]", "[3]"] {
            assert!(
                doc.contains(&format!(
                    r#"<w:rPr><w:vertAlign w:val="superscript"/></w:rPr><w:t xml:space="preserve">{mark}</w:t>"#
                )),
                "{mark}"
            );
        }
        assert!(doc.contains("[2024]"));
        assert!(!doc.contains(r#"superscript"/></w:rPr><w:t xml:space="preserve">[2024]"#));

        // A three-line table with its caption above and a header row; the short row is padded.
        assert!(doc.contains(">表1 实验环境</w:t>"));
        assert!(
            doc.find(">表1 实验环境").unwrap()
                < doc.find("<w:tbl><w:tblPr><w:tblW w:w=\"5000\"").unwrap()
        );
        assert!(doc.contains("<w:trPr><w:tblHeader/></w:trPr>"));
        assert_eq!(doc.matches("<w:tr>").count(), 5 + 3);
        assert!(doc.contains(r#"<w:top w:val="single" w:sz="12""#));

        // References numbered, acknowledgements present, user text escaped.
        assert!(doc.contains(">[1] 王五. 深度学习[M]. 北京: 科学出版社, 2020.</w:t>"));
        assert!(doc.contains(">[3] 赵六."));
        assert!(doc.contains("感谢导师的悉心指导。"));
        assert!(doc.contains("&lt;说明&gt; &amp; “引号”"));
        assert!(doc.contains("深度学习；图像识别；卷积神经网络"));
        assert!(doc.contains("deep learning; image recognition"));
    }

    #[test]
    fn the_reader_sees_the_title_and_the_headings() {
        let thesis = sample();
        let bytes = write_thesis_docx(&thesis).unwrap();
        let back = extract(&bytes, "论文.docx", &Limits::default()).unwrap();
        assert_eq!(back.format, Format::Docx);
        assert_eq!(back.title.as_deref(), Some(thesis.cover.title.as_str()));
        let lines: Vec<&str> = back.text.lines().collect();
        let headings: Vec<(&str, u8)> = back
            .headings
            .iter()
            .map(|h| (lines[h.line], h.level))
            .collect();
        for heading in &thesis.body {
            assert!(
                headings.contains(&(heading.title.as_str(), heading.level)),
                "{} not read as a heading: {headings:?}",
                heading.title
            );
        }
        for unnumbered in ["摘  要", "Abstract", "参考文献", "致  谢"] {
            assert!(headings.contains(&(unnumbered, 1)), "{unnumbered}");
        }
        // Nothing of the contents nor the field code is read as a heading.
        assert!(!headings.iter().any(|(text, _)| text.contains("第1章")));
        assert!(!back.text.contains("TOC \\o"));
        assert!(back.text.contains("图像识别是计算机视觉的核心任务[1]。"));
    }

    #[test]
    fn an_empty_thesis_is_still_a_document() {
        let bytes = write_thesis_docx(&Thesis::default()).unwrap();
        let parts = unzip(&bytes);
        for (name, xml) in &parts {
            assert_well_formed(name, xml);
        }
        let doc = &parts["word/document.xml"];
        assert!(doc.contains(">毕业论文</w:t>"));
        assert!(!doc.contains("致  谢"));
        assert!(extract(&bytes, "x.docx", &Limits::default()).is_ok());
    }

    /// Writes the sample for `scripts/verify-thesis-docx.py` to the path in `THESIS_SAMPLE_OUT`.
    #[test]
    #[ignore = "writes a file; run with THESIS_SAMPLE_OUT=path and --ignored"]
    fn write_the_sample() {
        if let Ok(path) = std::env::var("THESIS_SAMPLE_OUT") {
            std::fs::write(path, write_thesis_docx(&sample()).unwrap()).unwrap();
        }
    }

    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<String>(),
            r#"[\[\]［］0-9,\-\n\r\t 　中文a&<>"'\x00-\x08\u{FFFE}\u{FFFF}]{0,24}"#,
        ]
    }

    fn block() -> impl Strategy<Value = Block> {
        prop_oneof![
            text().prop_map(Block::Paragraph),
            (
                text(),
                proptest::collection::vec(text(), 0..4),
                proptest::collection::vec(proptest::collection::vec(text(), 0..4), 0..4)
            )
                .prop_map(|(caption, header, rows)| Block::Table {
                    caption,
                    header,
                    rows
                }),
        ]
    }

    fn thesis() -> impl Strategy<Value = Thesis> {
        let cover = (
            text(),
            text(),
            text(),
            text(),
            text(),
            text(),
            text(),
            text(),
        )
            .prop_map(
                |(title, school, major, name, student_number, supervisor, date, kind_label)| {
                    Cover {
                        title,
                        school,
                        major,
                        name,
                        student_number,
                        supervisor,
                        date,
                        kind_label,
                    }
                },
            );
        let heading = (
            any::<u8>(),
            text(),
            proptest::collection::vec(block(), 0..3),
        )
            .prop_map(|(level, title, blocks)| Heading {
                level,
                title,
                blocks,
            });
        (
            cover,
            text(),
            proptest::collection::vec(text(), 0..4),
            text(),
            proptest::collection::vec(text(), 0..4),
            proptest::collection::vec(heading, 0..6),
            proptest::collection::vec(text(), 0..4),
            text(),
            any::<bool>(),
        )
            .prop_map(
                |(
                    cover,
                    abstract_zh,
                    keywords_zh,
                    abstract_en,
                    keywords_en,
                    body,
                    references,
                    acknowledgements,
                    short_form,
                )| Thesis {
                    cover,
                    abstract_zh,
                    keywords_zh,
                    abstract_en,
                    keywords_en,
                    body,
                    references,
                    acknowledgements,
                    short_form,
                },
            )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Any text in any field makes a .docx whose every part is well-formed XML and that the
        /// reader opens.
        #[test]
        fn any_thesis_makes_well_formed_parts(thesis in thesis()) {
            let bytes = write_thesis_docx(&thesis).unwrap();
            let parts = unzip(&bytes);
            for name in PARTS {
                prop_assert!(parts.contains_key(name), "{} missing", name);
            }
            for (name, xml) in &parts {
                assert_well_formed(name, xml);
            }
            let doc = &parts["word/document.xml"];
            prop_assert_eq!(doc.matches("<w:sectPr>").count(), 3);
            prop_assert_eq!(doc.matches("<w:tbl>").count(), doc.matches("</w:tbl>").count());
            prop_assert!(extract(&bytes, "x.docx", &Limits::default()).is_ok());
        }
    }
}
