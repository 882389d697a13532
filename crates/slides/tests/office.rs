//! Every template's deck read by two programs that did not write it: python-pptx opens it and
//! lists its frames and notes, LibreOffice Impress (headless) draws it to PDF, and every word
//! LibreOffice drew (pdftotext -bbox) must lie inside a text frame of its slide — text that
//! overflowed its frame would fall outside. The scripts install all three
//! (`scripts/test.sh`: libreoffice-impress-nogui, poppler-utils, target/office-python).

mod common;

use slides::deck::{DeckKind, DeckMeta, DeckRequest};
use slides::pptx::{self, Picture};
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
    let extracted = common::extracted();
    let paper = slides::Paper::from_extracted(&extracted).unwrap();
    let figures = paper.pictures(&extracted.images);
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
    let logo = Picture::logo(&pptx::badge_png(60, 30)).unwrap();
    let dir = std::env::temp_dir().join(format!("wenjian-slides-office-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for template in &TEMPLATES {
        let path = dir.join(format!("{}.pptx", template.id));
        std::fs::write(
            &path,
            pptx::write(&deck, template, Some(&logo), &figures).unwrap(),
        )
        .unwrap();

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
        // The paper's table is a table python-pptx reads cell by cell; its figure a picture.
        let table = deck
            .slides
            .iter()
            .position(|s| s.kind == slides::SlideKind::Table)
            .expect("a table slide");
        let frames = listed_slides[table]["frames"].as_array().unwrap();
        let read_table = frames.iter().find(|f| f.get("table").is_some()).unwrap();
        assert_eq!(read_table["table"], serde_json::json!([4, 5]));
        assert!(read_table["text"].as_str().unwrap().contains("本文方法"));
        let figure = deck
            .slides
            .iter()
            .position(|s| s.kind == slides::SlideKind::Figure)
            .expect("a figure slide");
        let logos = usize::from(template.id == "school");
        assert_eq!(
            listed_slides[figure]["pictures"].as_u64().unwrap() as usize,
            1 + logos
        );

        // LibreOffice draws it; every word inside a frame python-pptx listed.
        let out = docio::office::pdf_command(&path, &dir)
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
