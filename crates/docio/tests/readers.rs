//! Every reader on documents the tests build themselves, and on random and truncated bytes.

use docio::{DocError, Format, Limits, extract};
use proptest::prelude::*;
use std::io::Write;

fn zip_of(parts: &[(&str, &str)]) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    {
        let mut zip = zip::ZipWriter::new(&mut out);
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        for (name, content) in parts {
            zip.start_file(*name, options).unwrap();
            zip.write_all(content.as_bytes()).unwrap();
        }
        zip.finish().unwrap();
    }
    out.into_inner()
}

const W: &str = r#"xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main""#;

fn para(style: Option<&str>, runs: &str) -> String {
    let style = style
        .map(|s| format!(r#"<w:pPr><w:pStyle w:val="{s}"/></w:pPr>"#))
        .unwrap_or_default();
    format!("<w:p>{style}{runs}</w:p>")
}

fn run(text: &str) -> String {
    format!(r#"<w:r><w:t xml:space="preserve">{text}</w:t></w:r>"#)
}

pub fn sample_docx() -> Vec<u8> {
    let body = [
        para(Some("1"), &run("第一章 绪论")),
        para(None, &format!("{}{}", run("本文研究"), run("论文查重&amp;检测。"))),
        para(None, r#"<w:r><w:delText>删除的修订</w:delText></w:r><w:r><w:instrText>PAGE</w:instrText></w:r><w:r><w:t>保留的文字</w:t><w:tab/><w:t>制表符后</w:t></w:r>"#),
        format!("<w:tbl><w:tr><w:tc>{}</w:tc><w:tc>{}</w:tc></w:tr></w:tbl>", para(None, &run("表格单元一")), para(None, &run("表格单元二"))),
        para(Some("Heading2"), &run("1.1 研究背景")),
        r#"<w:p><w:r><w:drawing/></w:r></w:p>"#.to_string(),
    ]
    .concat();
    let document = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><w:document {W}><w:body>{body}</w:body></w:document>"#
    );
    let footnotes = format!(
        r#"<?xml version="1.0"?><w:footnotes {W}><w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote><w:footnote w:id="1">{}</w:footnote></w:footnotes>"#,
        para(None, &run("这是一个脚注。"))
    );
    zip_of(&[
        ("[Content_Types].xml", "<Types/>"),
        ("word/document.xml", &document),
        ("word/footnotes.xml", &footnotes),
    ])
}

/// A one-page PDF with Helvetica text, or no text at all.
pub fn sample_pdf(text: Option<&str>) -> Vec<u8> {
    let content = match text {
        Some(t) => format!("BT /F1 12 Tf 72 720 Td ({t}) Tj ET"),
        None => "0 0 1 rg 72 72 200 200 re f".to_string(),
    };
    docio::hostile::pdf_with_content(content.as_bytes(), "")
}

#[test]
fn a_paragraph_in_the_title_style_names_the_paper() {
    let body = [
        para(Some("Title"), &run("基于深度学习的  图像识别研究")),
        para(Some("1"), &run("第一章 绪论")),
        para(None, &run("正文。")),
    ]
    .concat();
    let document = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><w:document {W}><w:body>{body}</w:body></w:document>"#
    );
    let docx = zip_of(&[
        ("[Content_Types].xml", "<Types/>"),
        ("word/document.xml", &document),
    ]);
    let out = extract(&docx, "新建 Microsoft Word 文档.docx", &Limits::default()).unwrap();
    assert_eq!(out.title.as_deref(), Some("基于深度学习的 图像识别研究"));
    // Still a chapter-level heading line, so the checks leave it out of the prose.
    assert_eq!(out.headings[0].level, 1);
    // Without a Title style, no title.
    assert_eq!(
        extract(&sample_docx(), "论文.docx", &Limits::default())
            .unwrap()
            .title,
        None
    );
}

fn docx_with(body: &[String], extra: &[(&str, &str)]) -> Vec<u8> {
    let document = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><w:document {W}><w:body>{}</w:body></w:document>"#,
        body.concat()
    );
    let mut parts = vec![
        ("[Content_Types].xml", "<Types/>"),
        ("word/document.xml", document.as_str()),
    ];
    parts.extend_from_slice(extra);
    zip_of(&parts)
}

/// A university template's styles: custom ids, levels by built-in name, by outline level and by
/// inheritance; "2" here is not a heading although Chinese Word uses that id for 标题 2.
fn template_styles() -> String {
    format!(
        r#"<?xml version="1.0"?><w:styles {W}>
<w:style w:type="paragraph" w:styleId="a"><w:name w:val="Normal"/></w:style>
<w:style w:type="paragraph" w:styleId="a5"><w:name w:val="Title"/><w:basedOn w:val="a"/></w:style>
<w:style w:type="paragraph" w:styleId="10"><w:name w:val="heading 1"/><w:basedOn w:val="a"/></w:style>
<w:style w:type="paragraph" w:styleId="thesis-ch"><w:name w:val="论文一级标题"/><w:basedOn w:val="10"/></w:style>
<w:style w:type="paragraph" w:styleId="thesis-sec"><w:name w:val="论文二级标题"/><w:basedOn w:val="a"/><w:pPr><w:outlineLvl w:val="1"/></w:pPr></w:style>
<w:style w:type="paragraph" w:styleId="2"><w:name w:val="正文缩进"/><w:basedOn w:val="a"/></w:style>
<w:style w:type="paragraph" w:styleId="loop1"><w:name w:val="环一"/><w:basedOn w:val="loop2"/></w:style>
<w:style w:type="paragraph" w:styleId="loop2"><w:name w:val="环二"/><w:basedOn w:val="loop1"/></w:style>
<w:style w:type="character" w:styleId="thesis-ch-char"><w:name w:val="heading 1 Char"/></w:style>
</w:styles>"#
    )
}

#[test]
fn heading_levels_come_from_the_documents_own_styles() {
    let styles = template_styles();
    let docx = docx_with(
        &[
            para(Some("a5"), &run("中小企业云存储安全机制研究")),
            para(Some("thesis-ch"), &run("一、研究背景")),
            para(Some("2"), &run("正文段落。")),
            para(Some("thesis-sec"), &run("（一）国内研究")),
            para(Some("loop1"), &run("基于循环样式的段落。")),
            para(Some("Heading3"), &run("未定义的样式按名称识别")),
        ],
        &[("word/styles.xml", &styles)],
    );
    let out = extract(&docx, "论文.docx", &Limits::default()).unwrap();
    let levels: Vec<(usize, u8)> = out.headings.iter().map(|h| (h.line, h.level)).collect();
    assert_eq!(levels, vec![(0, 1), (1, 1), (3, 2), (5, 3)]);
    assert_eq!(out.title.as_deref(), Some("中小企业云存储安全机制研究"));
}

#[test]
fn without_a_title_paragraph_the_first_heading_or_the_properties_name_the_paper() {
    let core = |title: &str| {
        format!(
            r#"<?xml version="1.0"?><cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>{title}</dc:title></cp:coreProperties>"#
        )
    };
    let titled = |body: &[String], title: &str| {
        let core = core(title);
        extract(
            &docx_with(body, &[("docProps/core.xml", &core)]),
            "a.docx",
            &Limits::default(),
        )
        .unwrap()
        .title
    };
    let plain = [para(None, &run("正文第一段。"))];
    assert_eq!(
        titled(&plain, "农村留守儿童教育问题研究"),
        Some("农村留守儿童教育问题研究".into())
    );
    // Template and file-name titles are not the paper's.
    assert_eq!(titled(&plain, "Microsoft Word - 论文终稿修改版.doc"), None);
    assert_eq!(titled(&plain, "本科毕业论文模板"), None);
    assert_eq!(titled(&plain, "Thesis"), None);
    // A first line styled as a heading, not a section name or numbered chapter, is the title.
    let first = [
        para(Some("1"), &run("乡村振兴背景下的电商发展研究")),
        para(None, &run("正文。")),
    ];
    assert_eq!(
        titled(&first, "模板"),
        Some("乡村振兴背景下的电商发展研究".into())
    );
    let chapter = [
        para(Some("1"), &run("第一章 绪论")),
        para(None, &run("正文。")),
    ];
    assert_eq!(titled(&chapter, ""), None);
    let abstract_ = [para(Some("1"), &run("摘  要")), para(None, &run("正文。"))];
    assert_eq!(titled(&abstract_, ""), None);
}

#[test]
fn docx_paragraphs_headings_tables_and_footnotes() {
    let out = extract(&sample_docx(), "论文.docx", &Limits::default()).unwrap();
    assert_eq!(out.format, Format::Docx);
    let lines: Vec<&str> = out.text.lines().collect();
    assert_eq!(
        lines,
        vec![
            "第一章 绪论",
            "本文研究论文查重&检测。",
            "保留的文字\t制表符后",
            "表格单元一",
            "表格单元二",
            "1.1 研究背景",
            "",
            "脚注",
            "这是一个脚注。"
        ]
    );
    assert_eq!(
        out.headings
            .iter()
            .map(|h| (h.line, h.level))
            .collect::<Vec<_>>(),
        vec![(0, 1), (5, 2)]
    );
}

#[test]
fn docx_without_a_body_or_with_bad_xml_is_refused() {
    let no_body = zip_of(&[("word/other.xml", "<x/>")]);
    assert_eq!(
        extract(&no_body, "a.docx", &Limits::default())
            .unwrap_err()
            .code(),
        "corrupt_file"
    );
    let bad = zip_of(&[("word/document.xml", "<w:document><w:body><w:p><w:t>未闭合")]);
    assert!(extract(&bad, "a.docx", &Limits::default()).is_err());
    let empty = zip_of(&[(
        "word/document.xml",
        &format!("<w:document {W}><w:body><w:p/></w:body></w:document>"),
    )]);
    assert_eq!(
        extract(&empty, "a.docx", &Limits::default()).unwrap_err(),
        DocError::Empty
    );
}

#[test]
fn pdf_text_layer_is_read_and_an_empty_one_refused() {
    let out = extract(
        &sample_pdf(Some(
            "Similarity checking reads the text layer of this PDF page",
        )),
        "a.pdf",
        &Limits::default(),
    )
    .unwrap();
    assert_eq!(out.format, Format::Pdf);
    assert!(out.text.contains("Similarity checking"), "{:?}", out.text);
    let err = extract(&sample_pdf(None), "scan.pdf", &Limits::default()).unwrap_err();
    assert_eq!(err, DocError::Garbled);
    assert!(err.to_string().contains("扫描件"));
    assert!(extract(b"%PDF-1.4\nnot really", "x.pdf", &Limits::default()).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_get_an_error_or_text_never_a_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600), kind in 0usize..4) {
        let mut input = match kind {
            0 => b"%PDF-1.4\n".to_vec(),
            1 => b"PK\x03\x04".to_vec(),
            _ => Vec::new(),
        };
        input.extend(&bytes);
        let name = ["a.pdf", "a.docx", "a.txt", "a.bin"][kind];
        let _ = extract(&input, name, &Limits::default());
    }

    #[test]
    fn truncated_documents_get_an_error_or_text(cut in 0usize..2000, which in 0usize..3) {
        let doc = match which {
            0 => sample_docx(),
            1 => sample_pdf(Some("Truncated documents must not crash the reader")),
            _ => objects_docx(&TINY_PNG),
        };
        let cut = cut.min(doc.len());
        // Pictures asked for: their reading meets the cut too.
        let limits = Limits { image_bytes: 1 << 20, ..Limits::default() };
        let _ = extract(&doc[..cut], if which == 1 { "a.pdf" } else { "a.docx" }, &limits);
    }
}

