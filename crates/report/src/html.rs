//! The self-contained HTML report (no scripts, no external assets).

use crate::{COUNTING_RULE, LEGEND, ReportDoc, char_marks, class_style, percent, scope_label};
use simcheck::SpanClass;

pub(crate) fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn css_class(class: SpanClass) -> &'static str {
    match class {
        SpanClass::Copy => "copy",
        SpanClass::LightEdit => "edit",
        SpanClass::Quoted => "quoted",
        SpanClass::Paraphrase => "para",
        SpanClass::Translated => "trans",
        SpanClass::Common => "common",
    }
}

fn highlighted_text(doc: &ReportDoc<'_>) -> String {
    let chars: Vec<char> = doc.text.chars().collect();
    let marks = char_marks(chars.len(), doc.report);
    let mut body = String::new();
    let mut open = None;
    for (ch, mark) in chars.iter().zip(&marks) {
        if *mark != open {
            if open.is_some() {
                body.push_str("</mark>");
            }
            if let Some(c) = mark {
                body.push_str(&format!("<mark class=\"{}\">", css_class(*c)));
            }
            open = *mark;
        }
        match ch {
            '\n' => body.push_str("<br>"),
            c => body.push_str(&escape(&c.to_string())),
        }
    }
    if open.is_some() {
        body.push_str("</mark>");
    }
    body
}

/// 相似片段对照: each source's matched passages, the paper's (原文) beside the source's own.
fn excerpts_html(doc: &ReportDoc<'_>) -> String {
    let chars: Vec<char> = doc.text.chars().collect();
    let groups = crate::excerpts_by_source(doc.report);
    if groups.is_empty() {
        return String::new();
    }
    let mut out = String::from("<h2>相似片段对照</h2>");
    for (i, (source, spans)) in groups.iter().enumerate() {
        out.push_str(&format!(
            "<h3>{}. 《{}》</h3><table><tr><th>原文</th><th>相似内容</th></tr>",
            i + 1,
            escape(&source.title)
        ));
        for span in spans {
            let original: String = chars[span.start.min(chars.len())..span.end.min(chars.len())]
                .iter()
                .collect();
            out.push_str(&format!(
                "<tr><td>{}</td><td>{}</td></tr>",
                escape(&original),
                escape(&span.source_text)
            ));
        }
        out.push_str("</table>");
    }
    out
}

/// 常用表述: wording many library documents share, each with how many documents use it.
fn common_html(doc: &ReportDoc<'_>) -> String {
    let phrases = crate::common_phrases(doc.report);
    if phrases.is_empty() {
        return String::new();
    }
    let chars: Vec<char> = doc.text.chars().collect();
    let items: String = phrases
        .iter()
        .map(|s| {
            let phrase: String = chars[s.start.min(chars.len())..s.end.min(chars.len())]
                .iter()
                .collect();
            format!(
                "<li><mark class=\"common\">{}</mark>　（{} 篇文献使用）</li>",
                escape(&phrase),
                s.docs
            )
        })
        .collect();
    format!(
        "<h2>常用表述</h2><p class=\"note\">以下表述在比对库中被大量文献共同使用（如方法、统计学表述）{}。</p><ol>{items}</ol>\n",
        if doc.report.common_counted {
            "，本报告按所选选项将其计入复制比"
        } else {
            "，不计入复制比"
        }
    )
}

