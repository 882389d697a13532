//! The downloadable HTML report: headline figures, sources, and the full text with every span
//! coloured by class. Self-contained (no scripts, no external assets).

use crate::api::check_api::CheckRecord;
use serde_json::Value;

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn class_of(name: &str) -> (&'static str, &'static str) {
    match name {
        "copy" => ("copy", "复制"),
        "light_edit" => ("edit", "轻度改写"),
        "quoted" => ("quoted", "引用"),
        _ => ("para", "疑似意译"),
    }
}

fn percent(v: &Value) -> String {
    format!("{:.1}%", v.as_f64().unwrap_or(0.0))
}

pub fn render(record: &CheckRecord, text: &str, report: &Value) -> String {
    let chars: Vec<char> = text.chars().collect();
    // The class covering each character; copies win over edits, edits over quotes, quotes over paraphrases.
    let rank = |c: &str| match c {
        "copy" => 4,
        "light_edit" => 3,
        "quoted" => 2,
        _ => 1,
    };
    let mut marks: Vec<Option<&str>> = vec![None; chars.len()];
    for span in report["spans"].as_array().into_iter().flatten() {
        let (Some(s), Some(e), Some(c)) = (
            span["start"].as_u64(),
            span["end"].as_u64(),
            span["class"].as_str(),
        ) else {
            continue;
        };
        for m in marks
            .iter_mut()
            .take((e as usize).min(chars.len()))
            .skip(s as usize)
        {
            if m.is_none_or(|old| rank(c) > rank(old)) {
                *m = Some(c);
            }
        }
    }
    let mut body = String::new();
    let mut open: Option<&str> = None;
    for (i, ch) in chars.iter().enumerate() {
        if marks[i] != open {
            if open.is_some() {
                body.push_str("</mark>");
            }
            if let Some(c) = marks[i] {
                body.push_str(&format!("<mark class=\"{}\">", class_of(c).0));
            }
            open = marks[i];
        }
        match ch {
            '\n' => body.push_str("<br>"),
            c => body.push_str(&escape(&c.to_string())),
        }
    }
    if open.is_some() {
        body.push_str("</mark>");
    }
    let mut sources = String::new();
    for (i, s) in report["sources"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        sources.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            i + 1,
            escape(s["title"].as_str().unwrap_or("")),
            escape(s["author"].as_str().unwrap_or("")),
            s["copied_chars"].as_u64().unwrap_or(0),
            percent(&s["ratio"]),
        ));
    }
    if sources.is_empty() {
        sources.push_str("<tr><td colspan=\"5\">未发现相似来源</td></tr>");
    }
    let legend: String = ["copy", "light_edit", "quoted", "paraphrase"]
        .iter()
        .map(|c| {
            let (css, label) = class_of(c);
            format!("<mark class=\"{css}\">{label}</mark> ")
        })
        .collect();
    format!(
        r#"<!doctype html><html lang="zh-CN"><head><meta charset="utf-8"><title>文鉴查重报告 - {title}</title>
<style>body{{font-family:"Noto Sans CJK SC","Microsoft YaHei",sans-serif;max-width:960px;margin:24px auto;color:#222;line-height:1.8}}
h1{{font-size:22px}}table{{border-collapse:collapse;width:100%}}td,th{{border:1px solid #ddd;padding:4px 8px;text-align:left}}
.figures td{{font-size:15px}}mark.copy{{background:#ffccc7}}mark.edit{{background:#ffe7ba}}mark.quoted{{background:#d9f7be}}mark.para{{background:#efdbff}}
.text{{border:1px solid #eee;padding:16px;white-space:normal}}.note{{color:#888;font-size:13px}}</style></head><body>
<h1>文鉴查重报告</h1>
<p>报告编号：WJ-{id}　论文：{title}　作者：{author}</p>
<table class="figures"><tr><th>总文字复制比</th><td>{total}</td><th>去除引用文献复制比</th><td>{quotes}</td></tr>
<tr><th>去除本人已发表文献复制比</th><td>{own}</td><th>单篇最大文字复制比</th><td>{max}</td></tr>
<tr><th>检测字数</th><td>{chars}</td><th>重复字数</th><td>{copied}</td></tr></table>
<h2>相似来源</h2><table><tr><th>#</th><th>标题</th><th>作者</th><th>重复字数</th><th>占比</th></tr>{sources}</table>
<h2>全文标注</h2><p>{legend}</p><div class="text">{body}</div>
<p class="note">字数按除空白以外的全部字符计算；目录与参考文献不计入检测。疑似意译不计入复制比。{engine}</p>
</body></html>"#,
        title = escape(&record.title),
        id = record.id,
        author = escape(&record.author),
        total = percent(&report["ratio_total"]),
        quotes = percent(&report["ratio_excluding_quotes"]),
        own = percent(&report["ratio_excluding_own"]),
        max = percent(&report["ratio_max_single_source"]),
        chars = report["total_chars"].as_u64().unwrap_or(0),
        copied = report["copied_chars"].as_u64().unwrap_or(0),
        engine = simcheck::ENGINE_VERSION,
    )
}
