//! Logistic calibration: standardised features → probability, fitted by gradient descent with
//! a small L2 penalty. The fitted numbers are committed with the hash of the data they came from.

use crate::Band;
use crate::features::{FEATURE_NAMES, Features, feature_names};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// Printed on every report, e.g. `aigc-cal-1 (qwen2.5-0.5b, hc3plus-zh-val-qa, 600 texts)`.
    pub version: String,
    /// The scoring model it was fitted with; scores from another model do not fit it.
    pub model: String,
    /// The models' arithmetic (`llm::Arithmetic::name`): scores from the other one do not fit
    /// it either. Files written before it was recorded were fitted with f32.
    #[serde(default = "f32_arithmetic")]
    pub arithmetic: String,
    /// SHA-256 of the data file it was fitted on.
    pub data_sha256: String,
    pub samples: usize,
    pub features: Vec<String>,
    pub mean: Vec<f64>,
    pub std: Vec<f64>,
    pub weights: Vec<f64>,
    pub bias: f64,
    pub high_threshold: f64,
    pub medium_threshold: f64,
}

fn f32_arithmetic() -> String {
    "f32".to_string()
}

fn sigmoid(z: f64) -> f64 {
    1.0 / (1.0 + (-z).exp())
}

impl Calibration {
    /// Whether it was fitted on a pair of models' features (Binoculars).
    pub fn is_pair(&self) -> bool {
        self.features.len() > FEATURE_NAMES.len()
    }

    /// The probability for features of this calibration's kind (`features_of(…, is_pair())`).
    pub fn probability(&self, f: &[f64]) -> f64 {
        let z: f64 = f
            .iter()
            .zip(&self.mean)
            .zip(&self.std)
            .zip(&self.weights)
            .map(|(((x, m), s), w)| w * (x - m) / s)
            .sum::<f64>()
            + self.bias;
        sigmoid(z)
    }

    pub fn band(&self, p: f64) -> Band {
        if p >= self.high_threshold {
            Band::High
        } else if p >= self.medium_threshold {
            Band::Medium
        } else {
            Band::Low
        }
    }
}

/// Fits weights on `(features, is_machine)` samples.
pub fn fit(
    samples: &[(Features, bool)],
    model: &str,
    arithmetic: &str,
    data_sha256: &str,
    version: &str,
) -> Calibration {
    let k = samples.first().map_or(FEATURE_NAMES.len(), |s| s.0.len());
    let n = samples.len().max(1) as f64;
    let mean: Vec<f64> = (0..k)
        .map(|j| samples.iter().map(|(f, _)| f[j]).sum::<f64>() / n)
        .collect();
    let std: Vec<f64> = (0..k)
        .map(|j| {
            let v = samples
                .iter()
                .map(|(f, _)| (f[j] - mean[j]).powi(2))
                .sum::<f64>()
                / n;
            v.sqrt().max(1e-9)
        })
        .collect();
    let xs: Vec<Vec<f64>> = samples
        .iter()
        .map(|(f, _)| (0..k).map(|j| (f[j] - mean[j]) / std[j]).collect())
        .collect();
    let (mut w, mut b) = (vec![0.0; k], 0.0);
    let (rate, l2) = (0.5, 1e-3);
    for _ in 0..3000 {
        let mut gw = vec![0.0; k];
        let mut gb = 0.0;
        for (x, (_, y)) in xs.iter().zip(samples) {
            let p = sigmoid(x.iter().zip(&w).map(|(a, b)| a * b).sum::<f64>() + b);
            let err = p - if *y { 1.0 } else { 0.0 };
            for j in 0..k {
                gw[j] += err * x[j];
            }
            gb += err;
        }
        for j in 0..k {
            w[j] -= rate * (gw[j] / n + l2 * w[j]);
        }
        b -= rate * gb / n;
    }
    Calibration {
        version: version.to_string(),
        model: model.to_string(),
        arithmetic: arithmetic.to_string(),
        data_sha256: data_sha256.to_string(),
        samples: samples.len(),
        features: feature_names(k > FEATURE_NAMES.len()),
        mean,
        std,
        weights: w,
        bias: b,
        high_threshold: 0.7,
        medium_threshold: 0.4,
    }
}

/// Scores of the positive and of the negative samples.
fn by_label(scores: &[f64], labels: &[bool]) -> (Vec<f64>, Vec<f64>) {
    let mut pos = Vec::new();
    let mut neg = Vec::new();
    for (&s, &l) in scores.iter().zip(labels) {
        if l { pos.push(s) } else { neg.push(s) }
    }
    (pos, neg)
}

/// Area under the ROC curve of `scores` for `labels` (ties count half).
pub fn auroc(scores: &[f64], labels: &[bool]) -> f64 {
    let (pos, neg) = by_label(scores, labels);
    if pos.is_empty() || neg.is_empty() {
        return 0.5;
    }
    let mut wins = 0.0;
    for p in &pos {
        for q in &neg {
            wins += if p > q {
                1.0
            } else if p == q {
                0.5
            } else {
                0.0
            };
        }
    }
    wins / (pos.len() * neg.len()) as f64
}

/// True-positive rate at the threshold that keeps the false-positive rate at or below `fpr`.
pub fn tpr_at_fpr(scores: &[f64], labels: &[bool], fpr: f64) -> f64 {
    let (pos, mut neg) = by_label(scores, labels);
    neg.sort_by(|a, b| b.total_cmp(a));
    let allowed = (fpr * neg.len() as f64).floor() as usize;
    let threshold = neg.get(allowed).copied().unwrap_or(f64::NEG_INFINITY);
    if pos.is_empty() {
        return 0.0;
    }
    pos.iter().filter(|&&s| s > threshold).count() as f64 / pos.len() as f64
}
