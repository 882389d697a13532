//! Scoring speed of the AI-text detector: tokens per second at window sizes growing 10× at a
//! time, and the time to judge a 10,000-character paper (CSL abstracts joined), on this machine.
//!
//!   cargo run --release -p wenjian-bench --bin aidetect-speed
//!
//! Needs the model files (`wenjian models fetch qwen2.5-0.5b`; WENJIAN_MODELS_DIR, default
//! ./data/models) and, for the paper, `../shared/data/corpus` (or WENJIAN_EVAL_DATA).

use std::time::Instant;

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
    let mut windows = vec![];
    for size in [10usize, 100, 1000] {
        let piece: String = text.chars().take(size * 2).collect();
        let ids = scorer.tokenize(&piece).expect("tokenize").ids.len();
        let t = Instant::now();
        let scored = scorer.score(&piece, None).expect("score").len();
        let s = t.elapsed().as_secs_f64();
        windows.push(serde_json::json!({"tokens": ids, "scored": scored, "seconds": s, "tokens_per_second": scored as f64 / s}));
    }
    let paper: String = text.chars().take(10_000).collect();
    let t = Instant::now();
    let d = aidetect::detect(&paper, &scorer, &aidetect::builtin_calibration()).expect("detect");
    let paper_s = t.elapsed().as_secs_f64();
    println!(
        "{}",
        serde_json::to_string_pretty(&serde_json::json!({
            "model": "qwen2.5-0.5b",
            "threads": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            "load_seconds": load_s,
            "windows": windows,
            "paper_10k_chars": {"chars": d.chars, "paragraphs": d.paragraphs.len(), "seconds": paper_s, "ai_rate": d.ai_rate},
        }))
        .unwrap()
    );
}
