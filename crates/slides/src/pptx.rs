//! The deck as a .pptx file. The OOXML parts are written here rather than with a crate: the
//! Rust crates that write PowerPoint (ppt-rs, ooxmlsdk) either lack speaker notes and
//! connectors or leave East-Asian run properties to the caller, and a file PowerPoint opens
//! without repair needs exact control of ids, relationships and content types anyway.
//!
//! What keeps the file valid: slide ids from 256 and unique, master and layout ids from
//! 2147483648 and unique, one content-type override per part that exists, relationship ids
//! unique per part, a theme with three fill, line, effect and background styles. Every run is
//! `lang="zh-CN"` with 微软雅黑 as its East-Asian and Latin typeface.

use crate::SlidesError;
use crate::deck::{Deck, Slide, SlideKind};
use crate::fit::{self, Fitted, Frame, LINE_SPACING};
use crate::template::{EMU_PER_PT, Rect, SLIDE_H, SLIDE_W, Style, Template};
use std::fmt::Write as _;
use std::io::Write as _;

/// The typeface of every run; viewers without it substitute their CJK sans (the theme says so).
pub const TYPEFACE: &str = "微软雅黑";

/// A PNG or JPEG to place on a slide: a school logo (on the cover and, with the school
/// template, on every slide) or a figure of the paper.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picture {
    pub bytes: Vec<u8>,
    /// "png" or "jpeg".
    pub ext: &'static str,
    pub width: u32,
    pub height: u32,
}

/// Largest logo accepted.
pub const LOGO_MAX_BYTES: usize = 2 * 1024 * 1024;
/// Longest side of a logo, in pixels.
pub const LOGO_MAX_SIDE: u32 = 4096;
/// Most pixels of a logo.
pub const LOGO_MAX_PIXELS: u64 = 4096 * 4096;
/// Largest figure taken from a paper, its longest side and its pixels: a scanned A4 page at
/// 300 dpi fits, a canvas that would cost a viewer gigabytes to decode does not.
pub const FIGURE_MAX_BYTES: usize = 10 * 1024 * 1024;
pub const FIGURE_MAX_SIDE: u32 = 10_000;
pub const FIGURE_MAX_PIXELS: u64 = 40_000_000;

/// Whether an image file is whole: a PNG's chunks run, CRCs right, from its header to IEND
/// with image data between; a JPEG ends with its end-of-image marker.
fn complete(ext: &str, bytes: &[u8]) -> bool {
    if ext == "jpeg" {
        return bytes.ends_with(&[0xFF, 0xD9]);
    }
    let mut at = 8;
    let mut data = false;
    while at + 12 <= bytes.len() {
        let len =
            u32::from_be_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]) as usize;
        let Some(end) = (at + 8).checked_add(len).filter(|e| e + 4 <= bytes.len()) else {
            return false;
        };
        let kind = &bytes[at + 4..at + 8];
        let crc = u32::from_be_bytes([bytes[end], bytes[end + 1], bytes[end + 2], bytes[end + 3]]);
        if crc32(&bytes[at + 4..end]) != crc {
            return false;
        }
        data |= kind == b"IDAT";
        if kind == b"IEND" {
            return data && end + 4 == bytes.len();
        }
        at = end + 4;
    }
    false
}

/// A plain PNG of `width` × `height` (an oval badge on a light ground, stored deflate): a whole,
/// valid image for tests and samples, made without an image library.
pub fn badge_png(width: u32, height: u32) -> Vec<u8> {
    fn chunk(out: &mut Vec<u8>, kind: &[u8], data: &[u8]) {
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        let mut body = kind.to_vec();
        body.extend_from_slice(data);
        out.extend_from_slice(&body);
        out.extend_from_slice(&crc32(&body).to_be_bytes());
    }
    let (w, h) = (i64::from(width), i64::from(height));
    let mut raw = Vec::new();
    for y in 0..h {
        raw.push(0); // no filter
        for x in 0..w {
            let (dx, dy) = (2 * x - w, 2 * y - h);
            let inside = dx * dx * h * h + dy * dy * w * w < w * w * h * h * 8 / 10;
            raw.extend_from_slice(if inside {
                &[0x8B, 0x1A, 0x1A]
            } else {
                &[0xF5, 0xE6, 0xC8]
            });
        }
    }
    // zlib: header, stored blocks of at most 65,535 bytes, Adler-32.
    let mut zlib = vec![0x78, 0x01];
    let blocks: Vec<&[u8]> = raw.chunks(65_535).collect();
    for (i, block) in blocks.iter().enumerate() {
        zlib.push(u8::from(i + 1 == blocks.len()));
        let len = block.len() as u16;
        zlib.extend_from_slice(&len.to_le_bytes());
        zlib.extend_from_slice(&(!len).to_le_bytes());
        zlib.extend_from_slice(block);
    }
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in &raw {
        a = (a + u32::from(byte)) % 65_521;
        b = (b + a) % 65_521;
    }
    zlib.extend_from_slice(&((b << 16) | a).to_be_bytes());
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut header = Vec::new();
    header.extend_from_slice(&width.to_be_bytes());
    header.extend_from_slice(&height.to_be_bytes());
    header.extend_from_slice(&[8, 2, 0, 0, 0]);
    chunk(&mut out, b"IHDR", &header);
    chunk(&mut out, b"IDAT", &zlib);
    chunk(&mut out, b"IEND", &[]);
    out
}

/// CRC-32 (ISO-HDLC), as PNG chunks carry it.
fn crc32(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

impl Picture {
    /// A logo: a PNG or JPEG within the logo's limits, its size read from its header; anything
    /// else is refused.
    pub fn logo(bytes: &[u8]) -> Result<Picture, SlidesError> {
        // A logo is small: a huge canvas costs every viewer memory to decode, and a file cut
        // short shows as a black square.
        Picture::checked(bytes, LOGO_MAX_BYTES, LOGO_MAX_SIDE, LOGO_MAX_PIXELS)
            .ok_or(SlidesError::BadLogo)
    }

    /// A figure of a paper: a whole PNG or JPEG within the figure limits, or none.
    pub fn figure(bytes: &[u8]) -> Option<Picture> {
        Picture::checked(bytes, FIGURE_MAX_BYTES, FIGURE_MAX_SIDE, FIGURE_MAX_PIXELS)
    }

    fn checked(bytes: &[u8], max_bytes: usize, max_side: u32, max_pixels: u64) -> Option<Picture> {
        if bytes.len() > max_bytes {
            return None;
        }
        let ext = docio::picture_format(bytes)?;
        let (width, height) = match ext {
            "png" => png_size(bytes)?,
            _ => jpeg_size(bytes)?,
        };
        let fits = width > 0
            && height > 0
            && width <= max_side
            && height <= max_side
            && u64::from(width) * u64::from(height) <= max_pixels;
        (fits && complete(ext, bytes)).then(|| Picture {
            bytes: bytes.to_vec(),
            ext,
            width,
            height,
        })
    }

    /// The picture's rectangle when fitted into `bound`, centred, keeping its aspect ratio.
    fn placed_in(&self, bound: Rect) -> Rect {
        fitted((self.width, self.height), bound)
    }
}

/// A `(width, height)` picture's rectangle when fitted into `bound`, centred, keeping its
/// aspect ratio.
fn fitted((width, height): (u32, u32), bound: Rect) -> Rect {
    let scale = (bound.w as f64 / f64::from(width)).min(bound.h as f64 / f64::from(height));
    let w = (f64::from(width) * scale) as i64;
    let h = (f64::from(height) * scale) as i64;
    Rect::new(
        bound.x + (bound.w - w) / 2,
        bound.y + (bound.h - h) / 2,
        w,
        h,
    )
}

fn png_size(bytes: &[u8]) -> Option<(u32, u32)> {
    if bytes.get(12..16)? != b"IHDR" {
        return None;
    }
    let w = u32::from_be_bytes(bytes.get(16..20)?.try_into().ok()?);
    let h = u32::from_be_bytes(bytes.get(20..24)?.try_into().ok()?);
    Some((w, h))
}

fn jpeg_size(bytes: &[u8]) -> Option<(u32, u32)> {
    let mut i = 2;
    while i + 4 <= bytes.len() {
        if bytes[i] != 0xFF {
            return None;
        }
        let marker = bytes[i + 1];
        if marker == 0xFF {
            i += 1;
            continue;
        }
        let len = u16::from_be_bytes([bytes[i + 2], bytes[i + 3]]) as usize;
        // Start-of-frame markers (not DHT C4, JPG C8, DAC CC) carry the size.
        if (0xC0..=0xCF).contains(&marker) && ![0xC4, 0xC8, 0xCC].contains(&marker) {
            let h = u16::from_be_bytes([*bytes.get(i + 5)?, *bytes.get(i + 6)?]) as u32;
            let w = u16::from_be_bytes([*bytes.get(i + 7)?, *bytes.get(i + 8)?]) as u32;
            return Some((w, h));
        }
        if len < 2 {
            return None;
        }
        i += 2 + len;
    }
    None
}

/// Text in a frame, fitted.
#[derive(Debug, Clone, PartialEq)]
pub struct TextBox {
    pub rect: Rect,
    pub paragraphs: Vec<String>,
    pub fitted: Fitted,
    pub colour: u32,
    pub bold: bool,
    pub bullets: bool,
    pub centred: bool,
    /// Vertical anchor: true for the middle, false for the top.
    pub middle: bool,
}

/// Insets of every text frame, in EMU (0.1 in left and right, 0.05 in top and bottom).
const INSET_X: i64 = 91_440;
const INSET_Y: i64 = 45_720;
/// A bullet's hanging indent.
const BULLET_INDENT: i64 = 342_900;
const PARAGRAPH_GAP: f64 = 0.5;

fn emu_to_pt(emu: i64) -> f64 {
    emu as f64 / EMU_PER_PT as f64
}

impl TextBox {
    /// Sets `paragraphs` in `rect` at the largest size in `[min, max]` that fits, or fails.
    fn fitted(
        rect: Rect,
        paragraphs: Vec<String>,
        (min, max): (f64, f64),
        bullets: bool,
    ) -> Option<TextBox> {
        let frame = Frame {
            width_pt: emu_to_pt(rect.w - 2 * INSET_X),
            height_pt: emu_to_pt(rect.h - 2 * INSET_Y),
            indent_pt: if bullets {
                emu_to_pt(BULLET_INDENT)
            } else {
                0.0
            },
            paragraph_gap: PARAGRAPH_GAP,
        };
        let fitted = fit::fit(&paragraphs, frame, min, max)?;
        Some(TextBox {
            rect,
            paragraphs,
            fitted,
            colour: 0,
            bold: false,
            bullets,
            centred: false,
            middle: false,
        })
    }

    /// The height the fitted text takes, in EMU (insets included).
    pub fn text_height(&self) -> i64 {
        let frame = Frame {
            width_pt: 0.0,
            height_pt: 0.0,
            indent_pt: 0.0,
            paragraph_gap: PARAGRAPH_GAP,
        };
        let pt = frame.height_of(
            self.fitted.line_count(),
            self.paragraphs.len(),
            self.fitted.size_pt,
        );
        (pt * EMU_PER_PT as f64) as i64 + 2 * INSET_Y
    }
}

/// One shape of a slide.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// A filled shape of a preset geometry ("rect", "roundRect", "ellipse"), maybe with text.
    Fill {
        geometry: &'static str,
        rect: Rect,
        fill: u32,
        text: Option<TextBox>,
    },
    Text(TextBox),
    /// An arrow joining two shapes (by their index in the slide's shapes) at connection sites
    /// (0 top, 1 left, 2 bottom, 3 right of a rectangle).
    Arrow {
        from: usize,
        from_site: u8,
        to: usize,
        to_site: u8,
        colour: u32,
    },
    Logo(Rect),
    /// One of the paper's figures (its index in `Paper::figures`), fitted into `rect`.
    Figure {
        rect: Rect,
        index: usize,
    },
    Table(TableBox),
}

