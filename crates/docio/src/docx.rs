//! .docx: the WordprocessingML parts of the zip — body paragraphs (with heading levels from the
//! paragraph style or outline level), table cells as paragraphs, then footnotes and endnotes.
//! Text comes from `w:t` only, so deleted revisions and field codes stay out; a tab or a line
//! break counts inside a run only (a paragraph's tab stops are not text).
//!
//! The reader and the editor (`docx_edit`) walk a part with the same [`Walker`] and turn its
//! paragraphs into lines with the same [`layout`], so a line of the extracted text can always be
//! traced back to the paragraph, and the characters of it, that it came from.

use crate::{DocError, Extracted, Format, Heading, Image, Limits, Table};
use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};
use std::borrow::Cow;
use std::io::Read;

pub(crate) fn corrupt(detail: impl Into<String>) -> DocError {
    DocError::Corrupt {
        kind: "Word（.docx）".into(),
        detail: detail.into(),
    }
}

/// A .docx held in memory.
pub(crate) type Archive<'b> = zip::ZipArchive<std::io::Cursor<&'b [u8]>>;

/// The parts read, in the order their lines appear: the body, then footnotes, then endnotes.
pub(crate) const PARTS: [&str; 3] = [
    "word/document.xml",
    "word/footnotes.xml",
    "word/endnotes.xml",
];

/// The heading line put before the notes of `PARTS[1]` and `PARTS[2]`.
const NOTE_TITLES: [&str; 3] = ["", "脚注", "尾注"];

/// One paragraph of a part as the reader counts it: every closing `w:p` (and every empty
/// `<w:p/>`) makes one, in document order, so a text box's paragraphs come before the paragraph
/// that holds them. Its text is made of the pieces (`w:t` elements, tabs and breaks in runs,
/// numbered in document order across the part) from `first_piece` on.
#[derive(Debug, Clone)]
pub(crate) struct Para {
    pub text: String,
    pub level: Option<u8>,
    pub first_piece: usize,
    pub pieces: usize,
}

/// What reading may still take: counted characters and paragraphs, shared by all parts.
struct Budget<'a> {
    limits: &'a Limits,
    chars: usize,
    paragraphs: usize,
}

impl Budget<'_> {
    fn paragraph(&mut self) -> Result<(), DocError> {
        self.paragraphs += 1;
        if self.paragraphs > self.limits.max_paragraphs {
            return Err(DocError::TooComplex {
                detail: format!("段落超过 {} 个", self.limits.max_paragraphs),
            });
        }
        Ok(())
    }

    fn text(&mut self, text: &str) -> Result<(), DocError> {
        self.chars += text.chars().filter(|c| !c.is_whitespace()).count();
        if self.chars > self.limits.max_chars {
            return Err(DocError::OverCharLimit {
                limit: self.limits.max_chars,
            });
        }
        Ok(())
    }
}

/// A part of a .docx being decompressed, stopped one byte past the part size limit.
pub(crate) type PartReader<'a, 'b> =
    std::io::Take<zip::read::ZipFile<'a, std::io::Cursor<&'b [u8]>>>;

/// A part's decompressed bytes as a stream that stops one byte past the part size limit, or
/// `None` when the zip has no such part.
pub(crate) fn open_part<'a, 'b>(
    archive: &'a mut Archive<'b>,
    name: &str,
    limit: u64,
) -> Result<Option<PartReader<'a, 'b>>, DocError> {
    let file = match archive.by_name(name) {
        Ok(f) => f,
        Err(zip::result::ZipError::FileNotFound) => return Ok(None),
        Err(e) => return Err(corrupt(e.to_string())),
    };
    if file.size() > limit {
        return Err(too_big(name, limit));
    }
    // The declared size may lie; the reader itself stops one byte past the limit.
    Ok(Some(file.take(limit + 1)))
}

pub(crate) fn too_big(name: &str, limit: u64) -> DocError {
    DocError::TooComplex {
        detail: format!("{name} 解压后超过 {} MB", limit / (1024 * 1024)),
    }
}

