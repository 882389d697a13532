//! Writing a .docx: paragraphs in order, headings with Word's built-in heading styles (so the
//! navigation pane and a table of contents see them), body text in a Chinese-friendly font.

use std::io::Write;

/// A paragraph to write: its text and, for a heading, its level (1 = chapter).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutParagraph {
    pub text: String,
    pub heading: Option<u8>,
}

pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            // Characters XML 1.0 cannot carry.
            c if (c as u32) < 0x20 && !matches!(c, '\t') => {}
            '\u{FFFE}' | '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
    out
}

const CONTENT_TYPES: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/></Types>"#;

const ROOT_RELS: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>"#;

const DOCUMENT_RELS: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/></Relationships>"#;

/// Styles of a Chinese thesis: body text 宋体 小四 (12 pt) with 1.5 line spacing and a first-line
/// indent of two characters; Title (黑体 小二, centred) and Heading 1–3 (黑体 三号 / 四号 / 小四,
/// bold, no indent, outline levels for the navigation pane and a table of contents).
fn styles() -> String {
    let heading = |level: u8, size: u8| {
        format!(
            r#"<w:style w:type="paragraph" w:styleId="Heading{level}"><w:name w:val="heading {level}"/><w:basedOn w:val="Normal"/><w:next w:val="Normal"/><w:uiPriority w:val="9"/><w:qFormat/><w:pPr><w:keepNext/><w:keepLines/><w:spacing w:before="240" w:after="120"/><w:ind w:firstLineChars="0" w:firstLine="0"/><w:jc w:val="left"/><w:outlineLvl w:val="{}"/></w:pPr><w:rPr><w:rFonts w:ascii="Times New Roman" w:hAnsi="Times New Roman" w:eastAsia="黑体"/><w:b/><w:bCs/><w:sz w:val="{size}"/><w:szCs w:val="{size}"/></w:rPr></w:style>"#,
            level - 1
        )
    };
    format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:styles xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:docDefaults><w:rPrDefault><w:rPr><w:rFonts w:ascii="Times New Roman" w:hAnsi="Times New Roman" w:eastAsia="宋体" w:cs="Times New Roman"/><w:sz w:val="24"/><w:szCs w:val="24"/><w:lang w:val="en-US" w:eastAsia="zh-CN"/></w:rPr></w:rPrDefault><w:pPrDefault><w:pPr><w:widowControl w:val="0"/></w:pPr></w:pPrDefault></w:docDefaults><w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/><w:qFormat/><w:pPr><w:spacing w:line="360" w:lineRule="auto"/><w:ind w:firstLineChars="200" w:firstLine="480"/><w:jc w:val="both"/></w:pPr></w:style><w:style w:type="paragraph" w:styleId="Title"><w:name w:val="Title"/><w:basedOn w:val="Normal"/><w:next w:val="Normal"/><w:uiPriority w:val="10"/><w:qFormat/><w:pPr><w:spacing w:before="240" w:after="240"/><w:ind w:firstLineChars="0" w:firstLine="0"/><w:jc w:val="center"/><w:outlineLvl w:val="0"/></w:pPr><w:rPr><w:rFonts w:ascii="Times New Roman" w:hAnsi="Times New Roman" w:eastAsia="黑体"/><w:b/><w:bCs/><w:sz w:val="36"/><w:szCs w:val="36"/></w:rPr></w:style>{}{}{}</w:styles>"#,
        heading(1, 32),
        heading(2, 28),
        heading(3, 24)
    )
}

