//! Logistic calibration: standardised features → probability, fitted by gradient descent with
//! a small L2 penalty. The fitted numbers are committed with the hash of the data they came from.

use crate::Band;
use crate::features::{FEATURE_NAMES, Features, PROBE_FEATURE, feature_names};
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
    /// The hidden-state probe whose mean reading is the feature `probe` (the last one), fitted
    /// with the calibration: its weights are the calibration's own on the standardised mean
    /// hidden state, divided by the standard deviations, so that a token's reading `weights · h`
    /// averaged over a stretch is the stretch's contribution (the standardising mean is the
    /// feature's `mean`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<llm::Probe>,
}

/// One training text: its named features, its mean hidden state at the probe layer (when a
/// probe is fitted) and whether it is machine-written.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub features: Features,
    pub hidden: Option<Vec<f32>>,
    pub machine: bool,
}

/// What to fit: feature names, and the probe's layer with the weight of its penalty.
#[derive(Debug, Clone, PartialEq)]
pub struct FitSpec {
    pub features: Vec<String>,
    pub probe_layer: Option<usize>,
    /// L2 penalty of the scalar features and of the hidden-state weights (standardised units).
    pub l2: f64,
    pub l2_hidden: f64,
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
        self.features.iter().any(|f| f == "binoculars")
    }

    /// The features it reads from scores, without the probe's (which `Sample`s give as a
    /// hidden state and scored tokens as readings).
    pub fn scored_features(&self) -> &[String] {
        match self.probe {
            Some(_) => &self.features[..self.features.len() - 1],
            None => &self.features,
        }
    }

    /// The probability of a training sample: its features, and the probe's reading of its
    /// mean hidden state.
    pub fn sample_probability(&self, s: &Sample) -> f64 {
        match (&self.probe, &s.hidden) {
            (Some(p), Some(h)) => {
                let reading: f64 = p
                    .weights
                    .iter()
                    .zip(h)
                    .map(|(w, x)| (*w as f64) * (*x as f64))
                    .sum();
                let mut f = s.features.clone();
                f.push(reading);
                self.probability(&f)
            }
            _ => self.probability(&s.features),
        }
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

/// Fits a logistic calibration (and the probe, when `spec` has one) on `samples` by
/// accelerated gradient descent on the standardised inputs.
pub fn fit_samples(
    samples: &[Sample],
    spec: &FitSpec,
    model: &str,
    arithmetic: &str,
    data_sha256: &str,
    version: &str,
) -> Calibration {
    let k = spec.features.len();
    let hidden_dim = match spec.probe_layer {
        Some(_) => samples
            .iter()
            .find_map(|s| s.hidden.as_ref())
            .map_or(0, |h| h.len()),
        None => 0,
    };
    let d = k + hidden_dim;
    let rows: Vec<Vec<f64>> = samples
        .iter()
        .map(|s| {
            let mut r = s.features.clone();
            if hidden_dim > 0 {
                match &s.hidden {
                    Some(h) => r.extend(h.iter().map(|&x| x as f64)),
                    None => r.extend(std::iter::repeat_n(0.0, hidden_dim)),
                }
            }
            r
        })
        .collect();
    let n = rows.len().max(1) as f64;
    let mean: Vec<f64> = (0..d)
        .map(|j| rows.iter().map(|r| r[j]).sum::<f64>() / n)
        .collect();
    let std: Vec<f64> = (0..d)
        .map(|j| {
            let v = rows.iter().map(|r| (r[j] - mean[j]).powi(2)).sum::<f64>() / n;
            v.sqrt().max(1e-9)
        })
        .collect();
    let xs: Vec<Vec<f64>> = rows
        .iter()
        .map(|r| (0..d).map(|j| (r[j] - mean[j]) / std[j]).collect())
        .collect();
    let ys: Vec<f64> = samples
        .iter()
        .map(|s| if s.machine { 1.0 } else { 0.0 })
        .collect();
    let penalty: Vec<f64> = (0..d)
        .map(|j| if j < k { spec.l2 } else { spec.l2_hidden })
        .collect();
    let (w, b) = logistic_regression(&xs, &ys, &penalty);
    let mut calibration = Calibration {
        version: version.to_string(),
        model: model.to_string(),
        arithmetic: arithmetic.to_string(),
        data_sha256: data_sha256.to_string(),
        samples: samples.len(),
        features: spec.features.clone(),
        mean: mean[..k].to_vec(),
        std: std[..k].to_vec(),
        weights: w[..k].to_vec(),
        bias: b,
        high_threshold: 0.7,
        medium_threshold: 0.4,
        probe: None,
    };
    if let (Some(layer), true) = (spec.probe_layer, hidden_dim > 0) {
        let weights: Vec<f32> = (k..d).map(|j| (w[j] / std[j]) as f32).collect();
        let centre: f64 = (k..d).map(|j| w[j] / std[j] * mean[j]).sum();
        calibration.features.push(PROBE_FEATURE.to_string());
        calibration.mean.push(centre);
        calibration.std.push(1.0);
        calibration.weights.push(1.0);
        calibration.probe = Some(llm::Probe { layer, weights });
    }
    calibration
}

/// Weights and bias minimising the mean logistic loss plus `penalty[j] / 2 · w[j]²`: Nesterov's
/// accelerated gradient with the step from the largest eigenvalue of the inputs' second moment
/// (hidden-state dimensions are strongly correlated, so a fixed step would diverge).
fn logistic_regression(xs: &[Vec<f64>], ys: &[f64], penalty: &[f64]) -> (Vec<f64>, f64) {
    let d = penalty.len();
    let n = xs.len().max(1) as f64;
    // Power iteration for the largest eigenvalue of XᵀX / n (the bias column adds at most 1).
    let mut v = vec![1.0 / (d.max(1) as f64).sqrt(); d];
    let mut top = 1.0;
    for _ in 0..30 {
        let mut next = vec![0.0; d];
        for x in xs {
            let dot: f64 = x.iter().zip(&v).map(|(a, b)| a * b).sum();
            for (o, a) in next.iter_mut().zip(x) {
                *o += dot * a / n;
            }
        }
        let norm = next.iter().map(|a| a * a).sum::<f64>().sqrt();
        if norm < 1e-12 {
            break;
        }
        top = norm;
        v = next.into_iter().map(|a| a / norm).collect();
    }
    let max_penalty = penalty.iter().cloned().fold(0.0, f64::max);
    let step = 1.0 / ((top + 1.0) / 4.0 + max_penalty);
    let (mut w, mut b) = (vec![0.0; d], 0.0);
    let (mut w_prev, mut b_prev) = (w.clone(), b);
    for it in 0..2000 {
        // Look ahead along the momentum, then step from there.
        let momentum = it as f64 / (it as f64 + 3.0);
        let wl: Vec<f64> = w
            .iter()
            .zip(&w_prev)
            .map(|(a, p)| a + momentum * (a - p))
            .collect();
        let bl = b + momentum * (b - b_prev);
        let mut gw = vec![0.0; d];
        let mut gb = 0.0;
        for (x, y) in xs.iter().zip(ys) {
            let z: f64 = x.iter().zip(&wl).map(|(a, c)| a * c).sum::<f64>() + bl;
            let err = sigmoid(z) - y;
            for (g, a) in gw.iter_mut().zip(x) {
                *g += err * a;
            }
            gb += err;
        }
        w_prev = w;
        b_prev = b;
        w = (0..d)
            .map(|j| wl[j] - step * (gw[j] / n + penalty[j] * wl[j]))
            .collect();
        b = bl - step * gb / n;
    }
    (w, b)
}

/// Fits weights on `(features, is_machine)` samples of the 2023 kind: the seven features of one
/// model, or ten with a pair; no probe.
pub fn fit(
    samples: &[(Features, bool)],
    model: &str,
    arithmetic: &str,
    data_sha256: &str,
    version: &str,
) -> Calibration {
    let k = samples.first().map_or(FEATURE_NAMES.len(), |s| s.0.len());
    let spec = FitSpec {
        features: feature_names(k > FEATURE_NAMES.len()),
        probe_layer: None,
        l2: 1e-3,
        l2_hidden: 0.0,
    };
    let samples: Vec<Sample> = samples
        .iter()
        .map(|(features, machine)| Sample {
            features: features.clone(),
            hidden: None,
            machine: *machine,
        })
        .collect();
    fit_samples(&samples, &spec, model, arithmetic, data_sha256, version)
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
