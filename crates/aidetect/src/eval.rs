//! Evaluation data, the scoring cache and the cross-validated figures behind
//! `wenjian detect calibrate` and the quality benchmark. Scoring a text with the language model
//! is the slow part (seconds per text on two cores), so the model's statistics of every text are
//! cached by the hash of model and text; features and calibration can then change freely.

use crate::calibration::{Calibration, auroc, fit, tpr_at_fpr};
use crate::features::{Features, TokenStats};
use llm::LocalScorer;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

/// A text with its label.
#[derive(Debug, Clone, PartialEq)]
pub struct Labelled {
    pub text: String,
    pub machine: bool,
}

#[derive(Deserialize)]
struct Row {
    text: String,
    label: u8,
}

/// `{"text","label"}` JSON Lines (1 = machine-written).
pub fn read_labelled_jsonl(raw: &str) -> Result<Vec<Labelled>, serde_json::Error> {
    raw.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str::<Row>(l).map(|r| Labelled {
                text: r.text,
                machine: r.label == 1,
            })
        })
        .collect()
}

/// The abstracts of a CSL file: `{field: [{"title","abstract",…}]}`, in file order.
pub fn read_csl_abstracts(raw: &str) -> Result<Vec<String>, serde_json::Error> {
    let value: serde_json::Value = serde_json::from_str(raw)?;
    Ok(value
        .as_object()
        .into_iter()
        .flat_map(|o| o.values())
        .filter_map(|f| f.as_array())
        .flatten()
        .filter_map(|r| r["abstract"].as_str().map(String::from))
        .collect())
}

/// A deterministic shuffle, so that a calibration can be fitted again to the same numbers.
pub fn shuffle<T>(items: &mut [T], mut seed: u64) {
    for i in (1..items.len()).rev() {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        items.swap(i, (seed >> 33) as usize % (i + 1));
    }
}

#[derive(Serialize, Deserialize)]
struct CacheLine {
    key: String,
    stats: TokenStats,
}

/// Whole-text token statistics by `sha256(models and arithmetic, text)`, kept in a JSON Lines
/// file that grows as texts are scored (an interrupted run loses nothing already scored).
pub struct StatsCache {
    path: PathBuf,
    model: String,
    entries: HashMap<String, TokenStats>,
}

impl StatsCache {
    pub fn open(path: &Path, model: &str) -> std::io::Result<StatsCache> {
        let mut entries = HashMap::new();
        if let Ok(file) = std::fs::File::open(path) {
            for line in std::io::BufReader::new(file).lines() {
                // A line cut short by an interrupted run is skipped, not fatal.
                if let Ok(l) = serde_json::from_str::<CacheLine>(&line?) {
                    entries.insert(l.key, l.stats);
                }
            }
        }
        Ok(StatsCache {
            path: path.to_path_buf(),
            model: model.to_string(),
            entries,
        })
    }

    fn key(&self, text: &str) -> String {
        let mut h = Sha256::new();
        h.update(self.model.as_bytes());
        h.update([0]);
        h.update(text.as_bytes());
        hex::encode(h.finalize())
    }

    pub fn get(&self, text: &str) -> Option<TokenStats> {
        self.entries.get(&self.key(text)).copied()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The cached statistics of `text`, or `score`'s, which are then appended to the file.
    pub fn stats<E: From<std::io::Error>>(
        &mut self,
        text: &str,
        score: impl FnOnce(&str) -> Result<TokenStats, E>,
    ) -> Result<TokenStats, E> {
        let key = self.key(text);
        if let Some(s) = self.entries.get(&key) {
            return Ok(*s);
        }
        let stats = score(text)?;
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)?;
        let line = serde_json::to_string(&CacheLine {
            key: key.clone(),
            stats,
        })
        .map_err(std::io::Error::other)?;
        writeln!(file, "{line}")?;
        self.entries.insert(key, stats);
        Ok(stats)
    }
}