#[test]
fn a_deflate_bomb_pdf_is_refused_without_expanding_it() {
    // 2 GB of spaces in a file of about 2 MB; the page limit is 16 MB decompressed.
    let pdf = docio::hostile::deflate_bomb_pdf(2 << 30);
    assert!(pdf.len() < 4 << 20, "{}", pdf.len());
    let err = extract(&pdf, "bomb.pdf", &Limits::default()).unwrap_err();
    assert_eq!(err.code(), "document_too_complex", "{err}");
    assert!(err.to_string().contains("第 1 页"), "{err}");
}

#[test]
fn millions_of_empty_paragraphs_stop_at_the_paragraph_limit() {
    let docx = docio::hostile::empty_paragraphs_docx(3_000_000);
    assert!(docx.len() < 200 * 1024, "{}", docx.len());
    let err = extract(&docx, "bomb.docx", &Limits::default()).unwrap_err();
    assert_eq!(err.code(), "document_too_complex", "{err}");
    assert!(err.to_string().contains("段落"), "{err}");
}

#[test]
fn a_docx_part_over_its_size_limit_is_refused() {
    // 4 MB of whitespace in one part, under a 1 MB part limit.
    let body = format!(
        "<w:document {W}><w:body>{}</w:body></w:document>",
        " ".repeat(4 << 20)
    );
    let docx = zip_of(&[("word/document.xml", &body)]);
    let limits = Limits {
        max_part_bytes: 1 << 20,
        ..Limits::default()
    };
    let err = extract(&docx, "big.docx", &limits).unwrap_err();
    assert_eq!(err.code(), "document_too_complex", "{err}");
}