/// The paragraphs of one part, read as a stream that stops at the part size limit.
fn read_part(
    archive: &mut Archive<'_>,
    name: &str,
    budget: &mut Budget<'_>,
    styles: &StyleLevels,
) -> Result<Option<(Vec<Para>, Objects)>, DocError> {
    let limit = budget.limits.max_part_bytes;
    let Some(part) = open_part(archive, name, limit)? else {
        return Ok(None);
    };
    let mut limited = std::io::BufReader::new(part);
    let read = paragraphs(&mut limited, budget, styles)?;
    if limited.into_inner().limit() == 0 {
        return Err(too_big(name, limit));
    }
    Ok(Some(read))
}

/// A table of a part as the walk met it: the paragraphs its cells hold (`first..end`) and the
/// cells' texts by row.
#[derive(Debug, Clone, Default)]
pub(crate) struct RawTable {
    first: usize,
    end: usize,
    rows: Vec<Vec<String>>,
}

/// A picture of a part: the paragraph holding it, its relationship id, its shown size (EMU).
#[derive(Debug, Clone)]
pub(crate) struct RawImage {
    para: usize,
    rel: String,
    cx: u64,
    cy: u64,
}

/// Most tables and pictures kept from one document, rows and columns of a table, and
/// characters of a cell: a real thesis stays far below them, a hostile file costs no more.
const MAX_TABLES: usize = 300;
const MAX_IMAGES: usize = 300;
const MAX_ROWS: usize = 200;
const MAX_COLUMNS: usize = 40;
const MAX_CELL_CHARS: usize = 400;

/// The tables and pictures of a part.
#[derive(Debug, Clone, Default)]
pub(crate) struct Objects {
    tables: Vec<RawTable>,
    images: Vec<RawImage>,
}

/// Follows `w:tbl`, `w:tr`, `w:tc` and pictures while a part's paragraphs are read. A table
/// inside a table is part of its outer cell's text.
#[derive(Default)]
struct ObjectWalk {
    depth: usize,
    table: RawTable,
    cell: Option<String>,
    span: usize,
    extent: (u64, u64),
    out: Objects,
}

fn number_attr(e: &BytesStart<'_>, name: &[u8]) -> Option<u64> {
    attr(e, name).and_then(|v| v.parse().ok())
}

impl ObjectWalk {
    /// Sees one event; `paragraphs` is how many paragraphs closed before it.
    fn event(&mut self, event: &Event<'_>, paragraphs: usize) {
        match event {
            Event::Start(e) => match e.name().as_ref() {
                b"w:tbl" => {
                    self.depth += 1;
                    if self.depth == 1 {
                        self.table = RawTable {
                            first: paragraphs,
                            ..RawTable::default()
                        };
                    }
                }
                // Past the limits, rows and cells are not kept (a hostile table costs nothing).
                b"w:tr" if self.depth == 1 && self.keeping() => self.table.rows.push(Vec::new()),
                b"w:tc" if self.depth == 1 && self.keeping() => {
                    self.cell = Some(String::new());
                    self.span = 1;
                }
                b"w:gridSpan" if self.depth == 1 => self.grid_span(e),
                b"a:blip" => self.blip(e, paragraphs),
                _ => {}
            },
            Event::Empty(e) => match e.name().as_ref() {
                b"w:gridSpan" if self.depth == 1 => self.grid_span(e),
                // A cell without content is an empty cell.
                b"w:tc" if self.depth == 1 && self.keeping() => {
                    if let Some(row) = self.table.rows.last_mut()
                        && row.len() < MAX_COLUMNS
                    {
                        row.push(String::new());
                    }
                }
                b"wp:extent" => {
                    self.extent = (
                        number_attr(e, b"cx").unwrap_or(0),
                        number_attr(e, b"cy").unwrap_or(0),
                    );
                }
                b"a:blip" => self.blip(e, paragraphs),
                _ => {}
            },
            Event::End(e) => match e.name().as_ref() {
                b"w:tc" if self.depth == 1 => {
                    let text = self.cell.take().unwrap_or_default();
                    if let Some(row) = self.table.rows.last_mut() {
                        for k in 0..self.span {
                            if row.len() < MAX_COLUMNS {
                                row.push(if k == 0 { text.clone() } else { String::new() });
                            }
                        }
                    }
                }
                b"w:tbl" => {
                    if self.depth == 1 && self.out.tables.len() < MAX_TABLES {
                        let mut table = std::mem::take(&mut self.table);
                        table.end = paragraphs;
                        table.rows.retain(|r| !r.is_empty());
                        table.rows.truncate(MAX_ROWS);
                        let width = table.rows.iter().map(Vec::len).max().unwrap_or(0);
                        for row in &mut table.rows {
                            row.resize(width, String::new());
                        }
                        if width > 0 {
                            self.out.tables.push(table);
                        }
                    }
                    self.depth = self.depth.saturating_sub(1);
                }
                _ => {}
            },
            _ => {}
        }
    }

