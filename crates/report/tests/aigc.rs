//! The AIGC detection report: figures, bands, paragraph results, shaded text and the notes,
//! from a detection built here (no model needed). Read back with `pdftotext`.

use aidetect::{Band, Detection, ParagraphResult};
use proptest::prelude::*;
use report::{AigcReportDoc, PdfFont, render_aigc_html, render_aigc_pdf};

const FIRST: &str =
    "我在县档案馆抄了三个星期的旧账本，手指冻得握不住笔，账本里记着供销社收购山货的价格。";
const SECOND: &str =
    "随着信息技术的快速发展，数字化转型已成为各行各业发展的重要趋势，具有重要意义。";

fn detection(text: &str) -> Detection {
    let chars: Vec<char> = text.chars().collect();
    let second = chars.iter().position(|&c| c == '随').unwrap();
    let n = |s: usize, e: usize| chars[s..e].iter().filter(|c| !c.is_whitespace()).count();
    let first = chars.iter().position(|&c| c == '我').unwrap();
    let end1 = first + FIRST.chars().count();
    let end2 = second + SECOND.chars().count();
    let total = aidetect::counted_chars(text);
    Detection {
        probability: Some(0.61),
        ai_rate: Some(n(second, end2) as f64 * 100.0 / total as f64),
        paragraphs: vec![
            ParagraphResult {
                start: first,
                end: end1,
                chars: n(first, end1),
                probability: 0.12,
                band: Band::Low,
            },
            ParagraphResult {
                start: second,
                end: end2,
                chars: n(second, end2),
                probability: 0.93,
                band: Band::High,
            },
        ],
        chars: total,
        notice: None,
        model: "qwen2.5-0.5b".into(),
        criterion: "测试判别方法".into(),
        calibration: "aigc-cal-test".into(),
        high_threshold: 0.8,
        medium_threshold: 0.45,
        note: aidetect::LIMITS_NOTE.into(),
    }
}

fn doc<'a>(text: &'a str, d: &'a Detection) -> AigcReportDoc<'a> {
    AigcReportDoc {
        number: "WJ20261122-000007".into(),
        verification: report::Verification::Official {
            code: "ABCD-EFGH-JKLM-NPQR".into(),
            url: "http://127.0.0.1:8080/verify".into(),
        },
        settings: vec!["判定：段落 AI 概率不低于 80% 为高度疑似".into()],
        title: "县域供销社研究".into(),
        author: "李四".into(),
        checked_at_ms: 1_795_000_000_000,
        clock: report::SiteClock::default(),
        text,
        detection: d,
    }
}

fn pdftotext(pdf: &[u8]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.pdf");
    std::fs::write(&path, pdf).unwrap();
    let out = std::process::Command::new("pdftotext")
        .arg(&path)
        .arg("-")
        .output()
        .expect("pdftotext");
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_pdf_carries_the_rate_bands_paragraphs_and_notes() {
    let text = format!("第一章 绪论\n{FIRST}\n{SECOND}\n");
    let d = detection(&text);
    let font = PdfFont::discover(None).expect("a CJK font (fonts-noto-cjk)");
    let pdf = render_aigc_pdf(&doc(&text, &d), &font).unwrap();
    if let Ok(path) = std::env::var("WENJIAN_AIGC_SAMPLE") {
        std::fs::write(path, &pdf).unwrap();
    }
    let flat: String = pdftotext(&pdf).split_whitespace().collect();
    let rate = format!("{:.1}%", d.ai_rate.unwrap());
    for needle in [
        "文鉴AIGC检测报告",
        "WJ20261122-000007",
        "县域供销社研究",
        "AIGC占比",
        rate.as_str(),
        "61.0%",
        "1段，39字",
        "≥80%为高度疑似",
        "≥45%为中度疑似",
        "qwen2.5-0.5b",
        "aigc-cal-test",
        "不是定论",
        "93.0%",
        "12.0%",
        "低风险",
        "第一章绪论",
        "手指冻得握不住笔",
    ] {
        assert!(flat.contains(needle), "missing {needle:?} in:\n{flat}");
    }
}

#[test]
fn a_text_too_short_shows_the_notice_instead_of_a_figure() {
    let text = "很短的一句话。";
    let d = Detection {
        probability: None,
        ai_rate: None,
        paragraphs: vec![],
        notice: Some("文本过短，结果不可靠（不少于 200 字时才给出数值）".into()),
        ..detection(&format!("{FIRST}\n{SECOND}"))
    };
    let font = PdfFont::discover(None).unwrap();
    let flat: String = pdftotext(&render_aigc_pdf(&doc(text, &d), &font).unwrap())
        .split_whitespace()
        .collect();
    assert!(flat.contains("文本过短，结果不可靠"), "{flat}");
    assert!(flat.contains("没有可单独判断的段落"), "{flat}");
    let html = render_aigc_html(&doc(text, &d));
    assert!(html.contains("文本过短，结果不可靠"));
}

#[test]
fn the_html_shades_paragraphs_and_escapes_text() {
    let text = format!("<b>标题</b>\n{FIRST}\n{SECOND}\n");
    let d = detection(&text);
    let html = render_aigc_html(&doc(&text, &d));
    assert!(html.contains("&lt;b&gt;标题&lt;/b&gt;") && !html.contains("<b>标题"));
    assert!(html.contains("<span class=\"high\" title=\"AI 生成概率 93.0%\">随着"));
    assert!(html.contains("<span class=\"low\" title=\"AI 生成概率 12.0%\">我在"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// Any text with any paragraph ranges (even overlapping or out of range) renders.
    #[test]
    fn arbitrary_paragraphs_render(text in "\\PC{0,300}", ranges in proptest::collection::vec((0usize..400, 0usize..400, 0.0f64..1.0), 0..8)) {
        let mut d = detection(&format!("{FIRST}\n{SECOND}"));
        d.paragraphs = ranges.into_iter().map(|(a, b, p)| ParagraphResult {
            start: a.min(b), end: a.max(b), chars: 0, probability: p,
            band: if p > 0.8 { Band::High } else if p > 0.45 { Band::Medium } else { Band::Low },
        }).collect();
        let _ = render_aigc_html(&doc(&text, &d));
        let font = PdfFont::discover(None).unwrap();
        prop_assert!(render_aigc_pdf(&doc(&text, &d), &font).is_ok());
    }
}
