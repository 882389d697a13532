//! The PDF report. Layout is done here (pages of rectangles and text runs, with our own line
//! breaking, so highlights sit exactly under their characters); krilla writes the PDF and embeds
//! a subset of the CJK font.

use crate::{COUNTING_RULE, LEGEND, ReportDoc, char_marks, class_style, percent, scope_label};
use krilla::Document;
use krilla::color::rgb;
use krilla::geom::{PathBuilder, Point, Rect};
use krilla::metadata::Metadata;
use krilla::num::NormalizedF32;
use krilla::page::PageSettings;
use krilla::paint::Fill;
use krilla::text::{Font, GlyphId, KrillaGlyph};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Debug, thiserror::Error)]
pub enum PdfError {
    #[error(
        "服务器未安装中文字体，暂时无法生成 PDF 报告（请安装 fonts-noto-cjk，或在配置中设置 report_font）"
    )]
    FontMissing,
    #[error("中文字体文件无法使用：{0}")]
    FontUnusable(String),
    #[error("PDF 报告生成失败：{0}")]
    Render(String),
}

impl PdfError {
    pub fn code(&self) -> &'static str {
        match self {
            PdfError::FontMissing => "pdf_font_missing",
            PdfError::FontUnusable(_) => "pdf_font_unusable",
            PdfError::Render(_) => "pdf_render_failed",
        }
    }
}

/// Where CJK fonts usually are: Debian (fonts-noto-cjk, fonts-wqy-*, fonts-arphic-*), macOS,
/// Windows. The first one present is used unless a path is configured.
const FONT_CANDIDATES: &[&str] = &[
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/opentype/noto/NotoSerifCJK-Regular.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc",
    "/usr/share/fonts/truetype/arphic/uming.ttc",
    "/System/Library/Fonts/PingFang.ttc",
    "C:\\Windows\\Fonts\\msyh.ttc",
];

/// A CJK font loaded once and shared by every PDF rendered afterwards.
#[derive(Clone)]
pub struct PdfFont {
    data: Arc<Vec<u8>>,
    index: u32,
    font: Font,
    pub path: PathBuf,
}

impl std::fmt::Debug for PdfFont {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PdfFont({}#{})", self.path.display(), self.index)
    }
}

impl PdfFont {
    /// The configured font, or the first known CJK font on this machine.
    pub fn discover(configured: Option<&Path>) -> Result<PdfFont, PdfError> {
        if let Some(path) = configured {
            return PdfFont::load(path);
        }
        FONT_CANDIDATES
            .iter()
            .map(Path::new)
            .find(|p| p.is_file())
            .ok_or(PdfError::FontMissing)
            .and_then(PdfFont::load)
    }

    /// A font file; in a collection, the Simplified Chinese face (else the first that has 中).
    pub fn load(path: &Path) -> Result<PdfFont, PdfError> {
        let data = std::fs::read(path)
            .map_err(|e| PdfError::FontUnusable(format!("{}：{e}", path.display())))?;
        let faces = ttf_parser::fonts_in_collection(&data).unwrap_or(1);
        let has_cjk = |i: u32| {
            ttf_parser::Face::parse(&data, i)
                .ok()
                .filter(|f| f.glyph_index('中').is_some() && f.glyph_index('文').is_some())
        };
        let is_sc = |face: &ttf_parser::Face<'_>| {
            face.names().into_iter().any(|n| {
                n.to_string()
                    .is_some_and(|s| s.ends_with(" SC") || s.contains(" SC ") || s.contains("GB"))
            })
        };
        let index = (0..faces)
            .find(|&i| has_cjk(i).is_some_and(|f| is_sc(&f)))
            .or_else(|| (0..faces).find(|&i| has_cjk(i).is_some()))
            .ok_or_else(|| PdfError::FontUnusable(format!("{} 不含中文字形", path.display())))?;
        let data = Arc::new(data);
        let font = Font::new(data.clone().into(), index)
            .ok_or_else(|| PdfError::FontUnusable(path.display().to_string()))?;
        Ok(PdfFont {
            data,
            index,
            font,
            path: path.to_path_buf(),
        })
    }
}

pub(crate) const PAGE_W: f32 = 595.0;
pub(crate) const PAGE_H: f32 = 842.0;
pub(crate) const MARGIN: f32 = 56.0;
const BOTTOM: f32 = PAGE_H - 64.0;
pub(crate) const BLACK: [u8; 3] = [34, 34, 34];
pub(crate) const GREY: [u8; 3] = [120, 120, 120];
pub(crate) const BRAND: [u8; 3] = [22, 119, 255];