/// A table laid out: its columns' widths and rows' heights (EMU), every cell's text broken into
/// the lines it takes at `size_pt`, and its colours.
#[derive(Debug, Clone, PartialEq)]
pub struct TableBox {
    pub rect: Rect,
    pub columns: Vec<i64>,
    pub heights: Vec<i64>,
    /// Each row's cells.
    pub cells: Vec<Vec<TableCell>>,
    pub size_pt: f64,
    pub header_fill: u32,
    pub header_colour: u32,
    pub band_fill: u32,
    /// The other rows' fill.
    pub fill: u32,
    pub colour: u32,
    pub line: u32,
}

/// A table cell's text and the lines it was measured to take.
#[derive(Debug, Clone, PartialEq)]
pub struct TableCell {
    pub text: String,
    pub lines: Vec<String>,
}

impl Shape {
    fn rect(&self) -> Option<Rect> {
        match self {
            Shape::Fill { rect, .. } | Shape::Logo(rect) | Shape::Figure { rect, .. } => {
                Some(*rect)
            }
            Shape::Text(t) => Some(t.rect),
            Shape::Table(t) => Some(t.rect),
            Shape::Arrow { .. } => None,
        }
    }

    pub fn text(&self) -> Option<&TextBox> {
        match self {
            Shape::Fill { text, .. } => text.as_ref(),
            Shape::Text(t) => Some(t),
            _ => None,
        }
    }
}

/// A slide laid out: its shapes and notes.
#[derive(Debug, Clone, PartialEq)]
pub struct LaidOut {
    pub shapes: Vec<Shape>,
    pub notes: String,
}

const INCH: i64 = 914_400;
const TITLE_PT: (f64, f64) = (20.0, 30.0);
const BODY_PT: (f64, f64) = (16.0, 24.0);

/// How a text frame is set besides its size.
#[derive(Debug, Clone, Copy, Default)]
struct Look {
    colour: u32,
    bold: bool,
    centred: bool,
    middle: bool,
    bullets: bool,
}

impl Look {
    fn plain(colour: u32) -> Look {
        Look {
            colour,
            ..Look::default()
        }
    }

    /// Bold, vertically centred: titles and labels.
    fn strong(colour: u32) -> Look {
        Look {
            colour,
            bold: true,
            middle: true,
            ..Look::default()
        }
    }

    fn centred(self) -> Look {
        Look {
            centred: true,
            ..self
        }
    }
}

/// `paragraphs` fitted in `rect` and set as `look`, or the reason they do not fit.
fn text_or_fail(
    slide: usize,
    rect: Rect,
    paragraphs: Vec<String>,
    size: (f64, f64),
    look: Look,
) -> Result<TextBox, SlidesError> {
    let what = paragraphs.join(" / ");
    let mut text = TextBox::fitted(rect, paragraphs, size, look.bullets).ok_or_else(|| {
        SlidesError::DoesNotFit {
            slide,
            detail: what.chars().take(30).collect(),
        }
    })?;
    text.colour = look.colour;
    text.bold = look.bold;
    text.centred = look.centred;
    text.middle = look.middle;
    Ok(text)
}

/// The template's decoration of a content slide (behind the title).
fn decoration(t: &Template, logo: Option<&Picture>, school: &str, shapes: &mut Vec<Shape>) {
    let title = t.title_frame();
    match t.style {
        Style::Band => shapes.push(Shape::Fill {
            geometry: "rect",
            rect: Rect::new(0, 0, SLIDE_W, title.y + title.h + INCH / 10),
            fill: t.primary,
            text: None,
        }),
        Style::Sidebar => {
            shapes.push(Shape::Fill {
                geometry: "rect",
                rect: Rect::new(0, 0, INCH / 4, SLIDE_H),
                fill: t.primary,
                text: None,
            });
            shapes.push(Shape::Fill {
                geometry: "rect",
                rect: Rect::new(title.x, title.y + title.h, INCH * 3 / 2, INCH / 20),
                fill: t.accent,
                text: None,
            });
        }
        Style::Minimal | Style::Dark => shapes.push(Shape::Fill {
            geometry: "rect",
            rect: Rect::new(title.x, title.y + title.h, title.w, INCH / 60),
            fill: t.accent,
            text: None,
        }),
        Style::School => {
            school_strip(t, logo, school, shapes);
            shapes.push(Shape::Fill {
                geometry: "rect",
                rect: Rect::new(title.x, title.y + title.h, title.w, INCH / 60),
                fill: t.accent,
                text: None,
            });
        }
    }
}

/// The school template's header: a strip with the logo and the school's name, on every slide
/// but the cover.
fn school_strip(t: &Template, logo: Option<&Picture>, school: &str, shapes: &mut Vec<Shape>) {
    shapes.push(Shape::Fill {
        geometry: "rect",
        rect: Rect::new(0, 0, SLIDE_W, INCH * 9 / 10),
        fill: t.primary,
        text: None,
    });
    let mut name_x = INCH / 2;
    if let Some(logo) = logo {
        shapes.push(Shape::Logo(logo.placed_in(Rect::new(
            INCH / 3,
            INCH / 10,
            INCH * 7 / 10,
            INCH * 7 / 10,
        ))));
        name_x = INCH * 12 / 10;
    }
    // A name too long for the strip is left off the strip (the cover still shows it).
    if !school.is_empty()
        && let Ok(name) = text_or_fail(
            0,
            Rect::new(name_x, INCH / 10, INCH * 6, INCH * 7 / 10),
            vec![school.to_string()],
            (12.0, 20.0),
            Look::strong(t.on_primary),
        )
    {
        shapes.push(Shape::Text(name));
    }
}

