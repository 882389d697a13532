//! docio: turns an uploaded document into plain text, or says clearly why it cannot.
//!
//! In: .txt (UTF-8 with or without BOM, UTF-16 with BOM or detected, GBK/GB18030), .docx
//! (paragraphs, heading levels, tables, footnotes and endnotes; on request its tables' rows and its
//! PNG/JPEG pictures as objects) and .pdf (the
//! text layer, with Debian's `pdftotext` as a fallback under a timeout). An empty or garbled text
//! layer is refused, never passed on to be reported as a low ratio. Every reader returns an error
//! for bad input and never panics (property tests feed them random and truncated bytes).
//!
//! Out: a clean, styled .docx of paragraphs ([`write_docx`]), or the uploaded .docx itself with
//! some of its paragraphs given new text and everything else untouched
//! ([`replace_paragraph_texts`]).

mod docx;
mod docx_edit;
mod docx_write;
pub mod hostile;
pub mod isolated;
pub mod office;
mod pdf;
mod text;
pub mod thesis;

pub use docx_edit::replace_paragraph_texts;
pub use docx_write::{OutParagraph, write_docx};

use serde::{Deserialize, Serialize};
use std::time::Duration;

pub use text::decode_text;

/// Upload limits. Reading stops as soon as one is passed, so a small hostile file (a zip or
/// deflate bomb, millions of empty paragraphs) costs no more than a real paper.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Limits {
    pub max_bytes: usize,
    /// Counted characters of one paper.
    pub max_chars: usize,
    pub pdftotext_timeout: Duration,
    /// PDF pages read.
    pub max_pages: usize,
    /// Objects in one PDF.
    pub max_objects: usize,
    /// Decompressed bytes of one PDF page's content streams.
    pub max_page_content_bytes: u64,
    /// Decompressed bytes of one .docx part (word/document.xml, footnotes, endnotes).
    pub max_part_bytes: u64,
    /// Entries in one .docx zip.
    pub max_zip_entries: usize,
    /// Paragraphs in one document, empty ones included.
    pub max_paragraphs: usize,
    /// Bytes of the pictures a .docx holds to read (PNG and JPEG, in the body); 0 reads none.
    /// Only a reader that shows them (slides) asks: a check needs the text alone.
    #[serde(default)]
    pub image_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bytes: 50 * 1024 * 1024,
            max_chars: 300_000,
            pdftotext_timeout: Duration::from_secs(30),
            max_pages: 2_000,
            max_objects: 1_000_000,
            max_page_content_bytes: 16 * 1024 * 1024,
            max_part_bytes: 100 * 1024 * 1024,
            max_zip_entries: 5_000,
            max_paragraphs: 100_000,
            image_bytes: 0,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Format {
    Text,
    Docx,
    Pdf,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Text => "txt",
            Format::Docx => "docx",
            Format::Pdf => "pdf",
        }
    }
}

/// A heading found in the document: the index of its line in `text` and its level (1 = chapter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Heading {
    pub line: usize,
    pub level: u8,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Extracted {
    /// One paragraph per line.
    pub text: String,
    pub format: Format,
    /// How the text was read ("utf-8", "gb18030", "docx", "pdf-extract", "pdftotext", …).
    pub reader: String,
    pub headings: Vec<Heading>,
    /// The paper's title as the document marks it: a .docx paragraph in the Title style, else a
    /// plausible title in the document's properties.
    #[serde(default)]
    pub title: Option<String>,
    /// The body's tables (.docx); their cells are in `text` too, one line per cell paragraph.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tables: Vec<Table>,
    /// The body's pictures (.docx, when `Limits::image_bytes` asks for them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<Image>,
}

/// A table of a .docx body: the lines of `text` its cells fill (`start_line..end_line`) and its
/// rows of cell texts (a merged cell's text in its first column, the columns it spans empty;
/// every row as long as the longest).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Table {
    pub start_line: usize,
    pub end_line: usize,
    pub rows: Vec<Vec<String>>,
}