enum Op {
    Rect {
        x: f32,
        y: f32,
        w: f32,
        h: f32,
        color: [u8; 3],
    },
    Text {
        x: f32,
        y: f32,
        size: f32,
        color: [u8; 3],
        text: String,
    },
}

/// Advance widths (in em) from the font's metrics, cached per character.
pub(crate) struct Metrics<'f> {
    face: ttf_parser::Face<'f>,
    cache: HashMap<char, (u16, f32)>,
}

impl<'f> Metrics<'f> {
    pub(crate) fn glyph(&mut self, c: char) -> (u16, f32) {
        if let Some(g) = self.cache.get(&c) {
            return *g;
        }
        let upem = self.face.units_per_em() as f32;
        let g = match self.face.glyph_index(c) {
            Some(id) => (
                id.0,
                self.face.glyph_hor_advance(id).unwrap_or(0) as f32 / upem,
            ),
            None => (0, if c.is_ascii() { 0.5 } else { 1.0 }),
        };
        self.cache.insert(c, g);
        g
    }

    pub(crate) fn width(&mut self, text: &str, size: f32) -> f32 {
        text.chars().map(|c| self.glyph(c).1).sum::<f32>() * size
    }
}

/// Characters that must not begin a line (Chinese line-breaking rules): they hang at the end of
/// the previous one instead.
fn no_line_start(c: char) -> bool {
    "，。、；：？！）》」』”’】〕…—,.;:?!)]%".contains(c)
}

pub(crate) struct Layout<'f> {
    pages: Vec<Vec<Op>>,
    pub(crate) y: f32,
    pub(crate) metrics: Metrics<'f>,
}

impl<'f> Layout<'f> {
    fn new(metrics: Metrics<'f>) -> Self {
        Layout {
            pages: vec![vec![]],
            y: MARGIN,
            metrics,
        }
    }

    fn ops(&mut self) -> &mut Vec<Op> {
        self.pages.last_mut().expect("at least one page")
    }

    pub(crate) fn new_page(&mut self) {
        self.pages.push(vec![]);
        self.y = MARGIN;
    }

    /// Starts a new page unless `height` more fits on this one.
    pub(crate) fn ensure(&mut self, height: f32) {
        if self.y + height > BOTTOM {
            self.new_page();
        }
    }

    pub(crate) fn text(
        &mut self,
        x: f32,
        y: f32,
        size: f32,
        color: [u8; 3],
        text: impl Into<String>,
    ) {
        self.ops().push(Op::Text {
            x,
            y,
            size,
            color,
            text: text.into(),
        });
    }

    pub(crate) fn rect(&mut self, x: f32, y: f32, w: f32, h: f32, color: [u8; 3]) {
        self.ops().push(Op::Rect { x, y, w, h, color });
    }

    /// Breaks `chars` into lines of at most `width` points.
    pub(crate) fn lines(&mut self, chars: &[char], size: f32, width: f32) -> Vec<(usize, usize)> {
        let mut lines = vec![];
        let mut start = 0;
        let mut used = 0.0;
        for (i, &c) in chars.iter().enumerate() {
            let w = self.metrics.glyph(c).1 * size;
            if used + w > width && i > start && !no_line_start(c) {
                lines.push((start, i));
                start = i;
                used = 0.0;
            }
            used += w;
        }
        if start < chars.len() || lines.is_empty() {
            lines.push((start, chars.len()));
        }
        lines
    }

    /// A wrapped paragraph in one colour.
    pub(crate) fn paragraph(&mut self, text: &str, size: f32, color: [u8; 3], x: f32, width: f32) {
        let chars: Vec<char> = text.chars().collect();
        let line_h = size * 1.6;
        for (s, e) in self.lines(&chars, size, width) {
            self.ensure(line_h);
            let line: String = chars[s..e].iter().collect();
            let y = self.y + size;
            self.text(x, y, size, color, line);
            self.y += line_h;
        }
    }

    pub(crate) fn heading(&mut self, text: &str) {
        self.ensure(60.0);
        self.y += 12.0;
        self.rect(MARGIN, self.y + 2.0, 4.0, 16.0, BRAND);
        self.text(MARGIN + 10.0, self.y + 15.0, 14.0, BLACK, text);
        self.y += 28.0;
    }