/// The bytes of a .docx holding `paragraphs` in order.
pub fn write_docx(paragraphs: &[OutParagraph]) -> Result<Vec<u8>, std::io::Error> {
    let mut body = String::new();
    for p in paragraphs {
        body.push_str("<w:p>");
        if let Some(level) = p.heading {
            body.push_str(&format!(
                r#"<w:pPr><w:pStyle w:val="Heading{}"/></w:pPr>"#,
                level.clamp(1, 3)
            ));
        }
        body.push_str(&format!(
            r#"<w:r><w:t xml:space="preserve">{}</w:t></w:r></w:p>"#,
            escape(&p.text)
        ));
    }
    let document = format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>{body}<w:sectPr><w:pgSz w:w="11906" w:h="16838"/><w:pgMar w:top="1440" w:right="1800" w:bottom="1440" w:left="1800" w:header="851" w:footer="992" w:gutter="0"/></w:sectPr></w:body></w:document>"#
    );
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, content) in [
        ("[Content_Types].xml", CONTENT_TYPES.to_string()),
        ("_rels/.rels", ROOT_RELS.to_string()),
        ("word/_rels/document.xml.rels", DOCUMENT_RELS.to_string()),
        ("word/styles.xml", styles()),
        ("word/document.xml", document),
    ] {
        zip.start_file(name, options)?;
        zip.write_all(content.as_bytes())?;
    }
    Ok(zip.finish()?.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Format, Heading, Limits, extract};
    use proptest::prelude::*;

    #[test]
    fn what_is_written_reads_back_with_its_headings() {
        let paragraphs = vec![
            OutParagraph {
                text: "第一章 绪论".into(),
                heading: Some(1),
            },
            OutParagraph {
                text: "本文研究 <图像> & “识别”问题，准确率 95.2%[3]。".into(),
                heading: None,
            },
            OutParagraph {
                text: "1.1 研究背景".into(),
                heading: Some(2),
            },
            OutParagraph {
                text: "第二段正文。".into(),
                heading: None,
            },
        ];
        let bytes = write_docx(&paragraphs).unwrap();
        let back = extract(&bytes, "改写稿.docx", &Limits::default()).unwrap();
        assert_eq!(back.format, Format::Docx);
        let lines: Vec<&str> = back.text.lines().collect();
        assert_eq!(
            lines,
            paragraphs
                .iter()
                .map(|p| p.text.as_str())
                .collect::<Vec<_>>()
        );
        assert_eq!(
            back.headings,
            vec![Heading { line: 0, level: 1 }, Heading { line: 2, level: 2 }]
        );
    }

    #[test]
    fn the_styles_are_a_chinese_thesis() {
        let bytes = write_docx(&[OutParagraph {
            text: "正文。".into(),
            heading: None,
        }])
        .unwrap();
        let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
        let mut styles = String::new();
        std::io::Read::read_to_string(
            &mut archive.by_name("word/styles.xml").unwrap(),
            &mut styles,
        )
        .unwrap();
        for style in ["Normal", "Title", "Heading1", "Heading2", "Heading3"] {
            assert!(
                styles.contains(&format!(r#"w:styleId="{style}""#)),
                "{style}"
            );
        }
        // 宋体 小四, 1.5 lines, two characters of first-line indent; headings not indented.
        assert!(styles.contains(r#"w:eastAsia="宋体""#));
        assert!(styles.contains(r#"<w:sz w:val="24"/>"#));
        assert!(styles.contains(r#"<w:spacing w:line="360" w:lineRule="auto"/>"#));
        assert!(styles.contains(r#"<w:ind w:firstLineChars="200""#));
        assert_eq!(styles.matches(r#"w:firstLineChars="0""#).count(), 4);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Any text, control characters included, makes a valid .docx that reads back.
        #[test]
        fn any_text_makes_a_readable_docx(texts in proptest::collection::vec("\\PC{1,40}", 1..6)) {
            let paragraphs: Vec<OutParagraph> = texts
                .iter()
                .map(|t| OutParagraph { text: t.clone(), heading: None })
                .collect();
            let bytes = write_docx(&paragraphs).unwrap();
            let back = extract(&bytes, "x.docx", &Limits::default());
            prop_assert!(back.is_ok() || matches!(back, Err(crate::DocError::Empty)));
        }
    }
}
