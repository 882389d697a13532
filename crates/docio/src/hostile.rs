//! Hostile documents, generated on demand for tests and the abuse benchmark (never committed):
//! small files that expand to far more than they weigh.

use std::io::Write;

/// A one-page PDF whose content stream is `expanded_bytes` of spaces, deflated (about 1/1000 of
/// that on disk).
pub fn deflate_bomb_pdf(expanded_bytes: usize) -> Vec<u8> {
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    let chunk = vec![b' '; 1 << 20];
    let mut left = expanded_bytes;
    while left > 0 {
        let n = left.min(chunk.len());
        let _ = encoder.write_all(&chunk[..n]);
        left -= n;
    }
    let stream = encoder.finish().unwrap_or_default();
    pdf_with_content(&stream, "/Filter /FlateDecode")
}

/// A one-page PDF with the given content stream; the cross-reference table is exact.
pub fn pdf_with_content(content: &[u8], stream_keys: &str) -> Vec<u8> {
    let mut pdf = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    let objects: [&[u8]; 5] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
        b"",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ];
    for (i, body) in objects.iter().enumerate() {
        offsets.push(pdf.len());
        pdf.extend(format!("{} 0 obj\n", i + 1).as_bytes());
        if i == 3 {
            pdf.extend(
                format!("<< /Length {} {stream_keys} >>\nstream\n", content.len()).as_bytes(),
            );
            pdf.extend(content);
            pdf.extend(b"\nendstream");
        } else {
            pdf.extend(*body);
        }
        pdf.extend(b"\nendobj\n");
    }
    let xref = pdf.len();
    pdf.extend(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes());
    for o in offsets {
        pdf.extend(format!("{o:010} 00000 n \n").as_bytes());
    }
    pdf.extend(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    pdf
}

/// A .docx whose body is `paragraphs` empty `<w:p/>` (six bytes each before compression).
pub fn empty_paragraphs_docx(paragraphs: usize) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    {
        let mut zip = zip::ZipWriter::new(&mut out);
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .compression_level(Some(9))
            .large_file(paragraphs * 6 > u32::MAX as usize / 2);
        let _ = zip.start_file("word/document.xml", options);
        let _ = zip.write_all(
            br#"<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>"#,
        );
        let block = b"<w:p/>".repeat(10_000);
        let mut left = paragraphs;
        while left > 0 {
            let n = left.min(10_000);
            let _ = zip.write_all(&block[..n * 6]);
            left -= n;
        }
        let _ = zip.write_all(b"</w:body></w:document>");
        let _ = zip.finish();
    }
    out.into_inner()
}