    /// Fits `text` into `width` points, cutting it with an ellipsis.
    pub(crate) fn fit(&mut self, text: &str, size: f32, width: f32) -> String {
        if self.metrics.width(text, size) <= width {
            return text.to_string();
        }
        let mut out = String::new();
        let mut used = self.metrics.width("…", size);
        for c in text.chars() {
            used += self.metrics.glyph(c).1 * size;
            if used > width {
                break;
            }
            out.push(c);
        }
        out.push('…');
        out
    }
}

fn ratio_color(ratio: f64) -> [u8; 3] {
    if ratio < 10.0 {
        [56, 158, 13]
    } else if ratio < 30.0 {
        [212, 136, 6]
    } else {
        [207, 19, 34]
    }
}

fn cover(l: &mut Layout<'_>, doc: &ReportDoc<'_>) {
    let r = doc.report;
    let content_w = PAGE_W - 2.0 * MARGIN;
    cover_top(
        l,
        "文鉴论文检测报告",
        "文字复制比检测",
        &[
            ("报告编号", doc.number.clone()),
            ("验证码", doc.verification.cover_value()),
            ("检测时间", doc.clock.shown(doc.checked_at_ms)),
            ("论文题目", doc.title.clone()),
            ("作者", author_or_blank(&doc.author)),
            ("检测字数", format!("{} 字", r.total_chars)),
        ],
    );
    l.y += 20.0;
    let color = ratio_color(r.ratio_total);
    l.text(MARGIN, l.y + 12.0, 12.0, GREY, "总文字复制比");
    l.text(
        MARGIN + 84.0,
        l.y + 22.0,
        28.0,
        color,
        percent(r.ratio_total),
    );
    l.y += 36.0;
    l.rect(MARGIN, l.y, content_w, 8.0, [240, 240, 240]);
    let filled = (r.ratio_total.clamp(0.0, 100.0) as f32 / 100.0) * content_w;
    if filled > 0.0 {
        l.rect(MARGIN, l.y, filled, 8.0, color);
    }
    l.y += 26.0;
    let figures = [
        ("去除引用文献复制比", percent(r.ratio_excluding_quotes)),
        ("去除本人已发表文献复制比", percent(r.ratio_excluding_own)),
        ("单篇最大文字复制比", percent(r.ratio_max_single_source)),
        ("重复字数", format!("{} 字", r.copied_chars)),
        (
            "疑似意译字数（不计入复制比）",
            format!("{} 字", r.paraphrase_chars),
        ),
        (
            "疑似翻译字数（不计入复制比）",
            format!("{} 字", r.translated_chars),
        ),
        (
            if r.common_counted {
                "常用表述字数（已计入复制比）"
            } else {
                "常用表述字数（不计入复制比）"
            },
            format!("{} 字", r.common_chars),
        ),
        ("相似来源", format!("{} 篇", crate::listed_sources(r).len())),
    ];
    let col = content_w / 2.0;
    for (i, (label, value)) in figures.iter().enumerate() {
        let x = MARGIN + (i % 2) as f32 * col;
        let y = l.y + (i / 2) as f32 * 44.0;
        l.rect(x, y, col - 8.0, 38.0, [247, 248, 250]);
        l.text(x + 8.0, y + 15.0, 9.0, GREY, *label);
        l.text(x + 8.0, y + 32.0, 13.0, BLACK, value.clone());
    }
    l.y += 44.0 * figures.len().div_ceil(2) as f32 + 12.0;
    settings_block(l, &doc.settings);
    if doc.private_library {
        l.paragraph(
            "本文已按您的选择加入您的私有比对库，仅用于比对您之后提交的稿件，不会进入公共文献库。",
            9.5,
            GREY,
            MARGIN,
            content_w,
        );
    }
    l.y = PAGE_H - 150.0;
    l.rect(MARGIN, l.y, content_w, 0.6, [220, 220, 220]);
    l.y += 10.0;
    l.paragraph(&doc.verification.note(), 9.0, GREY, MARGIN, content_w);
    l.paragraph(
        &format!("{COUNTING_RULE}{}", crate::uncounted_note(r)),
        9.0,
        GREY,
        MARGIN,
        content_w,
    );
    l.paragraph(
        &format!("检测引擎：{}", simcheck::ENGINE_VERSION),
        9.0,
        GREY,
        MARGIN,
        content_w,
    );
}

