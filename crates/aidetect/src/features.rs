//! Features of a stretch of text: the language model's view of its tokens and a few style cues.

use llm::ScoredToken;
use serde::{Deserialize, Serialize};

pub const FEATURE_NAMES: [&str; 7] = [
    "mean_logprob",
    "mean_entropy",
    "fast_detectgpt",
    "mean_log_rank",
    "sentence_length_cv",
    "connectives_per_100",
    "templates_per_100",
];

/// What a pair of models adds (Binoculars): the scoring model's prediction read by a second,
/// larger model of the same family.
pub const PAIR_FEATURE_NAMES: [&str; 3] =
    ["binoculars", "observer_mean_logprob", "mean_logprob_gain"];

/// Statistics of the distribution of token scores beyond their means: how much log p and log
/// rank vary, how often the text takes the model's first or top-ten choice, and how much the
/// mean log p of 16-token windows varies along the text (burstiness). Modern chat models write
/// text whose means look human while its spread does not.
pub const SPREAD_FEATURE_NAMES: [&str; 5] = [
    "std_logprob",
    "std_log_rank",
    "top1_rate",
    "top10_rate",
    "window_logprob_std",
];

/// The hidden-state probe's mean reading (`llm::Probe`), a feature of calibrations with a probe.
pub const PROBE_FEATURE: &str = "probe";

/// Tokens per window of `window_logprob_std`.
pub const BURST_WINDOW: usize = 16;

/// The names of the features a calibration uses: the seven of one model, or ten with a pair.
pub fn feature_names(pair: bool) -> Vec<String> {
    let extra: &[&str] = if pair { &PAIR_FEATURE_NAMES } else { &[] };
    FEATURE_NAMES
        .iter()
        .chain(extra)
        .map(|s| s.to_string())
        .collect()
}

/// One value per name of `feature_names`.
pub type Features = Vec<f64>;

/// Fewer scored tokens than this give no features.
pub const MIN_TOKENS: usize = 8;

/// Connectives that machine-written Chinese leans on.
const CONNECTIVES: &[&str] = &[
    "首先",
    "其次",
    "再次",
    "最后",
    "此外",
    "另外",
    "同时",
    "因此",
    "所以",
    "然而",
    "但是",
    "总之",
    "综上所述",
    "总的来说",
    "总而言之",
    "一方面",
    "另一方面",
    "例如",
    "比如",
    "而且",
    "并且",
];

/// Stock phrases of assistant-style answers.
const TEMPLATES: &[&str] = &[
    "需要注意的是",
    "值得注意的是",
    "具体来说",
    "具体而言",
    "建议您",
    "如果您",
    "希望对您有所帮助",
    "可能会",
    "有助于",
    "起到了重要作用",
    "具有重要意义",
    "在一定程度上",
    "不仅",
    "以下是",
    "这取决于",
];

fn count(text: &str, needles: &[&str]) -> usize {
    needles.iter().map(|n| text.matches(n).count()).sum()
}

/// Sentence-length spread and phrase densities of `text`.
pub fn style_features(text: &str) -> [f64; 3] {
    let lengths: Vec<f64> = text
        .split(['。', '！', '？', '!', '?', '\n', '；'])
        .map(|s| s.chars().filter(|c| !c.is_whitespace()).count() as f64)
        .filter(|&n| n > 0.0)
        .collect();
    let cv = if lengths.len() < 2 {
        0.0
    } else {
        let mean = lengths.iter().sum::<f64>() / lengths.len() as f64;
        let var = lengths.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / lengths.len() as f64;
        var.sqrt() / mean.max(1.0)
    };
    let chars = crate::counted_chars(text).max(1) as f64;
    [
        cv,
        count(text, CONNECTIVES) as f64 * 100.0 / chars,
        count(text, TEMPLATES) as f64 * 100.0 / chars,
    ]
}

/// Sums of the model's per-token figures over a stretch of text. Kept rather than the features
/// themselves so that a feature can change without scoring the texts again (the calibration cache
/// stores these).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TokenStats {
    pub tokens: usize,
    pub sum_logprob: f64,
    pub sum_entropy: f64,
    pub sum_variance: f64,
    pub sum_log_rank: f64,
    /// Present when the tokens were scored with a second (observer) model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pair: Option<PairStats>,
    /// The spread of the scores (`SPREAD_FEATURE_NAMES`); absent in statistics cached before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<SpreadStats>,
    /// Σ of the probe's readings, when the tokens were scored with a probe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sum_probe: Option<f64>,
}

/// Sums behind `SPREAD_FEATURE_NAMES`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct SpreadStats {
    pub sum_logprob_sq: f64,
    pub sum_log_rank_sq: f64,
    pub top1: usize,
    pub top10: usize,
    /// Complete windows of `BURST_WINDOW` tokens, and the sums of their mean log p and its square.
    pub windows: usize,
    pub sum_window_mean: f64,
    pub sum_window_mean_sq: f64,
}

/// Sums of the pair terms over a stretch of text.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PairStats {
    /// Σ over tokens of −Σ_w p(w)·log q(w): the observer q read under the scorer's distribution p.
    pub sum_cross_entropy: f64,
    /// Σ over tokens of the observer's log q of the token that followed.
    pub sum_observer_logprob: f64,
}