    /// Whether this table's rows are still kept: tables and rows within their limits.
    fn keeping(&self) -> bool {
        self.out.tables.len() < MAX_TABLES && self.table.rows.len() < MAX_ROWS
    }

    fn grid_span(&mut self, e: &BytesStart<'_>) {
        self.span = number_attr(e, b"w:val").unwrap_or(1).clamp(1, 64) as usize;
    }

    /// A paragraph closed with `text`: a cell's text grows by it, line breaks and tabs as
    /// spaces, up to `MAX_CELL_CHARS`.
    fn paragraph(&mut self, text: &str) {
        if let Some(cell) = self.cell.as_mut() {
            let text = text.trim();
            let used = cell.chars().count();
            if text.is_empty() || used >= MAX_CELL_CHARS {
                return;
            }
            if !cell.is_empty() {
                cell.push(' ');
            }
            let room = MAX_CELL_CHARS.saturating_sub(used + 1);
            cell.extend(
                text.chars()
                    .map(|c| if c.is_whitespace() { ' ' } else { c })
                    .take(room),
            );
        }
    }

    fn blip(&mut self, e: &BytesStart<'_>, paragraphs: usize) {
        if let Some(rel) = attr(e, b"r:embed")
            && self.out.images.len() < MAX_IMAGES
        {
            let (cx, cy) = std::mem::take(&mut self.extent);
            self.out.images.push(RawImage {
                para: paragraphs,
                rel,
                cx,
                cy,
            });
        }
    }
}

fn attr(e: &BytesStart<'_>, name: &[u8]) -> Option<String> {
    e.try_get_attribute(name)
        .ok()
        .flatten()
        .and_then(|a| a.unescape_value().ok().map(|v| v.into_owned()))
}

/// The level `style_level` gives the document's title (the Title style): a chapter-level
/// heading that also names the paper.
const TITLE_LEVEL: u8 = 0;

/// Heading level from a paragraph style id: "Heading1", "heading 2", "1" (Chinese Word's 标题 1);
/// `TITLE_LEVEL` for "Title" (Chinese Word's 标题).
fn style_level(style: &str) -> Option<u8> {
    let s = style.to_lowercase().replace(' ', "");
    if s == "title" || s == "标题" {
        return Some(TITLE_LEVEL);
    }
    let digits = s
        .strip_prefix("heading")
        .or_else(|| s.strip_prefix("标题"))
        .unwrap_or(&s);
    match digits.parse::<u8>() {
        Ok(n) if (1..=9).contains(&n) => Some(n),
        _ => None,
    }
}

/// The heading level of each paragraph style the document defines, from word/styles.xml: by the
/// style's built-in name ("heading 2", "Title" — Word writes these names in English whatever the
/// interface language), else its own outline level, else the style it is based on. A university
/// template's "论文一级标题" based on "heading 1", or carrying outline level 1, is a chapter heading.
#[derive(Debug, Default)]
pub(crate) struct StyleLevels {
    styles: std::collections::HashMap<String, StyleDef>,
}

#[derive(Debug, Default)]
struct StyleDef {
    name: Option<String>,
    based_on: Option<String>,
    outline: Option<u8>,
}

impl StyleLevels {
    const PART: &'static str = "word/styles.xml";