/// 检测设置: the settings the figures were made under, one line each.
pub(crate) fn settings_block(l: &mut Layout<'_>, settings: &[String]) {
    if settings.is_empty() {
        return;
    }
    let content_w = PAGE_W - 2.0 * MARGIN;
    l.text(MARGIN, l.y + 11.0, 10.0, BLACK, "检测设置");
    l.y += 16.0;
    for line in settings {
        l.paragraph(&format!("· {line}"), 9.0, GREY, MARGIN, content_w);
    }
    l.y += 6.0;
}

/// The top of a cover: the brand bar, the centred title and subtitle, then labelled rows.
pub(crate) fn cover_top(l: &mut Layout<'_>, title: &str, subtitle: &str, rows: &[(&str, String)]) {
    let content_w = PAGE_W - 2.0 * MARGIN;
    l.rect(0.0, 0.0, PAGE_W, 8.0, BRAND);
    let w = l.metrics.width(title, 24.0);
    l.text((PAGE_W - w) / 2.0, 110.0, 24.0, BLACK, title);
    let w = l.metrics.width(subtitle, 12.0);
    l.text((PAGE_W - w) / 2.0, 134.0, 12.0, GREY, subtitle);
    l.y = 170.0;
    for (label, value) in rows {
        l.text(MARGIN, l.y + 11.0, 11.0, GREY, *label);
        l.paragraph(value, 11.0, BLACK, MARGIN + 70.0, content_w - 70.0);
        l.y += 2.0;
    }
}

pub(crate) fn author_or_blank(author: &str) -> String {
    if author.is_empty() {
        "（未填写）".into()
    } else {
        author.to_string()
    }
}

fn chapters(l: &mut Layout<'_>, doc: &ReportDoc<'_>) {
    l.heading("各章节复制比");
    let bar_x = MARGIN + 210.0;
    let bar_w = 170.0;
    let parts: Vec<_> = doc
        .report
        .chapters
        .iter()
        .filter(|c| c.total_chars > 0)
        .collect();
    if parts.is_empty() {
        l.paragraph("（未识别到章节）", 10.0, GREY, MARGIN, 300.0);
    }
    for c in parts {
        l.ensure(20.0);
        let title = if c.title.is_empty() {
            "（正文）".to_string()
        } else {
            c.title.clone()
        };
        let title = l.fit(&title, 10.0, 200.0);
        l.text(MARGIN, l.y + 10.0, 10.0, BLACK, title);
        l.rect(bar_x, l.y + 2.0, bar_w, 9.0, [240, 240, 240]);
        let filled = (c.ratio.clamp(0.0, 100.0) as f32 / 100.0) * bar_w;
        if filled > 0.0 {
            l.rect(bar_x, l.y + 2.0, filled, 9.0, ratio_color(c.ratio));
        }
        l.text(
            bar_x + bar_w + 8.0,
            l.y + 10.0,
            10.0,
            BLACK,
            format!(
                "{}（{}/{} 字）",
                percent(c.ratio),
                c.copied_chars,
                c.total_chars
            ),
        );
        l.y += 20.0;
    }
}

fn sources(l: &mut Layout<'_>, doc: &ReportDoc<'_>) {
    l.heading("相似来源");
    let content_w = PAGE_W - 2.0 * MARGIN;
    let listed = crate::listed_sources(doc.report);
    if listed.is_empty() {
        l.paragraph("未发现相似来源。", 10.0, GREY, MARGIN, content_w);
    }
    for (i, s) in listed.into_iter().enumerate() {
        l.ensure(40.0);
        l.paragraph(
            &format!("{}. {}", i + 1, s.title),
            10.5,
            BLACK,
            MARGIN,
            content_w,
        );
        let mut who = vec![];
        if !s.author.is_empty() {
            who.push(s.author.clone());
        }
        if let Some(y) = s.year {
            who.push(y.to_string());
        }
        who.push(scope_label(s.scope).to_string());
        l.paragraph(
            &format!(
                "{}　　重复字数 {} 字　　占全文 {}",
                who.join("，"),
                s.copied_chars,
                percent(s.ratio)
            ),
            9.0,
            GREY,
            MARGIN + 14.0,
            content_w - 14.0,
        );
        l.y += 4.0;
    }
}

