//! .pdf: the text layer, read in-process with pdf-extract and, when that fails or looks wrong,
//! with Debian's `pdftotext` under a timeout. A text layer that is empty or mostly not text is
//! refused (scans, some LaTeX output with unmapped fonts).

use crate::{DocError, Extracted, Format, Limits};
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

fn in_process(bytes: &[u8]) -> Option<String> {
    // pdf-extract panics on some malformed files; a bad upload must never take the server down.
    let bytes = bytes.to_vec();
    std::panic::catch_unwind(move || pdf_extract::extract_text_from_mem(&bytes).ok())
        .ok()
        .flatten()
}

fn with_pdftotext(bytes: &[u8], limits: &Limits) -> Option<String> {
    let mut child = Command::new("pdftotext")
        .args(["-q", "-enc", "UTF-8", "-", "-"])
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
    let mut stdout = child.stdout.take()?;
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = stdout.read_to_end(&mut out);
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
            kind: "PDF",
            detail: "缺少 PDF 文件头".into(),
        });
    }
    let first = in_process(bytes);
    if let Some(text) = first.as_ref().filter(|t| looks_like_text(t)) {
        return Ok(Extracted {
            text: text.clone(),
            format: Format::Pdf,
            reader: "pdf-extract",
            headings: vec![],
        });
    }
    let second = with_pdftotext(bytes, limits);
    if let Some(text) = second.as_ref().filter(|t| looks_like_text(t)) {
        return Ok(Extracted {
            text: text.clone(),
            format: Format::Pdf,
            reader: "pdftotext",
            headings: vec![],
        });
    }
    if first.is_none() && second.is_none() {
        return Err(DocError::Corrupt {
            kind: "PDF",
            detail: "无法读取文件结构".into(),
        });
    }
    Err(DocError::Garbled)
}