/// Lays out every slide of `deck` with `template`.
pub fn layout(
    deck: &Deck,
    t: &Template,
    logo: Option<&Picture>,
) -> Result<Vec<LaidOut>, SlidesError> {
    let mut out = Vec::with_capacity(deck.slides.len());
    for (index, slide) in deck.slides.iter().enumerate() {
        let number = index + 1;
        let mut shapes = Vec::new();
        match slide.kind {
            SlideKind::Cover => cover(deck, t, logo, number, &mut shapes)?,
            SlideKind::Section | SlideKind::Thanks => {
                if t.style == Style::School {
                    school_strip(t, logo, &deck.meta.school, &mut shapes);
                }
                title_page(slide, t, number, &mut shapes)?
            }
            SlideKind::Contents => {
                decoration(t, logo, &deck.meta.school, &mut shapes);
                shapes.push(title_box(t, number, &slide.title)?);
                contents(slide, t, number, &mut shapes)?;
            }
            SlideKind::Bullets => {
                decoration(t, logo, &deck.meta.school, &mut shapes);
                shapes.push(title_box(t, number, &slide.title)?);
                let look = Look {
                    bullets: true,
                    ..Look::plain(t.body_colour())
                };
                let body =
                    text_or_fail(number, t.body_frame(), slide.bullets.clone(), BODY_PT, look)?;
                shapes.push(Shape::Text(body));
            }
            SlideKind::Route => {
                decoration(t, logo, &deck.meta.school, &mut shapes);
                shapes.push(title_box(t, number, &slide.title)?);
                route(slide, t, number, &mut shapes)?;
            }
            SlideKind::Table | SlideKind::Figure => {
                decoration(t, logo, &deck.meta.school, &mut shapes);
                shapes.push(title_box(t, number, &slide.title)?);
                object(slide, t, number, &mut shapes)?;
            }
        }
        if !matches!(slide.kind, SlideKind::Cover) {
            page_number(t, number, &mut shapes);
        }
        out.push(LaidOut {
            shapes,
            notes: slide.notes.clone(),
        });
    }
    Ok(out)
}

/// What a table's caption adds when the slide shows part of it.
pub const EXCERPT: &str = "（节选，完整表格见论文）";
/// Height of a table's or figure's caption: two lines at its smallest size.
const CAPTION_H: i64 = INCH * 6 / 10;
const CAPTION_PT: (f64, f64) = (12.0, 16.0);
/// A table's text sizes: smaller than a bullet's, never below legible.
const TABLE_PT: (f64, f64) = (10.0, 18.0);

/// A table or figure slide's body: the caption above a table, below a figure.
fn object(
    slide: &Slide,
    t: &Template,
    number: usize,
    shapes: &mut Vec<Shape>,
) -> Result<(), SlidesError> {
    let body = t.body_frame();
    let caption = |rect: Rect, paragraphs: Vec<String>| {
        text_or_fail(
            number,
            rect,
            paragraphs,
            CAPTION_PT,
            Look::strong(t.body_colour()).centred(),
        )
    };
    match (&slide.figure, slide.kind) {
        (Some(figure), SlideKind::Figure) => {
            let caption_h = if slide.bullets.is_empty() {
                0
            } else {
                CAPTION_H
            };
            let bound = Rect::new(body.x, body.y, body.w, body.h - caption_h);
            let rect = fitted((figure.width, figure.height), bound);
            shapes.push(Shape::Figure {
                rect,
                index: figure.index,
            });
            if caption_h > 0 {
                let below = Rect::new(body.x, rect.y + rect.h, body.w, caption_h);
                shapes.push(Shape::Text(caption(below, slide.bullets.clone())?));
            }
        }
        _ => {
            // A table keeps the caption's line: its caption, or the word that it is cut short.
            let bound = Rect::new(body.x, body.y + CAPTION_H, body.w, body.h - CAPTION_H);
            let mut table =
                table_box(&slide.rows, bound, t).ok_or_else(|| SlidesError::DoesNotFit {
                    slide: number,
                    detail: slide
                        .bullets
                        .first()
                        .cloned()
                        .unwrap_or_else(|| "表格".into()),
                })?;
            let mut line = slide.bullets.first().cloned().unwrap_or_default();
            if table.cells.len() < slide.rows.len() && !line.contains(EXCERPT) {
                line.push_str(EXCERPT);
            }
            // A short table sits a third of the way down the space it leaves, with its caption.
            let drop = (bound.h - table.rect.h) / 3;
            table.rect.y += drop;
            if !line.is_empty() {
                let above = Rect::new(body.x, body.y + drop, body.w, CAPTION_H);
                shapes.push(Shape::Text(caption(above, vec![line])?));
            }
            shapes.push(Shape::Table(table));
        }
    }
    Ok(())
}

/// Whether `rows` lay out as a table under a caption on every template's slide.
pub fn table_fits(rows: &[Vec<String>]) -> bool {
    crate::TEMPLATES.iter().all(|t| {
        let body = t.body_frame();
        let bound = Rect::new(body.x, body.y + CAPTION_H, body.w, body.h - CAPTION_H);
        table_box(rows, bound, t).is_some_and(|table| table.cells.len() == rows.len())
    })
}

/// A colour `share` of the way from `from` to `to`.
pub(crate) fn blend(from: u32, to: u32, share: f64) -> u32 {
    let channel = |shift: u32| {
        let a = f64::from((from >> shift) & 0xFF);
        let b = f64::from((to >> shift) & 0xFF);
        ((a + (b - a) * share).round() as u32).min(255) << shift
    };
    channel(16) | channel(8) | channel(0)
}

/// `rows` as a table inside `bound`: columns as wide as their text asks (each between a narrow
/// and a wide share), the largest text size at which every row fits; rows from the end left
/// out (and the table then said to be an excerpt by its caption) when even the smallest size
/// does not fit them all; none when not even the header and one row fit.
fn table_box(rows: &[Vec<String>], bound: Rect, t: &Template) -> Option<TableBox> {
    let columns = rows.iter().map(Vec::len).max()?;
    if columns == 0 {
        return None;
    }
    // Each column's widest cell, in ems, kept between 3 and 16 so no column starves.
    let natural: Vec<f64> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|cell| fit::width_em(cell.trim()))
                .fold(0.0, f64::max)
                .clamp(3.0, 16.0)
        })
        .collect();
    let total: f64 = natural.iter().sum();
    let mut widths: Vec<i64> = natural
        .iter()
        .map(|w| (bound.w as f64 * w / total) as i64)
        .collect();
    // No column narrower than two characters at the smallest size: the narrow ones take their
    // least from the wide ones.
    let least = (2.0 * TABLE_PT.0 * EMU_PER_PT as f64) as i64 + 2 * INSET_X;
    if least * columns as i64 > bound.w {
        return None;
    }
    for _ in 0..columns {
        let short: i64 = widths.iter().map(|w| (least - w).max(0)).sum();
        if short == 0 {
            break;
        }
        let spare: i64 = widths.iter().map(|w| (w - least).max(0)).sum();
        for w in widths.iter_mut() {
            *w = if *w < least {
                least
            } else {
                *w - (((*w - least) as f64 / spare.max(1) as f64) * short as f64) as i64
            };
        }
    }
    // The rounding's remainder goes to the last column, so the table is exactly `bound` wide.
    let used: i64 = widths.iter().sum();
    if let Some(last) = widths.last_mut() {
        *last += bound.w - used;
    }
    let lay = |size: f64, count: usize| -> Option<(Vec<i64>, Vec<Vec<TableCell>>)> {
        let mut heights = Vec::with_capacity(count);
        let mut cells = Vec::with_capacity(count);
        for row in rows.iter().take(count) {
            let mut lines_of_row = Vec::with_capacity(columns);
            let mut most = 1;
            for (c, width) in widths.iter().enumerate() {
                let text = row.get(c).map_or("", |s| s.trim());
                let inner_pt = emu_to_pt(width - 2 * INSET_X);
                if inner_pt <= size {
                    return None;
                }
                let lines = fit::wrap(text, inner_pt / size);
                most = most.max(lines.len());
                lines_of_row.push(TableCell {
                    text: text.to_string(),
                    lines,
                });
            }
            let pt = most as f64 * size * LINE_SPACING;
            heights.push((pt * EMU_PER_PT as f64).ceil() as i64 + 2 * INSET_Y);
            cells.push(lines_of_row);
        }
        (heights.iter().sum::<i64>() <= bound.h).then_some((heights, cells))
    };
    let sizes = || {
        let (min, max) = TABLE_PT;
        (0..=((max - min) as usize)).map(move |k| max - k as f64)
    };
    let (size, (heights, cells)) = sizes()
        .find_map(|size| lay(size, rows.len()).map(|l| (size, l)))
        .or_else(|| {
            (2..rows.len())
                .rev()
                .find_map(|count| lay(TABLE_PT.0, count).map(|l| (TABLE_PT.0, l)))
        })?;
    let height = heights.iter().sum();
    Some(TableBox {
        rect: Rect::new(bound.x, bound.y, bound.w, height),
        columns: widths,
        heights,
        cells,
        size_pt: size,
        header_fill: t.primary,
        header_colour: t.on_primary,
        band_fill: blend(t.background, t.primary, 0.08),
        fill: t.background,
        colour: t.body_colour(),
        line: blend(t.background, t.body_colour(), 0.35),
    })
}

