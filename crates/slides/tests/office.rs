//! Every template's deck read by two programs that did not write it: python-pptx opens it and
//! lists its frames and notes, LibreOffice Impress (headless) draws it to PDF, and every word
//! LibreOffice drew (pdftotext -bbox) must lie inside a text frame of its slide — text that
//! overflowed its frame would fall outside. The scripts install all three
//! (`scripts/test.sh`: libreoffice-impress-nogui, poppler-utils, target/office-python).

mod common;

use slides::deck::{DeckKind, DeckMeta, DeckRequest};
use slides::pptx::{self, Logo};
use slides::template::{EMU_PER_PT, TEMPLATES};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn python() -> PathBuf {
    std::env::var_os("WENJIAN_OFFICE_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/office-python/bin/python"))
}

/// A real PNG (stored deflate, CRCs computed): a 60×30 two-colour badge.
fn png(width: u32, height: u32) -> Vec<u8> {
    fn crc32(bytes: &[u8]) -> u32 {
        let mut crc = 0xFFFF_FFFFu32;
        for &b in bytes {
            crc ^= b as u32;
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0xEDB8_8320
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }
    fn chunk(out: &mut Vec<u8>, kind: &[u8], data: &[u8]) {
        out.extend_from_slice(&(data.len() as u32).to_be_bytes());
        let mut body = kind.to_vec();
        body.extend_from_slice(data);
        out.extend_from_slice(&body);
        out.extend_from_slice(&crc32(&body).to_be_bytes());
    }
    let mut raw = Vec::new();
    for y in 0..height {
        raw.push(0); // no filter
        for x in 0..width {
            let inside = (x as i64 - 30).pow(2) * 4 + (y as i64 - 15).pow(2) * 16 < 3600;
            raw.extend_from_slice(if inside {
                &[0x8B, 0x1A, 0x1A]
            } else {
                &[0xF5, 0xE6, 0xC8]
            });
        }
    }
    // zlib: header, stored blocks of at most 65,535 bytes, Adler-32.
    let mut zlib = vec![0x78, 0x01];
    let blocks: Vec<&[u8]> = raw.chunks(65_535).collect();
    for (i, block) in blocks.iter().enumerate() {
        zlib.push(u8::from(i + 1 == blocks.len()));
        let len = block.len() as u16;
        zlib.extend_from_slice(&len.to_le_bytes());
        zlib.extend_from_slice(&(!len).to_le_bytes());
        zlib.extend_from_slice(block);
    }
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in &raw {
        a = (a + byte as u32) % 65_521;
        b = (b + a) % 65_521;
    }
    zlib.extend_from_slice(&((b << 16) | a).to_be_bytes());
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut header = Vec::new();
    header.extend_from_slice(&width.to_be_bytes());
    header.extend_from_slice(&height.to_be_bytes());
    header.extend_from_slice(&[8, 2, 0, 0, 0]);
    chunk(&mut out, b"IHDR", &header);
    chunk(&mut out, b"IDAT", &zlib);
    chunk(&mut out, b"IEND", &[]);
    out
}

/// Word boxes (page, x0, y0, x1, y1 in points) of a PDF, as pdftotext -bbox-layout finds them.
fn words(pdf: &Path) -> Vec<(usize, f64, f64, f64, f64, String)> {
    let out = Command::new("pdftotext")
        .arg("-bbox-layout")
        .arg(pdf)
        .arg("-")
        .output()
        .expect("pdftotext (poppler-utils, installed by scripts/test.sh)");
    assert!(out.status.success());
    let html = String::from_utf8_lossy(&out.stdout);
    let mut page = 0;
    let mut found = Vec::new();
    for line in html.lines() {
        let line = line.trim();
        if line.starts_with("<page ") {
            page += 1;
        } else if let Some(rest) = line.strip_prefix("<word ") {
            let attr = |name: &str| -> f64 {
                let key = format!("{name}=\"");
                let start = rest.find(&key).unwrap() + key.len();
                rest[start..].split('"').next().unwrap().parse().unwrap()
            };
            let text = rest
                .split('>')
                .nth(1)
                .and_then(|t| t.split('<').next())
                .unwrap_or("")
                .to_string();
            found.push((
                page,
                attr("xMin"),
                attr("yMin"),
                attr("xMax"),
                attr("yMax"),
                text,
            ));
        }
    }
    found
}

#[test]
fn libreoffice_draws_every_word_of_every_template_inside_its_frame_and_python_pptx_reads_it() {
    let paper = slides::Paper::from_extracted(&common::extracted()).unwrap();
    let request = DeckRequest {
        kind: DeckKind::Defence,
        slides: 15,
        meta: DeckMeta {
            school: "华东理工学院".into(),
            presenter: "李明".into(),
            supervisor: "王强".into(),
            date: "2025年5月".into(),
        },
    };
    let deck = slides::plan(&paper, &request).unwrap();
    let logo = Logo::from_bytes(&png(60, 30)).unwrap();
    let dir = std::env::temp_dir().join(format!("wenjian-slides-office-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for template in &TEMPLATES {
        let path = dir.join(format!("{}.pptx", template.id));
        std::fs::write(&path, pptx::write(&deck, template, Some(&logo)).unwrap()).unwrap();

        // python-pptx opens it: every slide, its frames and its notes.
        let read = Command::new(python())
            .arg(root().join("scripts/verify-deck.py"))
            .arg(&path)
            .output()
            .expect("python for scripts/verify-deck.py");
        assert!(
            read.status.success(),
            "python-pptx could not read {}: {}",
            template.id,
            String::from_utf8_lossy(&read.stderr)
        );
        let listed: serde_json::Value = serde_json::from_slice(&read.stdout).unwrap();
        let listed_slides = listed["slides"].as_array().unwrap();
        assert_eq!(listed_slides.len(), deck.slides.len());
        for (slide, seen) in deck.slides.iter().zip(listed_slides) {
            assert_eq!(
                seen["notes"].as_str().unwrap(),
                slide.notes,
                "{}",
                template.id
            );
        }
        let route = deck
            .slides
            .iter()
            .position(|s| s.kind == slides::SlideKind::Route)
            .unwrap();
        assert_eq!(
            listed_slides[route]["connectors"].as_u64().unwrap() as usize,
            deck.slides[route].bullets.len() - 1,
            "the route's arrows are connectors"
        );
        assert!(
            listed_slides[0]["pictures"].as_u64().unwrap() >= 1,
            "the logo"
        );

        // LibreOffice draws it; every word inside a frame python-pptx listed.
        let profile = format!(
            "-env:UserInstallation=file://{}",
            dir.join(format!("profile-{}", template.id)).display()
        );
        let out = Command::new("soffice")
            .args([
                "--headless",
                "--norestore",
                &profile,
                "--convert-to",
                "pdf",
                "--outdir",
            ])
            .arg(&dir)
            .arg(&path)
            .output()
            .expect("LibreOffice (libreoffice-impress-nogui, installed by scripts/test.sh)");
        assert!(out.status.success(), "{out:?}");
        let pdf = dir.join(format!("{}.pdf", template.id));
        let words = words(&pdf);
        assert!(
            !words.is_empty(),
            "{}: LibreOffice drew no text",
            template.id
        );
        let pages = words.iter().map(|w| w.0).max().unwrap();
        assert!(pages <= deck.slides.len());
        let pt = |emu: &serde_json::Value| emu.as_f64().unwrap() / EMU_PER_PT as f64;
        let mut outside = Vec::new();
        for (page, x0, y0, x1, y1, text) in &words {
            let frames = listed_slides[page - 1]["frames"].as_array().unwrap();
            let inside = frames.iter().any(|f| {
                let (left, top) = (pt(&f["left"]), pt(&f["top"]));
                let (w, h) = (pt(&f["width"]), pt(&f["height"]));
                // 1.5 pt: glyph boxes reach a little past the line box.
                *x0 >= left - 1.5
                    && *x1 <= left + w + 1.5
                    && *y0 >= top - 1.5
                    && *y1 <= top + h + 1.5
            });
            if !inside {
                outside.push(format!(
                    "slide {page}: {text} ({x0:.0},{y0:.0})–({x1:.0},{y1:.0})"
                ));
            }
        }
        assert!(
            outside.is_empty(),
            "{}: text outside its frame: {outside:?}",
            template.id
        );
    }
    if std::env::var_os("SLIDES_KEEP").is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    } else {
        eprintln!("decks and PDFs kept in {}", dir.display());
    }
}
