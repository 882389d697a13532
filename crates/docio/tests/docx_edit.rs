//! Editing an uploaded .docx in place (`replace_paragraph_texts`): the changed paragraphs get
//! their new text and every other part of the file stays as it was. The documents are built
//! here; their sentences are the tests' own.

use docio::{DocError, Limits, extract, replace_paragraph_texts};
use proptest::prelude::*;
use std::io::{Read, Write};

const NS: &str = r#"xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture" xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape" xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006""#;

const CONTENT_TYPES: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Default Extension="png" ContentType="image/png"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/><Override PartName="/word/numbering.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.numbering+xml"/><Override PartName="/word/footnotes.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.footnotes+xml"/><Override PartName="/word/header1.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.header+xml"/></Types>"#;

const ROOT_RELS: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>"#;

const DOCUMENT_RELS: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/numbering" Target="numbering.xml"/><Relationship Id="rId3" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/footnotes" Target="footnotes.xml"/><Relationship Id="rId5" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/image" Target="media/image1.png"/><Relationship Id="rId7" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/header" Target="header1.xml"/></Relationships>"#;

fn styles() -> String {
    let style = |id: &str, name: &str, extra: &str| {
        format!(
            r#"<w:style w:type="paragraph" w:styleId="{id}"><w:name w:val="{name}"/><w:basedOn w:val="a"/><w:qFormat/>{extra}</w:style>"#
        )
    };
    format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:styles {NS}><w:docDefaults><w:rPrDefault><w:rPr><w:rFonts w:eastAsia="宋体"/><w:sz w:val="24"/></w:rPr></w:rPrDefault></w:docDefaults><w:style w:type="paragraph" w:default="1" w:styleId="a"><w:name w:val="Normal"/></w:style>{}{}{}{}{}<w:style w:type="character" w:styleId="FootnoteReference"><w:name w:val="footnote reference"/><w:rPr><w:vertAlign w:val="superscript"/></w:rPr></w:style></w:styles>"#,
        style(
            "1",
            "heading 1",
            r#"<w:pPr><w:outlineLvl w:val="0"/></w:pPr><w:rPr><w:rFonts w:eastAsia="黑体"/><w:b/><w:sz w:val="32"/></w:rPr>"#
        ),
        style(
            "2",
            "heading 2",
            r#"<w:pPr><w:outlineLvl w:val="1"/></w:pPr><w:rPr><w:b/><w:sz w:val="28"/></w:rPr>"#
        ),
        style(
            "BodyThesis",
            "论文正文",
            r#"<w:pPr><w:spacing w:line="360" w:lineRule="auto"/><w:ind w:firstLineChars="200"/></w:pPr>"#
        ),
        style("ListParagraph", "List Paragraph", ""),
        style(
            "Caption",
            "caption",
            r#"<w:pPr><w:jc w:val="center"/></w:pPr>"#
        ),
    )
}

const NUMBERING: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:numbering xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:abstractNum w:abstractNumId="0"><w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="decimal"/><w:lvlText w:val="（%1）"/></w:lvl></w:abstractNum><w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num></w:numbering>"#;

fn footnotes() -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:footnotes {NS}><w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote><w:footnote w:id="1"><w:p><w:pPr><w:pStyle w:val="FootnoteText"/></w:pPr><w:r><w:rPr><w:rStyle w:val="FootnoteReference"/></w:rPr><w:footnoteRef/></w:r><w:r><w:t xml:space="preserve">{FOOTNOTE}</w:t></w:r></w:p></w:footnote></w:footnotes>"#
    )
}

fn header() -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:hdr {NS}><w:p><w:pPr><w:jc w:val="center"/></w:pPr><w:r><w:t>某某大学本科毕业论文</w:t></w:r></w:p></w:hdr>"#
    )
}

/// A tiny PNG-like blob (only its bytes matter here).
fn image() -> Vec<u8> {
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend((0..2000u32).map(|i| (i * 7 % 251) as u8));
    png
}

