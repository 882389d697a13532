//! Quality of the AI-text detector, by five-fold cross-validation on `../shared/data/aigc`:
//! AUROC and true-positive rates at 1 % and 5 % false positives; and false positives on human
//! academic abstracts of `../shared/data/corpus` never used in fitting, at the operating
//! threshold, for the refitted and for the shipped calibration. Printed, never asserted.
//!
//!   cargo run --release -p wenjian-bench --bin aidetect-quality
//!
//! Scores are cached (`data/cache/aidetect-scores.jsonl`, shared with `wenjian detect calibrate`),
//! so only texts not seen before are scored. WENJIAN_BENCH_LIMIT caps the labelled texts and
//! WENJIAN_BENCH_ACADEMIC the abstracts (default 400). WENJIAN_BENCH_PAIR=1 measures the pair
//! (0.5B scoring, 1.5B observing; Binoculars) against the shipped pair calibration.

use aidetect::eval::{self, CalibrateArgs};

fn main() {
    let Some(data) = wenjian_bench::eval_data_dir() else {
        eprintln!("skipped: evaluation data not found (set WENJIAN_EVAL_DATA)");
        return;
    };
    let Some(scorer) = wenjian_bench::detection_scorer() else {
        return;
    };
    let pair = std::env::var("WENJIAN_BENCH_PAIR").is_ok_and(|v| v == "1");
    let observer = if pair {
        let Some(o) = wenjian_bench::observer_scorer() else {
            return;
        };
        Some(o)
    } else {
        None
    };
    let env_number = |name: &str, default: usize| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let args = CalibrateArgs {
        data: data.clone(),
        limit: env_number("WENJIAN_BENCH_LIMIT", 0),
        academic: env_number("WENJIAN_BENCH_ACADEMIC", 400),
        out: std::path::PathBuf::new(),
        cache: std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../data/cache/aidetect-scores.jsonl"),
    };
    let started = std::time::Instant::now();
    let (refitted, quality) =
        match eval::calibrate_with(&scorer, observer.as_ref(), &args, &mut |done, total| {
            if done % 50 == 0 || done == total {
                eprintln!("scored {done}/{total}");
            }
        }) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("failed: {e}");
                return;
            }
        };
    // The shipped calibration on the same held-out abstracts.
    let shipped = if pair {
        aidetect::builtin_pair_calibration()
    } else {
        aidetect::builtin_calibration()
    };
    let held = eval::held_out_abstracts(&data, args.academic).unwrap_or_default();
    let model = aidetect::scores_name(&scorer, observer.as_ref());
    let cache = eval::StatsCache::open(&args.cache, &model).expect("cache");
    let shipped_scores: Vec<f64> = held
        .iter()
        .filter_map(|a| cache.get(a).and_then(|s| s.features(a, pair)))
        .map(|f| shipped.probability(&f))
        .collect();
    println!(
        "{}",
        serde_json::to_string_pretty(&serde_json::json!({
            "model": model,
            "cross_validated": quality,
            "refitted_version": refitted.version,
            "shipped": {
                "version": shipped.version,
                "high_threshold": shipped.high_threshold,
                "fpr_academic_held_out": eval::rate_at_or_above(&shipped_scores, shipped.high_threshold),
                "medium_or_high_academic_held_out": eval::rate_at_or_above(&shipped_scores, shipped.medium_threshold),
                "held_out_abstracts": shipped_scores.len(),
            },
            "seconds": started.elapsed().as_secs_f64(),
        }))
        .unwrap()
    );
}
