//! Evaluation data, the scoring cache and the cross-validated figures behind
//! `wenjian detect calibrate` and the quality benchmark. Scoring a text with the language model
//! is the slow part (seconds per text on two cores), so the model's statistics of every text are
//! cached by the hash of model and text; features and calibration can then change freely.

use crate::calibration::{Calibration, FitSpec, Sample, auroc, fit_samples, tpr_at_fpr};
use crate::features::{SPREAD_FEATURE_NAMES, TokenStats, feature_names};
use llm::LocalScorer;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

/// A text with its label and who wrote it.
#[derive(Debug, Clone, PartialEq)]
pub struct Labelled {
    pub text: String,
    pub machine: bool,
    /// `human`, or the generating model as the data names it (`GPT4.5`, `DeepSeek R`), or
    /// `ChatGPT (HC3)` for machine rows of a file that names none (HC3, 2023).
    pub generator: String,
    /// The file it came from (its stem); empty until `read_eval_data` sets it.
    pub source: String,
}

/// What machine rows of a file without a `model` field were written by.
pub const HC3_GENERATOR: &str = "ChatGPT (HC3)";
pub const HUMAN: &str = "human";

#[derive(Deserialize)]
struct Row {
    text: String,
    label: u8,
    #[serde(default)]
    model: Option<String>,
}