/// 常用表述: wording many library documents share, each with how many use it.
fn common_phrases(l: &mut Layout<'_>, doc: &ReportDoc<'_>) {
    let phrases = crate::common_phrases(doc.report);
    if phrases.is_empty() {
        return;
    }
    let content_w = PAGE_W - 2.0 * MARGIN;
    l.heading("常用表述");
    l.paragraph(
        if doc.report.common_counted {
            "以下表述在比对库中被大量文献共同使用；本报告按所选选项将其计入复制比。"
        } else {
            "以下表述在比对库中被大量文献共同使用（如方法、统计学表述），不计入复制比。"
        },
        9.0,
        GREY,
        MARGIN,
        content_w,
    );
    let chars: Vec<char> = doc.text.chars().collect();
    for (i, span) in phrases.iter().enumerate() {
        l.ensure(30.0);
        let phrase: String = chars[span.start.min(chars.len())..span.end.min(chars.len())]
            .iter()
            .collect();
        l.paragraph(
            &format!("{}.［{} 篇文献使用］{phrase}", i + 1, span.docs),
            9.5,
            BLACK,
            MARGIN + 14.0,
            content_w - 14.0,
        );
    }
    l.y += 6.0;
}

/// 相似片段对照, as CNKI's full report prints it: under each source, every matched passage of
/// the paper (原文) above the source's own wording (相似内容).
fn excerpts(l: &mut Layout<'_>, doc: &ReportDoc<'_>) {
    let content_w = PAGE_W - 2.0 * MARGIN;
    let chars: Vec<char> = doc.text.chars().collect();
    let groups = crate::excerpts_by_source(doc.report);
    if groups.is_empty() {
        return;
    }
    l.heading("相似片段对照");
    for (i, (source, spans)) in groups.iter().enumerate() {
        l.ensure(60.0);
        l.paragraph(
            &format!("{}. 《{}》　{} 处", i + 1, source.title, spans.len()),
            10.5,
            BLACK,
            MARGIN,
            content_w,
        );
        for span in spans {
            l.ensure(48.0);
            let (label, _) = class_style(span.class);
            let original: String = chars[span.start.min(chars.len())..span.end.min(chars.len())]
                .iter()
                .collect();
            l.paragraph(
                &format!("原文（{label}，{} 字）：{original}", span.chars),
                9.5,
                BLACK,
                MARGIN + 14.0,
                content_w - 14.0,
            );
            l.paragraph(
                &format!("相似内容：{}", span.source_text),
                9.5,
                GREY,
                MARGIN + 14.0,
                content_w - 14.0,
            );
            l.y += 6.0;
        }
    }
}

fn full_text(l: &mut Layout<'_>, doc: &ReportDoc<'_>) {
    l.heading("全文标注");
    legend(l, &LEGEND.map(class_style));
    let chars: Vec<char> = doc.text.chars().collect();
    let colors: Vec<Option<[u8; 3]>> = char_marks(chars.len(), doc.report)
        .into_iter()
        .map(|m| m.map(|class| class_style(class).1))
        .collect();
    shaded_text(l, &chars, &colors);
}

/// A row of colour swatches with their labels.
pub(crate) fn legend(l: &mut Layout<'_>, items: &[(&str, [u8; 3])]) {
    let mut x = MARGIN;
    for (label, color) in items {
        l.rect(x, l.y + 1.0, 12.0, 10.0, *color);
        l.text(x + 16.0, l.y + 10.0, 9.5, BLACK, *label);
        x += 16.0 + l.metrics.width(label, 9.5) + 18.0;
    }
    l.y += 22.0;
}

/// The text, a paragraph per line, each character on the background colour given for it.
pub(crate) fn shaded_text(l: &mut Layout<'_>, chars: &[char], colors: &[Option<[u8; 3]>]) {
    let size = 10.5;
    let line_h = size * 1.75;
    let content_w = PAGE_W - 2.0 * MARGIN;
    let mut start = 0;
    while start <= chars.len() {
        let end = chars[start..]
            .iter()
            .position(|&c| c == '\n')
            .map(|p| start + p)
            .unwrap_or(chars.len());
        let para = &chars[start..end];
        if para.iter().any(|c| !c.is_whitespace()) {
            for (s, e) in l.lines(para, size, content_w) {
                l.ensure(line_h);
                let baseline = l.y + size;
                let mut x = MARGIN;
                let mut run_start = s;
                // Runs of one colour: a rectangle behind, then the text.
                for i in s..=e {
                    let boundary = i == e || colors[start + i] != colors[start + run_start];
                    if !boundary {
                        continue;
                    }
                    let run: String = para[run_start..i].iter().collect();
                    let w = l.metrics.width(&run, size);
                    if let Some(color) = colors[start + run_start] {
                        l.rect(x, l.y + 1.0, w, line_h - 2.0, color);
                    }
                    l.text(x, baseline + 2.0, size, BLACK, run);
                    x += w;
                    run_start = i;
                }
                l.y += line_h;
            }
            l.y += 4.0;
        }
        start = end + 1;
    }
}