fn para(style: &str, runs: &str) -> String {
    format!(r#"<w:p w:rsidR="00A1B2C3"><w:pPr><w:pStyle w:val="{style}"/></w:pPr>{runs}</w:p>"#)
}

fn run(text: &str) -> String {
    format!(r#"<w:r><w:t xml:space="preserve">{text}</w:t></w:r>"#)
}

/// Word puts a space between the footnote mark and its text; the reader keeps it.
const FOOTNOTE: &str = " 调查时间为二〇二四年春季，由课题组成员入户完成，每户访谈约半小时。";
const BACKGROUND_LEAD: &str = "研究背景：";
const BACKGROUND: &str = "研究背景：随着城市化进程不断加快，社区养老服务的需求日益增长[1]。";
const SURVEY: &str =
    "本文以某市三个社区为例，调查了老年人对上门服务的满意程度，并分析了影响满意度的主要因素。";

fn body() -> String {
    [
        para(
            "1",
            &format!(
                r#"<w:bookmarkStart w:id="0" w:name="_Toc100"/>{}<w:bookmarkEnd w:id="0"/>"#,
                run("第一章 绪论")
            ),
        ),
        para(
            "BodyThesis",
            &format!(
                r#"<w:r><w:rPr><w:b/></w:rPr><w:t>{BACKGROUND_LEAD}</w:t></w:r>{}<w:r><w:rPr><w:vertAlign w:val="superscript"/></w:rPr><w:t>[1]</w:t></w:r>{}"#,
                run("随着城市化进程不断加快，社区养老服务的需求日益增长"),
                run("。")
            ),
        ),
        para(
            "BodyThesis",
            &format!(
                r#"{}<w:r><w:rPr><w:rStyle w:val="FootnoteReference"/></w:rPr><w:footnoteReference w:id="1"/></w:r>{}"#,
                run("本文以某市三个社区为例，调查了老年人对上门服务的满意程度"),
                run("，并分析了影响满意度的主要因素。")
            ),
        ),
        format!(
            r#"<w:p><w:pPr><w:pStyle w:val="ListParagraph"/><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr></w:pPr>{}</w:p>"#,
            run("问卷调查覆盖了六十岁以上的常住居民，共回收有效问卷三百余份。")
        ),
        format!(
            r#"<w:tbl><w:tblPr><w:tblStyle w:val="TableGrid"/><w:tblW w:w="0" w:type="auto"/></w:tblPr><w:tblGrid><w:gridCol w:w="4000"/><w:gridCol w:w="4000"/></w:tblGrid><w:tr><w:tc><w:tcPr><w:tcW w:w="4000" w:type="dxa"/></w:tcPr>{}</w:tc><w:tc><w:tcPr><w:tcW w:w="4000" w:type="dxa"/></w:tcPr>{}</w:tc></w:tr></w:tbl>"#,
            para("TableText", &run("指标")),
            para("TableText", &run("受访老人普遍认为上门服务的预约流程仍然偏繁琐。"))
        ),
        r#"<w:p><w:pPr><w:jc w:val="center"/></w:pPr><w:r><w:drawing><wp:inline distT="0" distB="0" distL="0" distR="0"><wp:extent cx="952500" cy="952500"/><wp:docPr id="1" name="图片 1"/><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:pic><pic:nvPicPr><pic:cNvPr id="1" name="image1.png"/><pic:cNvPicPr/></pic:nvPicPr><pic:blipFill><a:blip r:embed="rId5"/></pic:blipFill><pic:spPr/></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>"#.to_string(),
        para("Caption", &run("图1 调查社区的分布")),
        para(
            "BodyThesis",
            r#"<w:r><w:t>第一列</w:t><w:tab/><w:t>第二列的说明文字比较长一些。</w:t><w:br/><w:t>换行之后的这一行也是同一个段落里的文字。</w:t></w:r>"#,
        ),
        para("2", &run("1.1 研究方法")),
        para(
            "BodyThesis",
            &format!(
                r#"{}<w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><wp:anchor><wps:wsp><wps:txbx><w:txbxContent>{}</w:txbxContent></wps:txbx></wps:wsp></wp:anchor></w:drawing></mc:Choice></mc:AlternateContent></w:r>{}"#,
                run("文本框之前的文字。"),
                para("BoxText", &run("文本框里面的一段说明文字，也应当原样保留。")),
                run("研究采用问卷与访谈相结合的方法，对收集到的数据进行了统计分析。")
            ),
        ),
        para("BodyThesis", &run("结果表明，服务响应速度是影响老年人满意度的首要因素。")),
    ]
    .concat()
}

const SECT_PR: &str = r#"<w:sectPr w:rsidR="00A1B2C3"><w:headerReference w:type="default" r:id="rId7"/><w:pgSz w:w="11906" w:h="16838"/><w:pgMar w:top="1440" w:right="1800" w:bottom="1440" w:left="1800" w:header="851" w:footer="992" w:gutter="0"/><w:pgNumType w:start="1"/></w:sectPr>"#;

fn document() -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document {NS}><w:body>{}{SECT_PR}</w:body></w:document>"#,
        body()
    )
}

