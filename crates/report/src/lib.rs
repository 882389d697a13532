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
    /// The zone the time is printed in.
    pub clock: SiteClock,
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

/// What the ratios leave out, printed under the figures.
pub fn uncounted_note(report: &Report) -> &'static str {
    if report.common_counted {
        "疑似意译与疑似翻译不计入复制比；本报告按所选选项将常用表述计入复制比。"
    } else {
        "疑似意译与疑似翻译不计入复制比；常用表述（比对库中大量文献共用的表述）默认不计入复制比。"
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
        SpanClass::Translated => ("疑似翻译", [204, 229, 255]),
        SpanClass::Common => ("常用表述", [225, 225, 225]),
    }
}

pub const LEGEND: [SpanClass; 6] = [
    SpanClass::Copy,
    SpanClass::LightEdit,
    SpanClass::Quoted,
    SpanClass::Paraphrase,
    SpanClass::Translated,
    SpanClass::Common,
];

pub fn scope_label(scope: Scope) -> &'static str {
    match scope {
        Scope::Public => "公开文献库",
        Scope::Private => "本人私有库",
        Scope::OwnPublished => "本人已发表",
    }
}

/// Whether a span adds to the ratios of this report: suspected paraphrases and translations
/// never do; common phrases only when the reader chose to count them.
pub fn counts(report: &Report, span: &simcheck::Span) -> bool {
    match span.class {
        SpanClass::Paraphrase | SpanClass::Translated => false,
        SpanClass::Common => report.common_counted,
        _ => true,
    }
}

/// The sources worth listing: a source that only stands for uncounted common phrases is left
/// out (those phrases are listed on their own, with how many documents use them).
pub fn listed_sources(report: &Report) -> Vec<&simcheck::SourceShare> {
    report
        .sources
        .iter()
        .filter(|s| {
            s.spans.iter().any(|&i| {
                report
                    .spans
                    .get(i)
                    .is_some_and(|span| span.class != SpanClass::Common || report.common_counted)
            })
        })
        .collect()
}

/// The common phrases (常用表述) of the paper, in its order.
pub fn common_phrases(report: &Report) -> Vec<&simcheck::Span> {
    let mut out: Vec<&simcheck::Span> = report
        .spans
        .iter()
        .filter(|s| s.class == SpanClass::Common)
        .collect();
    out.sort_by_key(|s| s.start);
    out
}

/// The matched passages of each source (in the report's order of sources), each with the
/// source's own wording; only passages that count (see `counts`).
pub fn excerpts_by_source(report: &Report) -> Vec<(&simcheck::SourceShare, Vec<&simcheck::Span>)> {
    report
        .sources
        .iter()
        .map(|source| {
            let mut spans: Vec<&simcheck::Span> = report
                .spans
                .iter()
                .filter(|s| s.source_id == source.id && counts(report, s))
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
        SpanClass::Copy => 6,
        SpanClass::LightEdit => 5,
        SpanClass::Quoted => 4,
        SpanClass::Translated => 3,
        SpanClass::Paraphrase => 2,
        SpanClass::Common => 1,
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

/// `2026-11-22 14:03`, Beijing time: the date inside report numbers, which never changes with the
/// site's display zone.
fn beijing_time(ms: i64) -> String {
    let format = time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]");
    time::OffsetDateTime::from_unix_timestamp(ms.div_euclid(1000))
        .map(|t| t.to_offset(time::macros::offset!(+8)))
        .ok()
        .and_then(|t| t.format(&format).ok())
        .unwrap_or_default()
}

/// The one zone every time on the site is shown in (reports, /verify, the web app), named
/// wherever a time is printed. Configurable; by default Asia/Shanghai, shown as 北京时间.
#[derive(Debug, Clone)]
pub struct SiteClock {
    zone: jiff::tz::TimeZone,
    name: String,
    label: String,
}

/// IANA names that are China Standard Time, shown by the name users know.
const BEIJING_NAMES: &[&str] = &["Asia/Shanghai", "Asia/Chongqing", "Asia/Harbin", "PRC"];

impl SiteClock {
    pub const DEFAULT_ZONE: &'static str = "Asia/Shanghai";

    /// The clock of an IANA zone (`Asia/Shanghai`, `Asia/Hong_Kong`, `Europe/London`, `UTC`);
    /// the zone database is built in, so this does not depend on the server's files.
    pub fn named(name: &str) -> Result<SiteClock, String> {
        let name = name.trim();
        let zone = jiff::tz::TimeZone::get(name)
            .map_err(|_| format!("未知的时区“{name}”：请使用 IANA 时区名，例如 Asia/Shanghai"))?;
        let label = if BEIJING_NAMES.contains(&name) {
            "北京时间".to_string()
        } else {
            name.to_string()
        };
        Ok(SiteClock {
            zone,
            name: name.to_string(),
            label,
        })
    }

    /// The IANA name, for the web app's `Intl.DateTimeFormat`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How the zone is named beside a time: 北京时间, or the IANA name.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// `2026-11-22 14:03` in this zone.
    pub fn local(&self, ms: i64) -> String {
        jiff::Timestamp::from_millisecond(ms)
            .map(|t| {
                t.to_zoned_datetime(self.zone.clone())
                    .strftime("%Y-%m-%d %H:%M")
                    .to_string()
            })
            .unwrap_or_default()
    }

    /// When the day holding `ms` began in this zone (midnight), Unix milliseconds: what the
    /// console counts "today" from.
    pub fn day_start(&self, ms: i64) -> i64 {
        jiff::Timestamp::from_millisecond(ms)
            .ok()
            .and_then(|t| t.to_zoned_datetime(self.zone.clone()).start_of_day().ok())
            .map(|z| z.timestamp().as_millisecond())
            .unwrap_or(ms - ms.rem_euclid(24 * 60 * 60 * 1000))
    }

    /// A time as every report prints it, with the zone named: `2026-11-22 14:03（北京时间）`.
    pub fn shown(&self, ms: i64) -> String {
        format!("{}（{}）", self.local(ms), self.label)
    }
}

impl Default for SiteClock {
    fn default() -> Self {
        SiteClock::named(SiteClock::DEFAULT_ZONE).unwrap_or_else(|_| SiteClock {
            zone: jiff::tz::TimeZone::fixed(jiff::tz::offset(8)),
            name: SiteClock::DEFAULT_ZONE.to_string(),
            label: "北京时间".to_string(),
        })
    }
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

#[cfg(test)]
mod clock_tests {
    use super::SiteClock;

    // 2026-11-22 06:03 UTC.
    const MS: i64 = 1_795_327_380_000;

    #[test]
    fn the_default_clock_is_beijing_time_and_says_so() {
        let clock = SiteClock::default();
        assert_eq!(clock.name(), "Asia/Shanghai");
        assert_eq!(clock.shown(MS), "2026-11-22 14:03（北京时间）");
    }

    #[test]
    fn another_zone_shows_its_own_time_and_name() {
        let utc = SiteClock::named("UTC").unwrap();
        assert_eq!(utc.shown(MS), "2026-11-22 06:03（UTC）");
        let london = SiteClock::named("Europe/London").unwrap();
        assert_eq!(london.local(MS), "2026-11-22 06:03");
        // Summer time is the zone's, not a fixed offset.
        assert_eq!(london.local(MS - 150 * 86_400_000), "2026-06-25 07:03");
    }

    #[test]
    fn an_unknown_zone_is_refused_in_chinese() {
        let err = SiteClock::named("Mars/Olympus").unwrap_err();
        assert!(
            err.contains("Mars/Olympus") && err.contains("IANA"),
            "{err}"
        );
    }
}