/// A picture of a .docx body: the first line of `text` at or after the paragraph holding it
/// (often its caption, "图3-1 …"), the file as stored in the .docx, and the size it is shown at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Image {
    pub line: usize,
    /// "png" or "jpeg", from the file's first bytes.
    pub ext: String,
    #[serde(with = "base64_bytes")]
    pub bytes: Vec<u8>,
    pub width_emu: u64,
    pub height_emu: u64,
}

/// The picture format of `bytes` by its signature: "png", "jpeg", or none for anything else
/// (what every slide and document viewer draws).
pub fn picture_format(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("png")
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("jpeg")
    } else {
        None
    }
}

/// Bytes as base64 in JSON (the child's reply), not as an array of numbers.
pub(crate) mod base64_bytes {
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&STANDARD.encode(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(d)?;
        STANDARD.decode(text).map_err(serde::de::Error::custom)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
pub enum DocError {
    #[error("文件过大：{size_mb} MB，单个文件不能超过 {limit_mb} MB")]
    TooLarge { size_mb: usize, limit_mb: usize },
    #[error("论文字数过多：共 {count} 字，单篇不能超过 {limit} 字")]
    TooManyChars { count: usize, limit: usize },
    /// Reading stopped once the limit was passed, so the total is not known.
    #[error("论文字数过多：超过 {limit} 字，单篇不能超过 {limit} 字")]
    OverCharLimit { limit: usize },
    #[error("不支持的文件类型：请上传 .docx、.pdf 或 .txt 文件{hint}")]
    Unsupported { hint: String },
    #[error(
        "文档结构异常或过于复杂（{detail}），为安全起见未读取；请在 Word 中另存为新的 .docx 或 PDF 后重新上传"
    )]
    TooComplex { detail: String },
    #[error(
        "文档读取超时（超过 {seconds} 秒）：文件可能已损坏或结构异常，请另存为新的 .docx 或 PDF 后重新上传"
    )]
    TimedOut { seconds: u64 },
    #[error("文档中没有可检测的文字")]
    Empty,
    #[error(
        "PDF 的文字层为空或为乱码（常见于扫描件和部分 LaTeX 生成的 PDF），无法可靠检测；请上传 Word 文档或可复制文字的 PDF"
    )]
    Garbled,
    #[error("文件已损坏或不是有效的 {kind} 文件：{detail}")]
    Corrupt { kind: String, detail: String },
    #[error("无法识别文本编码：请将文件另存为 UTF-8 编码后重新上传")]
    Encoding,
    /// Editing a .docx: the file no longer reads as the text the edits were made on.
    #[error("原文档与改写稿的段落对不上（{detail}）")]
    Mismatch { detail: String },
}

impl DocError {
    /// A stable code for programs.
    pub fn code(&self) -> &'static str {
        match self {
            DocError::TooLarge { .. } => "file_too_large",
            DocError::TooManyChars { .. } | DocError::OverCharLimit { .. } => "too_many_characters",
            DocError::Unsupported { .. } => "unsupported_file_type",
            DocError::TooComplex { .. } => "document_too_complex",
            DocError::TimedOut { .. } => "extraction_timeout",
            DocError::Empty => "empty_document",
            DocError::Garbled => "garbled_text_layer",
            DocError::Corrupt { .. } => "corrupt_file",
            DocError::Encoding => "unknown_text_encoding",
            DocError::Mismatch { .. } => "document_mismatch",
        }
    }

    /// Whether the input was too big (HTTP 413) rather than unusable (422).
    pub fn is_too_large(&self) -> bool {
        matches!(
            self,
            DocError::TooLarge { .. }
                | DocError::TooManyChars { .. }
                | DocError::OverCharLimit { .. }
        )
    }
}