/// The test thesis: a zip like Word writes, with the image stored and the XML deflated.
fn thesis() -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    {
        let mut zip = zip::ZipWriter::new(&mut out);
        let deflated = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        let stored = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        let parts: Vec<(&str, Vec<u8>)> = vec![
            ("[Content_Types].xml", CONTENT_TYPES.into()),
            ("_rels/.rels", ROOT_RELS.into()),
            ("word/document.xml", document().into_bytes()),
            ("word/_rels/document.xml.rels", DOCUMENT_RELS.into()),
            ("word/styles.xml", styles().into_bytes()),
            ("word/numbering.xml", NUMBERING.into()),
            ("word/footnotes.xml", footnotes().into_bytes()),
            ("word/header1.xml", header().into_bytes()),
            ("word/media/image1.png", image()),
        ];
        for (name, bytes) in parts {
            let options = if name.ends_with(".png") {
                stored
            } else {
                deflated
            };
            zip.start_file(name, options).unwrap();
            zip.write_all(&bytes).unwrap();
        }
        zip.finish().unwrap();
    }
    out.into_inner()
}

fn lines_of(docx: &[u8]) -> Vec<String> {
    extract(docx, "论文.docx", &Limits::default())
        .unwrap()
        .text
        .lines()
        .map(str::to_string)
        .collect()
}

fn entry(docx: &[u8], name: &str) -> Vec<u8> {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(docx)).unwrap();
    let mut out = Vec::new();
    archive
        .by_name(name)
        .unwrap()
        .read_to_end(&mut out)
        .unwrap();
    out
}

/// An entry's compressed bytes as stored in the zip.
fn raw_entry(docx: &[u8], name: &str) -> Vec<u8> {
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(docx)).unwrap();
    let index = archive.index_for_name(name).unwrap();
    let file = archive.by_index_raw(index).unwrap();
    let mut out = Vec::new();
    let mut file = file;
    file.read_to_end(&mut out).unwrap();
    out
}

fn names(docx: &[u8]) -> Vec<String> {
    let archive = zip::ZipArchive::new(std::io::Cursor::new(docx)).unwrap();
    archive.file_names().map(str::to_string).collect::<Vec<_>>()
}

/// Each paragraph's `w:pStyle` (or none), in document order.
fn paragraph_styles(xml: &str) -> Vec<Option<String>> {
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut out: Vec<Option<String>> = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    loop {
        match reader.read_event().unwrap() {
            quick_xml::events::Event::Start(e) if e.name().as_ref() == b"w:p" => {
                open.push(out.len());
                out.push(None);
            }
            quick_xml::events::Event::Empty(e) if e.name().as_ref() == b"w:pStyle" => {
                let value = e
                    .try_get_attribute("w:val")
                    .unwrap()
                    .unwrap()
                    .unescape_value()
                    .unwrap()
                    .into_owned();
                if let Some(&i) = open.last() {
                    out[i] = Some(value);
                }
            }
            quick_xml::events::Event::End(e) if e.name().as_ref() == b"w:p" => {
                open.pop();
            }
            quick_xml::events::Event::Eof => break,
            _ => {}
        }
    }
    out
}

fn index_of(lines: &[String], text: &str) -> usize {
    lines
        .iter()
        .position(|l| l == text)
        .unwrap_or_else(|| panic!("{text} not in {lines:?}"))
}

fn refs(lines: &[String]) -> Vec<&str> {
    lines.iter().map(String::as_str).collect()
}

