//! The binary as an operator uses it: corpus import, list, remove, and check --json.

use serde_json::Value;
use std::process::Command;

fn wenjian(data: &std::path::Path, args: &[&str]) -> (bool, String, String) {
    let backend = std::fs::read_to_string(data.join("backend")).unwrap_or_default();
    let out = Command::new(env!("CARGO_BIN_EXE_wenjian"))
        .args(args)
        .env("WENJIAN_DATA_DIR", data)
        .env("WENJIAN_LIBRARY_BACKEND", backend.trim())
        .env_remove("WENJIAN_DATABASE_URL")
        .output()
        .expect("run wenjian");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const SOURCE_A: &str = "本研究采用问卷调查与深度访谈相结合的方法考察了高校学生的课外阅读习惯及其影响因素结果表明阅读时间与学业成绩存在显著的正相关关系";
const SOURCE_B: &str = "城市轨道交通的客流预测是线网规划与运营组织的基础工作本文提出一种融合时空特征的组合预测模型并在多个站点进行了验证";

#[test]
fn import_list_check_and_remove_embedded() {
    import_list_check_and_remove("embedded");
}

#[test]
fn import_list_check_and_remove_in_the_database() {
    import_list_check_and_remove("database");
}

fn import_list_check_and_remove(backend: &str) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    std::fs::write(data.join("backend"), backend).unwrap();
    let jsonl = data.join("docs.jsonl");
    std::fs::write(
        &jsonl,
        format!(
            "{}\n{}\nnot json\n",
            serde_json::json!({"title": "阅读习惯研究", "author": "甲", "year": 2021, "text": SOURCE_A}),
            serde_json::json!({"title": "客流预测模型", "text": SOURCE_B}),
        ),
    )
    .unwrap();
    let (ok, out, err) = wenjian(data, &["corpus", "import", jsonl.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(out.contains("已导入 2 篇文档"), "{out}");
    assert!(err.contains("第 3 行"), "a bad line is reported: {err}");

    let (ok, out, _) = wenjian(data, &["corpus", "list"]);
    assert!(ok);
    assert!(
        out.contains("阅读习惯研究") && out.contains("客流预测模型"),
        "{out}"
    );

    let paper = data.join("paper.txt");
    let copied: String = SOURCE_A.chars().skip(10).take(30).collect();
    std::fs::write(
        &paper,
        format!(
            "\u{feff}第一章 引言\n这是作者自己撰写的一段开头文字。{copied}。后面也是原创的内容。\n"
        ),
    )
    .unwrap();
    let (ok, out, err) = wenjian(data, &["check", paper.to_str().unwrap(), "--json"]);
    assert!(ok, "{err}");
    let r: Value = serde_json::from_str(&out).unwrap();
    for key in [
        "total_chars",
        "copied_chars",
        "ratio_total",
        "ratio_excluding_quotes",
        "ratio_max_single_source",
        "sources",
        "spans",
    ] {
        assert!(r.get(key).is_some(), "missing {key}");
    }
    assert_eq!(r["copied_chars"], 30);
    let span = &r["spans"][0];
    // Offsets count characters of the decoded text (the byte-order mark is not part of it).
    let text: Vec<char> = std::fs::read_to_string(&paper)
        .unwrap()
        .trim_start_matches('\u{feff}')
        .chars()
        .collect();
    let start = span["start"].as_u64().unwrap() as usize;
    let end = span["end"].as_u64().unwrap() as usize;
    assert_eq!(text[start..end].iter().collect::<String>(), copied);
    assert_eq!(span["class"], "copy");
    assert_eq!(r["sources"][0]["title"], "阅读习惯研究");
    let ratio = r["ratio_total"].as_f64().unwrap();
    let expected = 30.0 * 100.0 / r["total_chars"].as_f64().unwrap();
    assert!((ratio - expected).abs() < 1e-9);

    let (ok, out, _) = wenjian(data, &["check", paper.to_str().unwrap()]);
    assert!(ok);
    assert!(
        out.contains("总文字复制比") && out.contains("阅读习惯研究"),
        "{out}"
    );

    let id = r["sources"][0]["id"].as_u64().unwrap().to_string();
    assert!(wenjian(data, &["corpus", "remove", &id]).0);
    let (ok, _, err) = wenjian(data, &["corpus", "remove", &id]);
    assert!(!ok && err.contains("没有编号"), "{err}");
    let (_, out, _) = wenjian(data, &["check", paper.to_str().unwrap(), "--json"]);
    let r: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(r["copied_chars"], 0);
}

/// A minimal .docx with one paragraph per line.
fn docx(lines: &[&str]) -> Vec<u8> {
    use std::io::Write;
    let body: String = lines
        .iter()
        .map(|l| format!("<w:p><w:r><w:t>{l}</w:t></w:r></w:p>"))
        .collect();
    let xml = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>{body}</w:body></w:document>"#
    );
    let mut out = std::io::Cursor::new(Vec::new());
    let mut zip = zip::ZipWriter::new(&mut out);
    zip.start_file(
        "word/document.xml",
        zip::write::SimpleFileOptions::default(),
    )
    .unwrap();
    zip.write_all(xml.as_bytes()).unwrap();
    zip.finish().unwrap();
    out.into_inner()
}

#[test]
fn checks_a_word_document_and_refuses_garbage() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let source = data.join("source.txt");
    std::fs::write(&source, SOURCE_B).unwrap();
    assert!(wenjian(data, &["corpus", "import", source.to_str().unwrap()]).0);
    let copied: String = SOURCE_B.chars().skip(5).take(25).collect();
    let paper = data.join("论文.docx");
    std::fs::write(
        &paper,
        docx(&["第一章 引言", &format!("本章首先说明研究动机。{copied}。")]),
    )
    .unwrap();
    let (ok, out, err) = wenjian(data, &["check", paper.to_str().unwrap(), "--json"]);
    assert!(ok, "{err}");
    let r: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(r["copied_chars"], 25);

    let garbage = data.join("garbage.pdf");
    std::fs::write(&garbage, b"%PDF-1.7 this is not a pdf at all").unwrap();
    let (ok, _, err) = wenjian(data, &["check", garbage.to_str().unwrap()]);
    assert!(!ok);
    assert!(err.contains("PDF"), "{err}");
}

