//! Rendering real reports: the engine checks a paper against a small library, and the HTML and
//! PDF show its figures, sources and highlighted text. The PDF is read back with Debian's
//! `pdftotext` (installed by scripts/test.sh with the CJK font).

use proptest::prelude::*;
use report::{PdfFont, ReportDoc, Verification, render_html, render_pdf};
use simcheck::{CheckOptions, EmbeddedLibrary, FingerprintParams, Library, NewDoc, Report};
use std::process::Command;

const SOURCE_A: &str =
    "深度学习方法在图像识别任务中取得了显著的效果，并逐渐成为计算机视觉领域的主流技术路线。";
const SOURCE_B: &str =
    "本研究通过问卷调查分析了农村地区小学生课外活动的时间安排与家庭教育投入之间的关系。";

async fn checked(paper: &str) -> Report {
    let dir = tempfile::tempdir().unwrap();
    let lib = EmbeddedLibrary::open(dir.path().join("lib"), FingerprintParams::default()).unwrap();
    lib.add(vec![
        NewDoc::public("图像识别综述", SOURCE_A),
        NewDoc::public("农村教育调查", SOURCE_B),
    ])
    .await
    .unwrap();
    simcheck::check(paper, &lib, &CheckOptions::default())
        .await
        .unwrap()
}

fn doc<'a>(text: &'a str, report: &'a Report) -> ReportDoc<'a> {
    ReportDoc {
        number: "WJ-00000042".into(),
        verification: Verification::Official {
            code: "ABCD-EFGH-JKLM-NPQR".into(),
            url: "http://127.0.0.1:8080/verify".into(),
        },
        settings: vec!["最小匹配字数：13 字".into(), "参考文献：不计入检测".into()],
        title: "基于深度学习的图像识别研究".into(),
        author: "张三".into(),
        checked_at_ms: 1_795_000_000_000,
        clock: report::SiteClock::default(),
        text,
        report,
        private_library: true,
    }
}