fn title_box(t: &Template, number: usize, title: &str) -> Result<Shape, SlidesError> {
    let title = text_or_fail(
        number,
        t.title_frame(),
        vec![title.to_string()],
        TITLE_PT,
        Look::strong(t.title_colour()),
    )?;
    Ok(Shape::Text(title))
}

fn page_number(t: &Template, number: usize, shapes: &mut Vec<Shape>) {
    let colour = if t.style == Style::Dark {
        t.text
    } else {
        t.accent
    };
    if let Ok(n) = text_or_fail(
        number,
        Rect::new(
            SLIDE_W - INCH * 11 / 10,
            SLIDE_H - INCH / 2,
            INCH,
            INCH * 4 / 10,
        ),
        vec![number.to_string()],
        (10.0, 12.0),
        Look::plain(colour).centred(),
    ) {
        shapes.push(Shape::Text(n));
    }
}

/// A big title (cover, part pages) set inside a full-width band.
fn banner_title(number: usize, band: Rect, text: &str, look: Look) -> Result<TextBox, SlidesError> {
    text_or_fail(
        number,
        Rect::new(
            INCH,
            band.y + INCH / 10,
            SLIDE_W - 2 * INCH,
            band.h - INCH / 5,
        ),
        vec![text.to_string()],
        (24.0, 40.0),
        look,
    )
}

fn cover(
    deck: &Deck,
    t: &Template,
    logo: Option<&Picture>,
    number: usize,
    shapes: &mut Vec<Shape>,
) -> Result<(), SlidesError> {
    let dark_band = matches!(t.style, Style::Band | Style::School);
    let band = Rect::new(0, INCH * 19 / 10, SLIDE_W, INCH * 22 / 10);
    match t.style {
        Style::Band | Style::School => shapes.push(Shape::Fill {
            geometry: "rect",
            rect: band,
            fill: t.primary,
            text: None,
        }),
        Style::Sidebar => shapes.push(Shape::Fill {
            geometry: "rect",
            rect: Rect::new(0, 0, INCH / 2, SLIDE_H),
            fill: t.primary,
            text: None,
        }),
        Style::Minimal | Style::Dark => {}
    }
    shapes.push(Shape::Fill {
        geometry: "rect",
        rect: Rect::new(INCH, band.y + band.h + INCH / 8, INCH * 2, INCH / 20),
        fill: t.accent,
        text: None,
    });
    if let Some(logo) = logo {
        shapes.push(Shape::Logo(logo.placed_in(Rect::new(
            INCH,
            INCH / 3,
            INCH * 14 / 10,
            INCH * 14 / 10,
        ))));
    }
    if !deck.meta.school.is_empty() {
        let x = if logo.is_some() { INCH * 26 / 10 } else { INCH };
        let school = text_or_fail(
            number,
            Rect::new(x, INCH / 2, SLIDE_W - x - INCH, INCH),
            vec![deck.meta.school.clone()],
            (16.0, 24.0),
            Look::strong(t.primary),
        )?;
        shapes.push(Shape::Text(school));
    }
    let title = banner_title(
        number,
        band,
        &deck.title,
        Look::strong(if dark_band { t.on_primary } else { t.primary }),
    )?;
    shapes.push(Shape::Text(title));
    let mut lines = vec![deck.kind.label().to_string()];
    for (label, value) in [
        ("答辩人", &deck.meta.presenter),
        ("指导教师", &deck.meta.supervisor),
        ("日期", &deck.meta.date),
    ] {
        if !value.trim().is_empty() {
            lines.push(format!("{label}：{}", value.trim()));
        }
    }
    let top = band.y + band.h + INCH / 3;
    let meta = text_or_fail(
        number,
        Rect::new(INCH, top, SLIDE_W - 2 * INCH, SLIDE_H - top - INCH / 3),
        lines,
        (14.0, 20.0),
        Look::plain(t.text),
    )?;
    shapes.push(Shape::Text(meta));
    Ok(())
}

fn title_page(
    slide: &crate::deck::Slide,
    t: &Template,
    number: usize,
    shapes: &mut Vec<Shape>,
) -> Result<(), SlidesError> {
    let panel = Rect::new(0, INCH * 25 / 10, SLIDE_W, INCH * 25 / 10);
    let on_panel = !matches!(t.style, Style::Minimal | Style::Dark);
    if on_panel {
        shapes.push(Shape::Fill {
            geometry: "rect",
            rect: panel,
            fill: t.primary,
            text: None,
        });
    }
    let colour = if on_panel { t.on_primary } else { t.primary };
    if let Some(label) = slide.bullets.first() {
        let tag = text_or_fail(
            number,
            Rect::new(INCH, INCH * 12 / 10, SLIDE_W - 2 * INCH, INCH),
            vec![label.clone()],
            (18.0, 24.0),
            Look::strong(t.accent).centred(),
        )?;
        shapes.push(Shape::Text(tag));
    }
    let title = banner_title(number, panel, &slide.title, Look::strong(colour).centred())?;
    shapes.push(Shape::Text(title));
    Ok(())
}

fn contents(
    slide: &crate::deck::Slide,
    t: &Template,
    number: usize,
    shapes: &mut Vec<Shape>,
) -> Result<(), SlidesError> {
    let body = t.body_frame();
    let n = slide.bullets.len().max(1) as i64;
    let row = (body.h / n).min(INCH * 9 / 10);
    for (i, item) in slide.bullets.iter().enumerate() {
        let y = body.y + row * i as i64;
        let badge = Rect::new(body.x + INCH / 2, y + row / 10, row * 8 / 10, row * 8 / 10);
        let digit = text_or_fail(
            number,
            badge,
            vec![format!("{:02}", i + 1)],
            (10.0, 20.0),
            Look::strong(t.on_primary).centred(),
        )?;
        // An ellipse sets text in its inscribed rectangle, which viewers size differently: the
        // number is a text box of its own over the disc.
        shapes.push(Shape::Fill {
            geometry: "ellipse",
            rect: badge,
            fill: t.primary,
            text: None,
        });
        shapes.push(Shape::Text(digit));
        let x = badge.x + badge.w + INCH / 4;
        let label = text_or_fail(
            number,
            Rect::new(x, y, body.x + body.w - x, row),
            vec![item.clone()],
            (14.0, 24.0),
            Look {
                middle: true,
                ..Look::plain(t.text)
            },
        )?;
        shapes.push(Shape::Text(label));
    }
    Ok(())
}

/// The technical route: one row of boxes joined by arrows, or two rows (the second right to
/// left) for five or six steps.
fn route(
    slide: &crate::deck::Slide,
    t: &Template,
    number: usize,
    shapes: &mut Vec<Shape>,
) -> Result<(), SlidesError> {
    let body = t.body_frame();
    let steps = &slide.bullets;
    let per_row = if steps.len() > 4 {
        3
    } else {
        steps.len().max(1)
    };
    let rows = steps.len().div_ceil(per_row) as i64;
    let gap = INCH * 6 / 10;
    let w = (body.w - gap * (per_row as i64 - 1)) / per_row as i64;
    let h = (INCH * 13 / 10).min((body.h - gap * (rows - 1)) / rows);
    let top = body.y + (body.h - rows * h - (rows - 1) * gap) / 2;
    let mut boxes = Vec::new();
    for (i, step) in steps.iter().enumerate() {
        let row = (i / per_row) as i64;
        let col = (i % per_row) as i64;
        // The second row runs right to left, so its first box sits under the first row's last.
        let col = if row % 2 == 1 {
            per_row as i64 - 1 - col
        } else {
            col
        };
        let rect = Rect::new(body.x + col * (w + gap), top + row * (h + gap), w, h);
        let look = Look::strong(t.on_primary).centred();
        let label = text_or_fail(number, rect, vec![step.clone()], (11.0, 18.0), look)?;
        boxes.push(shapes.len());
        shapes.push(Shape::Fill {
            geometry: "roundRect",
            rect,
            fill: if i % 2 == 0 { t.primary } else { t.accent },
            text: Some(label),
        });
    }
    for i in 1..boxes.len() {
        let same_row = (i - 1) / per_row == i / per_row;
        let leftwards = (i / per_row) % 2 == 1;
        let (from_site, to_site) = match (same_row, leftwards) {
            (false, _) => (2, 0),
            (true, false) => (3, 1),
            (true, true) => (1, 3),
        };
        shapes.push(Shape::Arrow {
            from: boxes[i - 1],
            from_site,
            to: boxes[i],
            to_site,
            colour: if t.style == Style::Dark {
                t.text
            } else {
                t.accent
            },
        });
    }
    Ok(())
}