    /// Reads the styles part; a document without one resolves style ids by their names alone.
    pub(crate) fn read(
        archive: &mut Archive<'_>,
        limits: &Limits,
    ) -> Result<StyleLevels, DocError> {
        let limit = limits.max_part_bytes;
        let Some(part) = open_part(archive, Self::PART, limit)? else {
            return Ok(StyleLevels::default());
        };
        let mut limited = std::io::BufReader::new(part);
        let levels = Self::parse(&mut limited)?;
        if limited.into_inner().limit() == 0 {
            return Err(too_big(Self::PART, limit));
        }
        Ok(levels)
    }

    fn parse(xml: impl std::io::BufRead) -> Result<StyleLevels, DocError> {
        let mut reader = Reader::from_reader(xml);
        let mut buf = Vec::new();
        let mut out = StyleLevels::default();
        // The paragraph style being read: its id and what it says so far.
        let mut current: Option<(String, StyleDef)> = None;
        loop {
            let event = reader
                .read_event_into(&mut buf)
                .map_err(|e| corrupt(e.to_string()))?;
            match &event {
                Event::Eof => break,
                Event::Start(e) if e.name().as_ref() == b"w:style" => {
                    let paragraph = attr(e, b"w:type").is_none_or(|t| t == "paragraph");
                    current = attr(e, b"w:styleId")
                        .filter(|_| paragraph)
                        .map(|id| (id, StyleDef::default()));
                }
                Event::End(e) if e.name().as_ref() == b"w:style" => {
                    if let Some((id, def)) = current.take() {
                        out.styles.insert(id, def);
                    }
                }
                Event::Empty(e) | Event::Start(e) => {
                    if let Some((_, def)) = current.as_mut() {
                        match e.name().as_ref() {
                            b"w:name" => def.name = attr(e, b"w:val"),
                            b"w:basedOn" => def.based_on = attr(e, b"w:val"),
                            // Outline levels 0–8 are headings 1–9; 9 is body text.
                            b"w:outlineLvl" => {
                                def.outline = attr(e, b"w:val")
                                    .and_then(|v| v.parse::<u8>().ok())
                                    .filter(|v| *v < 9)
                                    .map(|v| v + 1)
                            }
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
            buf.clear();
        }
        Ok(out)
    }

    /// The heading level a paragraph of style `id` has, `TITLE_LEVEL` for the title.
    pub(crate) fn level(&self, id: &str) -> Option<u8> {
        let mut id = id;
        // basedOn chains are short; a cycle in a hostile file ends here.
        for _ in 0..16 {
            let Some(def) = self.styles.get(id) else {
                // A style the part does not define: its id may still say it ("Heading1").
                return style_level(id);
            };
            if let Some(level) = def.name.as_deref().and_then(style_level) {
                return Some(level);
            }
            if def.outline.is_some() {
                return def.outline;
            }
            id = def.based_on.as_deref()?;
        }
        None
    }
}

/// What one XML event of a part means for its text.
pub(crate) enum Step<'a> {
    Nothing,
    /// A `w:p` opens: text gathered since the last paragraph belongs to none.
    ParaOpen,
    /// A `w:p` closes: the text gathered is a paragraph.
    ParaClose,
    /// An empty `<w:p/>`: a paragraph without text (what was gathered stays gathered).
    EmptyPara,
    /// A `w:t` opens: piece number `n`, whose characters follow as `Chars`.
    TextOpen(usize),
    TextClose,
    Chars(Cow<'a, str>),
    /// A tab (`\t`) or a line break (`\n`) in a run: piece number `n`.
    Mark(usize, char),
    Level(u8),
    /// The paragraph's style id (`w:pStyle`); its heading level comes from styles.xml.
    Style(String),
}

/// Walks a part's events, numbering the pieces of text; the reader and the editor share it so
/// that they see the same paragraphs and pieces.
#[derive(Default)]
pub(crate) struct Walker {
    in_text: bool,
    runs: usize,
    tab_stops: usize,
    /// Pieces seen so far.
    pub pieces: usize,
}

impl Walker {
    fn piece(&mut self) -> usize {
        self.pieces += 1;
        self.pieces - 1
    }

    pub fn step<'a>(&mut self, event: &'a Event<'_>) -> Result<Step<'a>, DocError> {
        Ok(match event {
            Event::Start(e) => match e.name().as_ref() {
                b"w:p" => Step::ParaOpen,
                b"w:t" => {
                    self.in_text = true;
                    Step::TextOpen(self.piece())
                }
                b"w:r" => {
                    self.runs += 1;
                    Step::Nothing
                }
                b"w:tabs" => {
                    self.tab_stops += 1;
                    Step::Nothing
                }
                _ => Step::Nothing,
            },
            Event::Empty(e) => match e.name().as_ref() {
                b"w:pStyle" => attr(e, b"w:val").map_or(Step::Nothing, Step::Style),
                // Outline levels 0–8 are headings 1–9; 9 is body text.
                b"w:outlineLvl" => attr(e, b"w:val")
                    .and_then(|v| v.parse::<u8>().ok())
                    .filter(|v| *v < 9)
                    .map_or(Step::Nothing, |v| Step::Level(v + 1)),
                b"w:tab" if self.runs > 0 && self.tab_stops == 0 => Step::Mark(self.piece(), '\t'),
                b"w:br" | b"w:cr" if self.runs > 0 => Step::Mark(self.piece(), '\n'),
                b"w:p" => Step::EmptyPara,
                _ => Step::Nothing,
            },
            Event::Text(t) if self.in_text => {
                Step::Chars(t.unescape().map_err(|e| corrupt(e.to_string()))?)
            }
            Event::End(e) => match e.name().as_ref() {
                b"w:t" => {
                    self.in_text = false;
                    Step::TextClose
                }
                b"w:p" => Step::ParaClose,
                b"w:r" => {
                    self.runs = self.runs.saturating_sub(1);
                    Step::Nothing
                }
                b"w:tabs" => {
                    self.tab_stops = self.tab_stops.saturating_sub(1);
                    Step::Nothing
                }
                _ => Step::Nothing,
            },
            _ => Step::Nothing,
        })
    }
}

/// Paragraphs of one part, with heading levels.
fn paragraphs(
    xml: impl std::io::BufRead,
    budget: &mut Budget<'_>,
    styles: &StyleLevels,
) -> Result<(Vec<Para>, Objects), DocError> {
    let mut reader = Reader::from_reader(xml);
    reader.config_mut().trim_text(false);
    let mut buf = Vec::new();
    let mut out = Vec::new();
    let mut walker = Walker::default();
    let mut current = String::new();
    let mut level: Option<u8> = None;
    let mut first = 0;
    let mut objects = ObjectWalk::default();
    loop {
        let event = reader
            .read_event_into(&mut buf)
            .map_err(|e| corrupt(e.to_string()))?;
        if matches!(event, Event::Eof) {
            break;
        }
        objects.event(&event, out.len());
        match walker.step(&event)? {
            Step::ParaOpen => {
                current.clear();
                level = None;
                first = walker.pieces;
            }
            Step::ParaClose => {
                budget.paragraph()?;
                objects.paragraph(&current);
                out.push(Para {
                    text: std::mem::take(&mut current),
                    level: level.take(),
                    first_piece: first,
                    pieces: walker.pieces - first,
                });
                first = walker.pieces;
            }
            Step::EmptyPara => {
                budget.paragraph()?;
                out.push(Para {
                    text: String::new(),
                    level: None,
                    first_piece: walker.pieces,
                    pieces: 0,
                });
            }
            Step::Chars(text) => {
                budget.text(&text)?;
                current.push_str(&text);
            }
            Step::Mark(_, c) => current.push(c),
            Step::Level(l) => level = Some(l),
            Step::Style(id) => {
                if let Some(l) = styles.level(&id) {
                    level = Some(l);
                }
            }
            Step::Nothing | Step::TextOpen(_) | Step::TextClose => {}
        }
        buf.clear();
    }
    Ok((out, objects.out))
}

/// Where a line of the text comes from: characters `start..end` of paragraph `para` of
/// `PARTS[part]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Origin {
    pub part: usize,
    pub para: usize,
    pub start: usize,
    pub end: usize,
}

/// A .docx as the text the reader gives: its lines, where each comes from (none for the blank
/// and title lines the reader adds), its headings, and each part's paragraphs.
pub(crate) struct Layout {
    pub lines: Vec<String>,
    pub origins: Vec<Option<Origin>>,
    pub headings: Vec<Heading>,
    /// The first paragraph in the Title style, when there is one.
    pub title: Option<String>,
    pub parts: [Option<Vec<Para>>; 3],
    /// The body's tables, by the lines their cells fill.
    pub tables: Vec<Table>,
    /// The body's pictures: the line at or after each, and what it is.
    pub images: Vec<(usize, RawImage)>,
}

/// The lines of a paragraph's text, split at `\n`, `\r` and `\r\n`, each with the character
/// where it starts.
fn segments(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let (mut start_byte, mut start_char, mut chars) = (0, 0, 0);
    let mut iter = text.char_indices().peekable();
    while let Some((at, c)) = iter.next() {
        chars += 1;
        if c == '\r' || c == '\n' {
            out.push((start_char, &text[start_byte..at]));
            let mut next = at + 1;
            if c == '\r' && matches!(iter.peek(), Some((_, '\n'))) {
                iter.next();
                chars += 1;
                next += 1;
            }
            start_byte = next;
            start_char = chars;
        }
    }
    out.push((start_char, &text[start_byte..]));
    out
}

/// Keeps elements `from..to` of a list.
fn keep_range<T>(list: &mut Vec<T>, from: usize, to: usize) {
    list.truncate(to);
    list.drain(..from);
}

/// Opens a .docx within the limits and lays out its text.
pub(crate) fn layout(archive: &mut Archive<'_>, limits: &Limits) -> Result<Layout, DocError> {
    if archive.len() > limits.max_zip_entries {
        return Err(DocError::TooComplex {
            detail: format!("压缩包内文件超过 {} 个", limits.max_zip_entries),
        });
    }
    let mut budget = Budget {
        limits,
        chars: 0,
        paragraphs: 0,
    };
    let styles = StyleLevels::read(archive, limits)?;
    let (body, objects) = read_part(archive, PARTS[0], &mut budget, &styles)?
        .ok_or_else(|| corrupt("缺少 word/document.xml"))?;
    let footnotes = read_part(archive, PARTS[1], &mut budget, &styles)?.map(|(p, _)| p);
    let endnotes = read_part(archive, PARTS[2], &mut budget, &styles)?.map(|(p, _)| p);
    let parts = [Some(body), footnotes, endnotes];

    // The paragraphs' lines before tidying: (text, origin, heading level).
    let mut raw: Vec<(&str, Option<Origin>, Option<u8>)> = Vec::new();
    let mut title: Option<String> = None;
    for (part, paras) in parts.iter().enumerate() {
        let Some(paras) = paras else { continue };
        if part > 0 {
            if paras.iter().all(|p| p.text.trim().is_empty()) {
                continue;
            }
            raw.push(("", None, None));
            raw.push((NOTE_TITLES[part], None, None));
        }
        for (k, para) in paras.iter().enumerate() {
            // Notes without text are left out; the body keeps its empty paragraphs.
            if part > 0 && para.text.trim().is_empty() {
                continue;
            }
            let mut level = para
                .level
                .filter(|_| part == 0 && !para.text.trim().is_empty());
            if level == Some(TITLE_LEVEL) {
                if title.is_none() {
                    title = Some(para.text.split_whitespace().collect::<Vec<_>>().join(" "));
                }
                level = Some(1);
            }
            for (start, text) in segments(&para.text) {
                let level = if text.trim().is_empty() {
                    None
                } else {
                    level.take()
                };
                let origin = Origin {
                    part,
                    para: k,
                    start,
                    end: start,
                };
                raw.push((text, Some(origin), level));
            }
        }
    }

    // Tidied as `crate::tidy` does: no trailing spaces, one blank line at most in a row, none
    // at either end.
    let mut lines = Vec::new();
    let mut origins = Vec::new();
    let mut levels = Vec::new();
    let mut blank = 0;
    for (text, origin, level) in raw {
        let text = text.trim_end();
        if text.trim().is_empty() {
            blank += 1;
            if blank > 1 {
                continue;
            }
            lines.push(String::new());
            origins.push(None);
            levels.push(None);
        } else {
            blank = 0;
            lines.push(text.to_string());
            origins.push(origin.map(|o| Origin {
                end: o.start + text.chars().count(),
                ..o
            }));
            levels.push(level);
        }
    }
    let lead = lines.iter().take_while(|l| l.is_empty()).count();
    let keep = lines.len() - lines.iter().rev().take_while(|l| l.is_empty()).count();
    let keep = keep.max(lead);
    keep_range(&mut lines, lead, keep);
    keep_range(&mut origins, lead, keep);
    keep_range(&mut levels, lead, keep);
    let headings: Vec<Heading> = levels
        .iter()
        .enumerate()
        .filter_map(|(line, level)| level.map(|level| Heading { line, level }))
        .collect();
    let title = title.or_else(|| first_heading_title(&lines, &headings));
    // The first line from a body paragraph at or after paragraph `para`.
    let line_at = |para: usize| {
        origins
            .iter()
            .position(|o| o.is_some_and(|o| o.part == 0 && o.para >= para))
            .unwrap_or(lines.len())
    };
    let tables = objects
        .tables
        .into_iter()
        .map(|t| Table {
            start_line: line_at(t.first),
            end_line: line_at(t.end),
            rows: t.rows,
        })
        .collect();
    let images = objects
        .images
        .into_iter()
        .map(|i| (line_at(i.para), i))
        .collect();
    Ok(Layout {
        lines,
        origins,
        headings,
        title,
        parts,
        tables,
        images,
    })
}

/// A document without a Title paragraph often sets its title as the first heading: the first line,
/// in a heading style, that is not a section name (摘要, 目录) nor a numbered chapter.
fn first_heading_title(lines: &[String], headings: &[Heading]) -> Option<String> {
    let first = lines.iter().position(|l| !l.trim().is_empty())?;
    headings.iter().find(|h| h.line == first)?;
    let line = lines[first]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let squeezed: String = line.chars().filter(|c| !c.is_whitespace()).collect();
    let lower = squeezed.to_lowercase();
    let section = [
        "摘要", "abstract", "目录", "contents", "前言", "引言", "绪论",
    ]
    .iter()
    .any(|w| lower.starts_with(w));
    let numbered = lower.starts_with('第')
        || lower.starts_with(|c: char| c.is_ascii_digit())
        || lower.starts_with("chapter");
    (!section && !numbered && squeezed.chars().count() >= 4).then_some(line)
}

/// The title in the document's properties (docProps/core.xml `dc:title`), when it looks like a
/// paper's title: Word fills it from templates and old file names too ("Microsoft Word - 1.doc",
/// "毕业论文模板"), so those are not taken. Unreadable properties are no title, not an error.
fn core_title(archive: &mut Archive<'_>, limits: &Limits) -> Option<String> {
    let part = open_part(
        archive,
        "docProps/core.xml",
        limits.max_part_bytes.min(1 << 20),
    )
    .ok()??;
    let mut reader = Reader::from_reader(std::io::BufReader::new(part));
    let mut buf = Vec::new();
    let mut in_title = false;
    let mut title = String::new();
    loop {
        match reader.read_event_into(&mut buf).ok()? {
            Event::Eof => break,
            Event::Start(e) if e.name().as_ref() == b"dc:title" => in_title = true,
            Event::End(e) if e.name().as_ref() == b"dc:title" => break,
            Event::Text(t) if in_title => title.push_str(&t.unescape().ok()?),
            _ => {}
        }
        buf.clear();
    }
    let title = title.split_whitespace().collect::<Vec<_>>().join(" ");
    let chars = title.chars().count();
    let placeholder = [
        "Microsoft Word",
        "模板",
        "template",
        "Template",
        "标题",
        "Title",
        "无标题",
    ]
    .iter()
    .any(|w| title.contains(w));
    let cjk = title
        .chars()
        .filter(|c| ('\u{4e00}'..='\u{9fff}').contains(c))
        .count();
    (cjk >= 4 && chars <= 100 && !placeholder).then_some(title)
}

/// The relationships of the body part: id → the part it targets, for internal targets.
fn body_relationships(
    archive: &mut Archive<'_>,
    limits: &Limits,
) -> std::collections::HashMap<String, String> {
    let mut out = std::collections::HashMap::new();
    let Ok(Some(part)) = open_part(
        archive,
        "word/_rels/document.xml.rels",
        limits.max_part_bytes.min(4 << 20),
    ) else {
        return out;
    };
    let mut reader = Reader::from_reader(std::io::BufReader::new(part));
    let mut buf = Vec::new();
    while let Ok(event) = reader.read_event_into(&mut buf) {
        match &event {
            Event::Eof => break,
            Event::Empty(e) | Event::Start(e) if e.name().as_ref() == b"Relationship" => {
                let external = attr(e, b"TargetMode").is_some_and(|m| m == "External");
                if let (Some(id), Some(target), false) =
                    (attr(e, b"Id"), attr(e, b"Target"), external)
                {
                    out.insert(id, part_path("word", &target));
                }
            }
            _ => {}
        }
        buf.clear();
    }
    out
}

/// A relationship's target as a path in the zip: absolute ("/word/media/a.png") or relative to
/// `base` ("media/a.png", "../media/a.png").
fn part_path(base: &str, target: &str) -> String {
    let mut path: Vec<&str> = if target.starts_with('/') {
        Vec::new()
    } else {
        base.split('/').collect()
    };
    for piece in target.split('/') {
        match piece {
            "" | "." => {}
            ".." => {
                path.pop();
            }
            p => path.push(p),
        }
    }
    path.join("/")
}

/// The pictures the layout found, read from the zip up to `limits.image_bytes` in all: PNG and
/// JPEG only (what every slide viewer draws), each picture once. A picture too big, missing or
/// of another format is left out, not an error: the text is what the document is read for.
fn read_images(
    archive: &mut Archive<'_>,
    found: Vec<(usize, RawImage)>,
    limits: &Limits,
) -> Vec<Image> {
    if limits.image_bytes == 0 || found.is_empty() {
        return Vec::new();
    }
    let targets = body_relationships(archive, limits);
    let mut left = limits.image_bytes as u64;
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for (line, raw) in found {
        let Some(path) = targets.get(&raw.rel) else {
            continue;
        };
        if !seen.insert(path.clone()) || left == 0 {
            continue;
        }
        let Ok(Some(mut part)) = open_part(archive, path, left) else {
            continue;
        };
        // The header first: another format is not inflated at all.
        let mut head = [0u8; 8];
        if part.read_exact(&mut head).is_err() {
            continue;
        }
        let Some(ext) = crate::picture_format(&head) else {
            continue;
        };
        let mut bytes = head.to_vec();
        let read = part.read_to_end(&mut bytes);
        // What was inflated counts, whether or not the picture is kept.
        left = left.saturating_sub(bytes.len() as u64);
        if read.is_err() || part.limit() == 0 {
            continue;
        }
        out.push(Image {
            line,
            ext: ext.into(),
            bytes,
            width_emu: raw.cx,
            height_emu: raw.cy,
        });
    }
    out
}

pub fn extract(bytes: &[u8], limits: &Limits) -> Result<Extracted, DocError> {
    let mut archive =
        zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|e| corrupt(e.to_string()))?;
    let layout = layout(&mut archive, limits)?;
    let images = read_images(&mut archive, layout.images, limits);
    Ok(Extracted {
        text: layout.lines.join("\n"),
        format: Format::Docx,
        reader: "docx".into(),
        headings: layout.headings,
        title: layout.title.or_else(|| core_title(&mut archive, limits)),
        tables: layout.tables,
        images,
    })
}
