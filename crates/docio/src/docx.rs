//! .docx: the WordprocessingML parts of the zip — body paragraphs (with heading levels from the
//! paragraph style or outline level), table cells as paragraphs, then footnotes and endnotes.
//! Text comes from `w:t` only, so deleted revisions and field codes stay out.

use crate::{DocError, Extracted, Format, Heading, Limits};
use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};
use std::io::Read;

fn corrupt(detail: impl Into<String>) -> DocError {
    DocError::Corrupt {
        kind: "Word（.docx）".into(),
        detail: detail.into(),
    }
}

/// A paragraph's text and its heading level, if it is a heading.
type Paragraph = (String, Option<u8>);

/// What reading may still take: counted characters and paragraphs, shared by all parts.
struct Budget<'a> {
    limits: &'a Limits,
    chars: usize,
    paragraphs: usize,
}

impl Budget<'_> {
    fn paragraph(&mut self) -> Result<(), DocError> {
        self.paragraphs += 1;
        if self.paragraphs > self.limits.max_paragraphs {
            return Err(DocError::TooComplex {
                detail: format!("段落超过 {} 个", self.limits.max_paragraphs),
            });
        }
        Ok(())
    }

    fn text(&mut self, text: &str) -> Result<(), DocError> {
        self.chars += text.chars().filter(|c| !c.is_whitespace()).count();
        if self.chars > self.limits.max_chars {
            return Err(DocError::OverCharLimit {
                limit: self.limits.max_chars,
            });
        }
        Ok(())
    }
}

/// The paragraphs of one part, read as a stream that stops at the part size limit.
fn read_part(
    archive: &mut zip::ZipArchive<std::io::Cursor<&[u8]>>,
    name: &str,
    budget: &mut Budget<'_>,
) -> Result<Option<Vec<Paragraph>>, DocError> {
    let limit = budget.limits.max_part_bytes;
    let file = match archive.by_name(name) {
        Ok(f) => f,
        Err(zip::result::ZipError::FileNotFound) => return Ok(None),
        Err(e) => return Err(corrupt(e.to_string())),
    };
    if file.size() > limit {
        return Err(DocError::TooComplex {
            detail: format!("{name} 解压后超过 {} MB", limit / (1024 * 1024)),
        });
    }
    // The declared size may lie; the reader itself stops one byte past the limit.
    let mut limited = std::io::BufReader::new(file.take(limit + 1));
    let paragraphs = paragraphs(&mut limited, budget)?;
    if limited.into_inner().limit() == 0 {
        return Err(DocError::TooComplex {
            detail: format!("{name} 解压后超过 {} MB", limit / (1024 * 1024)),
        });
    }
    Ok(Some(paragraphs))
}

fn attr(e: &BytesStart<'_>, name: &[u8]) -> Option<String> {
    e.try_get_attribute(name)
        .ok()
        .flatten()
        .and_then(|a| a.unescape_value().ok().map(|v| v.into_owned()))
}

/// Heading level from a paragraph style id: "Heading1", "heading 2", "1" (Chinese Word's 标题 1), "Title".
fn style_level(style: &str) -> Option<u8> {
    let s = style.to_lowercase().replace(' ', "");
    if s == "title" {
        return Some(1);
    }
    let digits = s
        .strip_prefix("heading")
        .or_else(|| s.strip_prefix("标题"))
        .unwrap_or(&s);
    match digits.parse::<u8>() {
        Ok(n) if (1..=9).contains(&n) => Some(n),
        _ => None,
    }
}

/// Paragraphs of one part, with heading levels.
fn paragraphs(
    xml: impl std::io::BufRead,
    budget: &mut Budget<'_>,
) -> Result<Vec<Paragraph>, DocError> {
    let mut reader = Reader::from_reader(xml);
    reader.config_mut().trim_text(false);
    let mut buf = Vec::new();
    let mut out = Vec::new();
    let mut current = String::new();
    let mut level: Option<u8> = None;
    let mut in_text = false;
    loop {
        match reader.read_event_into(&mut buf) {
            Ok(Event::Start(e)) => match e.name().as_ref() {
                b"w:p" => {
                    current.clear();
                    level = None;
                }
                b"w:t" => in_text = true,
                _ => {}
            },
            Ok(Event::Empty(e)) => match e.name().as_ref() {
                b"w:pStyle" => level = attr(&e, b"w:val").and_then(|v| style_level(&v)).or(level),
                b"w:outlineLvl" => {
                    level = attr(&e, b"w:val")
                        .and_then(|v| v.parse::<u8>().ok())
                        .map(|v| v + 1)
                        .or(level)
                }
                b"w:tab" => current.push('\t'),
                b"w:br" | b"w:cr" => current.push('\n'),
                b"w:p" => {
                    budget.paragraph()?;
                    out.push((String::new(), None))
                }
                _ => {}
            },
            Ok(Event::Text(t)) if in_text => {
                let text = t.unescape().map_err(|e| corrupt(e.to_string()))?;
                budget.text(&text)?;
                current.push_str(&text);
            }
            Ok(Event::End(e)) => match e.name().as_ref() {
                b"w:t" => in_text = false,
                b"w:p" => {
                    budget.paragraph()?;
                    out.push((std::mem::take(&mut current), level.take()))
                }
                _ => {}
            },
            Ok(Event::Eof) => break,
            Err(e) => return Err(corrupt(e.to_string())),
            _ => {}
        }
        buf.clear();
    }
    Ok(out)
}

pub fn extract(bytes: &[u8], limits: &Limits) -> Result<Extracted, DocError> {
    let mut archive =
        zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|e| corrupt(e.to_string()))?;
    if archive.len() > limits.max_zip_entries {
        return Err(DocError::TooComplex {
            detail: format!("压缩包内文件超过 {} 个", limits.max_zip_entries),
        });
    }
    let mut budget = Budget {
        limits,
        chars: 0,
        paragraphs: 0,
    };
    let body = read_part(&mut archive, "word/document.xml", &mut budget)?
        .ok_or_else(|| corrupt("缺少 word/document.xml"))?;
    let mut lines: Vec<String> = Vec::new();
    let mut headings = Vec::new();
    for (text, level) in body {
        if let Some(level) = level.filter(|_| !text.trim().is_empty()) {
            headings.push(Heading {
                line: lines.len(),
                level,
            });
        }
        lines.push(text);
    }
    for (part, title) in [
        ("word/footnotes.xml", "脚注"),
        ("word/endnotes.xml", "尾注"),
    ] {
        if let Some(notes) = read_part(&mut archive, part, &mut budget)? {
            let notes: Vec<String> = notes
                .into_iter()
                .map(|(t, _)| t)
                .filter(|t| !t.trim().is_empty())
                .collect();
            if !notes.is_empty() {
                lines.push(String::new());
                lines.push(title.to_string());
                lines.extend(notes);
            }
        }
    }
    Ok(Extracted {
        text: lines.join("\n"),
        format: Format::Docx,
        reader: "docx".into(),
        headings,
    })
}
