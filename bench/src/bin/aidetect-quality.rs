//! Quality of the AI-text detector, by five-fold cross-validation on `../shared/data/aigc`:
//! AUROC and true-positive rates at 1 % and 5 % false positives, overall, per generator and with
//! each generator left out of fitting; false positives on human academic abstracts of
//! `../shared/data/corpus` never used in fitting; and the shipped calibration (and the one named
//! by WENJIAN_BENCH_CALIBRATION) judging every text per generator as it stands — on a data
//! folder it was not fitted on (WENJIAN_EVAL_DATA), those are held-out figures. Printed, never
//! asserted.
//!
//!   cargo run --release -p wenjian-bench --bin aidetect-quality
//!
//! Scores are cached (`data/cache/aidetect-scores.jsonl`, shared with `wenjian detect calibrate`),
//! so only texts not seen before are scored. WENJIAN_BENCH_LIMIT caps the labelled texts of each
//! file and WENJIAN_BENCH_ACADEMIC the abstracts (default 400). WENJIAN_BENCH_PAIR=1 measures the pair
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
    // The shipped calibration as it stands, and any other named by
    // WENJIAN_BENCH_CALIBRATION (e.g. an earlier one, for before/after), per generator.
    let shipped = if pair {
        aidetect::builtin_pair_calibration()
    } else {
        aidetect::builtin_calibration()
    };
    let mut judged = vec![];
    let mut calibrations = vec![shipped];
    if let Ok(path) = std::env::var("WENJIAN_BENCH_CALIBRATION") {
        match std::fs::read_to_string(&path)
            .map_err(|e| e.to_string())
            .and_then(|raw| {
                serde_json::from_str::<aidetect::Calibration>(&raw).map_err(|e| e.to_string())
            }) {
            Ok(c) => calibrations.push(c),
            Err(e) => eprintln!("{path}: {e}"),
        }
    }
    for cal in &calibrations {
        match eval::evaluate(&scorer, observer.as_ref(), cal, &args, &mut |_, _| {}) {
            Ok(j) => judged.push(serde_json::json!({
                "version": cal.version,
                "high_threshold": cal.high_threshold,
                "medium_threshold": cal.medium_threshold,
                "by_generator": j,
            })),
            Err(e) => eprintln!("failed: {e}"),
        }
    }
    let model = aidetect::scores_name(&scorer, observer.as_ref());
    println!(
        "{}",
        serde_json::to_string_pretty(&serde_json::json!({
            "model": model,
            "cross_validated": quality,
            "refitted_version": refitted.version,
            "as_shipped": judged,
            "seconds": started.elapsed().as_secs_f64(),
        }))
        .unwrap()
    );
}