#[test]
fn the_thesis_reads_as_expected() {
    let lines = lines_of(&thesis());
    assert_eq!(
        lines,
        vec![
            "第一章 绪论",
            BACKGROUND,
            SURVEY,
            "问卷调查覆盖了六十岁以上的常住居民，共回收有效问卷三百余份。",
            "指标",
            "受访老人普遍认为上门服务的预约流程仍然偏繁琐。",
            "",
            "图1 调查社区的分布",
            "第一列\t第二列的说明文字比较长一些。",
            "换行之后的这一行也是同一个段落里的文字。",
            "1.1 研究方法",
            "文本框里面的一段说明文字，也应当原样保留。",
            "研究采用问卷与访谈相结合的方法，对收集到的数据进行了统计分析。",
            "结果表明，服务响应速度是影响老年人满意度的首要因素。",
            "",
            "脚注",
            FOOTNOTE,
        ]
    );
    let headings = extract(&thesis(), "论文.docx", &Limits::default())
        .unwrap()
        .headings;
    assert_eq!(
        headings
            .iter()
            .map(|h| (h.line, h.level))
            .collect::<Vec<_>>(),
        vec![(0, 1), (10, 2)]
    );
}

#[test]
fn two_paragraphs_get_new_text_and_everything_else_stays() {
    let original = thesis();
    let lines = lines_of(&original);
    let background = index_of(&lines, BACKGROUND);
    let survey = index_of(&lines, SURVEY);
    let new_background = "研究背景：城市化不断推进，社区养老服务的需求持续攀升[1]。";
    let new_survey =
        "本研究选取某市的三个社区，考察老年人对上门服务是否满意，并探讨了左右满意度的关键因素。";
    let out = replace_paragraph_texts(
        &original,
        &refs(&lines),
        &[
            (background, new_background.to_string()),
            (survey, new_survey.to_string()),
        ],
        &Limits::default(),
    )
    .unwrap();

    // Read back: the two lines changed, every other line as it was.
    let back = lines_of(&out);
    assert_eq!(back.len(), lines.len());
    for (i, (was, now)) in lines.iter().zip(&back).enumerate() {
        match i {
            _ if i == background => assert_eq!(now, new_background),
            _ if i == survey => assert_eq!(now, new_survey),
            _ => assert_eq!(now, was, "line {i}"),
        }
    }
    let headings = |docx: &[u8]| {
        extract(docx, "x.docx", &Limits::default())
            .unwrap()
            .headings
    };
    assert_eq!(headings(&out), headings(&original));

    // Every entry but document.xml is the same, compressed bytes included, in the same order.
    assert_eq!(names(&out), names(&original));
    for name in names(&original) {
        if name == "word/document.xml" {
            continue;
        }
        assert_eq!(entry(&out, &name), entry(&original, &name), "{name}");
        assert_eq!(
            raw_entry(&out, &name),
            raw_entry(&original, &name),
            "{name}"
        );
    }

    // Inside document.xml: the same paragraphs with the same styles; the footnote reference,
    // the picture, the bookmark, the numbering and the section properties are still there; the
    // bold lead and the superscript citation mark the new text shares keep their runs.
    let before = String::from_utf8(entry(&original, "word/document.xml")).unwrap();
    let after = String::from_utf8(entry(&out, "word/document.xml")).unwrap();
    assert_eq!(paragraph_styles(&after), paragraph_styles(&before));
    for kept in [
        r#"<w:footnoteReference w:id="1"/>"#,
        r#"<a:blip r:embed="rId5"/>"#,
        r#"<w:bookmarkStart w:id="0" w:name="_Toc100"/>"#,
        r#"<w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr>"#,
        r#"<w:rPr><w:b/></w:rPr><w:t>研究背景：</w:t>"#,
        r#"<w:rPr><w:vertAlign w:val="superscript"/></w:rPr><w:t>[1]</w:t>"#,
        SECT_PR,
    ] {
        assert!(after.contains(kept), "{kept} missing from {after}");
    }
    // Outside the two paragraphs not a byte moved.
    let changed = |xml: &str| {
        let a = xml.find("研究背景").unwrap();
        let b = xml.find("问卷调查").unwrap();
        (xml[..a].to_string(), xml[b..].to_string())
    };
    assert_eq!(changed(&after), changed(&before));
    // The old wording is gone from the file, not hidden.
    assert!(!after.contains("调查了老年人"), "{after}");
    assert!(!after.contains("日益增长"), "{after}");
}

