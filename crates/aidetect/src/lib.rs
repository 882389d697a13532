//! aidetect (AIGC检测): how machine-like a text reads to a local language model, turned into
//! calibrated probabilities. Per token the model gives log-probability, rank, entropy and the
//! variance of log-probability; per paragraph we take the mean log-probability (−log perplexity),
//! Fast-DetectGPT's analytic sampling discrepancy, the mean log-rank and entropy, plus style
//! features (sentence-length spread, connectives, template phrases). A logistic calibration,
//! fitted on labelled data by `wenjian detect calibrate`, maps them to a probability. Knows nothing
//! of HTTP or SQL.

pub mod calibration;
pub mod eval;
pub mod features;

pub use calibration::{Calibration, fit};
pub use features::{FEATURE_NAMES, Features, TokenStats, features_of, style_features};

use llm::{LlmError, LocalScorer, ScoredToken};
use serde::{Deserialize, Serialize};

/// Below this many counted characters a figure would mean little: the report says so instead.
pub const MIN_CHARS: usize = 200;
/// Paragraphs shorter than this are judged together with the next one.
pub const MIN_PARAGRAPH_CHARS: usize = 60;

/// What a report says about detectors in general, on every report.
pub const LIMITS_NOTE: &str = "AIGC 检测给出的是统计估计，不是定论：它衡量文本在语言模型看来有多“可预测”。正式、规范或简单的人工写作（如公文、摘要、教材式表述）也可能显得像机器生成，而经过改写的机器文本可能被漏判。请结合写作过程判断，不要仅凭此结果下结论。";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Band {
    High,
    Medium,
    Low,
}

