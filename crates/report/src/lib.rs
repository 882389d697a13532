//! The check report as a reader downloads it: a self-contained HTML page or a PDF with an
//! embedded CJK font, a cover with the report number and verification code, the figures, the
//! chapters, the sources and the full text with every span coloured by class. Knows nothing of
//! HTTP or SQL: the caller hands it the report and what to print on the cover.

mod aigc;
mod html;
mod pdf;

pub use aigc::{
    AigcReportDoc, band_rule, band_style, band_totals, provenance, render_aigc_html,
    render_aigc_pdf,
};
pub use html::render_html;
pub use pdf::{PdfError, PdfFont, render_pdf};

use simcheck::{Report, Scope, SpanClass};

/// Everything printed on a report besides the engine's figures.
#[derive(Debug, Clone)]
pub struct ReportDoc<'a> {
    /// `WJ-…`, unique per check.
    pub number: String,
    /// The verification code of the official report, or that this is a custom view.
    pub verification: Verification,
    /// The settings the figures were made under, one line each, printed with them.
    pub settings: Vec<String>,
    pub title: String,
    pub author: String,
    /// When the check finished, Unix milliseconds.
    pub checked_at_ms: i64,
    /// The checked text; span offsets are characters of it.
    pub text: &'a str,
    pub report: &'a Report,
    /// The paper was kept in the owner's private library.
    pub private_library: bool,
}

/// How a printed report can be confirmed. The official report carries its code; a custom view
/// (report options chosen on screen) says what it is instead and carries none, so it can never
/// be passed off as the official figures.
#[derive(Debug, Clone)]
pub enum Verification {
    Official {
        /// As printed (groups of four).
        code: String,
        /// Where anyone holding the code can confirm the report (the public `/verify` page).
        url: String,
    },
    CustomView {
        /// The options chosen, in words (排除引用；忽略少于 20 字的匹配).
        options: String,
    },
}

impl Verification {
    /// What the cover prints beside 验证码.
    pub fn cover_value(&self) -> String {
        match self {
            Verification::Official { code, .. } => code.clone(),
            Verification::CustomView { .. } => "无（自定义视图，非正式报告）".into(),
        }
    }

    /// The page footer's part.
    pub fn footer(&self) -> String {
        match self {
            Verification::Official { code, .. } => format!("验证码 {code}"),
            Verification::CustomView { .. } => "自定义视图 · 非正式报告".into(),
        }
    }

    /// How to confirm the report, or why this copy cannot be.
    pub fn note(&self) -> String {
        match self {
            Verification::Official { code, url } => {
                format!("真伪核验：打开 {url} ，输入验证码 {code} ，可查看本报告的编号与主要指标。")
            }
            Verification::CustomView { options } => format!(
                "本文件为自定义视图（{options}），按所选报告选项重新计算，不是正式报告，没有验证码；正式报告请下载默认视图。"
            ),
        }
    }
}

/// The character-counting rule, printed with the figures.
pub const COUNTING_RULE: &str = "字数按除空白（空格、换行）以外的全部字符计算，含汉字、字母、数字与标点；目录与参考文献不计入检测字数。";

/// How a span class is shown: label and highlight colour (also the legend).
pub fn class_style(class: SpanClass) -> (&'static str, [u8; 3]) {
    match class {
        SpanClass::Copy => ("复制", [255, 204, 199]),
        SpanClass::LightEdit => ("轻度改写", [255, 231, 186]),
        SpanClass::Quoted => ("引用", [217, 247, 190]),
        SpanClass::Paraphrase => ("疑似意译", [239, 219, 255]),
    }
}

pub const LEGEND: [SpanClass; 4] = [
    SpanClass::Copy,
    SpanClass::LightEdit,
    SpanClass::Quoted,
    SpanClass::Paraphrase,
];

pub fn scope_label(scope: Scope) -> &'static str {
    match scope {
        Scope::Public => "公开文献库",
        Scope::Private => "本人私有库",
        Scope::OwnPublished => "本人已发表",
    }
}

/// The matched passages of each source (in the report's order of sources), each with the
/// source's own wording; suspected paraphrases are left out (they do not count).
pub fn excerpts_by_source(report: &Report) -> Vec<(&simcheck::SourceShare, Vec<&simcheck::Span>)> {
    report
        .sources
        .iter()
        .map(|source| {
            let mut spans: Vec<&simcheck::Span> = report
                .spans
                .iter()
                .filter(|s| s.source_id == source.id && s.class != SpanClass::Paraphrase)
                .collect();
            spans.sort_by_key(|s| s.start);
            (source, spans)
        })
        .filter(|(_, spans)| !spans.is_empty())
        .collect()
}

/// The class shown for each character of the text: copies win over light edits, edits over
/// quotations, quotations over suspected paraphrases.
pub fn char_marks(text_len: usize, report: &Report) -> Vec<Option<SpanClass>> {
    let rank = |c: SpanClass| match c {
        SpanClass::Copy => 4,
        SpanClass::LightEdit => 3,
        SpanClass::Quoted => 2,
        SpanClass::Paraphrase => 1,
    };
    let mut marks: Vec<Option<SpanClass>> = vec![None; text_len];
    for span in &report.spans {
        let end = span.end.min(text_len);
        for m in marks.iter_mut().take(end).skip(span.start) {
            if m.is_none_or(|old| rank(span.class) > rank(old)) {
                *m = Some(span.class);
            }
        }
    }
    marks
}

/// `2026-11-22 14:03`, Beijing time (the users' clock, whatever the server's zone).
pub fn beijing_time(ms: i64) -> String {
    let format = time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]");
    time::OffsetDateTime::from_unix_timestamp(ms.div_euclid(1000))
        .map(|t| t.to_offset(time::macros::offset!(+8)))
        .ok()
        .and_then(|t| t.format(&format).ok())
        .unwrap_or_default()
}

/// A time as every report prints it: Beijing time, with the zone named, as the web app and
/// `/verify` show it.
pub fn shown_time(ms: i64) -> String {
    format!("{}（北京时间）", beijing_time(ms))
}

/// `WJ20261122-000042`: the date the check was created (Beijing) and its number.
pub fn report_number(id: i64, created_ms: i64) -> String {
    let date: String = beijing_time(created_ms)
        .chars()
        .take(10)
        .filter(|c| c.is_ascii_digit())
        .collect();
    format!("WJ{date}-{id:06}")
}

pub fn percent(v: f64) -> String {
    format!("{v:.1}%")
}