#[test]
fn reading_stops_once_the_character_limit_is_passed() {
    let body = (0..50)
        .map(|_| para(None, &run(&"论文".repeat(50))))
        .collect::<String>();
    let docx = zip_of(&[(
        "word/document.xml",
        &format!("<w:document {W}><w:body>{body}</w:body></w:document>"),
    )]);
    let limits = Limits {
        max_chars: 1_000,
        ..Limits::default()
    };
    let err = extract(&docx, "long.docx", &limits).unwrap_err();
    assert_eq!(err, DocError::OverCharLimit { limit: 1_000 });
    assert_eq!(err.code(), "too_many_characters");
    let text = "Limits stop the reader early. ".repeat(20);
    let pdf = sample_pdf(Some(&text));
    let limits = Limits {
        max_chars: 100,
        ..Limits::default()
    };
    let err = extract(&pdf, "long.pdf", &limits).unwrap_err();
    assert_eq!(err.code(), "too_many_characters", "{err}");
}

/// A 1×1 PNG (red), whole: signature, IHDR, IDAT, IEND.
const TINY_PNG: [u8; 69] = [
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53,
    0xDE, 0x00, 0x00, 0x00, 0x0C, 0x49, 0x44, 0x41, 0x54, 0x08, 0xD7, 0x63, 0xF8, 0xCF, 0xC0, 0x00,
    0x00, 0x03, 0x01, 0x01, 0x00, 0x18, 0xDD, 0x8D, 0xB0, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E,
    0x44, 0xAE, 0x42, 0x60, 0x82,
];