/// The report as PDF bytes.
pub fn render_pdf(doc: &ReportDoc<'_>, font: &PdfFont) -> Result<Vec<u8>, PdfError> {
    let mut l = Layout::for_font(font)?;
    cover(&mut l, doc);
    l.new_page();
    chapters(&mut l, doc);
    sources(&mut l, doc);
    common_phrases(&mut l, doc);
    excerpts(&mut l, doc);
    full_text(&mut l, doc);
    l.write(
        font,
        &format!("文鉴查重报告 - {}", doc.title),
        |n, total| {
            format!(
                "文鉴 · 报告编号 {} · {} · 第 {n} 页 / 共 {total} 页",
                doc.number,
                doc.verification.footer()
            )
        },
    )
}

impl<'f> Layout<'f> {
    pub(crate) fn for_font(font: &'f PdfFont) -> Result<Layout<'f>, PdfError> {
        let face = ttf_parser::Face::parse(&font.data, font.index)
            .map_err(|e| PdfError::FontUnusable(e.to_string()))?;
        Ok(Layout::new(Metrics {
            face,
            cache: HashMap::new(),
        }))
    }

    /// Adds `footer(page, pages)` to every page and writes the PDF.
    pub(crate) fn write(
        mut self,
        font: &PdfFont,
        title: &str,
        footer: impl Fn(usize, usize) -> String,
    ) -> Result<Vec<u8>, PdfError> {
        let l = &mut self;
        let total = l.pages.len();
        for (n, page) in l.pages.iter_mut().enumerate() {
            page.push(Op::Text {
                x: MARGIN,
                y: PAGE_H - 32.0,
                size: 8.5,
                color: GREY,
                text: footer(n + 1, total),
            });
        }
        let mut pdf = Document::new();
        pdf.set_metadata(
            Metadata::new()
                .title(title.to_string())
                .creator("文鉴".into())
                .language("zh-CN".into()),
        );
        let page_settings =
            PageSettings::from_wh(PAGE_W, PAGE_H).ok_or(PdfError::Render("page size".into()))?;
        for ops in &l.pages {
            let mut page = pdf.start_page_with(page_settings.clone());
            let mut surface = page.surface();
            for op in ops {
                match op {
                    Op::Rect { x, y, w, h, color } => {
                        let Some(rect) = Rect::from_xywh(*x, *y, w.max(0.1), h.max(0.1)) else {
                            continue;
                        };
                        let mut path = PathBuilder::new();
                        path.push_rect(rect);
                        if let Some(path) = path.finish() {
                            surface.set_fill(Some(fill(*color)));
                            surface.draw_path(&path);
                        }
                    }
                    Op::Text {
                        x,
                        y,
                        size,
                        color,
                        text,
                    } => {
                        let glyphs: Vec<KrillaGlyph> = text
                            .char_indices()
                            .map(|(at, c)| {
                                let (id, advance) = l.metrics.glyph(c);
                                KrillaGlyph {
                                    glyph_id: GlyphId::new(id as u32),
                                    text_range: at..at + c.len_utf8(),
                                    x_advance: advance,
                                    x_offset: 0.0,
                                    y_offset: 0.0,
                                    y_advance: 0.0,
                                    location: None,
                                }
                            })
                            .collect();
                        surface.set_fill(Some(fill(*color)));
                        surface.draw_glyphs(
                            Point::from_xy(*x, *y),
                            &glyphs,
                            font.font.clone(),
                            text,
                            *size,
                            false,
                        );
                    }
                }
            }
            surface.finish();
            page.finish();
        }
        pdf.finish().map_err(|e| PdfError::Render(format!("{e:?}")))
    }
}

fn fill(color: [u8; 3]) -> Fill {
    Fill {
        paint: rgb::Color::new(color[0], color[1], color[2]).into(),
        opacity: NormalizedF32::ONE,
        rule: Default::default(),
    }
}