/// Out-of-fold probabilities: each sample scored by a calibration fitted without its fold.
pub fn cross_validated(samples: &[(Features, bool)], folds: usize) -> Vec<f64> {
    let mut scores = vec![0.0; samples.len()];
    for fold in 0..folds {
        let train: Vec<(Features, bool)> = samples
            .iter()
            .enumerate()
            .filter(|(i, _)| i % folds != fold)
            .map(|(_, s)| s.clone())
            .collect();
        let cal: Calibration = fit(&train, "cv", "", "", "cv");
        for (i, s) in samples
            .iter()
            .enumerate()
            .filter(|(i, _)| i % folds == fold)
        {
            scores[i] = cal.probability(&s.0);
        }
    }
    scores
}

/// The lowest threshold at which at most `fpr` of the human texts' scores reach it.
pub fn threshold_at_fpr(human_scores: &[f64], fpr: f64) -> f64 {
    let mut sorted = human_scores.to_vec();
    sorted.sort_by(|a, b| b.total_cmp(a));
    let allowed = (fpr * sorted.len() as f64).floor() as usize;
    // Just above the score of the first human text that must stay below the threshold.
    sorted
        .get(allowed)
        .map(|s| (s + 1e-9).min(1.0))
        .unwrap_or(0.0)
}

/// The share of `scores` at or above `threshold`.
pub fn rate_at_or_above(scores: &[f64], threshold: f64) -> f64 {
    if scores.is_empty() {
        return 0.0;
    }
    scores.iter().filter(|&&s| s >= threshold).count() as f64 / scores.len() as f64
}

/// Why an evaluation could not run, in words for the operator.
#[derive(Debug)]
pub struct EvalError(pub String);

impl std::fmt::Display for EvalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for EvalError {}

impl From<std::io::Error> for EvalError {
    fn from(e: std::io::Error) -> Self {
        EvalError(e.to_string())
    }
}

/// What `calibrate` reads and where it keeps its scores.
pub struct CalibrateArgs {
    /// The evaluation folder (`aigc/*.jsonl`, `corpus/csl-abstracts-*.json`) or one JSON Lines file.
    pub data: std::path::PathBuf,
    /// At most this many labelled texts (0: all).
    pub limit: usize,
    /// Human academic abstracts to use: the first half joins the training negatives, the second
    /// half is held out to measure false positives on formal academic prose.
    pub academic: usize,
    pub out: std::path::PathBuf,
    pub cache: std::path::PathBuf,
}

/// What an evaluation folder holds.
pub struct EvalData {
    pub labelled: Vec<Labelled>,
    pub abstracts: Vec<String>,
    /// SHA-256 of every file read, in order.
    pub sha256: String,
    /// The stems of the files read, e.g. `hc3plus-zh-val-qa + csl-abstracts-a`.
    pub names: String,
}

/// The labelled texts and academic abstracts of `data` (a folder, or one JSON Lines file).
pub fn read_eval_data(data: &Path) -> Result<EvalData, EvalError> {
    let mut files: Vec<std::path::PathBuf> = vec![];
    if data.is_dir() {
        for sub in ["aigc", "corpus"] {
            let Ok(entries) = std::fs::read_dir(data.join(sub)) else {
                continue;
            };
            let mut found: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
            found.sort();
            files.extend(found.into_iter().filter(|p| {
                let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                name.ends_with(".jsonl") || (name.starts_with("csl-") && name.ends_with(".json"))
            }));
        }
    } else {
        files.push(data.to_path_buf());
    }
    let mut hash = Sha256::new();
    let (mut labelled, mut abstracts) = (vec![], vec![]);
    for f in &files {
        let raw = std::fs::read_to_string(f)
            .map_err(|e| EvalError(format!("无法读取 {}：{e}", f.display())))?;
        hash.update(raw.as_bytes());
        if f.extension().is_some_and(|e| e == "jsonl") {
            labelled.extend(read_labelled_jsonl(&raw).map_err(|e| {
                EvalError(format!(
                    "{} 应为 JSON Lines：{{\"text\", \"label\"}}（1 = 机器生成）：{e}",
                    f.display()
                ))
            })?);
        } else {
            abstracts.extend(
                read_csl_abstracts(&raw)
                    .map_err(|e| EvalError(format!("{} 不是 CSL 摘要文件：{e}", f.display())))?,
            );
        }
    }
    if labelled.is_empty() {
        return Err(EvalError(format!(
            "{} 中没有带标签的文本（aigc/*.jsonl）",
            data.display()
        )));
    }
    let names: Vec<&str> = files
        .iter()
        .filter_map(|f| f.file_stem().and_then(|s| s.to_str()))
        .collect();
    Ok(EvalData {
        labelled,
        abstracts,
        sha256: hex::encode(hash.finalize()),
        names: names.join(" + "),
    })
}