#[test]
fn new_text_takes_the_look_of_the_run_that_held_most_of_the_span() {
    let original = thesis();
    let lines = lines_of(&original);
    let line = index_of(&lines, BACKGROUND);
    // Nothing shared at the start: the bold lead's five characters and the plain run's
    // twenty-five are one changed span; the new text goes into the plain run.
    let new = "在城市化加速推进的背景下，社区养老服务需求不断增长[1]。";
    let out = replace_paragraph_texts(
        &original,
        &refs(&lines),
        &[(line, new.to_string())],
        &Limits::default(),
    )
    .unwrap();
    assert_eq!(lines_of(&out)[line], new);
    let xml = String::from_utf8(entry(&out, "word/document.xml")).unwrap();
    assert!(
        xml.contains(r#"<w:r><w:rPr><w:b/></w:rPr></w:r><w:r><w:t xml:space="preserve">在城市化"#),
        "{xml}"
    );
}

#[test]
fn nothing_changed_gives_the_same_file() {
    let original = thesis();
    let lines = lines_of(&original);
    let same: Vec<(usize, String)> = lines.iter().cloned().enumerate().collect();
    let out = replace_paragraph_texts(&original, &refs(&lines), &same, &Limits::default()).unwrap();
    assert_eq!(out, original);
}

#[test]
fn tabs_breaks_text_boxes_tables_and_footnotes_can_change_alone() {
    let original = thesis();
    let lines = lines_of(&original);
    let cases = [
        (
            "换行之后的这一行也是同一个段落里的文字。",
            "换行后的这行文字依然属于同一段落。",
        ),
        (
            "第一列\t第二列的说明文字比较长一些。",
            "第一列\t第二列的文字说明稍长。",
        ),
        (
            "第一列\t第二列的说明文字比较长一些。",
            "第一列与第二列的说明文字比较长一些。",
        ),
        (
            "文本框里面的一段说明文字，也应当原样保留。",
            "文本框内的说明文字同样应保持原样。",
        ),
        (
            "研究采用问卷与访谈相结合的方法，对收集到的数据进行了统计分析。",
            "本研究结合问卷和访谈，并对所得数据做了统计分析。",
        ),
        (
            "受访老人普遍认为上门服务的预约流程仍然偏繁琐。",
            "多数受访老人认为预约上门服务的手续依旧繁琐。",
        ),
        (
            FOOTNOTE,
            " 调查于二〇二四年春季入户开展，每户访谈时长约为半小时。",
        ),
    ];
    for (old, new) in cases {
        let line = index_of(&lines, old);
        let out = replace_paragraph_texts(
            &original,
            &refs(&lines),
            &[(line, new.to_string())],
            &Limits::default(),
        )
        .unwrap();
        let mut want = lines.clone();
        want[line] = new.to_string();
        assert_eq!(lines_of(&out), want, "{old}");
        let footnote = old == FOOTNOTE;
        let unchanged = if footnote {
            "word/document.xml"
        } else {
            "word/footnotes.xml"
        };
        assert_eq!(entry(&out, unchanged), entry(&original, unchanged), "{old}");
        let document = String::from_utf8(entry(&out, "word/document.xml")).unwrap();
        assert_eq!(
            paragraph_styles(&document),
            paragraph_styles(&String::from_utf8(entry(&original, "word/document.xml")).unwrap())
        );
        assert!(document.contains("<w:br/>") && document.contains("<w:txbxContent>"));
    }
}

#[test]
fn a_file_that_no_longer_matches_is_refused() {
    let original = thesis();
    let lines = lines_of(&original);
    let limits = Limits::default();
    let one = |i: usize| vec![(i, "新的文字内容。".to_string())];
    // Fewer lines than the file has.
    let short = refs(&lines[1..]);
    let err = replace_paragraph_texts(&original, &short, &one(0), &limits).unwrap_err();
    assert_eq!(err.code(), "document_mismatch", "{err}");
    // A line with other text.
    let mut other = lines.clone();
    other[2] = "另一篇论文的文字。".into();
    let err = replace_paragraph_texts(&original, &refs(&other), &one(2), &limits).unwrap_err();
    assert!(matches!(err, DocError::Mismatch { .. }), "{err}");
    assert!(err.to_string().contains("第 3 行"), "{err}");
    // The lines the reader adds, and lines past the end.
    for line in [index_of(&lines, "脚注"), lines.len() - 3, lines.len()] {
        let err = replace_paragraph_texts(&original, &refs(&lines), &one(line), &limits);
        assert_eq!(err.unwrap_err().code(), "document_mismatch", "{line}");
    }
    // Not a .docx at all.
    let err = replace_paragraph_texts(b"plain text", &refs(&lines), &one(1), &limits);
    assert_eq!(err.unwrap_err().code(), "corrupt_file");
}

#[test]
fn empty_paragraphs_tab_stops_and_body_outline_level_read_right() {
    let body = [
        para("1", &run("第一章 引言")),
        "<w:p/><w:p></w:p><w:p><w:r><w:t> </w:t></w:r></w:p>".to_string(),
        para("2", &run("1.1 背景")),
        r#"<w:p><w:pPr><w:tabs><w:tab w:val="left" w:pos="420"/></w:tabs><w:outlineLvl w:val="9"/></w:pPr><w:r><w:t>正文段落的大纲级别是正文文本。</w:t></w:r></w:p>"#.to_string(),
    ]
    .concat();
    let document = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><w:document {NS}><w:body>{body}</w:body></w:document>"#
    );
    let mut out = std::io::Cursor::new(Vec::new());
    {
        let mut zip = zip::ZipWriter::new(&mut out);
        zip.start_file(
            "word/document.xml",
            zip::write::SimpleFileOptions::default(),
        )
        .unwrap();
        zip.write_all(document.as_bytes()).unwrap();
        zip.finish().unwrap();
    }
    let docx = out.into_inner();
    let read = extract(&docx, "a.docx", &Limits::default()).unwrap();
    assert_eq!(
        read.text,
        "第一章 引言\n\n1.1 背景\n正文段落的大纲级别是正文文本。"
    );
    assert_eq!(
        read.headings
            .iter()
            .map(|h| (h.line, h.level))
            .collect::<Vec<_>>(),
        vec![(0, 1), (2, 2)]
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Random bytes, a zip header followed by random bytes, or a truncated thesis: an error,
    /// never a panic.
    #[test]
    fn random_bytes_get_an_error_never_a_panic(
        bytes in proptest::collection::vec(any::<u8>(), 0..800),
        kind in 0usize..3,
        cut in 0usize..6000,
    ) {
        let input = match kind {
            0 => bytes,
            1 => [b"PK\x03\x04".as_slice(), &bytes].concat(),
            _ => {
                let doc = thesis();
                doc[..cut.min(doc.len() - 1)].to_vec()
            }
        };
        let lines = ["第一章 绪论", BACKGROUND];
        let result = replace_paragraph_texts(&input, &lines, &[(1, "新的文字。".into())], &Limits::default());
        prop_assert!(result.is_err());
    }

    /// Any new text for any lines: the file reads back as the old lines with the new ones, and
    /// every entry but the edited parts is untouched.
    #[test]
    fn any_replacement_reads_back(
        picks in proptest::collection::vec((0usize..40, "[ab甲乙。\\[\\]1<&]([ab甲乙\t。\\[\\]1<&]{0,12}[ab甲乙。\\[\\]1<&])?"), 0..6),
    ) {
        let original = thesis();
        let lines = lines_of(&original);
        let editable: Vec<usize> = (0..lines.len())
            .filter(|&i| !lines[i].is_empty() && lines[i] != "脚注")
            .collect();
        let replacements: Vec<(usize, String)> = picks
            .iter()
            .map(|(i, text)| (editable[i % editable.len()], text.clone()))
            .collect();
        let out = replace_paragraph_texts(&original, &refs(&lines), &replacements, &Limits::default()).unwrap();
        let mut want = lines.clone();
        for (i, text) in &replacements {
            want[*i] = text.clone();
        }
        prop_assert_eq!(lines_of(&out), want);
        for name in names(&original) {
            if !matches!(name.as_str(), "word/document.xml" | "word/footnotes.xml") {
                prop_assert_eq!(raw_entry(&out, &name), raw_entry(&original, &name));
            }
        }
        let styles = |docx: &[u8]| paragraph_styles(&String::from_utf8(entry(docx, "word/document.xml")).unwrap());
        prop_assert_eq!(styles(&out), styles(&original));
    }
}
