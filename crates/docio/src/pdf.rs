//! .pdf: the text layer, read in-process with pdf-extract and, when that fails or looks wrong,
//! with Debian's `pdftotext` under a timeout. A text layer that is empty or mostly not text is
//! refused (scans, some LaTeX output with unmapped fonts).

use crate::{DocError, Extracted, Format, Limits};
use pdf_extract::OutputError;
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use wait_timeout::ChildExt;

/// Whether extracted text is mostly readable: CJK, letters, digits, common punctuation.
pub fn looks_like_text(text: &str) -> bool {
    let mut total = 0usize;
    let mut good = 0usize;
    for c in text.chars().filter(|c| !c.is_whitespace()) {
        total += 1;
        let unreadable =
            c == '\u{FFFD}' || c.is_control() || ('\u{E000}'..='\u{F8FF}').contains(&c);
        if !unreadable
            && (c.is_alphanumeric()
                || c.is_ascii_punctuation()
                || "，。、；：？！“”‘’（）《》【】—…·".contains(c))
        {
            good += 1;
        }
    }
    total >= 20 && good * 10 >= total * 8
}

/// Counts the characters pdf-extract writes and stops it once the paper is over the limit.
struct Capped<'a> {
    inner: pdf_extract::PlainTextOutput<&'a mut String>,
    chars: usize,
    max_chars: usize,
}

impl pdf_extract::OutputDev for Capped<'_> {
    fn begin_page(
        &mut self,
        page_num: u32,
        media_box: &pdf_extract::MediaBox,
        art_box: Option<(f64, f64, f64, f64)>,
    ) -> Result<(), OutputError> {
        self.inner.begin_page(page_num, media_box, art_box)
    }
    fn end_page(&mut self) -> Result<(), OutputError> {
        self.inner.end_page()
    }
    fn output_character(
        &mut self,
        trm: &pdf_extract::Transform,
        width: f64,
        spacing: f64,
        font_size: f64,
        char: &str,
    ) -> Result<(), OutputError> {
        self.chars += char.chars().filter(|c| !c.is_whitespace()).count();
        if self.chars > self.max_chars {
            return Err(OutputError::FormatError(std::fmt::Error));
        }
        self.inner
            .output_character(trm, width, spacing, font_size, char)
    }
    fn begin_word(&mut self) -> Result<(), OutputError> {
        self.inner.begin_word()
    }
    fn end_word(&mut self) -> Result<(), OutputError> {
        self.inner.end_word()
    }
    fn end_line(&mut self) -> Result<(), OutputError> {
        self.inner.end_line()
    }
}

/// The decompressed size of a stream, counted without keeping it, stopping past `limit`.
fn decompressed_len(stream: &pdf_extract::Stream, limit: u64) -> u64 {
    let flate = matches!(stream.filters().as_deref(), Ok([b"FlateDecode"]));
    if !flate {
        return stream.content.len() as u64;
    }
    let decoder = flate2::read::ZlibDecoder::new(&stream.content[..]);
    std::io::copy(&mut decoder.take(limit + 1), &mut std::io::sink()).unwrap_or(0)
}

/// pdf-extract, page by page, within the limits. `Ok(None)`: it could not read the file.
fn in_process(bytes: &[u8], limits: &Limits) -> Result<Option<String>, DocError> {
    let Ok(mut doc) = pdf_extract::Document::load_mem(bytes) else {
        return Ok(None);
    };
    if doc.objects.len() > limits.max_objects {
        return Err(DocError::TooComplex {
            detail: format!("对象超过 {} 个", limits.max_objects),
        });
    }
    if doc.is_encrypted() && doc.decrypt("").is_err() {
        return Ok(None);
    }
    let pages = doc.get_pages();
    if pages.len() > limits.max_pages {
        return Err(DocError::TooComplex {
            detail: format!("超过 {} 页", limits.max_pages),
        });
    }
    let mut text = String::new();
    let mut output = Capped {
        inner: pdf_extract::PlainTextOutput::new(&mut text),
        chars: 0,
        max_chars: limits.max_chars,
    };
    for (number, id) in pages {
        let content: u64 = doc
            .get_page_contents(id)
            .into_iter()
            .filter_map(|id| doc.get_object(id).ok()?.as_stream().ok())
            .map(|s| decompressed_len(s, limits.max_page_content_bytes))
            .sum();
        if content > limits.max_page_content_bytes {
            return Err(DocError::TooComplex {
                detail: format!(
                    "第 {number} 页内容解压后超过 {} MB",
                    limits.max_page_content_bytes / (1024 * 1024)
                ),
            });
        }
        // pdf-extract panics on some malformed pages; a bad upload must never take the
        // process down, and the panic says nothing a user can act on.
        let page = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pdf_extract::output_doc_page(&doc, &mut output, number)
        }));
        match page {
            Ok(Ok(())) => {}
            Ok(Err(_)) if output.chars > limits.max_chars => {
                return Err(DocError::OverCharLimit {
                    limit: limits.max_chars,
                });
            }
            Ok(Err(_)) | Err(_) => return Ok(None),
        }
    }
    Ok(Some(text))
}

fn with_pdftotext(bytes: &[u8], limits: &Limits) -> Option<String> {
    let mut child = Command::new("pdftotext")
        .args([
            "-q",
            "-enc",
            "UTF-8",
            "-l",
            &limits.max_pages.to_string(),
            "-",
            "-",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut stdin = child.stdin.take()?;
    let input = bytes.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let stdout = child.stdout.take()?;
    // Enough for the character limit in any encoding; more is not a paper.
    let most = limits.max_chars as u64 * 16 + (1 << 20);
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = stdout.take(most).read_to_end(&mut out);
        out
    });
    let status = match child.wait_timeout(limits.pdftotext_timeout).ok()? {
        Some(status) => status,
        None => {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
    };
    let _ = writer.join();
    let out = reader.join().ok()?;
    status
        .success()
        .then(|| String::from_utf8_lossy(&out).into_owned())
}

pub fn extract(bytes: &[u8], limits: &Limits) -> Result<Extracted, DocError> {
    if !bytes.starts_with(b"%PDF-") {
        return Err(DocError::Corrupt {
            kind: "PDF".into(),
            detail: "缺少 PDF 文件头".into(),
        });
    }
    let first = in_process(bytes, limits)?;
    if let Some(text) = first.as_ref().filter(|t| looks_like_text(t)) {
        return Ok(Extracted {
            text: text.clone(),
            format: Format::Pdf,
            reader: "pdf-extract".into(),
            headings: vec![],
            title: None,
            tables: vec![],
            images: vec![],
        });
    }
    let second = with_pdftotext(bytes, limits);
    if let Some(text) = second.as_ref().filter(|t| looks_like_text(t)) {
        return Ok(Extracted {
            text: text.clone(),
            format: Format::Pdf,
            reader: "pdftotext".into(),
            headings: vec![],
            title: None,
            tables: vec![],
            images: vec![],
        });
    }
    if first.is_none() && second.is_none() {
        return Err(DocError::Corrupt {
            kind: "PDF".into(),
            detail: "无法读取文件结构".into(),
        });
    }
    Err(DocError::Garbled)
}