/// The academic abstracts used: `academic` of them in a fixed shuffled order, the first half for
/// fitting and the second half held out.
fn split_abstracts(mut abstracts: Vec<String>, academic: usize) -> (Vec<String>, Vec<String>) {
    abstracts.retain(|a| crate::counted_chars(a) >= 50);
    shuffle(&mut abstracts, 20261123);
    abstracts.truncate(academic);
    let held = abstracts.split_off(abstracts.len() / 2);
    (abstracts, held)
}

/// The held-out academic abstracts of a calibration run with `academic` abstracts.
pub fn held_out_abstracts(data: &Path, academic: usize) -> Result<Vec<String>, EvalError> {
    Ok(split_abstracts(read_eval_data(data)?.abstracts, academic).1)
}

/// Scores the texts not yet in the cache (with the observer's terms when there is one), telling
/// `progress(scored, to score)`, and returns every text's statistics.
fn stats_of_all(
    scorer: &LocalScorer,
    observer: Option<&LocalScorer>,
    cache: &mut StatsCache,
    texts: &[&str],
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<TokenStats>, EvalError> {
    let missing = texts.iter().filter(|t| cache.get(t).is_none()).count();
    let mut done = 0;
    let mut out = Vec::with_capacity(texts.len());
    for text in texts {
        let stats = cache.stats(text, |t| -> Result<TokenStats, EvalError> {
            let tokens = scorer
                .score(t, observer)
                .map_err(|e| EvalError(e.to_string()))?;
            done += 1;
            progress(done, missing);
            Ok(TokenStats::of(&tokens, 0, t.chars().count()))
        })?;
        out.push(stats);
    }
    Ok(out)
}

/// The figures a calibration run prints (and the quality benchmark reports).
#[derive(Debug, Clone, Serialize)]
pub struct Quality {
    pub labelled_texts: usize,
    pub machine_texts: usize,
    pub academic_train: usize,
    pub academic_held_out: usize,
    /// Five-fold cross-validated, on the labelled texts.
    pub auroc_cv: f64,
    pub tpr_at_1pct_fpr_cv: f64,
    pub tpr_at_5pct_fpr_cv: f64,
    /// At the operating (high-band) threshold.
    pub high_threshold: f64,
    pub medium_threshold: f64,
    pub tpr_at_threshold_cv: f64,
    pub fpr_labelled_human_at_threshold_cv: f64,
    pub fpr_academic_train_at_threshold_cv: f64,
    /// Human academic abstracts never seen in fitting, judged by the shipped calibration.
    pub fpr_academic_held_out: f64,
    pub medium_or_high_academic_held_out: f64,
    pub data_sha256: String,
    /// With an observer: the same cross-validated figures from the scoring model's seven
    /// features alone, on the same texts, to show what the observer adds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scorer_alone: Option<CrossValidated>,
}

/// Cross-validated separation of the labelled texts.
#[derive(Debug, Clone, Serialize)]
pub struct CrossValidated {
    pub auroc_cv: f64,
    pub tpr_at_1pct_fpr_cv: f64,
    pub tpr_at_5pct_fpr_cv: f64,
}

impl CrossValidated {
    fn of(scores: &[f64], labels: &[bool]) -> CrossValidated {
        CrossValidated {
            auroc_cv: auroc(scores, labels),
            tpr_at_1pct_fpr_cv: tpr_at_fpr(scores, labels, 0.01),
            tpr_at_5pct_fpr_cv: tpr_at_fpr(scores, labels, 0.05),
        }
    }
}

/// The training set — (features, machine, is an academic abstract) for the labelled texts and
/// then the training abstracts, those with features — and its five-fold out-of-fold scores.
fn out_of_fold(
    features: &[Option<Features>],
    labelled: &[Labelled],
) -> (Vec<(Features, bool, bool)>, Vec<f64>) {
    let set: Vec<(Features, bool, bool)> = features
        .iter()
        .enumerate()
        .filter_map(|(i, f)| {
            let f = f.clone()?;
            Some(match labelled.get(i) {
                Some(r) => (f, r.machine, false),
                None => (f, false, true),
            })
        })
        .collect();
    let samples: Vec<(Features, bool)> = set.iter().map(|s| (s.0.clone(), s.1)).collect();
    let oof = cross_validated(&samples, 5);
    (set, oof)
}

/// The cross-validated figures of the labelled texts in `set`, and their scores.
fn labelled_figures(set: &[(Features, bool, bool)], oof: &[f64]) -> (CrossValidated, Vec<f64>) {
    let (scores, labels): (Vec<f64>, Vec<bool>) = set
        .iter()
        .zip(oof)
        .filter(|(s, _)| !s.2)
        .map(|(s, p)| (*p, s.1))
        .unzip();
    (CrossValidated::of(&scores, &labels), scores)
}

/// Fits the calibration on the labelled texts plus half of the academic abstracts, picks the
/// operating thresholds from cross-validated scores of the human texts, and measures the false
/// positives on the held-out abstracts. With an observer, on the pair's ten features.
pub fn calibrate_with(
    scorer: &LocalScorer,
    observer: Option<&LocalScorer>,
    args: &CalibrateArgs,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<(Calibration, Quality), EvalError> {
    let EvalData {
        mut labelled,
        abstracts,
        sha256: sha,
        names,
    } = read_eval_data(&args.data)?;
    labelled.retain(|r| crate::counted_chars(&r.text) >= 50);
    shuffle(&mut labelled, 20261122);
    if args.limit > 0 {
        labelled.truncate(args.limit);
    }
    let (train_abs, held_abs) = split_abstracts(abstracts, args.academic);
    let model = crate::model_name(scorer, observer);
    let arithmetic = crate::arithmetic_name(scorer, observer);
    let mut cache = StatsCache::open(&args.cache, &crate::scores_name(scorer, observer))?;
    let texts: Vec<&str> = labelled
        .iter()
        .map(|r| r.text.as_str())
        .chain(train_abs.iter().map(String::as_str))
        .chain(held_abs.iter().map(String::as_str))
        .collect();
    let stats = stats_of_all(scorer, observer, &mut cache, &texts, progress)?;
    let pair = observer.is_some();
    let features: Vec<Option<Features>> = stats
        .iter()
        .zip(&texts)
        .map(|(s, t)| s.features(t, pair))
        .collect();
    let (train_features, held_features) = features.split_at(labelled.len() + train_abs.len());
    let (train, oof) = out_of_fold(train_features, &labelled);
    let pick = |want: &dyn Fn(&(Features, bool, bool)) -> bool| -> Vec<f64> {
        train
            .iter()
            .zip(&oof)
            .filter(|(s, _)| want(s))
            .map(|(_, p)| *p)
            .collect()
    };
    let (figures, labelled_scores) = labelled_figures(&train, &oof);
    // The same training texts judged on the scoring model's features alone.
    let scorer_alone = pair.then(|| {
        let alone: Vec<Option<Features>> = stats[..train_features.len()]
            .iter()
            .zip(&texts)
            .map(|(s, t)| s.features(t, false))
            .collect();
        let (set, oof) = out_of_fold(&alone, &labelled);
        labelled_figures(&set, &oof).0
    });
    let academic_scores = pick(&|s| s.2);
    // The high band: at most 1 % of the human QA answers and at most 1 % of the academic
    // abstracts reach it in cross-validation (each group on its own, so the larger one cannot
    // hide the other), and never below an even chance. The medium band: 10 % of each.
    let qa_human = pick(&|s| !s.1 && !s.2);
    let at =
        |fpr: f64| threshold_at_fpr(&qa_human, fpr).max(threshold_at_fpr(&academic_scores, fpr));
    let high = at(0.01).max(0.5);
    let medium = at(0.10).clamp(0.2, high);
    let machine_scores = pick(&|s| s.1);
    let version = format!(
        "aigc-cal-3 ({model}, {arithmetic}, {names}: {} labelled + {} academic texts)",
        labelled_scores.len(),
        academic_scores.len()
    );
    let samples: Vec<(Features, bool)> = train.iter().map(|s| (s.0.clone(), s.1)).collect();
    let mut calibration = fit(&samples, &model, &arithmetic, &sha, &version);
    calibration.high_threshold = high;
    calibration.medium_threshold = medium;
    let held: Vec<f64> = held_features
        .iter()
        .flatten()
        .map(|f| calibration.probability(f))
        .collect();
    let quality = Quality {
        labelled_texts: labelled_scores.len(),
        machine_texts: machine_scores.len(),
        academic_train: academic_scores.len(),
        academic_held_out: held.len(),
        auroc_cv: figures.auroc_cv,
        tpr_at_1pct_fpr_cv: figures.tpr_at_1pct_fpr_cv,
        tpr_at_5pct_fpr_cv: figures.tpr_at_5pct_fpr_cv,
        high_threshold: high,
        medium_threshold: medium,
        tpr_at_threshold_cv: rate_at_or_above(&machine_scores, high),
        fpr_labelled_human_at_threshold_cv: rate_at_or_above(&qa_human, high),
        fpr_academic_train_at_threshold_cv: rate_at_or_above(&academic_scores, high),
        fpr_academic_held_out: rate_at_or_above(&held, high),
        medium_or_high_academic_held_out: rate_at_or_above(&held, medium),
        data_sha256: sha,
        scorer_alone,
    };
    Ok((calibration, quality))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threshold_keeps_the_false_positive_rate() {
        let human: Vec<f64> = (0..100).map(|i| i as f64 / 100.0).collect();
        let t = threshold_at_fpr(&human, 0.05);
        assert!(rate_at_or_above(&human, t) <= 0.05);
        assert!(rate_at_or_above(&human, t - 0.011) > 0.05);
    }

    #[test]
    fn cache_survives_reopening_and_a_torn_line() {
        let dir = std::env::temp_dir().join(format!("wj-cache-{}", std::process::id()));
        let path = dir.join("c.jsonl");
        let stats = TokenStats {
            tokens: 9,
            sum_logprob: -1.0,
            sum_entropy: 2.0,
            sum_variance: 3.0,
            sum_log_rank: 4.0,
            pair: None,
        };
        let mut cache = StatsCache::open(&path, "m").unwrap();
        let got: Result<_, std::io::Error> = cache.stats("文本", |_| Ok(stats));
        assert_eq!(got.unwrap(), stats);
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"key\":\"x")
            .unwrap();
        let cache = StatsCache::open(&path, "m").unwrap();
        assert_eq!(cache.get("文本"), Some(stats));
        assert_eq!(StatsCache::open(&path, "other").unwrap().get("文本"), None);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