/// `{"text","label"[,"model"]}` JSON Lines (1 = machine-written).
pub fn read_labelled_jsonl(raw: &str) -> Result<Vec<Labelled>, serde_json::Error> {
    raw.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str::<Row>(l).map(|r| {
                let machine = r.label == 1;
                let generator = match (machine, r.model) {
                    (false, _) => HUMAN.to_string(),
                    (true, Some(m)) if !m.trim().is_empty() && m != HUMAN => m,
                    (true, _) => HC3_GENERATOR.to_string(),
                };
                Labelled {
                    text: r.text,
                    machine,
                    generator,
                    source: String::new(),
                }
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
    /// The mean hidden state at the probe layer, when it was read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    hidden: Option<Vec<f32>>,
}

/// What scoring a text gave: its token statistics and, when read, its mean hidden state at the
/// probe layer.
#[derive(Debug, Clone, PartialEq)]
pub struct TextScores {
    pub stats: TokenStats,
    pub hidden: Option<Vec<f32>>,
}

/// Whole-text token statistics by `sha256(models and arithmetic, text)`, kept in a JSON Lines
/// file that grows as texts are scored (an interrupted run loses nothing already scored).
pub struct StatsCache {
    path: PathBuf,
    model: String,
    entries: HashMap<String, TextScores>,
}

impl StatsCache {
    pub fn open(path: &Path, model: &str) -> std::io::Result<StatsCache> {
        let mut entries = HashMap::new();
        if let Ok(file) = std::fs::File::open(path) {
            for line in std::io::BufReader::new(file).lines() {
                // A line cut short by an interrupted run is skipped, not fatal.
                if let Ok(l) = serde_json::from_str::<CacheLine>(&line?) {
                    let scores = TextScores {
                        stats: l.stats,
                        hidden: l.hidden,
                    };
                    entries.insert(l.key, scores);
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

    /// The cached scores of `text`, hidden state included.
    pub fn scores(&self, text: &str) -> Option<&TextScores> {
        self.entries.get(&self.key(text))
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The cached scores of `text`, or `score`'s, which are then appended to the file.
    pub fn text_scores<E: From<std::io::Error>>(
        &mut self,
        text: &str,
        score: impl FnOnce(&str) -> Result<TextScores, E>,
    ) -> Result<TextScores, E> {
        let key = self.key(text);
        if let Some(s) = self.entries.get(&key) {
            return Ok(s.clone());
        }
        let TextScores { stats, hidden } = score(text)?;
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
            hidden: hidden.clone(),
        })
        .map_err(std::io::Error::other)?;
        writeln!(file, "{line}")?;
        let scores = TextScores { stats, hidden };
        self.entries.insert(key, scores.clone());
        Ok(scores)
    }
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
    /// At most this many labelled texts from each file (0: all).
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
            let source = f
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("")
                .to_string();
            let rows = read_labelled_jsonl(&raw).map_err(|e| {
                EvalError(format!(
                    "{} 应为 JSON Lines：{{\"text\", \"label\"}}（1 = 机器生成）：{e}",
                    f.display()
                ))
            })?;
            labelled.extend(rows.into_iter().map(|r| Labelled {
                source: source.clone(),
                ..r
            }));
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

/// The layer whose hidden states the probe reads: the middle of the 0.5B model's 24. Measured
/// on the shared data (docs/aidetect.md), the middle layers separate modern models' text best
/// and the last layer worst.
pub const PROBE_LAYER: usize = 12;

/// Reads `text` as the detector does — paragraph by paragraph (`crate::paragraphs`), each as the
/// model sees it (`crate::scoring_text`) — and returns every paragraph's tokens (offsets restart
/// in each) and, per layer of `reading.pool`, the sum of their hidden states over the text.
pub fn read_paragraphs(
    scorer: &LocalScorer,
    reading: llm::Reading,
    text: &str,
) -> Result<llm::Scored, llm::LlmError> {
    let chars: Vec<char> = text.chars().collect();
    let mut all = llm::Scored {
        tokens: vec![],
        hidden_sums: vec![],
    };
    for (s, e) in crate::paragraphs(text) {
        let piece: String = chars[s..e].iter().collect();
        let scored = scorer.read(&crate::scoring_text(&piece).0, reading, &mut |_, _| {})?;
        all.tokens.extend(scored.tokens);
        if all.hidden_sums.is_empty() {
            all.hidden_sums = scored.hidden_sums;
        } else {
            for (total, h) in all.hidden_sums.iter_mut().zip(scored.hidden_sums) {
                total.iter_mut().zip(h).for_each(|(a, b)| *a += b);
            }
        }
    }
    Ok(all)
}

/// Scores `text` as the detector reads it (`read_paragraphs`), with the observer's terms when
/// there is one, and the mean hidden state at `pool` when given.
pub fn score_text(
    scorer: &LocalScorer,
    observer: Option<&LocalScorer>,
    pool: Option<usize>,
    text: &str,
) -> Result<TextScores, llm::LlmError> {
    let layers: Vec<usize> = pool.into_iter().collect();
    let reading = llm::Reading {
        observer,
        pool: &layers,
        probe: None,
    };
    let scored = read_paragraphs(scorer, reading, text)?;
    // Offsets restart in every paragraph; the statistics take every token.
    let stats = TokenStats::of(&scored.tokens, 0, usize::MAX);
    let n = scored.tokens.len().max(1) as f32;
    let hidden = scored
        .hidden_sums
        .into_iter()
        .next()
        .map(|h| h.into_iter().map(|x| x / n).collect());
    Ok(TextScores { stats, hidden })
}

/// Scores the texts not yet in the cache, telling `progress(scored, to score)`, and returns
/// every text's scores.
fn scores_of_all(
    scorer: &LocalScorer,
    observer: Option<&LocalScorer>,
    cache: &mut StatsCache,
    texts: &[&str],
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<TextScores>, EvalError> {
    let missing = texts.iter().filter(|t| cache.scores(t).is_none()).count();
    let mut done = 0;
    let mut out = Vec::with_capacity(texts.len());
    for text in texts {
        let scores = cache.text_scores(text, |t| -> Result<TextScores, EvalError> {
            let s = score_text(scorer, observer, Some(PROBE_LAYER), t)
                .map_err(|e| EvalError(e.to_string()))?;
            done += 1;
            progress(done, missing);
            Ok(s)
        })?;
        out.push(scores);
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
    /// The features fitted (the probe's mean reading is `probe`).
    pub features: Vec<String>,
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
    /// Each generator's machine texts against every human text of the labelled data: five-fold
    /// cross-validated, and fitted without that generator's texts at all.
    pub generators: Vec<GeneratorFigures>,
    pub data_sha256: String,
    /// The same cross-validated figures from the 2023 calibration's features alone (means of
    /// the token scores and style cues; no spread, no probe, no observer), on the same texts,
    /// to show what the new features add.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<CrossValidated>,
}

/// How one generator's texts are told from human ones.
#[derive(Debug, Clone, Serialize)]
pub struct GeneratorFigures {
    pub generator: String,
    pub texts: usize,
    /// Five-fold cross-validated, against every labelled human text.
    pub cross_validated: CrossValidated,
    /// Share of its texts in the high band (cross-validated scores, operating threshold).
    pub high_band_cv: f64,
    /// Fitted on everything but this generator's texts (humans split five-fold).
    pub left_out: CrossValidated,
    pub high_band_left_out: f64,
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

/// What a calibration run fits: the 2023 features (means and style), the spread of the scores,
/// the pair's terms with an observer, and the hidden-state probe.
pub fn fit_spec(pair: bool) -> FitSpec {
    let mut features = feature_names(pair);
    features.extend(SPREAD_FEATURE_NAMES.iter().map(|s| s.to_string()));
    FitSpec {
        features,
        probe_layer: Some(PROBE_LAYER),
        l2: 1e-3,
        // The probe's 896 weights get a stronger penalty than the handful of scalar features.
        // Measured on the shared data, the figures barely depend on it (leave-one-generator-out
        // AUROC 0.969–0.979 for penalties 0.003–0.25, docs/aidetect.md).
        l2_hidden: 2e-2,
    }
}

/// One text of a calibration run: its sample, and what the figures group it by.
struct Entry {
    sample: Sample,
    generator: String,
    academic: bool,
}

/// Fits on `train` and returns the probabilities of `test` (indices into `entries`).
fn fit_and_score(entries: &[Entry], train: &[usize], test: &[usize], spec: &FitSpec) -> Vec<f64> {
    let samples: Vec<Sample> = train.iter().map(|&i| entries[i].sample.clone()).collect();
    let cal = fit_samples(&samples, spec, "cv", "", "", "cv");
    test.iter()
        .map(|&i| cal.sample_probability(&entries[i].sample))
        .collect()
}

/// Runs `jobs` on both cores (each a fit of seconds).
fn in_parallel<T: Send>(jobs: Vec<Box<dyn FnOnce() -> T + Send + '_>>) -> Vec<T> {
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .max(1);
    let mut out: Vec<Option<T>> = (0..jobs.len()).map(|_| None).collect();
    let mut jobs: Vec<(usize, Box<dyn FnOnce() -> T + Send + '_>)> =
        jobs.into_iter().enumerate().collect();
    while !jobs.is_empty() {
        let batch: Vec<_> = jobs.drain(..threads.min(jobs.len())).collect();
        std::thread::scope(|scope| {
            let handles: Vec<_> = batch
                .into_iter()
                .map(|(i, job)| (i, scope.spawn(job)))
                .collect();
            for (i, h) in handles {
                out[i] = h.join().ok();
            }
        });
    }
    out.into_iter()
        .map(|o| o.expect("a fit panicked"))
        .collect()
}

/// Folds of cross-validation, by position in the member list.
const FOLDS: usize = 5;

/// A fit to run: the probabilities of its test texts.
type FitJob<'a> = Box<dyn FnOnce() -> Vec<f64> + Send + 'a>;

/// The members in fold `fold` (`inside`) or in every other fold.
fn fold_of(members: &[usize], fold: usize, inside: bool) -> Vec<usize> {
    members
        .iter()
        .enumerate()
        .filter(|(k, _)| (k % FOLDS == fold) == inside)
        .map(|(_, &i)| i)
        .collect()
}

/// For each fold of `members`: fitted on the other folds, the probabilities of `test(fold)`.
fn per_fold(
    entries: &[Entry],
    members: &[usize],
    spec: &FitSpec,
    test: &dyn Fn(usize) -> Vec<usize>,
) -> Vec<Vec<f64>> {
    let jobs: Vec<FitJob> = (0..FOLDS)
        .map(|fold| {
            let (train, test) = (fold_of(members, fold, false), test(fold));
            Box::new(move || fit_and_score(entries, &train, &test, spec)) as FitJob
        })
        .collect();
    in_parallel(jobs)
}

/// Out-of-fold probabilities of `members` (indices into `entries`).
fn out_of_fold(entries: &[Entry], members: &[usize], spec: &FitSpec) -> Vec<f64> {
    let results = per_fold(entries, members, spec, &|fold| fold_of(members, fold, true));
    let mut scores = vec![0.0; members.len()];
    for (fold, r) in results.into_iter().enumerate() {
        let positions = (0..members.len()).filter(|k| k % FOLDS == fold);
        for (k, p) in positions.zip(r) {
            scores[k] = p;
        }
    }
    scores
}

/// Scores when `generator`'s texts are left out of fitting: its texts scored by each of five
/// fits (averaged), every other text by the fit whose fold left it out.
fn left_out_scores(
    entries: &[Entry],
    members: &[usize],
    generator: &str,
    spec: &FitSpec,
) -> Vec<f64> {
    let (held, others): (Vec<usize>, Vec<usize>) = members
        .iter()
        .partition(|&&i| entries[i].generator == generator);
    let oof = out_of_fold(entries, &others, spec);
    let per_fold = per_fold(entries, &others, spec, &|_| held.clone());
    let mut scores: HashMap<usize, f64> = others.iter().copied().zip(oof).collect();
    for (k, &i) in held.iter().enumerate() {
        let mean = per_fold.iter().map(|r| r[k]).sum::<f64>() / FOLDS as f64;
        scores.insert(i, mean);
    }
    members.iter().map(|i| scores[i]).collect()
}

/// The labelled texts of a run: at most `limit` from each file (0: all), shuffled the same way
/// every time, without repeats and without texts too short to judge.
fn labelled_for_run(mut labelled: Vec<Labelled>, limit: usize) -> Vec<Labelled> {
    labelled.retain(|r| crate::counted_chars(&r.text) >= 50);
    let mut seen = std::collections::HashSet::new();
    labelled.retain(|r| seen.insert(r.text.clone()));
    shuffle(&mut labelled, 20261122);
    if limit > 0 {
        let mut taken: HashMap<String, usize> = HashMap::new();
        labelled.retain(|r| {
            let n = taken.entry(r.source.clone()).or_default();
            *n += 1;
            *n <= limit
        });
    }
    labelled
}

/// Fits the calibration on the labelled texts plus half of the academic abstracts, picks the
/// operating thresholds from cross-validated scores of the human texts, and measures the false
/// positives on the held-out abstracts, and each generator's figures within and across
/// generators. With an observer, with the pair's terms too.
pub fn calibrate_with(
    scorer: &LocalScorer,
    observer: Option<&LocalScorer>,
    args: &CalibrateArgs,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<(Calibration, Quality), EvalError> {
    let EvalData {
        labelled,
        abstracts,
        sha256: sha,
        names,
    } = read_eval_data(&args.data)?;
    let labelled = labelled_for_run(labelled, args.limit);
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
    let scores = scores_of_all(scorer, observer, &mut cache, &texts, progress)?;
    let pair = observer.is_some();
    let spec = fit_spec(pair);
    let entry = |i: usize, spec: &FitSpec| -> Option<Entry> {
        let features = scores[i].stats.values(texts[i], &spec.features)?;
        let (machine, generator, academic) = match labelled.get(i) {
            Some(r) => (r.machine, r.generator.clone(), false),
            None => (false, HUMAN.to_string(), true),
        };
        Some(Entry {
            sample: Sample {
                features,
                hidden: scores[i].hidden.clone(),
                machine,
            },
            generator,
            academic,
        })
    };
    let train_count = labelled.len() + train_abs.len();
    let entries: Vec<Entry> = (0..train_count).filter_map(|i| entry(i, &spec)).collect();
    let held: Vec<Entry> = (train_count..texts.len())
        .filter_map(|i| entry(i, &spec))
        .collect();
    let all: Vec<usize> = (0..entries.len()).collect();
    let oof = out_of_fold(&entries, &all, &spec);
    let pick = |want: &dyn Fn(&Entry) -> bool, scores: &[f64]| -> Vec<f64> {
        entries
            .iter()
            .zip(scores)
            .filter(|(e, _)| want(e))
            .map(|(_, p)| *p)
            .collect()
    };
    let labelled_of = |scores: &[f64]| -> (Vec<f64>, Vec<bool>) {
        entries
            .iter()
            .zip(scores)
            .filter(|(e, _)| !e.academic)
            .map(|(e, p)| (*p, e.sample.machine))
            .unzip()
    };
    let (labelled_scores, labels) = labelled_of(&oof);
    let figures = CrossValidated::of(&labelled_scores, &labels);
    let academic_scores = pick(&|e| e.academic, &oof);
    // The high band: at most 1 % of the human QA answers and at most 1 % of the academic
    // abstracts reach it in cross-validation (each group on its own, so the larger one cannot
    // hide the other), and never below an even chance. The medium band: 10 % of each.
    let qa_human = pick(&|e| !e.sample.machine && !e.academic, &oof);
    let at =
        |fpr: f64| threshold_at_fpr(&qa_human, fpr).max(threshold_at_fpr(&academic_scores, fpr));
    let high = at(0.01).max(0.5);
    let medium = at(0.10).clamp(0.2, high);
    let machine_scores = pick(&|e| e.sample.machine, &oof);

    let mut generators: Vec<String> = entries
        .iter()
        .filter(|e| e.sample.machine)
        .map(|e| e.generator.clone())
        .collect();
    generators.sort();
    generators.dedup();
    let versus_humans = |generator: &str, scores: &[f64]| -> CrossValidated {
        let (s, l): (Vec<f64>, Vec<bool>) = entries
            .iter()
            .zip(scores)
            .filter(|(e, _)| !e.academic && (!e.sample.machine || e.generator == generator))
            .map(|(e, p)| (*p, e.sample.machine))
            .unzip();
        CrossValidated::of(&s, &l)
    };
    let generator_figures: Vec<GeneratorFigures> = generators
        .iter()
        .map(|g| {
            let left = left_out_scores(&entries, &all, g, &spec);
            let own = |scores: &[f64]| pick(&|e| e.sample.machine && &e.generator == g, scores);
            GeneratorFigures {
                generator: g.clone(),
                texts: own(&oof).len(),
                cross_validated: versus_humans(g, &oof),
                high_band_cv: rate_at_or_above(&own(&oof), high),
                left_out: versus_humans(g, &left),
                high_band_left_out: rate_at_or_above(&own(&left), high),
            }
        })
        .collect();
    // The 2023 calibration's features alone, on the same texts.
    let baseline = {
        let old = FitSpec {
            features: feature_names(pair),
            probe_layer: None,
            l2: 1e-3,
            l2_hidden: 0.0,
        };
        let old_entries: Vec<Entry> = (0..train_count).filter_map(|i| entry(i, &old)).collect();
        let members: Vec<usize> = (0..old_entries.len()).collect();
        let scores = out_of_fold(&old_entries, &members, &old);
        let (s, l): (Vec<f64>, Vec<bool>) = old_entries
            .iter()
            .zip(&scores)
            .filter(|(e, _)| !e.academic)
            .map(|(e, p)| (*p, e.sample.machine))
            .unzip();
        Some(CrossValidated::of(&s, &l))
    };
    let version = format!(
        "aigc-cal-4 ({model}, {arithmetic}, {names}: {} labelled + {} academic texts)",
        labelled_scores.len(),
        academic_scores.len()
    );
    let samples: Vec<Sample> = entries.iter().map(|e| e.sample.clone()).collect();
    let mut calibration = fit_samples(&samples, &spec, &model, &arithmetic, &sha, &version);
    calibration.high_threshold = high;
    calibration.medium_threshold = medium;
    let held: Vec<f64> = held
        .iter()
        .map(|e| calibration.sample_probability(&e.sample))
        .collect();
    let quality = Quality {
        labelled_texts: labelled_scores.len(),
        machine_texts: machine_scores.len(),
        academic_train: academic_scores.len(),
        academic_held_out: held.len(),
        features: calibration.features.clone(),
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
        generators: generator_figures,
        data_sha256: sha,
        baseline,
    };
    Ok((calibration, quality))
}

/// How a given calibration judges one generator's texts (or the human ones).
#[derive(Debug, Clone, Serialize)]
pub struct Judged {
    pub generator: String,
    pub texts: usize,
    /// Against every human text of the labelled data (absent for the humans themselves).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auroc: Option<f64>,
    pub median_probability: f64,
    pub high_band: f64,
    pub medium_or_high: f64,
}

/// Judges every labelled text of `args.data` (at most `args.limit` per file) and the held-out
/// abstracts with `calibration` as it stands — no fitting — per generator. On data the
/// calibration was not fitted on (another folder, a new file) these are held-out figures.
pub fn evaluate(
    scorer: &LocalScorer,
    observer: Option<&LocalScorer>,
    calibration: &Calibration,
    args: &CalibrateArgs,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<Judged>, EvalError> {
    let data = read_eval_data(&args.data)?;
    let labelled = labelled_for_run(data.labelled, args.limit);
    let (_, held_abs) = split_abstracts(data.abstracts, args.academic);
    let mut cache = StatsCache::open(&args.cache, &crate::scores_name(scorer, observer))?;
    let texts: Vec<&str> = labelled
        .iter()
        .map(|r| r.text.as_str())
        .chain(held_abs.iter().map(String::as_str))
        .collect();
    let scores = scores_of_all(scorer, observer, &mut cache, &texts, progress)?;
    let mut judged: Vec<(String, bool, f64)> = vec![];
    for (i, s) in scores.iter().enumerate() {
        let Some(features) = s.stats.values(texts[i], calibration.scored_features()) else {
            continue;
        };
        let sample = Sample {
            features,
            hidden: s.hidden.clone(),
            machine: false,
        };
        let (generator, machine) = match labelled.get(i) {
            Some(r) => (r.generator.clone(), r.machine),
            None => ("academic abstracts (held out)".to_string(), false),
        };
        judged.push((generator, machine, calibration.sample_probability(&sample)));
    }
    let mut generators: Vec<String> = judged.iter().map(|j| j.0.clone()).collect();
    generators.sort();
    generators.dedup();
    let human: Vec<f64> = judged
        .iter()
        .filter(|j| j.0 == HUMAN)
        .map(|j| j.2)
        .collect();
    Ok(generators
        .into_iter()
        .map(|g| {
            let own: Vec<f64> = judged.iter().filter(|j| j.0 == g).map(|j| j.2).collect();
            let machine = judged.iter().any(|j| j.0 == g && j.1);
            let auroc = (machine && !human.is_empty()).then(|| {
                let scores: Vec<f64> = own.iter().chain(&human).copied().collect();
                let labels: Vec<bool> = own
                    .iter()
                    .map(|_| true)
                    .chain(human.iter().map(|_| false))
                    .collect();
                auroc(&scores, &labels)
            });
            let mut sorted = own.clone();
            sorted.sort_by(|a, b| a.total_cmp(b));
            Judged {
                generator: g,
                texts: own.len(),
                auroc,
                median_probability: sorted.get(sorted.len() / 2).copied().unwrap_or(0.0),
                high_band: rate_at_or_above(&own, calibration.high_threshold),
                medium_or_high: rate_at_or_above(&own, calibration.medium_threshold),
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generators_are_read_and_each_file_is_capped_without_repeats() {
        let raw = concat!(
            "{\"text\":\"人工回答一，足够长的文字内容用于检测与统计分析，人工回答一，足够长的文字内容用于检测与统计分析，人工回答一。\",\"label\":0}\n",
            "{\"text\":\"机器回答一，足够长的文字内容用于检测与统计分析，机器回答一，足够长的文字内容用于检测与统计分析，机器回答一。\",\"label\":1}\n",
            "{\"text\":\"机器回答二，足够长的文字内容用于检测与统计分析，机器回答二，足够长的文字内容用于检测与统计分析，机器回答二。\",\"label\":1,\"model\":\"DeepSeek R\"}\n",
            "{\"text\":\"机器回答二，足够长的文字内容用于检测与统计分析，机器回答二，足够长的文字内容用于检测与统计分析，机器回答二。\",\"label\":1,\"model\":\"DeepSeek R\"}\n",
            "{\"text\":\"太短\",\"label\":0,\"model\":\"human\"}\n",
        );
        let rows = read_labelled_jsonl(raw).unwrap();
        let generators: Vec<&str> = rows.iter().map(|r| r.generator.as_str()).collect();
        assert_eq!(
            generators,
            [HUMAN, HC3_GENERATOR, "DeepSeek R", "DeepSeek R", HUMAN]
        );
        let tagged = |source: &str| -> Vec<Labelled> {
            rows.iter()
                .cloned()
                .map(|r| Labelled {
                    source: source.into(),
                    ..r
                })
                .collect()
        };
        let mut both = tagged("a");
        both.extend(tagged("b").into_iter().map(|r| Labelled {
            text: format!("{}（另一文件）", r.text),
            ..r
        }));
        // The repeat and the short text go; then at most two from each file.
        let run = labelled_for_run(both.clone(), 0);
        assert_eq!(run.len(), 6);
        let capped = labelled_for_run(both, 2);
        assert_eq!(capped.len(), 4);
        assert_eq!(capped.iter().filter(|r| r.source == "a").count(), 2);
    }

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
            spread: None,
            sum_probe: None,
        };
        let scores = TextScores {
            stats,
            hidden: Some(vec![0.5, -0.25]),
        };
        let mut cache = StatsCache::open(&path, "m").unwrap();
        let got: Result<_, std::io::Error> = cache.text_scores("文本", |_| Ok(scores.clone()));
        assert_eq!(got.unwrap(), scores);
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"key\":\"x")
            .unwrap();
        let cache = StatsCache::open(&path, "m").unwrap();
        assert_eq!(cache.scores("文本"), Some(&scores));
        assert_eq!(
            StatsCache::open(&path, "other").unwrap().scores("文本"),
            None
        );
        std::fs::remove_dir_all(dir).unwrap();
    }
}