impl Band {
    pub fn label(self) -> &'static str {
        match self {
            Band::High => "高度疑似",
            Band::Medium => "中度疑似",
            Band::Low => "低风险",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParagraphResult {
    /// Character offsets into the text.
    pub start: usize,
    pub end: usize,
    pub chars: usize,
    pub probability: f64,
    pub band: Band,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Detection {
    /// Probability that the whole text is machine-written, 0–1; `None` when the text is too short.
    pub probability: Option<f64>,
    /// Percent of counted characters in paragraphs judged machine-written (band high).
    pub ai_rate: Option<f64>,
    pub paragraphs: Vec<ParagraphResult>,
    /// Counted characters (non-whitespace).
    pub chars: usize,
    /// `文本过短，结果不可靠` and the like, when there is no figure.
    pub notice: Option<String>,
    pub model: String,
    pub criterion: String,
    pub calibration: String,
    /// Probability from which a paragraph is "high" and from which it is "medium".
    pub high_threshold: f64,
    pub medium_threshold: f64,
    pub note: String,
}

pub fn counted_chars(text: &str) -> usize {
    text.chars().filter(|c| !c.is_whitespace()).count()
}

/// Paragraph ranges (characters) with enough text each: lines, short ones joined to the next.
pub fn paragraphs(text: &str) -> Vec<(usize, usize)> {
    let chars: Vec<char> = text.chars().collect();
    let mut out: Vec<(usize, usize)> = vec![];
    let mut start = 0;
    let mut pending: Option<usize> = None;
    for i in 0..=chars.len() {
        if i < chars.len() && chars[i] != '\n' {
            continue;
        }
        let (s, e) = trim(&chars, start, i);
        start = i + 1;
        if e == s {
            continue;
        }
        let from = pending.unwrap_or(s);
        let size = chars[from..e].iter().filter(|c| !c.is_whitespace()).count();
        if size >= MIN_PARAGRAPH_CHARS {
            out.push((from, e));
            pending = None;
        } else if i < chars.len() {
            pending = Some(from);
        } else if let Some(last) = out.last_mut() {
            // A short tail joins the paragraph before it.
            last.1 = e;
        } else {
            out.push((from, e));
        }
    }
    out
}

fn trim(chars: &[char], mut s: usize, mut e: usize) -> (usize, usize) {
    while s < e && chars[s].is_whitespace() {
        s += 1;
    }
    while e > s && chars[e - 1].is_whitespace() {
        e -= 1;
    }
    (s, e)
}

/// Scores `text` with `scorer` and judges it with `calibration`.
pub fn detect(
    text: &str,
    scorer: &LocalScorer,
    calibration: &Calibration,
) -> Result<Detection, LlmError> {
    detect_reporting(text, scorer, calibration, &mut |_, _| {})
}

/// `detect`, telling `progress(tokens scored, tokens in all)` as scoring goes.
pub fn detect_reporting(
    text: &str,
    scorer: &LocalScorer,
    calibration: &Calibration,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Detection, LlmError> {
    let chars = counted_chars(text);
    let mut detection = Detection {
        probability: None,
        ai_rate: None,
        paragraphs: vec![],
        chars,
        notice: None,
        model: scorer.name.clone(),
        criterion: "Fast-DetectGPT 解析判别量 + 困惑度 + 文体特征（逻辑回归校准）".into(),
        calibration: calibration.version.clone(),
        high_threshold: calibration.high_threshold,
        medium_threshold: calibration.medium_threshold,
        note: LIMITS_NOTE.into(),
    };
    if chars < MIN_CHARS {
        detection.notice = Some(format!(
            "文本过短，结果不可靠（不少于 {MIN_CHARS} 字时才给出数值）"
        ));
        return Ok(detection);
    }
    // Each paragraph is scored on its own, as the calibration texts were: with the paragraphs
    // before it as context a paragraph reads more predictable than it is, and human prose
    // would be flagged for its neighbours.
    let chars: Vec<char> = text.chars().collect();
    let ranges = paragraphs(text);
    let total: usize = ranges.iter().map(|(s, e)| e - s).sum();
    let mut done = 0;
    let mut tokens = vec![];
    for (s, e) in ranges {
        let piece: String = chars[s..e].iter().collect();
        // Token offsets are characters of the piece: shift them into the text.
        for mut t in scorer.score(&piece, None)? {
            t.start += s;
            t.end += s;
            tokens.push(t);
        }
        done += e - s;
        progress(done, total);
    }
    Ok(judge(text, &tokens, calibration, detection))
}

/// The calibrated probability that `text`, scored on its own as one paragraph, is
/// machine-written; `None` when it has too few tokens to judge. The rewrite loop measures each
/// paragraph before and after with this.
pub fn paragraph_probability(
    text: &str,
    scorer: &LocalScorer,
    calibration: &Calibration,
) -> Result<Option<f64>, LlmError> {
    let tokens = scorer.score(text, None)?;
    Ok(features_of(text, &tokens, 0, text.chars().count()).map(|f| calibration.probability(&f)))
}

/// The figures from scored tokens (separate from scoring so it can be tested without a model).
pub fn judge(
    text: &str,
    tokens: &[ScoredToken],
    calibration: &Calibration,
    mut detection: Detection,
) -> Detection {
    let chars: Vec<char> = text.chars().collect();
    let whole = features_of(text, tokens, 0, chars.len());
    detection.probability = whole.map(|f| calibration.probability(&f));
    let mut ai_chars = 0;
    for (s, e) in paragraphs(text) {
        let Some(f) = features_of(text, tokens, s, e) else {
            continue;
        };
        let p = calibration.probability(&f);
        let band = calibration.band(p);
        let n = counted_chars(&chars[s..e].iter().collect::<String>());
        if band == Band::High {
            ai_chars += n;
        }
        detection.paragraphs.push(ParagraphResult {
            start: s,
            end: e,
            chars: n,
            probability: p,
            band,
        });
    }
    detection.ai_rate = Some(if detection.chars == 0 {
        0.0
    } else {
        ai_chars as f64 * 100.0 / detection.chars as f64
    });
    detection
}

/// The calibration shipped with this build (fitted by `wenjian detect calibrate`).
pub fn builtin_calibration() -> Calibration {
    serde_json::from_str(include_str!("../calibration/qwen2.5-0.5b.json"))
        .expect("the shipped calibration is valid JSON")
}
