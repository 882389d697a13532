//! Scoring speed of the AI-text detector: tokens per second at window sizes growing 10× at a
//! time, for the 0.5B model and (when installed) the 1.5B observer, and the time to judge a
//! 10,000-character paper (CSL abstracts joined) with the 0.5B model alone and with the pair,
//! and, for comparison, the 0.5B model's throughput and paper time with f32 products instead of
//! the default integer ones (`llm::Arithmetic`).
//!
//!   cargo run --release -p wenjian-bench --bin aidetect-speed
//!
//! Needs the model files (`wenjian models fetch qwen2.5-0.5b`; WENJIAN_MODELS_DIR, default
//! ./data/models) and, for the paper, `../shared/data/corpus` (or WENJIAN_EVAL_DATA).

use std::time::Instant;

/// Tokens per second of `scorer` on the first 20, 200 and 2,000 characters of `text`.
fn throughput(scorer: &llm::LocalScorer, text: &str) -> Vec<serde_json::Value> {
    let mut windows = vec![];
    for size in [10usize, 100, 1000] {
        let piece: String = text.chars().take(size * 2).collect();
        let ids = scorer.tokenize(&piece).expect("tokenize").ids.len();
        let t = Instant::now();
        let scored = scorer.score(&piece, None).expect("score").len();
        let s = t.elapsed().as_secs_f64();
        windows.push(serde_json::json!({"tokens": ids, "scored": scored, "seconds": s, "tokens_per_second": scored as f64 / s}));
    }
    windows
}

/// The time `detector` takes to judge `paper`.
fn paper_time(detector: &aidetect::Detector, paper: &str) -> serde_json::Value {
    let t = Instant::now();
    let d = detector.detect(paper).expect("detect");
    serde_json::json!({
        "detector": d.model,
        "chars": d.chars,
        "paragraphs": d.paragraphs.len(),
        "seconds": t.elapsed().as_secs_f64(),
        "ai_rate": d.ai_rate,
    })
}

fn main() {
    let load = Instant::now();
    let Some(scorer) = wenjian_bench::detection_scorer() else {
        return;
    };
    let load_s = load.elapsed().as_secs_f64();
    let abstracts = wenjian_bench::eval_data_dir()
        .and_then(|d| std::fs::read_to_string(d.join("corpus/csl-abstracts-a.json")).ok())
        .and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok())
        .map(|v| {
            v.as_object()
                .into_iter()
                .flat_map(|o| o.values())
                .flat_map(|f| f.as_array().cloned().unwrap_or_default())
                .filter_map(|r| r["abstract"].as_str().map(String::from))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    let mut text = String::new();
    for a in abstracts.iter().cycle().take(200) {
        if text.chars().count() >= 10_000 {
            break;
        }
        text.push_str(a);
        text.push('\n');
    }
    if text.is_empty() {
        text = "研究表明，该方法在多个数据集上取得了较好的效果。\n".repeat(400);
    }
    let paper: String = text.chars().take(10_000).collect();
    let scorer = std::sync::Arc::new(scorer);
    let mut models = vec![serde_json::json!({
        "model": scorer.name,
        "load_seconds": load_s,
        "windows": throughput(&scorer, &text),
    })];
    // The shipped detector, and the same scoring without the hidden-state probe (what the probe
    // costs), run in turn twice because this machine's speed drifts.
    let shipped = aidetect::Detector::new(scorer.clone(), None);
    let mut plain = shipped.calibration.clone();
    if plain.probe.take().is_some() {
        plain.features.pop();
        plain.mean.pop();
        plain.std.pop();
        plain.weights.pop();
    }
    let without_probe = aidetect::Detector {
        scorer: scorer.clone(),
        observer: None,
        calibration: plain,
    };
    let mut papers = vec![];
    for _ in 0..2 {
        papers.push(paper_time(&shipped, &paper));
        let mut timing = paper_time(&without_probe, &paper);
        if let Some(t) = timing.as_object_mut() {
            t.remove("ai_rate");
            t.insert(
                "detector".into(),
                "qwen2.5-0.5b without the probe (cost comparison)".into(),
            );
        }
        papers.push(timing);
    }
    // The same model with f32 products, for comparison: throughput and paper time only, since
    // the shipped calibrations were fitted on integer-product scores (its AI rate would mean
    // nothing).
    if let Some(f32_scorer) = wenjian_bench::f32_detection_scorer() {
        let label = format!("{} (f32 products, uncalibrated)", f32_scorer.name);
        models.push(serde_json::json!({
            "model": label,
            "windows": throughput(&f32_scorer, &text),
        }));
        let mut timing = paper_time(
            &aidetect::Detector::new(std::sync::Arc::new(f32_scorer), None),
            &paper,
        );
        if let Some(t) = timing.as_object_mut() {
            t.remove("ai_rate");
            t.insert("detector".into(), label.into());
        }
        papers.push(timing);
    }
    // The pair (Binoculars), when the observer model is installed.
    let load = Instant::now();
    if let Some(observer) = wenjian_bench::observer_scorer() {
        let load_s = load.elapsed().as_secs_f64();
        models.push(serde_json::json!({
            "model": observer.name,
            "load_seconds": load_s,
            "windows": throughput(&observer, &text),
        }));
        let pair = aidetect::Detector::new(scorer, Some(std::sync::Arc::new(observer)));
        papers.push(paper_time(&pair, &paper));
    }
    println!(
        "{}",
        serde_json::to_string_pretty(&serde_json::json!({
            "threads": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            "models": models,
            "paper_10k_chars": papers,
        }))
        .unwrap()
    );
}