fn pdftotext(pdf: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.pdf");
    std::fs::write(&path, pdf).unwrap();
    let out = Command::new("pdftotext")
        .arg(&path)
        .arg("-")
        .output()
        .expect("pdftotext (poppler-utils) is installed by scripts/test.sh");
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

fn paper() -> String {
    format!(
        "第一章 绪论\n近年来{SOURCE_A}\n第二章 调查\n{SOURCE_B}此外，我们还讨论了城市学校的情况。\n"
    )
}

#[tokio::test]
async fn the_pdf_carries_cover_figures_sources_and_text() {
    let text = paper();
    let report = checked(&text).await;
    assert_eq!(report.sources.len(), 2);
    let font = PdfFont::discover(None).expect("a CJK font (fonts-noto-cjk)");
    let pdf = render_pdf(&doc(&text, &report), &font).unwrap();
    assert!(pdf.starts_with(b"%PDF-"));
    // For looking at the layout: WENJIAN_REPORT_SAMPLE=/tmp/r.pdf cargo test -p report
    if let Ok(path) = std::env::var("WENJIAN_REPORT_SAMPLE") {
        std::fs::write(path, &pdf).unwrap();
    }
    let read = pdftotext(&pdf);
    let flat: String = read.split_whitespace().collect();
    for needle in [
        "文鉴论文检测报告",
        "WJ-00000042",
        "ABCD-EFGH-JKLM-NPQR",
        "总文字复制比",
        &format!("{:.1}%", report.ratio_total),
        "去除引用文献复制比",
        "单篇最大文字复制比",
        "图像识别综述",
        "农村教育调查",
        "第一章绪论",
        "私有比对库",
        "http://127.0.0.1:8080/verify",
        "相似片段对照",
        "相似内容：",
        "（北京时间）",
    ] {
        let needle: String = needle.split_whitespace().collect();
        assert!(flat.contains(&needle), "missing {needle:?} in:\n{read}");
    }
    // The full text is there, in order.
    let source_a: String = SOURCE_A.chars().filter(|c| !c.is_whitespace()).collect();
    assert!(flat.contains(&source_a), "{read}");
    // The font is embedded (a subset), so the report reads the same on any machine.
    let text = String::from_utf8_lossy(&pdf);
    assert!(text.contains("/FontFile3") || text.contains("/FontFile2"));
}

#[tokio::test]
async fn a_custom_view_says_so_and_carries_no_code() {
    let text = paper();
    let report = checked(&text).await;
    let custom = ReportDoc {
        verification: Verification::CustomView {
            options: "忽略少于 20 字的匹配".into(),
        },
        ..doc(&text, &report)
    };
    let font = PdfFont::discover(None).expect("a CJK font (fonts-noto-cjk)");
    let read = pdftotext(&render_pdf(&custom, &font).unwrap());
    let flat: String = read.split_whitespace().collect();
    for needle in [
        "自定义视图",
        "忽略少于20字的匹配",
        "不是正式报告",
        "最小匹配字数：13字",
    ] {
        assert!(flat.contains(needle), "missing {needle:?} in:\n{read}");
    }
    assert!(!flat.contains("ABCD-EFGH"), "{read}");
    let html = render_html(&custom);
    assert!(html.contains("自定义视图") && !html.contains("ABCD-EFGH"));
}

#[tokio::test]
async fn a_long_paper_breaks_into_numbered_pages() {
    let para = format!("{SOURCE_A}{SOURCE_B}\n");
    let text = para.repeat(200);
    let report = checked(&text).await;
    let font = PdfFont::discover(None).unwrap();
    let pdf = render_pdf(&doc(&text, &report), &font).unwrap();
    let read = pdftotext(&pdf);
    let pages = read.matches('\u{c}').count();
    assert!(pages > 5, "{pages} pages");
    assert!(
        read.contains(&format!("共 {pages} 页")),
        "footer counts pages"
    );
}

#[tokio::test]
async fn the_html_report_marks_spans_and_escapes_text() {
    let text = format!("{}<script>alert(1)</script>\n", paper());
    let report = checked(&text).await;
    let html = render_html(&doc(&text, &report));
    assert!(html.contains("&lt;script&gt;"));
    assert!(!html.contains("<script>"));
    assert!(html.contains("<mark class=\"copy\">"));
    assert!(html.contains("ABCD-EFGH-JKLM-NPQR"));
    assert!(html.contains("图像识别综述") && html.contains("农村教育调查"));
}

#[test]
fn a_missing_font_file_is_a_clear_error() {
    let err = PdfFont::discover(Some(std::path::Path::new("/nonexistent/font.ttc"))).unwrap_err();
    assert_eq!(err.code(), "pdf_font_unusable");
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.ttf");
    std::fs::write(&junk, b"not a font").unwrap();
    assert!(PdfFont::load(&junk).is_err());
}

/// Common phrases are listed with how many documents use them, shaded grey, not counted, and
/// their example source is not listed among the similar sources.
#[tokio::test]
async fn common_phrases_are_listed_apart_and_not_counted() {
    let dir = tempfile::tempdir().unwrap();
    let lib = EmbeddedLibrary::open(dir.path().join("lib"), FingerprintParams::default()).unwrap();
    let phrase = "差异均有统计学意义，采用高效液相色谱法测定其含量";
    for i in 0..5 {
        let text =
            format!("第{i}组实验的背景介绍与其他内容各不相同{i}。{phrase}。结论部分第{i}号。");
        lib.add(vec![NewDoc::public(format!("药学论文{i}"), text)])
            .await
            .unwrap();
    }
    let paper = format!("我们自己的研究设计与众不同。{phrase}。");
    let options = CheckOptions {
        common_phrase_docs: Some(3),
        ..CheckOptions::default()
    };
    let report = simcheck::check(&paper, &lib, &options).await.unwrap();
    assert_eq!(report.ratio_total, 0.0);
    assert!(report.common_chars > 0);
    let html = render_html(&doc(&paper, &report));
    assert!(html.contains("<h2>常用表述</h2>"), "{html}");
    assert!(html.contains("（5 篇文献使用）"));
    assert!(html.contains("<mark class=\"common\">"));
    assert!(html.contains("未发现相似来源"));
    let font = PdfFont::discover(None).unwrap();
    let text = pdftotext(&render_pdf(&doc(&paper, &report), &font).unwrap());
    let flat: String = text.split_whitespace().collect();
    assert!(flat.contains("常用表述字数（不计入复制比）"), "{text}");
    assert!(flat.contains("［5篇文献使用］"), "{text}");
    assert!(flat.contains("未发现相似来源"), "{text}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// Any text with any spans (even out of range) renders without panicking.
    #[test]
    fn arbitrary_text_and_spans_render(text in "\\PC{0,300}", spans in proptest::collection::vec((0usize..400, 0usize..400, 0u8..6), 0..8)) {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let mut report = rt.block_on(checked(&text));
        for (a, b, c) in spans {
            report.spans.push(simcheck::Span {
                start: a.min(b),
                end: a.max(b),
                source_id: 1,
                source_start: 0,
                source_end: 0,
                class: [simcheck::SpanClass::Copy, simcheck::SpanClass::LightEdit, simcheck::SpanClass::Quoted, simcheck::SpanClass::Paraphrase, simcheck::SpanClass::Translated, simcheck::SpanClass::Common][c as usize],
                chars: 0,
                source_text: String::new(),
                docs: c as u32,
            });
        }
        let d = doc(&text, &report);
        let _ = render_html(&d);
        let font = PdfFont::discover(None).unwrap();
        prop_assert!(render_pdf(&d, &font).unwrap().starts_with(b"%PDF-"));
    }
}
