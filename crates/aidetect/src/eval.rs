//! Evaluation data, the scoring cache and the cross-validated figures behind
//! `wenjian detect calibrate` and the quality benchmark. Scoring a text with the language model
//! is the slow part (seconds per text on two cores), so the model's statistics of every text are
//! cached by the hash of model and text; features and calibration can then change freely.

use crate::calibration::{Calibration, fit};
use crate::features::{Features, TokenStats};
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

/// Whole-text token statistics by `sha256(model, text)`, kept in a JSON Lines file that grows as
/// texts are scored (an interrupted run loses nothing already scored).
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
            .map(|(_, s)| *s)
            .collect();
        let cal: Calibration = fit(&train, "cv", "", "cv");
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