fn drawing(rel: &str, cx: u64, cy: u64) -> String {
    format!(
        r#"<w:p><w:r><w:drawing><wp:inline xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"><wp:extent cx="{cx}" cy="{cy}"/><a:graphic xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><a:graphicData><pic:pic xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:blipFill><a:blip xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" r:embed="{rel}"/></pic:blipFill></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>"#
    )
}

fn objects_docx(png: &[u8]) -> Vec<u8> {
    let cell = |t: &str| format!("<w:tc>{}</w:tc>", para(None, &run(t)));
    let body = [
        para(Some("Heading1"), &run("第4章 实验结果")),
        para(None, &run("表4-1 各模型的识别准确率")),
        format!(
            "<w:tbl><w:tr>{}{}</w:tr><w:tr>{}{}</w:tr><w:tr><w:tc><w:tcPr><w:gridSpan w:val=\"2\"/></w:tcPr>{}</w:tc></w:tr></w:tbl>",
            cell("模型"),
            cell("准确率"),
            cell("本文方法"),
            cell("96.2%"),
            para(None, &run("注：测试集共1000张"))
        ),
        para(None, &run("如表4-1所示，本文方法最优。")),
        drawing("rIdImg", 3_600_000, 1_800_000),
        para(None, &run("图4-1 识别结果示例")),
        drawing("rIdImg", 3_600_000, 1_800_000),
        drawing("rIdGone", 100, 100),
        drawing("rIdWeb", 100, 100),
    ];
    let rels = r#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rIdImg" Type="image" Target="media/image1.png"/><Relationship Id="rIdGone" Type="image" Target="media/missing.png"/><Relationship Id="rIdWeb" Type="image" Target="http://example.com/a.png" TargetMode="External"/></Relationships>"#;
    let document = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><w:document {W}><w:body>{}</w:body></w:document>"#,
        body.concat()
    );
    let mut out = std::io::Cursor::new(Vec::new());
    {
        let mut zip = zip::ZipWriter::new(&mut out);
        let options = zip::write::SimpleFileOptions::default();
        for (name, content) in [
            ("[Content_Types].xml", "<Types/>".as_bytes()),
            ("word/document.xml", document.as_bytes()),
            ("word/_rels/document.xml.rels", rels.as_bytes()),
            ("word/media/image1.png", png),
        ] {
            zip.start_file(name, options).unwrap();
            zip.write_all(content).unwrap();
        }
        zip.finish().unwrap();
    }
    out.into_inner()
}

