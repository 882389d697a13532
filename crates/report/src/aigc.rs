//! The AI-text detection report (AIGC检测报告): headline AI rate, the bands with their thresholds,
//! every paragraph's probability, the full text with paragraphs shaded by band, and the model,
//! criterion, calibration and limits note on every copy.

use crate::pdf::{
    BLACK, GREY, Layout, MARGIN, PAGE_H, PAGE_W, PdfError, PdfFont, author_or_blank, cover_top,
    shaded_text,
};
use crate::percent;
use aidetect::{Band, Detection};

/// Everything printed on a detection report besides the detector's figures.
#[derive(Debug, Clone)]
pub struct AigcReportDoc<'a> {
    /// `WJ…`, unique per task.
    pub number: String,
    /// The verification code of the official report.
    pub verification: crate::Verification,
    /// The settings the figures were made under, one line each.
    pub settings: Vec<String>,
    pub title: String,
    pub author: String,
    pub checked_at_ms: i64,
    /// The zone the time is printed in.
    pub clock: crate::SiteClock,
    /// The checked text; paragraph offsets are characters of it.
    pub text: &'a str,
    pub detection: &'a Detection,
}

/// How a band is shown: label and shading (low-risk paragraphs are not shaded).
pub fn band_style(band: Band) -> (&'static str, Option<[u8; 3]>) {
    match band {
        Band::High => (band.label(), Some([255, 204, 199])),
        Band::Medium => (band.label(), Some([255, 231, 186])),
        Band::Low => (band.label(), None),
    }
}

/// Red from 30 %, orange from 10 %, else green — as schools' usual AIGC limits go.
fn rate_color(rate: f64) -> [u8; 3] {
    if rate < 10.0 {
        [56, 158, 13]
    } else if rate < 30.0 {
        [212, 136, 6]
    } else {
        [207, 19, 34]
    }
}

/// Characters and paragraphs in each band.
pub fn band_totals(d: &Detection) -> [(Band, usize, usize); 3] {
    [Band::High, Band::Medium, Band::Low].map(|b| {
        let ps = d.paragraphs.iter().filter(|p| p.band == b);
        (b, ps.clone().count(), ps.map(|p| p.chars).sum())
    })
}

/// The thresholds of the bands, in words.
pub fn band_rule(d: &Detection) -> String {
    format!(
        "分级标准：段落 AI 生成概率 ≥ {:.0}% 为高度疑似，≥ {:.0}% 为中度疑似，其余为低风险。AIGC 占比 = 高度疑似段落字数 ÷ 检测字数。",
        d.high_threshold * 100.0,
        d.medium_threshold * 100.0
    )
}

/// The model, criterion and calibration that produced the figures.
pub fn provenance(d: &Detection) -> String {
    format!(
        "检测模型：{}；判别方法：{}；校准版本：{}",
        d.model, d.criterion, d.calibration
    )
}

fn headline(d: &Detection) -> String {
    match (d.ai_rate, &d.notice) {
        (Some(rate), None) => percent(rate),
        _ => "—".into(),
    }
}

/// Each character's shading: its paragraph's band.
fn paragraph_colors(len: usize, d: &Detection) -> Vec<Option<[u8; 3]>> {
    let mut colors = vec![None; len];
    for p in &d.paragraphs {
        let color = band_style(p.band).1;
        for c in colors.iter_mut().take(p.end.min(len)).skip(p.start) {
            *c = color;
        }
    }
    colors
}