/// Connection site `site` of a rectangle, in EMU.
pub(crate) fn site(rect: Rect, site: u8) -> (i64, i64) {
    match site {
        0 => (rect.x + rect.w / 2, rect.y),
        1 => (rect.x, rect.y + rect.h / 2),
        2 => (rect.x + rect.w / 2, rect.y + rect.h),
        _ => (rect.x + rect.w, rect.y + rect.h / 2),
    }
}

fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // XML 1.0 forbids most control characters.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => {}
            '\u{FFFE}' | '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
    out
}

fn run_properties(size_pt: f64, colour: u32, bold: bool) -> String {
    format!(
        r#"<a:rPr lang="zh-CN" altLang="en-US" sz="{}"{} dirty="0"><a:solidFill><a:srgbClr val="{colour:06X}"/></a:solidFill><a:latin typeface="{TYPEFACE}"/><a:ea typeface="{TYPEFACE}"/><a:cs typeface="{TYPEFACE}"/></a:rPr>"#,
        (size_pt * 100.0).round() as i64,
        if bold { r#" b="1""# } else { "" },
    )
}

fn text_body(text: &TextBox) -> String {
    let size = text.fitted.size_pt;
    let mut xml = format!(
        r#"<p:txBody><a:bodyPr wrap="square" lIns="{INSET_X}" tIns="{INSET_Y}" rIns="{INSET_X}" bIns="{INSET_Y}" anchor="{}" rtlCol="0"><a:noAutofit/></a:bodyPr><a:lstStyle/>"#,
        if text.middle { "ctr" } else { "t" }
    );
    let spacing = (size * LINE_SPACING * 100.0).round() as i64;
    let after = (size * PARAGRAPH_GAP * 100.0).round() as i64;
    for (i, paragraph) in text.paragraphs.iter().enumerate() {
        let align = if text.centred { "ctr" } else { "l" };
        let after = if i + 1 == text.paragraphs.len() {
            0
        } else {
            after
        };
        let bullet = if text.bullets {
            format!(r#" marL="{BULLET_INDENT}" indent="-{BULLET_INDENT}""#)
        } else {
            r#" marL="0" indent="0""#.to_string()
        };
        let _ = write!(
            xml,
            r#"<a:p><a:pPr{bullet} algn="{align}"><a:lnSpc><a:spcPts val="{spacing}"/></a:lnSpc><a:spcBef><a:spcPts val="0"/></a:spcBef><a:spcAft><a:spcPts val="{after}"/></a:spcAft>{}</a:pPr><a:r>{}<a:t>{}</a:t></a:r></a:p>"#,
            if text.bullets {
                format!(
                    r#"<a:buClr><a:srgbClr val="{:06X}"/></a:buClr><a:buFont typeface="Arial"/><a:buChar char="&#8226;"/>"#,
                    text.colour
                )
            } else {
                "<a:buNone/>".to_string()
            },
            run_properties(size, text.colour, text.bold),
            esc(paragraph),
        );
    }
    xml.push_str("</p:txBody>");
    xml
}

fn xfrm(rect: Rect) -> String {
    format!(
        r#"<a:xfrm><a:off x="{}" y="{}"/><a:ext cx="{}" cy="{}"/></a:xfrm>"#,
        rect.x, rect.y, rect.w, rect.h
    )
}

const XML_HEAD: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>"#;
const NS: &str = r#"xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main""#;
const R_NS: &str = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";

fn slide_xml(
    slide: &LaidOut,
    t: &Template,
    logo_rel: Option<&str>,
    figure_rels: &[(usize, String)],
) -> String {
    let mut tree = String::new();
    // Shape ids: 1 is the tree; shape i is i + 2.
    for (i, shape) in slide.shapes.iter().enumerate() {
        let id = i + 2;
        match shape {
            Shape::Fill {
                geometry,
                rect,
                fill,
                text,
            } => {
                let _ = write!(
                    tree,
                    r#"<p:sp><p:nvSpPr><p:cNvPr id="{id}" name="Shape {id}"/><p:cNvSpPr/><p:nvPr/></p:nvSpPr><p:spPr>{}<a:prstGeom prst="{geometry}"><a:avLst/></a:prstGeom><a:solidFill><a:srgbClr val="{fill:06X}"/></a:solidFill><a:ln><a:noFill/></a:ln></p:spPr>{}</p:sp>"#,
                    xfrm(*rect),
                    match text {
                        Some(text) => text_body(text),
                        None => r#"<p:txBody><a:bodyPr rtlCol="0" anchor="ctr"/><a:lstStyle/><a:p><a:endParaRPr lang="zh-CN" altLang="en-US" dirty="0"/></a:p></p:txBody>"#.to_string(),
                    }
                );
            }
            Shape::Text(text) => {
                let _ = write!(
                    tree,
                    r#"<p:sp><p:nvSpPr><p:cNvPr id="{id}" name="TextBox {id}"/><p:cNvSpPr txBox="1"/><p:nvPr/></p:nvSpPr><p:spPr>{}<a:prstGeom prst="rect"><a:avLst/></a:prstGeom><a:noFill/></p:spPr>{}</p:sp>"#,
                    xfrm(text.rect),
                    text_body(text)
                );
            }
            Shape::Arrow {
                from,
                from_site,
                to,
                to_site,
                colour,
            } => {
                let (Some(a), Some(b)) = (
                    slide.shapes.get(*from).and_then(Shape::rect),
                    slide.shapes.get(*to).and_then(Shape::rect),
                ) else {
                    continue;
                };
                let (x1, y1) = site(a, *from_site);
                let (x2, y2) = site(b, *to_site);
                let flip_h = x2 < x1;
                let flip_v = y2 < y1;
                let _ = write!(
                    tree,
                    r#"<p:cxnSp><p:nvCxnSpPr><p:cNvPr id="{id}" name="Arrow {id}"/><p:cNvCxnSpPr><a:stCxn id="{}" idx="{from_site}"/><a:endCxn id="{}" idx="{to_site}"/></p:cNvCxnSpPr><p:nvPr/></p:nvCxnSpPr><p:spPr><a:xfrm{}{}><a:off x="{}" y="{}"/><a:ext cx="{}" cy="{}"/></a:xfrm><a:prstGeom prst="straightConnector1"><a:avLst/></a:prstGeom><a:ln w="28575"><a:solidFill><a:srgbClr val="{colour:06X}"/></a:solidFill><a:tailEnd type="triangle" w="med" len="med"/></a:ln></p:spPr></p:cxnSp>"#,
                    from + 2,
                    to + 2,
                    if flip_h { r#" flipH="1""# } else { "" },
                    if flip_v { r#" flipV="1""# } else { "" },
                    x1.min(x2),
                    y1.min(y2),
                    (x2 - x1).abs(),
                    (y2 - y1).abs(),
                );
            }
            Shape::Figure { rect, index } => {
                let Some((_, rel)) = figure_rels.iter().find(|(i, _)| i == index) else {
                    continue;
                };
                let _ = write!(
                    tree,
                    r#"<p:pic><p:nvPicPr><p:cNvPr id="{id}" name="图片 {id}" descr="论文插图"/><p:cNvPicPr><a:picLocks noChangeAspect="1"/></p:cNvPicPr><p:nvPr/></p:nvPicPr><p:blipFill><a:blip r:embed="{rel}"/><a:stretch><a:fillRect/></a:stretch></p:blipFill><p:spPr>{}<a:prstGeom prst="rect"><a:avLst/></a:prstGeom></p:spPr></p:pic>"#,
                    xfrm(*rect)
                );
            }
            Shape::Table(table) => {
                let _ = write!(
                    tree,
                    r#"<p:graphicFrame><p:nvGraphicFramePr><p:cNvPr id="{id}" name="表格 {id}"/><p:cNvGraphicFramePr><a:graphicFrameLocks noGrp="1"/></p:cNvGraphicFramePr><p:nvPr/></p:nvGraphicFramePr><p:xfrm><a:off x="{}" y="{}"/><a:ext cx="{}" cy="{}"/></p:xfrm><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/table">{}</a:graphicData></a:graphic></p:graphicFrame>"#,
                    table.rect.x,
                    table.rect.y,
                    table.rect.w,
                    table.rect.h,
                    table_xml(table)
                );
            }
            Shape::Logo(rect) => {
                let Some(rel) = logo_rel else { continue };
                let _ = write!(
                    tree,
                    r#"<p:pic><p:nvPicPr><p:cNvPr id="{id}" name="校徽 {id}" descr="校徽"/><p:cNvPicPr><a:picLocks noChangeAspect="1"/></p:cNvPicPr><p:nvPr/></p:nvPicPr><p:blipFill><a:blip r:embed="{rel}"/><a:stretch><a:fillRect/></a:stretch></p:blipFill><p:spPr>{}<a:prstGeom prst="rect"><a:avLst/></a:prstGeom></p:spPr></p:pic>"#,
                    xfrm(*rect)
                );
            }
        }
    }
    format!(
        r#"{XML_HEAD}<p:sld {NS}><p:cSld><p:bg><p:bgPr><a:solidFill><a:srgbClr val="{:06X}"/></a:solidFill><a:effectLst/></p:bgPr></p:bg><p:spTree><p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="0" cy="0"/><a:chOff x="0" y="0"/><a:chExt cx="0" cy="0"/></a:xfrm></p:grpSpPr>{tree}</p:spTree></p:cSld><p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:sld>"#,
        t.background
    )
}

/// A table as DrawingML: explicit widths, heights, margins, fills and borders (no table style,
/// so every viewer draws it alike); the header row bold on the template's colour; each cell's
/// text one paragraph at the fitted size with the exact line spacing the heights were
/// measured with.
fn table_xml(table: &TableBox) -> String {
    let size = table.size_pt;
    let spacing = (size * LINE_SPACING * 100.0).round() as i64;
    let border = |side: &str| {
        format!(
            r#"<a:{side} w="9525"><a:solidFill><a:srgbClr val="{:06X}"/></a:solidFill></a:{side}>"#,
            table.line
        )
    };
    let borders: String = ["lnL", "lnR", "lnT", "lnB"]
        .iter()
        .map(|s| border(s))
        .collect();
    let mut xml = String::from(r#"<a:tbl><a:tblPr firstRow="1" bandRow="1"/><a:tblGrid>"#);
    for w in &table.columns {
        let _ = write!(xml, r#"<a:gridCol w="{w}"/>"#);
    }
    xml.push_str("</a:tblGrid>");
    for (r, (cells, height)) in table.cells.iter().zip(&table.heights).enumerate() {
        let header = r == 0;
        let (fill, colour) = if header {
            (table.header_fill, table.header_colour)
        } else if r % 2 == 0 {
            (table.band_fill, table.colour)
        } else {
            (table.fill, table.colour)
        };
        let _ = write!(xml, r#"<a:tr h="{height}">"#);
        for cell in cells {
            let text = &cell.text;
            let _ = write!(
                xml,
                r#"<a:tc><a:txBody><a:bodyPr/><a:lstStyle/><a:p><a:pPr algn="ctr"><a:lnSpc><a:spcPts val="{spacing}"/></a:lnSpc><a:spcBef><a:spcPts val="0"/></a:spcBef><a:spcAft><a:spcPts val="0"/></a:spcAft><a:buNone/></a:pPr>{}</a:p></a:txBody><a:tcPr marL="{INSET_X}" marR="{INSET_X}" marT="{INSET_Y}" marB="{INSET_Y}" anchor="ctr">{borders}<a:solidFill><a:srgbClr val="{fill:06X}"/></a:solidFill></a:tcPr></a:tc>"#,
                if text.is_empty() {
                    format!(
                        r#"<a:endParaRPr lang="zh-CN" altLang="en-US" sz="{}" dirty="0"/>"#,
                        (size * 100.0).round() as i64
                    )
                } else {
                    format!(
                        "<a:r>{}<a:t>{}</a:t></a:r>",
                        run_properties(size, colour, header),
                        esc(text)
                    )
                }
            );
        }
        xml.push_str("</a:tr>");
    }
    xml.push_str("</a:tbl>");
    xml
}

fn notes_xml(slide_number: usize, notes: &str) -> String {
    let paragraphs: String = notes
        .split('\n')
        .map(|p| {
            format!(
                r#"<a:p><a:r><a:rPr lang="zh-CN" altLang="en-US" dirty="0"><a:latin typeface="{TYPEFACE}"/><a:ea typeface="{TYPEFACE}"/></a:rPr><a:t>{}</a:t></a:r></a:p>"#,
                esc(p)
            )
        })
        .collect();
    format!(
        r#"{XML_HEAD}<p:notes {NS}><p:cSld><p:spTree><p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="0" cy="0"/><a:chOff x="0" y="0"/><a:chExt cx="0" cy="0"/></a:xfrm></p:grpSpPr><p:sp><p:nvSpPr><p:cNvPr id="2" name="幻灯片图像占位符 {slide_number}"/><p:cNvSpPr><a:spLocks noGrp="1" noRot="1" noChangeAspect="1"/></p:cNvSpPr><p:nvPr><p:ph type="sldImg"/></p:nvPr></p:nvSpPr><p:spPr/></p:sp><p:sp><p:nvSpPr><p:cNvPr id="3" name="备注占位符 {slide_number}"/><p:cNvSpPr><a:spLocks noGrp="1"/></p:cNvSpPr><p:nvPr><p:ph type="body" idx="1"/></p:nvPr></p:nvSpPr><p:spPr/><p:txBody><a:bodyPr/><a:lstStyle/>{paragraphs}</p:txBody></p:sp></p:spTree></p:cSld><p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:notes>"#
    )
}

fn theme_xml(name: &str, t: &Template) -> String {
    let c = |v: u32| format!(r#"<a:srgbClr val="{v:06X}"/>"#);
    let fonts = format!(
        r#"<a:latin typeface="{TYPEFACE}"/><a:ea typeface="{TYPEFACE}"/><a:cs typeface=""/><a:font script="Hans" typeface="{TYPEFACE}"/><a:font script="Hant" typeface="微軟正黑體"/><a:font script="Jpan" typeface="Yu Gothic"/>"#
    );
    format!(
        r#"{XML_HEAD}<a:theme xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" name="{name}"><a:themeElements><a:clrScheme name="{name}"><a:dk1>{}</a:dk1><a:lt1>{}</a:lt1><a:dk2>{}</a:dk2><a:lt2><a:srgbClr val="E7E6E6"/></a:lt2><a:accent1>{}</a:accent1><a:accent2>{}</a:accent2><a:accent3><a:srgbClr val="A5A5A5"/></a:accent3><a:accent4><a:srgbClr val="FFC000"/></a:accent4><a:accent5><a:srgbClr val="5B9BD5"/></a:accent5><a:accent6><a:srgbClr val="70AD47"/></a:accent6><a:hlink><a:srgbClr val="0563C1"/></a:hlink><a:folHlink><a:srgbClr val="954F72"/></a:folHlink></a:clrScheme><a:fontScheme name="{name}"><a:majorFont>{fonts}</a:majorFont><a:minorFont>{fonts}</a:minorFont></a:fontScheme><a:fmtScheme name="{name}"><a:fillStyleLst><a:solidFill><a:schemeClr val="phClr"/></a:solidFill><a:solidFill><a:schemeClr val="phClr"><a:tint val="50000"/></a:schemeClr></a:solidFill><a:solidFill><a:schemeClr val="phClr"><a:shade val="80000"/></a:schemeClr></a:solidFill></a:fillStyleLst><a:lnStyleLst><a:ln w="6350"><a:solidFill><a:schemeClr val="phClr"/></a:solidFill></a:ln><a:ln w="12700"><a:solidFill><a:schemeClr val="phClr"/></a:solidFill></a:ln><a:ln w="19050"><a:solidFill><a:schemeClr val="phClr"/></a:solidFill></a:ln></a:lnStyleLst><a:effectStyleLst><a:effectStyle><a:effectLst/></a:effectStyle><a:effectStyle><a:effectLst/></a:effectStyle><a:effectStyle><a:effectLst/></a:effectStyle></a:effectStyleLst><a:bgFillStyleLst><a:solidFill><a:schemeClr val="phClr"/></a:solidFill><a:solidFill><a:schemeClr val="phClr"><a:tint val="95000"/></a:schemeClr></a:solidFill><a:solidFill><a:schemeClr val="phClr"><a:shade val="90000"/></a:schemeClr></a:solidFill></a:bgFillStyleLst></a:fmtScheme></a:themeElements><a:objectDefaults/><a:extraClrSchemeLst/></a:theme>"#,
        c(t.text),
        c(t.background),
        c(t.primary),
        c(t.primary),
        c(t.accent),
    )
}

const EMPTY_TREE: &str = r#"<p:spTree><p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="0" cy="0"/><a:chOff x="0" y="0"/><a:chExt cx="0" cy="0"/></a:xfrm></p:grpSpPr></p:spTree>"#;
const CLR_MAP: &str = r#"bg1="lt1" tx1="dk1" bg2="lt2" tx2="dk2" accent1="accent1" accent2="accent2" accent3="accent3" accent4="accent4" accent5="accent5" accent6="accent6" hlink="hlink" folHlink="folHlink""#;

fn master_xml() -> String {
    let level = |l: u8| {
        format!(
            r#"<a:lvl{l}pPr marL="{}" algn="l" defTabSz="914400"><a:defRPr sz="1800" kern="1200"><a:solidFill><a:schemeClr val="tx1"/></a:solidFill><a:latin typeface="+mn-lt"/><a:ea typeface="+mn-ea"/><a:cs typeface="+mn-cs"/></a:defRPr></a:lvl{l}pPr>"#,
            (l as i64 - 1) * 457_200
        )
    };
    let levels: String = (1..=9).map(level).collect();
    format!(
        r#"{XML_HEAD}<p:sldMaster {NS}><p:cSld><p:bg><p:bgRef idx="1001"><a:schemeClr val="bg1"/></p:bgRef></p:bg>{EMPTY_TREE}</p:cSld><p:clrMap {CLR_MAP}/><p:sldLayoutIdLst><p:sldLayoutId id="2147483649" r:id="rId1"/></p:sldLayoutIdLst><p:txStyles><p:titleStyle><a:lvl1pPr algn="l"><a:defRPr sz="3200" kern="1200"><a:solidFill><a:schemeClr val="tx1"/></a:solidFill><a:latin typeface="+mj-lt"/><a:ea typeface="+mj-ea"/><a:cs typeface="+mj-cs"/></a:defRPr></a:lvl1pPr></p:titleStyle><p:bodyStyle>{levels}</p:bodyStyle><p:otherStyle>{levels}</p:otherStyle></p:txStyles></p:sldMaster>"#
    )
}

fn layout_xml() -> String {
    format!(
        r#"{XML_HEAD}<p:sldLayout {NS} type="blank" preserve="1"><p:cSld name="空白">{EMPTY_TREE}</p:cSld><p:clrMapOvr><a:masterClrMapping/></p:clrMapOvr></p:sldLayout>"#
    )
}

fn notes_master_xml() -> String {
    format!(
        r#"{XML_HEAD}<p:notesMaster {NS}><p:cSld><p:bg><p:bgRef idx="1001"><a:schemeClr val="bg1"/></p:bgRef></p:bg><p:spTree><p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="0" cy="0"/><a:chOff x="0" y="0"/><a:chExt cx="0" cy="0"/></a:xfrm></p:grpSpPr><p:sp><p:nvSpPr><p:cNvPr id="2" name="幻灯片图像占位符 1"/><p:cNvSpPr><a:spLocks noGrp="1" noRot="1" noChangeAspect="1"/></p:cNvSpPr><p:nvPr><p:ph type="sldImg" idx="2"/></p:nvPr></p:nvSpPr><p:spPr><a:xfrm><a:off x="685800" y="1143000"/><a:ext cx="5486400" cy="3086100"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom><a:noFill/></p:spPr></p:sp><p:sp><p:nvSpPr><p:cNvPr id="3" name="备注占位符 2"/><p:cNvSpPr><a:spLocks noGrp="1"/></p:cNvSpPr><p:nvPr><p:ph type="body" sz="quarter" idx="3"/></p:nvPr></p:nvSpPr><p:spPr><a:xfrm><a:off x="685800" y="4400550"/><a:ext cx="5486400" cy="3600450"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></p:spPr><p:txBody><a:bodyPr/><a:lstStyle/><a:p><a:endParaRPr lang="zh-CN" altLang="en-US"/></a:p></p:txBody></p:sp></p:spTree></p:cSld><p:clrMap {CLR_MAP}/><p:notesStyle><a:lvl1pPr marL="0" algn="l" defTabSz="914400"><a:defRPr sz="1200" kern="1200"><a:solidFill><a:schemeClr val="tx1"/></a:solidFill><a:latin typeface="+mn-lt"/><a:ea typeface="+mn-ea"/><a:cs typeface="+mn-cs"/></a:defRPr></a:lvl1pPr></p:notesStyle></p:notesMaster>"#
    )
}

/// An office relationship type.
fn office(kind: &str) -> String {
    format!("{R_NS}/{kind}")
}

/// A relationships part: (id, type, target) each.
fn rels(entries: &[(&str, String, String)]) -> String {
    let mut xml = format!(
        r#"{XML_HEAD}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">"#
    );
    for (id, kind, target) in entries {
        let _ = write!(
            xml,
            r#"<Relationship Id="{id}" Type="{kind}" Target="{}"/>"#,
            esc(target)
        );
    }
    xml.push_str("</Relationships>");
    xml
}

/// Writes the deck as a .pptx file.
/// The pictures of a deck's figure slides, by their index in `Paper::figures`.
pub type Figures = std::collections::BTreeMap<usize, Picture>;

pub fn write(
    deck: &Deck,
    t: &Template,
    logo: Option<&Picture>,
    figures: &Figures,
) -> Result<Vec<u8>, SlidesError> {
    let slides = layout(deck, t, logo)?;
    write_laid_out(deck, t, logo, figures, &slides)
}

/// The figures a slide shows, each with its relationship id (after the layout's, notes' and
/// logo's: rId4 on).
fn figure_rels(slide: &LaidOut) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = Vec::new();
    for shape in &slide.shapes {
        if let Shape::Figure { index, .. } = shape
            && !out.iter().any(|(i, _)| i == index)
        {
            out.push((*index, format!("rId{}", 4 + out.len())));
        }
    }
    out
}

fn write_laid_out(
    deck: &Deck,
    t: &Template,
    logo: Option<&Picture>,
    figures: &Figures,
    slides: &[LaidOut],
) -> Result<Vec<u8>, SlidesError> {
    for (i, slide) in slides.iter().enumerate() {
        if let Some((index, _)) = figure_rels(slide)
            .into_iter()
            .find(|(index, _)| !figures.contains_key(index))
        {
            return Err(SlidesError::Write(format!(
                "第 {} 页的插图（论文第 {} 幅图）缺失",
                i + 1,
                index + 1
            )));
        }
    }
    let n = slides.len();
    let mut parts: Vec<(String, Vec<u8>)> = Vec::new();
    let mut overrides: Vec<(String, &str)> = Vec::new();
    let ct = |s: &str| -> &'static str {
        match s {
            "presentation" => {
                "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"
            }
            "slide" => "application/vnd.openxmlformats-officedocument.presentationml.slide+xml",
            "notes" => {
                "application/vnd.openxmlformats-officedocument.presentationml.notesSlide+xml"
            }
            "notesMaster" => {
                "application/vnd.openxmlformats-officedocument.presentationml.notesMaster+xml"
            }
            "master" => {
                "application/vnd.openxmlformats-officedocument.presentationml.slideMaster+xml"
            }
            "layout" => {
                "application/vnd.openxmlformats-officedocument.presentationml.slideLayout+xml"
            }
            "theme" => "application/vnd.openxmlformats-officedocument.theme+xml",
            "presProps" => {
                "application/vnd.openxmlformats-officedocument.presentationml.presProps+xml"
            }
            "viewProps" => {
                "application/vnd.openxmlformats-officedocument.presentationml.viewProps+xml"
            }
            "tableStyles" => {
                "application/vnd.openxmlformats-officedocument.presentationml.tableStyles+xml"
            }
            "core" => "application/vnd.openxmlformats-package.core-properties+xml",
            _ => "application/vnd.openxmlformats-officedocument.extended-properties+xml",
        }
    };
    let mut put = |path: String, kind: &str, body: String| {
        overrides.push((format!("/{path}"), ct(kind)));
        parts.push((path, body.into_bytes()));
    };

    // Relationships of the presentation: master, notes master, theme, props, then the slides.
    let mut pres_rels: Vec<(String, &str, String)> = vec![
        (
            "rId1".into(),
            "slideMaster",
            "slideMasters/slideMaster1.xml".into(),
        ),
        (
            "rId2".into(),
            "notesMaster",
            "notesMasters/notesMaster1.xml".into(),
        ),
        ("rId3".into(), "theme", "theme/theme1.xml".into()),
        ("rId4".into(), "presProps", "presProps.xml".into()),
        ("rId5".into(), "viewProps", "viewProps.xml".into()),
        ("rId6".into(), "tableStyles", "tableStyles.xml".into()),
    ];
    let mut slide_ids = String::new();
    for i in 1..=n {
        let rid = format!("rId{}", 6 + i);
        let _ = write!(slide_ids, r#"<p:sldId id="{}" r:id="{rid}"/>"#, 255 + i);
        pres_rels.push((rid, "slide", format!("slides/slide{i}.xml")));
    }
    put(
        "ppt/presentation.xml".into(),
        "presentation",
        format!(
            r#"{XML_HEAD}<p:presentation {NS} saveSubsetFonts="1"><p:sldMasterIdLst><p:sldMasterId id="2147483648" r:id="rId1"/></p:sldMasterIdLst><p:notesMasterIdLst><p:notesMasterId r:id="rId2"/></p:notesMasterIdLst><p:sldIdLst>{slide_ids}</p:sldIdLst><p:sldSz cx="{SLIDE_W}" cy="{SLIDE_H}"/><p:notesSz cx="6858000" cy="9144000"/><p:defaultTextStyle><a:lvl1pPr marL="0" algn="l" defTabSz="914400"><a:defRPr sz="1800" kern="1200"><a:solidFill><a:schemeClr val="tx1"/></a:solidFill><a:latin typeface="+mn-lt"/><a:ea typeface="+mn-ea"/><a:cs typeface="+mn-cs"/></a:defRPr></a:lvl1pPr></p:defaultTextStyle></p:presentation>"#
        ),
    );
    let pres_rels: Vec<(&str, String, String)> = pres_rels
        .iter()
        .map(|(id, kind, target)| (id.as_str(), office(kind), target.clone()))
        .collect();
    let mut rel_parts: Vec<(String, String)> =
        vec![("ppt/_rels/presentation.xml.rels".into(), rels(&pres_rels))];
    put(
        "ppt/presProps.xml".into(),
        "presProps",
        format!(r#"{XML_HEAD}<p:presentationPr {NS}/>"#),
    );
    put(
        "ppt/viewProps.xml".into(),
        "viewProps",
        format!(
            r#"{XML_HEAD}<p:viewPr {NS}><p:normalViewPr><p:restoredLeft sz="15620"/><p:restoredTop sz="94660"/></p:normalViewPr><p:gridSpacing cx="72008" cy="72008"/></p:viewPr>"#
        ),
    );
    put(
        "ppt/tableStyles.xml".into(),
        "tableStyles",
        format!(
            r#"{XML_HEAD}<a:tblStyleLst xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" def="{{5C22544A-7EE6-4342-B048-85BDC9FD1C3A}}"/>"#
        ),
    );
    put("ppt/theme/theme1.xml".into(), "theme", theme_xml(t.name, t));
    put("ppt/theme/theme2.xml".into(), "theme", theme_xml("备注", t));
    put(
        "ppt/slideMasters/slideMaster1.xml".into(),
        "master",
        master_xml(),
    );
    put(
        "ppt/slideLayouts/slideLayout1.xml".into(),
        "layout",
        layout_xml(),
    );
    put(
        "ppt/notesMasters/notesMaster1.xml".into(),
        "notesMaster",
        notes_master_xml(),
    );
    let logo_path = logo.map(|l| format!("ppt/media/logo.{}", l.ext));
    for (i, slide) in slides.iter().enumerate() {
        let number = i + 1;
        let uses_logo = slide.shapes.iter().any(|s| matches!(s, Shape::Logo(_)));
        let logo_rel = (uses_logo && logo.is_some()).then_some("rId3");
        put(
            format!("ppt/slides/slide{number}.xml"),
            "slide",
            slide_xml(slide, t, logo_rel, &figure_rels(slide)),
        );
        put(
            format!("ppt/notesSlides/notesSlide{number}.xml"),
            "notes",
            notes_xml(number, &slide.notes),
        );
    }
    put(
        "docProps/core.xml".into(),
        "core",
        format!(
            r#"{XML_HEAD}<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" xmlns:dcmitype="http://purl.org/dc/dcmitype/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><dc:title>{}</dc:title><dc:creator>{}</dc:creator><cp:lastModifiedBy>文鉴</cp:lastModifiedBy></cp:coreProperties>"#,
            esc(&deck.title),
            esc(&deck.meta.presenter)
        ),
    );
    put(
        "docProps/app.xml".into(),
        "app",
        format!(
            r#"{XML_HEAD}<Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties" xmlns:vt="http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes"><Application>文鉴 Wenjian</Application><PresentationFormat>宽屏</PresentationFormat><Slides>{n}</Slides><Notes>{n}</Notes></Properties>"#
        ),
    );

    // Relationships of the other parts.
    let package =
        "http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties";
    rel_parts.extend([
        (
            "_rels/.rels".into(),
            rels(&[
                (
                    "rId1",
                    office("officeDocument"),
                    "ppt/presentation.xml".into(),
                ),
                ("rId2", package.into(), "docProps/core.xml".into()),
                (
                    "rId3",
                    office("extended-properties"),
                    "docProps/app.xml".into(),
                ),
            ]),
        ),
        (
            "ppt/slideMasters/_rels/slideMaster1.xml.rels".into(),
            rels(&[
                (
                    "rId1",
                    office("slideLayout"),
                    "../slideLayouts/slideLayout1.xml".into(),
                ),
                ("rId2", office("theme"), "../theme/theme1.xml".into()),
            ]),
        ),
        (
            "ppt/slideLayouts/_rels/slideLayout1.xml.rels".into(),
            rels(&[(
                "rId1",
                office("slideMaster"),
                "../slideMasters/slideMaster1.xml".into(),
            )]),
        ),
        (
            "ppt/notesMasters/_rels/notesMaster1.xml.rels".into(),
            rels(&[("rId1", office("theme"), "../theme/theme2.xml".into())]),
        ),
    ]);
    for (i, slide) in slides.iter().enumerate() {
        let number = i + 1;
        let mut entries = vec![
            (
                "rId1",
                office("slideLayout"),
                "../slideLayouts/slideLayout1.xml".into(),
            ),
            (
                "rId2",
                office("notesSlide"),
                format!("../notesSlides/notesSlide{number}.xml"),
            ),
        ];
        if slide.shapes.iter().any(|s| matches!(s, Shape::Logo(_)))
            && let Some(l) = logo
        {
            entries.push(("rId3", office("image"), format!("../media/logo.{}", l.ext)));
        }
        let figure_entries = figure_rels(slide);
        for (index, rid) in &figure_entries {
            if let Some(p) = figures.get(index) {
                entries.push((
                    rid,
                    office("image"),
                    format!("../media/figure{index}.{}", p.ext),
                ));
            }
        }
        rel_parts.push((
            format!("ppt/slides/_rels/slide{number}.xml.rels"),
            rels(&entries),
        ));
        rel_parts.push((
            format!("ppt/notesSlides/_rels/notesSlide{number}.xml.rels"),
            rels(&[
                (
                    "rId1",
                    office("notesMaster"),
                    "../notesMasters/notesMaster1.xml".into(),
                ),
                (
                    "rId2",
                    office("slide"),
                    format!("../slides/slide{number}.xml"),
                ),
            ]),
        ));
    }

    let mut types = format!(
        r#"{XML_HEAD}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>"#
    );
    // The figures written: those a slide shows.
    let shown: std::collections::BTreeSet<usize> = slides
        .iter()
        .flat_map(figure_rels)
        .map(|(index, _)| index)
        .collect();
    let extensions: std::collections::BTreeSet<&str> = logo
        .map(|l| l.ext)
        .into_iter()
        .chain(shown.iter().filter_map(|i| figures.get(i)).map(|p| p.ext))
        .collect();
    for ext in extensions {
        let _ = write!(
            types,
            r#"<Default Extension="{ext}" ContentType="image/{ext}"/>"#
        );
    }
    for (path, content_type) in &overrides {
        let _ = write!(
            types,
            r#"<Override PartName="{path}" ContentType="{content_type}"/>"#
        );
    }
    types.push_str("</Types>");

    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    // A fixed timestamp: the same deck is the same bytes (template thumbnails are keyed by them).
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .last_modified_time(zip::DateTime::default());
    let mut add = |path: &str, bytes: &[u8]| -> Result<(), SlidesError> {
        zip.start_file(path, options)
            .map_err(|e| SlidesError::Write(e.to_string()))?;
        zip.write_all(bytes)
            .map_err(|e| SlidesError::Write(e.to_string()))
    };
    add("[Content_Types].xml", types.as_bytes())?;
    for (path, body) in &rel_parts {
        add(path, body.as_bytes())?;
    }
    for (path, body) in &parts {
        add(path, body)?;
    }
    if let (Some(l), Some(path)) = (logo, &logo_path) {
        add(path, &l.bytes)?;
    }
    for index in &shown {
        if let Some(p) = figures.get(index) {
            add(&format!("ppt/media/figure{index}.{}", p.ext), &p.bytes)?;
        }
    }
    let cursor = zip
        .finish()
        .map_err(|e| SlidesError::Write(e.to_string()))?;
    Ok(cursor.into_inner())
}