impl TokenStats {
    /// The statistics of the tokens that begin in characters `[start, end)`.
    pub fn of(tokens: &[ScoredToken], start: usize, end: usize) -> TokenStats {
        let mut s = TokenStats {
            tokens: 0,
            sum_logprob: 0.0,
            sum_entropy: 0.0,
            sum_variance: 0.0,
            sum_log_rank: 0.0,
            pair: None,
            spread: None,
            sum_probe: None,
        };
        let mut pair = PairStats {
            sum_cross_entropy: 0.0,
            sum_observer_logprob: 0.0,
        };
        let mut paired = true;
        let mut spread = SpreadStats::default();
        let (mut probe_sum, mut probed) = (0.0, true);
        let mut window = 0.0;
        for t in tokens.iter().filter(|t| t.start >= start && t.start < end) {
            s.tokens += 1;
            let logprob = t.logprob as f64;
            let log_rank = (t.rank.max(1) as f64).ln();
            s.sum_logprob += logprob;
            s.sum_entropy += t.entropy as f64;
            s.sum_variance += t.logprob_variance as f64;
            s.sum_log_rank += log_rank;
            spread.sum_logprob_sq += logprob * logprob;
            spread.sum_log_rank_sq += log_rank * log_rank;
            spread.top1 += usize::from(t.rank <= 1);
            spread.top10 += usize::from(t.rank <= 10);
            window += logprob;
            if s.tokens.is_multiple_of(BURST_WINDOW) {
                let mean = window / BURST_WINDOW as f64;
                spread.windows += 1;
                spread.sum_window_mean += mean;
                spread.sum_window_mean_sq += mean * mean;
                window = 0.0;
            }
            match t.probe {
                Some(p) => probe_sum += p as f64,
                None => probed = false,
            }
            match (t.cross_entropy, t.observer_logprob) {
                (Some(x), Some(q)) => {
                    pair.sum_cross_entropy += x as f64;
                    pair.sum_observer_logprob += q as f64;
                }
                _ => paired = false,
            }
        }
        s.pair = (paired && s.tokens > 0).then_some(pair);
        s.spread = Some(spread);
        s.sum_probe = (probed && s.tokens > 0).then_some(probe_sum);
        s
    }

    /// The values of the named features (`Calibration::features`), or `None` when there are too
    /// few tokens or a name needs statistics these were not scored with (the observer, the
    /// probe, or the spread of an old cache line) or is unknown.
    pub fn values(&self, text: &str, names: &[String]) -> Option<Features> {
        if self.tokens < MIN_TOKENS {
            return None;
        }
        let n = self.tokens as f64;
        let legacy = self.features(text, self.pair.is_some())?;
        let spread = |f: &dyn Fn(&SpreadStats) -> f64| self.spread.as_ref().map(f);
        let std = |sum: f64, sum_sq: f64, count: f64| {
            (sum_sq / count - (sum / count).powi(2)).max(0.0).sqrt()
        };
        names
            .iter()
            .map(|name| {
                if let Some(i) = FEATURE_NAMES
                    .iter()
                    .chain(PAIR_FEATURE_NAMES.iter())
                    .position(|f| f == name)
                {
                    return legacy.get(i).copied();
                }
                match name.as_str() {
                    "std_logprob" => spread(&|s| std(self.sum_logprob, s.sum_logprob_sq, n)),
                    "std_log_rank" => spread(&|s| std(self.sum_log_rank, s.sum_log_rank_sq, n)),
                    "top1_rate" => spread(&|s| s.top1 as f64 / n),
                    "top10_rate" => spread(&|s| s.top10 as f64 / n),
                    // Fewer than two windows: no spread along the text to measure.
                    "window_logprob_std" => spread(&|s| {
                        if s.windows < 2 {
                            0.0
                        } else {
                            let w = s.windows as f64;
                            std(s.sum_window_mean, s.sum_window_mean_sq, w)
                        }
                    }),
                    PROBE_FEATURE => self.sum_probe.map(|p| p / n),
                    _ => None,
                }
            })
            .collect()
    }

    /// The features of a stretch with these statistics and this text: the seven of one model,
    /// and with `pair` the three of the pair after them (`None` when the stretch was scored
    /// without the observer).
    pub fn features(&self, text: &str, pair: bool) -> Option<Features> {
        if self.tokens < MIN_TOKENS {
            return None;
        }
        let n = self.tokens as f64;
        // Fast-DetectGPT with the scoring model as its own sampler: how far the text's
        // log-likelihood sits above what the model expects of its own samples, in standard
        // deviations — per token, so that paragraphs of any length are on one scale.
        let discrepancy =
            (self.sum_logprob + self.sum_entropy) / self.sum_variance.max(1e-6).sqrt() / n.sqrt();
        let [cv, connectives, templates] = style_features(text);
        let mut features = vec![
            self.sum_logprob / n,
            self.sum_entropy / n,
            discrepancy,
            self.sum_log_rank / n,
            cv,
            connectives,
            templates,
        ];
        if pair {
            let p = self.pair?;
            // Binoculars: the observer's log-perplexity of the text over how surprised the
            // observer is, on average, by what the scorer would write — machine text is
            // unsurprising relative to what a model expects of another model.
            let observer_logppl = -p.sum_observer_logprob / n;
            let cross = p.sum_cross_entropy / n;
            features.extend([
                observer_logppl / cross.max(1e-6),
                p.sum_observer_logprob / n,
                (p.sum_observer_logprob - self.sum_logprob) / n,
            ]);
        }
        Some(features)
    }
}

/// The named features of characters `[start, end)` of `text`, from the tokens that begin there.
pub fn features_of(
    text: &str,
    tokens: &[ScoredToken],
    start: usize,
    end: usize,
    names: &[String],
) -> Option<Features> {
    let slice: String = text.chars().skip(start).take(end - start).collect();
    TokenStats::of(tokens, start, end).values(&slice, names)
}