#[test]
fn a_docx_gives_its_tables_by_rows_and_on_request_its_pictures() {
    let docx = objects_docx(&TINY_PNG);
    let out = extract(&docx, "论文.docx", &Limits::default()).unwrap();
    let lines: Vec<&str> = out.text.lines().collect();
    assert_eq!(out.tables.len(), 1);
    let table = &out.tables[0];
    assert_eq!(
        table.rows,
        vec![
            vec!["模型", "准确率"],
            vec!["本文方法", "96.2%"],
            vec!["注：测试集共1000张", ""],
        ]
    );
    // The table's lines are its cells, between the caption and the sentence after it.
    assert_eq!(lines[table.start_line - 1], "表4-1 各模型的识别准确率");
    assert_eq!(
        &lines[table.start_line..table.end_line],
        ["模型", "准确率", "本文方法", "96.2%", "注：测试集共1000张"]
    );
    assert_eq!(lines[table.end_line], "如表4-1所示，本文方法最优。");
    // Pictures are read only when asked for.
    assert!(out.images.is_empty());

    let limits = Limits {
        image_bytes: 1 << 20,
        ..Limits::default()
    };
    let out = extract(&docx, "论文.docx", &limits).unwrap();
    // One picture: the second use of the same file, the missing file and the web link are not.
    assert_eq!(out.images.len(), 1);
    let image = &out.images[0];
    assert_eq!(image.ext, "png");
    assert_eq!(image.bytes, TINY_PNG);
    assert_eq!((image.width_emu, image.height_emu), (3_600_000, 1_800_000));
    assert_eq!(lines[image.line], "图4-1 识别结果示例");
    // The reply of the isolated reader carries the picture through JSON.
    let json = serde_json::to_string(&out).unwrap();
    let back: docio::Extracted = serde_json::from_str(&json).unwrap();
    assert_eq!(back, out);

    // A picture over the budget, or not a PNG or JPEG, is left out; the text is still read.
    let small = Limits {
        image_bytes: 10,
        ..Limits::default()
    };
    assert!(
        extract(&docx, "论文.docx", &small)
            .unwrap()
            .images
            .is_empty()
    );
    let gif = objects_docx(b"GIF89a\x01\x00\x01\x00");
    assert!(
        extract(&gif, "论文.docx", &limits)
            .unwrap()
            .images
            .is_empty()
    );
}