#[test]
fn paper_generate_refuses_bad_requests_before_any_model_runs() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let long_title = "论".repeat(300);
    for (args, expected) in [
        (
            vec!["--title", " ", "--field", "计算机"],
            "论文题目须为 2 到",
        ),
        (vec!["--title", "论", "--field", "计算机"], "现为 1 个字"),
        (
            vec!["--title", &long_title, "--field", "计算机"],
            "现为 300 个字",
        ),
        (
            vec![
                "--title",
                "图像识别研究",
                "--field",
                "计算机",
                "--words",
                "200000",
            ],
            "目标字数须在",
        ),
        (
            vec![
                "--title",
                "图像识别研究",
                "--field",
                "计算机",
                "--kind",
                "novel",
            ],
            "--kind 只能是",
        ),
    ] {
        let mut all = vec!["paper", "generate"];
        all.extend(args.iter().copied());
        let (ok, _, stderr) = wenjian(data, &all);
        assert!(!ok);
        assert!(stderr.contains(expected), "{all:?}: {stderr}");
    }
    // A valid request on a server without models says what is missing, and writes nothing.
    let out = data.join("paper.docx");
    let (ok, _, stderr) = wenjian(
        data,
        &[
            "paper",
            "generate",
            "--title",
            "图像识别研究",
            "--field",
            "计算机",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert!(!ok);
    assert!(stderr.contains("wenjian models fetch"), "{stderr}");
    assert!(!out.exists());
}

#[test]
fn slides_makes_a_deck_from_a_text_paper_and_refuses_what_it_cannot_use() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let (ok, out, err) = wenjian(data, &["slides", "--templates", "--json"]);
    assert!(ok, "{err}");
    let templates: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(templates.as_array().unwrap().len(), 6);

    // A text file: its numbered headings are its chapters.
    let paper = data.join("论文.txt");
    std::fs::write(
        &paper,
        "道路裂缝检测方法研究\n第1章 绪论\n道路裂缝是路面病害的早期表现，及时发现裂缝对道路养护具有重要意义。传统的人工巡检效率低且存在安全隐患。\n第2章 研究方法\n本文提出的模型以YOLOv5s为基础，在主干网络末端引入坐标注意力模块。\n第3章 实验结果与分析\n实验结果表明，改进模型的平均精度均值达到86.4%，比原始YOLOv5提高4.7个百分点。\n第4章 结论\n本文提出的方法能够满足道路巡检的实时性要求。",
    )
    .unwrap();
    let deck = data.join("deck.pptx");
    let (ok, out, err) = wenjian(
        data,
        &[
            "slides",
            paper.to_str().unwrap(),
            "--template",
            "green",
            "--slides",
            "10",
            "--school",
            "华东理工学院",
            "--out",
            deck.to_str().unwrap(),
            "--json",
        ],
    );
    assert!(ok, "{err}");
    let listed: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(listed["asked"], 10);
    assert_eq!(listed["template"], "green");
    let slides = listed["slides"].as_array().unwrap();
    assert!(slides.len() >= 5 && slides.len() <= 10, "{out}");
    assert_eq!(slides[0]["kind"], "cover");
    assert!(
        slides
            .iter()
            .any(|s| s["bullets"].to_string().contains("86.4%"))
    );
    assert!(std::fs::read(&deck).unwrap().starts_with(b"PK"));

    for (args, code) in [
        (vec!["--template", "rainbow"], "unknown_template"),
        (vec!["--slides", "60"], "invalid_slide_count"),
    ] {
        let mut all = vec!["slides", paper.to_str().unwrap()];
        all.extend(args);
        let (ok, _, err) = wenjian(data, &all);
        assert!(!ok);
        assert!(err.contains(code), "{err}");
    }
    let flat = data.join("无标题.txt");
    std::fs::write(&flat, "一段没有任何章节标题的文字。").unwrap();
    let (ok, _, err) = wenjian(data, &["slides", flat.to_str().unwrap()]);
    assert!(!ok);
    assert!(err.contains("paper_without_headings"), "{err}");
}