pub fn render_aigc_pdf(doc: &AigcReportDoc<'_>, font: &PdfFont) -> Result<Vec<u8>, PdfError> {
    let d = doc.detection;
    let mut l = Layout::for_font(font)?;
    let content_w = PAGE_W - 2.0 * MARGIN;
    cover_top(
        &mut l,
        "文鉴 AIGC 检测报告",
        "AI 生成内容检测",
        &[
            ("报告编号", doc.number.clone()),
            ("验证码", doc.verification.cover_value()),
            ("检测时间", doc.clock.shown(doc.checked_at_ms)),
            ("论文题目", doc.title.clone()),
            ("作者", author_or_blank(&doc.author)),
            ("检测字数", format!("{} 字", d.chars)),
        ],
    );
    l.y += 20.0;
    l.text(MARGIN, l.y + 12.0, 12.0, GREY, "AIGC 占比");
    let rate = d.ai_rate.filter(|_| d.notice.is_none());
    let color = rate.map(rate_color).unwrap_or(GREY);
    l.text(MARGIN + 70.0, l.y + 22.0, 28.0, color, headline(d));
    l.y += 36.0;
    if let Some(notice) = &d.notice {
        l.paragraph(notice, 11.0, BLACK, MARGIN, content_w);
    } else {
        l.rect(MARGIN, l.y, content_w, 8.0, [240, 240, 240]);
        let filled = (rate.unwrap_or(0.0).clamp(0.0, 100.0) as f32 / 100.0) * content_w;
        if filled > 0.0 {
            l.rect(MARGIN, l.y, filled, 8.0, color);
        }
        l.y += 26.0;
        let [high, medium, low] = band_totals(d);
        let figures = [
            (
                "全文 AI 生成概率",
                d.probability
                    .map(|p| percent(p * 100.0))
                    .unwrap_or_default(),
            ),
            ("高度疑似", format!("{} 段，{} 字", high.1, high.2)),
            ("中度疑似", format!("{} 段，{} 字", medium.1, medium.2)),
            ("低风险", format!("{} 段，{} 字", low.1, low.2)),
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
    }
    crate::pdf::settings_block(&mut l, &doc.settings);
    l.y = l.y.max(PAGE_H - 210.0);
    l.rect(MARGIN, l.y, content_w, 0.6, [220, 220, 220]);
    l.y += 10.0;
    for note in [
        band_rule(d),
        provenance(d),
        d.note.clone(),
        doc.verification.note(),
    ] {
        l.paragraph(&note, 9.0, GREY, MARGIN, content_w);
    }

    l.new_page();
    l.heading("段落检测结果");
    let chars: Vec<char> = doc.text.chars().collect();
    if d.paragraphs.is_empty() {
        l.paragraph("没有可单独判断的段落。", 10.0, GREY, MARGIN, content_w);
    }
    let bar_x = MARGIN + 250.0;
    let bar_w = 150.0;
    for (i, p) in d.paragraphs.iter().enumerate() {
        l.ensure(20.0);
        let head: String = chars[p.start.min(chars.len())..p.end.min(chars.len())]
            .iter()
            .collect();
        let head = l.fit(&format!("{}. {}", i + 1, head), 9.5, 240.0);
        l.text(MARGIN, l.y + 11.0, 9.5, BLACK, head);
        l.rect(bar_x, l.y + 3.0, bar_w, 8.0, [240, 240, 240]);
        let (label, shade) = band_style(p.band);
        let fill = shade
            .map(|c| [c[0] / 2 + 100, c[1] / 3, c[2] / 3])
            .unwrap_or([56, 158, 13]);
        l.rect(
            bar_x,
            l.y + 3.0,
            bar_w * p.probability.clamp(0.0, 1.0) as f32,
            8.0,
            fill,
        );
        l.text(
            bar_x + bar_w + 8.0,
            l.y + 11.0,
            9.5,
            BLACK,
            format!("{}  {label}", percent(p.probability * 100.0)),
        );
        l.y += 18.0;
    }
    l.heading("全文标注");
    crate::pdf::legend(
        &mut l,
        &[Band::High, Band::Medium]
            .map(|b| (band_style(b).0, band_style(b).1.unwrap_or([255, 255, 255]))),
    );
    shaded_text(&mut l, &chars, &paragraph_colors(chars.len(), d));
    l.write(
        font,
        &format!("文鉴 AIGC 检测报告 - {}", doc.title),
        |n, total| {
            format!(
                "文鉴 · AIGC 检测报告 {} · {} · 第 {n} 页 / 共 {total} 页",
                doc.number,
                doc.verification.footer()
            )
        },
    )
}

pub fn render_aigc_html(doc: &AigcReportDoc<'_>) -> String {
    let d = doc.detection;
    let esc = crate::html::escape;
    let chars: Vec<char> = doc.text.chars().collect();
    let mut rows = String::new();
    for (i, p) in d.paragraphs.iter().enumerate() {
        let head: String = chars[p.start.min(chars.len())..p.end.min(chars.len())]
            .iter()
            .take(40)
            .collect();
        rows.push_str(&format!(
            "<tr><td>{}</td><td>{}…</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            i + 1,
            esc(&head),
            p.chars,
            percent(p.probability * 100.0),
            band_style(p.band).0
        ));
    }
    let mut body = String::new();
    let mut at = 0;
    for p in &d.paragraphs {
        let (s, e) = (p.start.min(chars.len()), p.end.min(chars.len()));
        body.push_str(&text_html(&chars[at.min(s)..s]));
        body.push_str(&format!(
            "<span class=\"{}\" title=\"AI 生成概率 {}\">{}</span>",
            match p.band {
                Band::High => "high",
                Band::Medium => "medium",
                Band::Low => "low",
            },
            percent(p.probability * 100.0),
            text_html(&chars[s..e])
        ));
        at = e;
    }
    body.push_str(&text_html(&chars[at.min(chars.len())..]));
    let [high, medium, low] = band_totals(d);
    format!(
        r#"<!doctype html><html lang="zh-CN"><head><meta charset="utf-8"><title>文鉴 AIGC 检测报告 - {title}</title>
<style>body{{font-family:"Noto Sans CJK SC","Microsoft YaHei",sans-serif;max-width:960px;margin:24px auto;color:#222;line-height:1.8}}
h1{{font-size:22px}}table{{border-collapse:collapse;width:100%}}td,th{{border:1px solid #ddd;padding:4px 8px;text-align:left}}
.high{{background:#ffccc7}}.medium{{background:#ffe7ba}}.text{{border:1px solid #eee;padding:16px}}.note{{color:#888;font-size:13px}}</style></head><body>
<h1>文鉴 AIGC 检测报告</h1>
<p>报告编号：{number}　验证码：{code}　检测时间：{when}</p>
<p>论文：{title}　作者：{author}</p>
<table><tr><th>AIGC 占比</th><td>{rate}</td><th>全文 AI 生成概率</th><td>{prob}</td></tr>
<tr><th>检测字数</th><td>{chars}</td><th>高度疑似</th><td>{h1} 段，{h2} 字</td></tr>
<tr><th>中度疑似</th><td>{m1} 段，{m2} 字</td><th>低风险</th><td>{l1} 段，{l2} 字</td></tr></table>
{notice}
<h2>检测设置</h2><ul>{settings}</ul>
<h2>段落检测结果</h2><table><tr><th>#</th><th>段落</th><th>字数</th><th>AI 生成概率</th><th>分级</th></tr>{rows}</table>
<h2>全文标注</h2><p><span class="high">高度疑似</span> <span class="medium">中度疑似</span></p><div class="text">{body}</div>
<p class="note">{rule}</p><p class="note">{provenance}</p><p class="note">{note}</p><p class="note">{verify}</p>
</body></html>"#,
        title = esc(&doc.title),
        number = esc(&doc.number),
        code = esc(&doc.verification.cover_value()),
        verify = esc(&doc.verification.note()),
        settings = doc
            .settings
            .iter()
            .map(|s| format!("<li>{}</li>", esc(s)))
            .collect::<String>(),
        when = doc.clock.shown(doc.checked_at_ms),
        author = esc(&doc.author),
        rate = headline(d),
        prob = d
            .probability
            .map(|p| percent(p * 100.0))
            .unwrap_or_else(|| "—".into()),
        chars = d.chars,
        h1 = high.1,
        h2 = high.2,
        m1 = medium.1,
        m2 = medium.2,
        l1 = low.1,
        l2 = low.2,
        notice = d
            .notice
            .as_deref()
            .map(|n| format!("<p><b>{}</b></p>", esc(n)))
            .unwrap_or_default(),
        rule = band_rule(d),
        provenance = esc(&provenance(d)),
        note = esc(&d.note),
    )
}

fn text_html(chars: &[char]) -> String {
    chars
        .iter()
        .map(|c| match c {
            '\n' => "<br>".to_string(),
            c => crate::html::escape(&c.to_string()),
        })
        .collect()
}