pub fn render_html(doc: &ReportDoc<'_>) -> String {
    let r = doc.report;
    let mut sources = String::new();
    for (i, s) in crate::listed_sources(r).into_iter().enumerate() {
        sources.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            i + 1,
            escape(&s.title),
            escape(&s.author),
            scope_label(s.scope),
            s.copied_chars,
            percent(s.ratio),
        ));
    }
    if sources.is_empty() {
        sources.push_str("<tr><td colspan=\"6\">未发现相似来源</td></tr>");
    }
    let chapters: String = r
        .chapters
        .iter()
        .filter(|c| c.total_chars > 0)
        .map(|c| {
            format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(if c.title.is_empty() {
                    "（正文）"
                } else {
                    &c.title
                }),
                c.total_chars,
                c.copied_chars,
                percent(c.ratio)
            )
        })
        .collect();
    let legend: String = LEGEND
        .iter()
        .map(|c| {
            format!(
                "<mark class=\"{}\">{}</mark> ",
                css_class(*c),
                class_style(*c).0
            )
        })
        .collect();
    let private = if doc.private_library {
        "<p class=\"note\">本文已按您的选择加入您的私有比对库，仅用于比对您之后提交的稿件，不会进入公共文献库。</p>"
    } else {
        ""
    };
    format!(
        r#"<!doctype html><html lang="zh-CN"><head><meta charset="utf-8"><title>文鉴查重报告 - {title}</title>
<style>body{{font-family:"Noto Sans CJK SC","Microsoft YaHei",sans-serif;max-width:960px;margin:24px auto;color:#222;line-height:1.8}}
h1{{font-size:22px}}table{{border-collapse:collapse;width:100%}}td,th{{border:1px solid #ddd;padding:4px 8px;text-align:left}}
.figures td{{font-size:15px}}mark.copy{{background:#ffccc7}}mark.edit{{background:#ffe7ba}}mark.quoted{{background:#d9f7be}}mark.para{{background:#efdbff}}mark.trans{{background:#cce5ff}}mark.common{{background:#e1e1e1;color:#595959}}
.text{{border:1px solid #eee;padding:16px;white-space:normal}}.note{{color:#888;font-size:13px}}.custom{{background:#fff7e6;border:1px solid #ffd591;padding:8px}}</style></head><body>
<h1>文鉴查重报告</h1>
<p>报告编号：{number}　验证码：{code}　检测时间：{when}</p>{custom}
<p>论文：{title}　作者：{author}</p>
<table class="figures"><tr><th>总文字复制比</th><td>{total}</td><th>去除引用文献复制比</th><td>{quotes}</td></tr>
<tr><th>去除本人已发表文献复制比</th><td>{own}</td><th>单篇最大文字复制比</th><td>{max}</td></tr>
<tr><th>检测字数</th><td>{chars}</td><th>重复字数</th><td>{copied}</td></tr></table>
<h2>检测设置</h2><ul>{settings}</ul>
{private}
<h2>各章节复制比</h2><table><tr><th>章节</th><th>字数</th><th>重复字数</th><th>复制比</th></tr>{chapters}</table>
<h2>相似来源</h2><table><tr><th>#</th><th>标题</th><th>作者</th><th>来源</th><th>重复字数</th><th>占比</th></tr>{sources}</table>
{common}{excerpts}
<h2>全文标注</h2><p>{legend}</p><div class="text">{body}</div>
<p class="note">{rule}{uncounted}{verify}{engine}</p>
</body></html>"#,
        title = escape(&doc.title),
        number = escape(&doc.number),
        code = escape(&doc.verification.cover_value()),
        custom = match &doc.verification {
            crate::Verification::CustomView { .. } => format!(
                "<p class=\"custom\"><b>自定义视图</b>：{}</p>",
                escape(&doc.verification.note())
            ),
            crate::Verification::Official { .. } => String::new(),
        },
        settings = doc
            .settings
            .iter()
            .map(|s| format!("<li>{}</li>", escape(s)))
            .collect::<String>(),
        when = doc.clock.shown(doc.checked_at_ms),
        author = escape(&doc.author),
        total = percent(r.ratio_total),
        quotes = percent(r.ratio_excluding_quotes),
        own = percent(r.ratio_excluding_own),
        max = percent(r.ratio_max_single_source),
        chars = r.total_chars,
        copied = r.copied_chars,
        body = highlighted_text(doc),
        excerpts = excerpts_html(doc),
        common = common_html(doc),
        uncounted = crate::uncounted_note(r),
        rule = COUNTING_RULE,
        verify = escape(&doc.verification.note()),
        engine = simcheck::ENGINE_VERSION,
    )
}