/// The format by content first, then by file name.
pub fn detect(bytes: &[u8], file_name: &str) -> Result<Format, DocError> {
    let lower = file_name.to_lowercase();
    if bytes.starts_with(b"%PDF-") {
        return Ok(Format::Pdf);
    }
    if bytes.starts_with(b"PK\x03\x04") {
        return if lower.ends_with(".txt") {
            Ok(Format::Text)
        } else {
            Ok(Format::Docx)
        };
    }
    if bytes.starts_with(&[0xD0, 0xCF, 0x11, 0xE0]) {
        return Err(DocError::Unsupported {
            hint: "（旧版 .doc 请在 Word 中另存为 .docx）".into(),
        });
    }
    if lower.ends_with(".txt") || lower.is_empty() || !lower.contains('.') {
        return Ok(Format::Text);
    }
    Err(DocError::Unsupported {
        hint: String::new(),
    })
}

/// Extracts the text of an upload. `file_name` may be empty for pasted text.
pub fn extract(bytes: &[u8], file_name: &str, limits: &Limits) -> Result<Extracted, DocError> {
    if bytes.len() > limits.max_bytes {
        return Err(DocError::TooLarge {
            size_mb: bytes.len().div_ceil(1024 * 1024),
            limit_mb: limits.max_bytes / (1024 * 1024),
        });
    }
    let format = detect(bytes, file_name)?;
    let mut extracted = match format {
        Format::Text => {
            let (text, encoding) = decode_text(bytes)?;
            Extracted {
                text,
                format,
                reader: encoding.into(),
                headings: vec![],
                title: None,
                tables: vec![],
                images: vec![],
            }
        }
        Format::Docx => docx::extract(bytes, limits)?,
        Format::Pdf => pdf::extract(bytes, limits)?,
    };
    extracted.text = tidy(&extracted.text);
    let count = extracted
        .text
        .chars()
        .filter(|c| !c.is_whitespace())
        .count();
    if count == 0 {
        return Err(if format == Format::Pdf {
            DocError::Garbled
        } else {
            DocError::Empty
        });
    }
    if count > limits.max_chars {
        return Err(DocError::TooManyChars {
            count,
            limit: limits.max_chars,
        });
    }
    Ok(extracted)
}

/// Unix line ends, no trailing spaces, no runs of blank lines.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank = 0;
    for line in text.replace("\r\n", "\n").replace('\r', "\n").split('\n') {
        let line = line.trim_end();
        if line.trim().is_empty() {
            blank += 1;
            if blank > 1 {
                continue;
            }
        } else {
            blank = 0;
        }
        out.push_str(line);
        out.push('\n');
    }
    out.trim_matches('\n').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_by_content_then_name() {
        assert_eq!(detect(b"%PDF-1.4", "x.docx"), Ok(Format::Pdf));
        assert_eq!(detect(b"PK\x03\x04...", "paper.docx"), Ok(Format::Docx));
        assert_eq!(detect("论文".as_bytes(), "paper.txt"), Ok(Format::Text));
        assert_eq!(detect("论文".as_bytes(), ""), Ok(Format::Text));
        assert_eq!(
            detect(&[0xD0, 0xCF, 0x11, 0xE0, 0, 0], "old.doc")
                .unwrap_err()
                .code(),
            "unsupported_file_type"
        );
        assert_eq!(
            detect(b"GIF89a", "image.gif").unwrap_err().code(),
            "unsupported_file_type"
        );
    }

    #[test]
    fn limits_give_clear_errors() {
        let limits = Limits {
            max_bytes: 10,
            max_chars: 3,
            ..Limits::default()
        };
        let err = extract(b"01234567890", "a.txt", &limits).unwrap_err();
        assert_eq!(err.code(), "file_too_large");
        let limits = Limits {
            max_bytes: 100,
            ..limits
        };
        let err = extract("一二三四".as_bytes(), "a.txt", &limits).unwrap_err();
        assert_eq!(err, DocError::TooManyChars { count: 4, limit: 3 });
        assert!(err.to_string().contains("4 字"));
        assert_eq!(
            extract(b"  \n ", "a.txt", &Limits::default()).unwrap_err(),
            DocError::Empty
        );
    }

    #[test]
    fn tidies_line_ends() {
        assert_eq!(tidy("a\r\nb  \r\n\r\n\r\n\nc\n"), "a\nb\n\nc");
    }
}
