//! Decks made from a real .docx thesis, every template and every slide count: the package is
//! one PowerPoint opens without repair, every frame's text fits, every number on a slide is in
//! the paper, and every content slide has a speaker script.

mod common;

use slides::deck::{DeckKind, DeckMeta, DeckRequest, SLIDE_COUNTS, SlideKind};
use slides::pptx::{self, Picture, Shape};
use slides::template::{Rect, SLIDE_H, SLIDE_W, TEMPLATES};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;

fn request(slides: usize) -> DeckRequest {
    DeckRequest {
        kind: DeckKind::Defence,
        slides,
        meta: DeckMeta {
            school: "华东理工学院".into(),
            presenter: "李明".into(),
            supervisor: "王强".into(),
            date: "2025年5月".into(),
        },
    }
}

/// The package's parts, by name.
fn parts(pptx: &[u8]) -> BTreeMap<String, Vec<u8>> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(pptx)).expect("a zip");
    let mut out = BTreeMap::new();
    for i in 0..zip.len() {
        let mut file = zip.by_index(i).unwrap();
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).unwrap();
        out.insert(file.name().to_string(), bytes);
    }
    out
}

/// Every element of a part: (name, attributes).
fn elements(xml: &[u8]) -> Vec<(String, BTreeMap<String, String>)> {
    let mut reader = quick_xml::Reader::from_reader(xml);
    let mut out = Vec::new();
    let mut buf = Vec::new();
    loop {
        match reader.read_event_into(&mut buf).expect("well-formed XML") {
            quick_xml::events::Event::Start(e) | quick_xml::events::Event::Empty(e) => {
                let name = String::from_utf8_lossy(e.name().as_ref()).to_string();
                let attrs = e
                    .attributes()
                    .map(|a| {
                        let a = a.expect("attribute");
                        (
                            String::from_utf8_lossy(a.key.as_ref()).to_string(),
                            a.unescape_value().expect("value").to_string(),
                        )
                    })
                    .collect();
                out.push((name, attrs));
            }
            quick_xml::events::Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    out
}

/// The package rules PowerPoint repairs a file for.
fn assert_valid_package(pptx: &[u8], slides: usize) {
    let parts = parts(pptx);
    for (name, bytes) in &parts {
        if name.ends_with(".xml") || name.ends_with(".rels") {
            elements(bytes);
        }
    }
    // One override per part, and every part that is not a default type has one.
    let types = elements(&parts["[Content_Types].xml"]);
    let overrides: Vec<&str> = types
        .iter()
        .filter(|(n, _)| n == "Override")
        .map(|(_, a)| a["PartName"].as_str())
        .collect();
    let unique: BTreeSet<&str> = overrides.iter().copied().collect();
    assert_eq!(unique.len(), overrides.len(), "duplicate overrides");
    for part in &overrides {
        assert!(
            parts.contains_key(&part[1..]),
            "override for missing {part}"
        );
    }
    for name in parts.keys() {
        if name.ends_with(".xml") && name != "[Content_Types].xml" {
            assert!(
                unique.contains(format!("/{name}").as_str()),
                "no content type for {name}"
            );
        }
    }
    // Relationship ids unique per part; every internal target exists.
    for (name, bytes) in parts.iter().filter(|(n, _)| n.ends_with(".rels")) {
        let base = name.replace("_rels/", "").replace(".rels", "");
        let dir = base.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
        let rels = elements(bytes);
        let ids: Vec<&str> = rels
            .iter()
            .filter(|(n, _)| n == "Relationship")
            .map(|(_, a)| a["Id"].as_str())
            .collect();
        assert_eq!(
            ids.iter().collect::<BTreeSet<_>>().len(),
            ids.len(),
            "{name}"
        );
        for (_, a) in rels.iter().filter(|(n, _)| n == "Relationship") {
            let mut path: Vec<&str> = if dir.is_empty() {
                vec![]
            } else {
                dir.split('/').collect()
            };
            for piece in a["Target"].split('/') {
                match piece {
                    ".." => {
                        path.pop();
                    }
                    p => path.push(p),
                }
            }
            let target = path.join("/");
            assert!(parts.contains_key(&target), "{name} → missing {target}");
        }
    }
    // Slide ids from 256, unique; master and layout ids from 2147483648.
    let presentation = elements(&parts["ppt/presentation.xml"]);
    let slide_ids: Vec<u64> = presentation
        .iter()
        .filter(|(n, _)| n == "p:sldId")
        .map(|(_, a)| a["id"].parse().unwrap())
        .collect();
    assert_eq!(slide_ids.len(), slides);
    assert!(
        slide_ids
            .iter()
            .all(|&id| (256..2_147_483_648).contains(&id))
    );
    assert_eq!(slide_ids.iter().collect::<BTreeSet<_>>().len(), slides);
    let master = elements(&parts["ppt/slideMasters/slideMaster1.xml"]);
    assert!(
        master
            .iter()
            .filter(|(n, _)| n == "p:sldLayoutId")
            .all(|(_, a)| a["id"].parse::<u64>().unwrap() > 2_147_483_648)
    );
    // The theme has three fill, line, effect and background fill styles.
    let theme = elements(&parts["ppt/theme/theme1.xml"]);
    let count_in = |list: &str| {
        let xml = String::from_utf8_lossy(&parts["ppt/theme/theme1.xml"]).to_string();
        let start = xml.find(&format!("<a:{list}>")).unwrap();
        let end = xml.find(&format!("</a:{list}>")).unwrap();
        let inner = &xml[start..end];
        match list {
            "fillStyleLst" | "bgFillStyleLst" => inner.matches("<a:solidFill>").count(),
            "lnStyleLst" => inner.matches("<a:ln ").count(),
            _ => inner.matches("<a:effectStyle>").count(),
        }
    };
    assert!(theme.iter().any(|(n, _)| n == "a:ea"));
    for list in [
        "fillStyleLst",
        "lnStyleLst",
        "effectStyleLst",
        "bgFillStyleLst",
    ] {
        assert_eq!(count_in(list), 3, "{list}");
    }
    // Every run is Chinese with an East-Asian typeface; shape ids unique per slide.
    for i in 1..=slides {
        let slide = elements(&parts[&format!("ppt/slides/slide{i}.xml")]);
        for (_, a) in slide.iter().filter(|(n, _)| n == "a:rPr") {
            assert_eq!(a.get("lang").map(String::as_str), Some("zh-CN"));
        }
        let runs = slide.iter().filter(|(n, _)| n == "a:rPr").count();
        let east_asian = slide.iter().filter(|(n, _)| n == "a:ea").count();
        assert_eq!(runs, east_asian, "slide {i}");
        let ids: Vec<&str> = slide
            .iter()
            .filter(|(n, _)| n == "p:cNvPr")
            .map(|(_, a)| a["id"].as_str())
            .collect();
        assert_eq!(ids.iter().collect::<BTreeSet<_>>().len(), ids.len());
        assert!(parts.contains_key(&format!("ppt/notesSlides/notesSlide{i}.xml")));
    }
}

#[test]
fn every_template_and_slide_count_makes_a_valid_deck_whose_text_fits() {
    let extracted = common::extracted();
    let paper = slides::Paper::from_extracted(&extracted).unwrap();
    let figures = paper.pictures(&extracted.images);
    let logo = Picture::logo(&pptx::badge_png(4, 2)).unwrap();
    let slide = Rect::new(0, 0, SLIDE_W, SLIDE_H);
    for count in SLIDE_COUNTS {
        let deck = slides::plan(&paper, &request(count)).unwrap();
        assert!(deck.slides.len() <= count, "{count}: {}", deck.slides.len());
        for template in &TEMPLATES {
            let laid = pptx::layout(&deck, template, Some(&logo)).unwrap();
            for (i, s) in laid.iter().enumerate() {
                for shape in &s.shapes {
                    if let Shape::Table(table) = shape {
                        // A table's measured rows fill its frame, which stays in the body.
                        assert!(
                            template.body_frame().contains(&table.rect),
                            "{}",
                            template.id
                        );
                        assert_eq!(table.heights.iter().sum::<i64>(), table.rect.h);
                        assert_eq!(table.columns.iter().sum::<i64>(), table.rect.w);
                    }
                    if let Some(text) = shape.text() {
                        assert!(
                            slide.contains(&text.rect),
                            "{} slide {}",
                            template.id,
                            i + 1
                        );
                        assert!(
                            text.text_height() <= text.rect.h,
                            "{} slide {}: {:?}",
                            template.id,
                            i + 1,
                            text.paragraphs
                        );
                    }
                }
            }
            let bytes = pptx::write(&deck, template, Some(&logo), &figures).unwrap();
            assert_valid_package(&bytes, deck.slides.len());
        }
    }
}

#[test]
fn a_defence_deck_has_the_parts_a_defence_needs_and_a_timed_script() {
    let paper = slides::Paper::from_extracted(&common::extracted()).unwrap();
    assert_eq!(paper.title, "基于改进YOLOv5的道路裂缝检测方法研究");
    let deck = slides::plan(&paper, &request(15)).unwrap();
    let kinds: Vec<SlideKind> = deck.slides.iter().map(|s| s.kind).collect();
    assert_eq!(kinds.first(), Some(&SlideKind::Cover));
    assert_eq!(kinds[1], SlideKind::Contents);
    assert_eq!(kinds.last(), Some(&SlideKind::Thanks));
    assert!(kinds.contains(&SlideKind::Route));
    // Title pages of the parts only where there is room for them besides the content.
    assert!(!kinds.contains(&SlideKind::Section));
    let long = slides::plan(&paper, &request(20)).unwrap();
    let sections = long
        .slides
        .iter()
        .filter(|s| s.kind == SlideKind::Section)
        .count();
    assert_eq!(sections, 6, "one per part");
    let contents = &deck.slides[1].bullets;
    assert_eq!(
        contents,
        &[
            "研究背景与意义",
            "国内外研究现状",
            "相关理论与技术",
            "研究内容与方法",
            "研究结果与分析",
            "结论与展望",
        ]
    );
    // The route's steps are the paper's own headings.
    let route = deck
        .slides
        .iter()
        .find(|s| s.kind == SlideKind::Route)
        .unwrap();
    assert!(route.bullets.len() >= 3, "{:?}", route.bullets);
    let body_text: String = paper
        .sections
        .iter()
        .flat_map(|s| std::iter::once(&s.heading).chain(&s.paragraphs))
        .cloned()
        .collect();
    for step in &route.bullets {
        assert!(body_text.contains(step.as_str()), "{step}");
    }
    // Every bullet of a content slide is the paper's own words.
    for slide in deck.slides.iter().filter(|s| s.kind == SlideKind::Bullets) {
        assert!(!slide.notes.is_empty() && slide.seconds > 0);
        for bullet in &slide.bullets {
            assert!(body_text.contains(bullet.as_str()), "{bullet}");
        }
    }
    let (_, max) = deck.kind.time_range();
    assert!(deck.seconds() <= max);
}

#[test]
fn no_number_on_a_slide_is_missing_from_the_paper() {
    let extracted = common::extracted();
    let paper = slides::Paper::from_extracted(&extracted).unwrap();
    let meta = request(20).meta;
    for count in SLIDE_COUNTS {
        let deck = slides::plan(&paper, &request(count)).unwrap();
        let laid = pptx::layout(&deck, &TEMPLATES[0], None).unwrap();
        for (i, slide) in laid.iter().enumerate() {
            for shape in &slide.shapes {
                if let Shape::Table(table) = shape {
                    for cell in table.cells.iter().flatten() {
                        for n in slides::deck::numbers(&cell.text) {
                            assert!(extracted.text.contains(&n), "slide {}: {n}", i + 1);
                        }
                    }
                }
                let Some(text) = shape.text() else { continue };
                for paragraph in &text.paragraphs {
                    for n in slides::deck::numbers(paragraph) {
                        // Page numbers and the contents' "01" are the deck's own.
                        let ours = paragraph.trim() == n
                            || paragraph == &format!("{:02}", n.parse::<usize>().unwrap_or(0))
                            || meta.date.contains(&n);
                        assert!(
                            ours || extracted.text.contains(&n),
                            "slide {}: {n} in {paragraph}",
                            i + 1
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn bad_input_is_refused_with_a_code() {
    let paper = slides::Paper::from_extracted(&common::extracted()).unwrap();
    let err = slides::plan(&paper, &request(60)).unwrap_err();
    assert_eq!(err.code(), "invalid_slide_count");
    assert_eq!(
        Picture::logo(b"GIF89a not a logo").unwrap_err().code(),
        "invalid_logo"
    );
    assert_eq!(
        Picture::logo(b"\x89PNG\r\n\x1a\n").unwrap_err().code(),
        "invalid_logo"
    );
    // A PNG cut short, one too large to decode safely: refused; a whole one is taken.
    let whole = pptx::badge_png(40, 20);
    assert!(Picture::logo(&whole).is_ok());
    assert!(Picture::logo(&whole[..whole.len() - 5]).is_err());
    let mut huge = whole.clone();
    huge[16..20].copy_from_slice(&20_000u32.to_be_bytes());
    assert!(Picture::logo(&huge).is_err());
    let flat = docio::extract(
        "一段没有标题的文字。".as_bytes(),
        "a.txt",
        &docio::Limits::default(),
    )
    .unwrap();
    assert_eq!(
        slides::Paper::from_extracted(&flat).unwrap_err().code(),
        "paper_without_headings"
    );
}

#[test]
fn a_logo_keeps_its_aspect_ratio_and_every_slide_of_the_school_template_shows_it() {
    let paper = slides::Paper::from_extracted(&common::extracted()).unwrap();
    // Long enough for title pages of the parts.
    let deck = slides::plan(&paper, &request(20)).unwrap();
    assert!(deck.slides.iter().any(|s| s.kind == SlideKind::Section));
    let logo = Picture::logo(&pptx::badge_png(4, 2)).unwrap();
    let school = slides::template::by_id("school").unwrap();
    let laid = pptx::layout(&deck, school, Some(&logo)).unwrap();
    for slide in laid.iter().filter(|s| !s.shapes.is_empty()) {
        let logos: Vec<&Rect> = slide
            .shapes
            .iter()
            .filter_map(|s| match s {
                Shape::Logo(r) => Some(r),
                _ => None,
            })
            .collect();
        for r in &logos {
            // 4×2 pixels: twice as wide as high.
            assert!((r.w as f64 / r.h as f64 - 2.0).abs() < 0.01);
        }
    }
    let with_logo = laid
        .iter()
        .filter(|s| s.shapes.iter().any(|x| matches!(x, Shape::Logo(_))))
        .count();
    // Every slide: the cover, and the header strip of every other.
    let content = deck.slides.len();
    assert_eq!(with_logo, content);
}

#[test]
fn the_papers_table_becomes_a_pptx_table_and_its_figure_an_embedded_picture() {
    let extracted = common::extracted();
    let paper = slides::Paper::from_extracted(&extracted).unwrap();
    // Read with their captions, in the section they sit in; their cells and captions are not
    // text for bullets.
    assert_eq!(paper.tables.len(), 1);
    assert_eq!(paper.tables[0].caption, "表1 各模型检测结果对比");
    assert_eq!(paper.tables[0].rows[3][0], "本文方法");
    assert_eq!(paper.figures.len(), 1);
    assert_eq!(paper.figures[0].caption, "图1 改进模型的裂缝检测结果示例");
    assert_eq!(
        (paper.figures[0].width, paper.figures[0].height),
        (480, 270)
    );
    let section = &paper.sections[paper.tables[0].section];
    assert!(section.heading.contains("对比实验"), "{}", section.heading);
    assert!(
        section
            .paragraphs
            .iter()
            .all(|p| !p.contains("Faster R-CNN\n") && p != "84.1" && !p.starts_with("表1"))
    );

    let figures = paper.pictures(&extracted.images);
    let deck = slides::plan(&paper, &request(15)).unwrap();
    let table = deck
        .slides
        .iter()
        .find(|s| s.kind == SlideKind::Table)
        .expect("a table slide");
    assert_eq!(table.rows, paper.tables[0].rows);
    assert_eq!(table.bullets, vec!["表1 各模型检测结果对比"]);
    // The script is the paper's sentence that refers to the table.
    assert!(
        table.notes.contains("各模型的结果如表1所示"),
        "{}",
        table.notes
    );
    let figure = deck
        .slides
        .iter()
        .find(|s| s.kind == SlideKind::Figure)
        .expect("a figure slide");
    assert!(figure.notes.contains("图1给出了"), "{}", figure.notes);
    // Both within the results part, after its text; the deck still fits the count asked.
    assert!(deck.slides.len() <= 15);

    for template in &TEMPLATES {
        let bytes = pptx::write(&deck, template, None, &figures).unwrap();
        let parts = parts(&bytes);
        assert_eq!(parts["ppt/media/figure0.png"], pptx::badge_png(480, 270));
        let types = String::from_utf8_lossy(&parts["[Content_Types].xml"]).to_string();
        assert!(types.contains(r#"Extension="png""#));
        let at = deck
            .slides
            .iter()
            .position(|s| s.kind == SlideKind::Table)
            .unwrap()
            + 1;
        let xml = &parts[&format!("ppt/slides/slide{at}.xml")];
        let found = elements(xml);
        assert_eq!(found.iter().filter(|(n, _)| n == "a:gridCol").count(), 5);
        assert_eq!(found.iter().filter(|(n, _)| n == "a:tr").count(), 4);
        assert_eq!(found.iter().filter(|(n, _)| n == "a:tc").count(), 20);
        let text = String::from_utf8_lossy(xml);
        assert!(text.contains("本文方法") && text.contains("86.4"));
    }
    // A figure whose picture the caller lacks is an error, not a blank frame.
    let err = pptx::write(&deck, &TEMPLATES[0], None, &Default::default()).unwrap_err();
    assert_eq!(err.code(), "deck_write_failed");

    // A deck with no room besides a slide for each part shows none; a table too wide for a
    // slide is not shown.
    let short = slides::plan(&paper, &request(10)).unwrap();
    assert!(short.slides.len() <= 10);
    let objects = short
        .slides
        .iter()
        .filter(|s| matches!(s.kind, SlideKind::Table | SlideKind::Figure))
        .count();
    assert_eq!(objects, 0);
    let mut wide = paper.clone();
    wide.figures.clear();
    wide.tables[0].rows = vec![(0..12).map(|k| format!("列{k}")).collect(); 3];
    let deck = slides::plan(&wide, &request(15)).unwrap();
    assert!(deck.slides.iter().all(|s| s.kind != SlideKind::Table));
}

#[test]
fn a_long_table_is_shown_in_part_and_says_so() {
    let extracted = common::extracted();
    let mut paper = slides::Paper::from_extracted(&extracted).unwrap();
    paper.figures.clear();
    let header = paper.tables[0].rows[0].clone();
    let body = paper.tables[0].rows[1].clone();
    paper.tables[0].rows = std::iter::once(header)
        .chain(std::iter::repeat_n(body, 30))
        .collect();
    let deck = slides::plan(&paper, &request(15)).unwrap();
    let table = deck
        .slides
        .iter()
        .find(|s| s.kind == SlideKind::Table)
        .unwrap();
    assert_eq!(table.rows.len(), 10);
    assert!(
        table.bullets[0].ends_with(pptx::EXCERPT),
        "{:?}",
        table.bullets
    );
    for template in &TEMPLATES {
        let laid = pptx::layout(&deck, template, None).unwrap();
        assert!(
            laid.iter()
                .flat_map(|s| &s.shapes)
                .any(|s| matches!(s, Shape::Table(t) if t.size_pt >= 10.0))
        );
    }
}

#[test]
fn a_wide_table_with_a_narrow_column_and_a_long_caption_still_lays_out() {
    let extracted = common::extracted();
    let mut paper = slides::Paper::from_extracted(&extracted).unwrap();
    paper.figures.clear();
    let long = "检测精度与召回率比较";
    let mut rows = vec![
        std::iter::once("序号".to_string())
            .chain((0..7).map(|k| format!("{long}{k}")))
            .collect::<Vec<_>>(),
    ];
    rows.extend((1..=4).map(|r| {
        std::iter::once(r.to_string())
            .chain((0..7).map(|k| format!("{long}{k}")))
            .collect::<Vec<_>>()
    }));
    paper.tables[0].rows = rows;
    paper.tables[0].caption = "表1 ".to_string() + &"很长的表题".repeat(14);
    let deck = slides::plan(&paper, &request(15)).unwrap();
    let table = deck
        .slides
        .iter()
        .find(|s| s.kind == SlideKind::Table)
        .expect("shown");
    assert!(table.bullets[0].chars().count() <= 50 + pptx::EXCERPT.chars().count());
    for template in &TEMPLATES {
        pptx::layout(&deck, template, None).unwrap();
    }
}

#[test]
fn a_draft_keeps_only_the_tables_and_figures_a_deck_could_show() {
    let extracted = common::extracted();
    let mut paper = slides::Paper::from_extracted(&extracted).unwrap();
    let table = paper.tables[0].clone();
    let figure = paper.figures[0].clone();
    paper.tables = vec![table; 40];
    paper.figures = vec![figure; 40];
    for t in &mut paper.tables {
        t.rows = std::iter::repeat_n(t.rows[1].clone(), 100).collect();
    }
    slides::deck::keep_showable_objects(&mut paper);
    assert!(paper.tables.len() + paper.figures.len() <= 5);
    assert!(paper.tables.iter().all(|t| t.rows.len() <= 11));
    // Two at most from one section.
    assert_eq!(paper.tables.len() + paper.figures.len(), 2);
}

#[test]
fn a_thin_paper_gets_no_title_pages_for_its_parts() {
    let paper = slides::Paper::from_outline(
        "道路裂缝检测",
        "1 绪论\n道路裂缝是路面病害的早期表现，及时发现裂缝对道路养护具有重要意义。人工巡检效率低且有安全隐患。\n2 研究现状\n早期研究采用阈值分割和边缘检测。近年来深度学习方法得到广泛应用。\n3 研究方法\n本文采用改进的YOLOv5模型检测裂缝。模型引入了坐标注意力模块。\n4 实验结果\n改进模型的平均精度均值达到86.4%。检测速度为每秒58帧。\n5 结论\n本文方法满足道路巡检的实时性要求。未来将扩充样本。",
    )
    .unwrap();
    let deck = slides::plan(&paper, &request(20)).unwrap();
    assert!(
        deck.slides.iter().all(|s| s.kind != SlideKind::Section),
        "{:?}",
        deck.slides.iter().map(|s| s.kind).collect::<Vec<_>>()
    );
    // A whole thesis keeps them (see a_defence_deck_has_the_parts_a_defence_needs…).
    let thesis = slides::Paper::from_extracted(&common::extracted()).unwrap();
    let long = slides::plan(&thesis, &request(20)).unwrap();
    assert!(long.slides.iter().any(|s| s.kind == SlideKind::Section));
}
