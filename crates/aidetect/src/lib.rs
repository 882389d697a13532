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

pub use calibration::{Calibration, FitSpec, Sample, fit, fit_samples};
pub use features::{
    FEATURE_NAMES, Features, PAIR_FEATURE_NAMES, PROBE_FEATURE, PairStats, SPREAD_FEATURE_NAMES,
    SpreadStats, TokenStats, feature_names, features_of, style_features,
};

use llm::{LlmError, LocalScorer, ScoredToken};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Below this many counted characters a figure would mean little: the report says so instead.
pub const MIN_CHARS: usize = 200;
/// Paragraphs shorter than this are judged together with the next one.
pub const MIN_PARAGRAPH_CHARS: usize = 60;

/// What a report says about detectors in general, on every report.
pub const LIMITS_NOTE: &str = "AIGC 检测给出的是统计估计，不是定论：它衡量文本在语言模型看来有多“可预测”，以及模型对它的内部表示与已知 AI 文本（2023–2025 年 ChatGPT、GPT-4.5、DeepSeek-R1 的回答）有多接近。正式、规范或简单的人工写作（如公文、摘要、教材式表述）也可能显得像机器生成；经过改写的机器文本、以及检测器未见过的新模型写的文本，可能只被判为中度疑似或被漏判。请结合写作过程判断，不要仅凭此结果下结论。";

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

/// Zero-width and soft formatting characters: invisible on screen, yet they change what the model
/// reads. Chat interfaces leave them in copied answers and inserting them is a known way to dodge
/// detectors, so scoring skips them.
pub fn is_invisible(c: char) -> bool {
    matches!(c, '\u{200B}'..='\u{200F}' | '\u{2060}'..='\u{2064}' | '\u{FEFF}' | '\u{00AD}')
}

/// `text` as the model reads it, and for each of its characters the index of the character of
/// `text` it came from. Invisible characters are dropped; a run of whitespace becomes one line
/// break if it holds one, nothing between two characters that are not ASCII (a space between
/// Chinese sentences is layout, not text), else one space. Layout then cannot tell human from
/// machine text: in the labelled data the human answers separate sentences by spaces and the
/// machine answers by blank lines, and a detector must not learn that.
pub fn scoring_text(text: &str) -> (String, Vec<usize>) {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut from = Vec::with_capacity(chars.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if is_invisible(c) {
            i += 1;
            continue;
        }
        if !c.is_whitespace() {
            out.push(c);
            from.push(i);
            i += 1;
            continue;
        }
        let start = i;
        let mut newline = false;
        while i < chars.len() && (chars[i].is_whitespace() || is_invisible(chars[i])) {
            newline |= chars[i] == '\n';
            i += 1;
        }
        let before = out.chars().next_back();
        let after = chars.get(i).copied();
        let (Some(b), Some(a)) = (before, after) else {
            continue; // leading or trailing whitespace
        };
        if newline {
            out.push('\n');
            from.push(start);
        } else if b.is_ascii() || a.is_ascii() {
            out.push(' ');
            from.push(start);
        }
    }
    (out, from)
}

pub fn counted_chars(text: &str) -> usize {
    text.chars().filter(|c| !c.is_whitespace()).count()
}

/// Paragraph ranges (characters) with enough text each: lines, short ones joined to the next.
pub fn paragraphs(text: &str) -> Vec<(usize, usize)> {
    paragraphs_outside(text, &[])
}

/// `paragraphs`, leaving out every line whose characters are all `excluded` (headings, the
/// table of contents, the reference list); such a line also ends any short line waiting to
/// join the next. An empty `excluded` leaves nothing out.
pub fn paragraphs_outside(text: &str, excluded: &[bool]) -> Vec<(usize, usize)> {
    let chars: Vec<char> = text.chars().collect();
    let left_out = |s: usize, e: usize| {
        !excluded.is_empty() && (s..e).all(|i| excluded.get(i).copied().unwrap_or(false))
    };
    let mut out: Vec<(usize, usize)> = vec![];
    let mut start = 0;
    // A short line waiting to join the next: where it starts and where it (so far) ends.
    let mut pending: Option<(usize, usize)> = None;
    for i in 0..=chars.len() {
        if i < chars.len() && chars[i] != '\n' {
            continue;
        }
        let (s, e) = trim(&chars, start, i);
        start = i + 1;
        if e == s {
            continue;
        }
        if left_out(s, e) {
            // What waited stands alone: it never joins across a heading or the references.
            out.extend(pending.take());
            continue;
        }
        let from = pending.map_or(s, |(f, _)| f);
        let size = chars[from..e].iter().filter(|c| !c.is_whitespace()).count();
        if size >= MIN_PARAGRAPH_CHARS {
            out.push((from, e));
            pending = None;
        } else {
            pending = Some((from, e));
        }
    }
    if let Some((from, e)) = pending {
        match out.last_mut() {
            // A short tail joins the paragraph before it.
            Some(last) if !(last.1..from).any(|i| excluded.get(i).copied().unwrap_or(false)) => {
                last.1 = e
            }
            _ => out.push((from, e)),
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

/// The scoring model, the observer model when one is installed (Binoculars), and the calibration
/// fitted for exactly that setup.
#[derive(Clone)]
pub struct Detector {
    pub scorer: Arc<LocalScorer>,
    pub observer: Option<Arc<LocalScorer>>,
    pub calibration: Calibration,
}

impl Detector {
    /// The detector with the shipped calibration for this setup: the pair's when an observer is
    /// given, else the scoring model's alone.
    pub fn new(scorer: Arc<LocalScorer>, observer: Option<Arc<LocalScorer>>) -> Detector {
        let calibration = if observer.is_some() {
            builtin_pair_calibration()
        } else {
            builtin_calibration()
        };
        Detector {
            scorer,
            observer,
            calibration,
        }
    }

    /// The models, as the report names them, e.g. `qwen2.5-0.5b + qwen2.5-1.5b`.
    pub fn model_name(&self) -> String {
        model_name(&self.scorer, self.observer.as_deref())
    }

    fn criterion(&self) -> String {
        let mut parts = vec![];
        if self.calibration.is_pair() {
            parts.push("Binoculars 交叉困惑度（双模型）");
        }
        parts.push("Fast-DetectGPT 解析判别量 + 困惑度");
        if self
            .calibration
            .features
            .iter()
            .any(|f| SPREAD_FEATURE_NAMES.contains(&f.as_str()))
        {
            parts.push("词元得分分布与突发性");
        }
        if self.calibration.probe.is_some() {
            parts.push("隐藏层探针");
        }
        parts.push("文体特征（逻辑回归校准）");
        parts.join(" + ")
    }

    /// The tokens of `text` with their scores (and the pair's terms when there is an observer,
    /// the probe's readings when the calibration has a probe), read as the model sees the text
    /// (`scoring_text`); offsets are characters of `text`.
    fn score(&self, text: &str) -> Result<Vec<ScoredToken>, LlmError> {
        let observer = self
            .observer
            .as_deref()
            .filter(|_| self.calibration.is_pair());
        let (seen, from) = scoring_text(text);
        let reading = llm::Reading {
            observer,
            pool: &[],
            probe: self.calibration.probe.as_ref(),
        };
        let mut tokens = self.scorer.read(&seen, reading, &mut |_, _| {})?.tokens;
        for t in &mut tokens {
            let (s, e) = (t.start, t.end);
            t.start = from.get(s).copied().unwrap_or(text.chars().count());
            t.end = if e > s {
                from.get(e - 1).map_or(t.start, |&c| c + 1)
            } else {
                t.start
            };
        }
        Ok(tokens)
    }

    /// Scores `text` and judges it.
    pub fn detect(&self, text: &str) -> Result<Detection, LlmError> {
        self.detect_reporting(text, &mut |_, _| {})
    }

    /// `detect`, telling `progress(characters scored, characters in all)` as scoring goes.
    pub fn detect_reporting(
        &self,
        text: &str,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Detection, LlmError> {
        self.detect_outside(text, &[], counted_chars(text), progress)
    }

    /// `detect_reporting` judging only the paragraphs outside `excluded` (characters of `text`:
    /// headings, table of contents, references), with `chars` the paper's 检测字数 (the check's
    /// count of the same text, so both reports agree on what the paper is).
    pub fn detect_outside(
        &self,
        text: &str,
        excluded: &[bool],
        chars: usize,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Detection, LlmError> {
        let calibration = &self.calibration;
        let mut detection = Detection {
            probability: None,
            ai_rate: None,
            paragraphs: vec![],
            chars,
            notice: None,
            model: self.model_name(),
            criterion: self.criterion(),
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
        let ranges = paragraphs_outside(text, excluded);
        let total: usize = ranges.iter().map(|(s, e)| e - s).sum();
        let mut done = 0;
        let mut tokens = vec![];
        for &(s, e) in &ranges {
            let piece: String = chars[s..e].iter().collect();
            // Token offsets are characters of the piece: shift them into the text.
            for mut t in self.score(&piece)? {
                t.start += s;
                t.end += s;
                tokens.push(t);
            }
            done += e - s;
            progress(done, total);
        }
        Ok(judge_paragraphs(
            text,
            &ranges,
            &tokens,
            calibration,
            detection,
        ))
    }

    /// The calibrated probability that `text`, scored on its own as one paragraph, is
    /// machine-written; `None` when it has too few tokens to judge. The rewrite loop measures
    /// each paragraph before and after with this, so that it judges as the report does.
    pub fn paragraph_probability(&self, text: &str) -> Result<Option<f64>, LlmError> {
        let tokens = self.score(text)?;
        let names = &self.calibration.features;
        Ok(features_of(text, &tokens, 0, text.chars().count(), names)
            .map(|f| self.calibration.probability(&f)))
    }
}

/// `scorer` alone, or `scorer + observer`: the name a calibration goes by.
pub fn model_name(scorer: &LocalScorer, observer: Option<&LocalScorer>) -> String {
    match observer {
        Some(o) => format!("{} + {}", scorer.name, o.name),
        None => scorer.name.clone(),
    }
}

/// The models' arithmetic (`llm::Arithmetic::name`), e.g. `int8`, or `int8 + f32` for a pair
/// that mixes them: a calibration fits the scores of exactly this.
pub fn arithmetic_name(scorer: &LocalScorer, observer: Option<&LocalScorer>) -> String {
    match observer {
        Some(o) if o.arithmetic != scorer.arithmetic => {
            format!("{} + {}", scorer.arithmetic.name(), o.arithmetic.name())
        }
        _ => scorer.arithmetic.name().to_string(),
    }
}

/// How texts are read for scoring (`eval::score_text`); scores read another way never mix.
pub const READING: &str = "paragraphs, scoring_text, layer-12 pool";

/// What a score cache is keyed by: the models, their arithmetic and the way texts are read.
pub fn scores_name(scorer: &LocalScorer, observer: Option<&LocalScorer>) -> String {
    format!(
        "{} [{}] ({READING})",
        model_name(scorer, observer),
        arithmetic_name(scorer, observer)
    )
}

/// The figures from scored tokens (separate from scoring so it can be tested without a model).
pub fn judge(
    text: &str,
    tokens: &[ScoredToken],
    calibration: &Calibration,
    detection: Detection,
) -> Detection {
    judge_paragraphs(text, &paragraphs(text), tokens, calibration, detection)
}

/// `judge` over the given paragraph ranges.
pub fn judge_paragraphs(
    text: &str,
    ranges: &[(usize, usize)],
    tokens: &[ScoredToken],
    calibration: &Calibration,
    mut detection: Detection,
) -> Detection {
    let chars: Vec<char> = text.chars().collect();
    let names = &calibration.features;
    let whole = features_of(text, tokens, 0, chars.len(), names);
    detection.probability = whole.map(|f| calibration.probability(&f));
    let mut ai_chars = 0;
    for &(s, e) in ranges {
        let Some(f) = features_of(text, tokens, s, e, names) else {
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

/// The calibration shipped for the pair (the 0.5B model scoring, the 1.5B model observing).
pub fn builtin_pair_calibration() -> Calibration {
    serde_json::from_str(include_str!(
        "../calibration/qwen2.5-0.5b+qwen2.5-1.5b.json"
    ))
    .expect("the shipped pair calibration is valid JSON")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn left_out_lines_are_neither_judged_nor_joined_to_the_next() {
        let text = "第一章 绪论\n这是一段足够长的正文，用来检验段落的切分规则是否把标题留在外面而不与正文合并。\n参考文献\n[1] 某某. 一篇文献[J]. 学报, 2020.";
        let chars: Vec<char> = text.chars().collect();
        let mut excluded = vec![false; chars.len()];
        let body_start = text.find('这').map(|b| text[..b].chars().count()).unwrap();
        let body_end = body_start + text.lines().nth(1).unwrap().chars().count();
        for (i, x) in excluded.iter_mut().enumerate() {
            *x = !(body_start..body_end).contains(&i);
        }
        assert_eq!(
            paragraphs_outside(text, &excluded),
            vec![(body_start, body_end)]
        );
        // Without a mask the heading joins the body paragraph.
        assert_eq!(paragraphs(text)[0].0, 0);
    }

    /// The shipped calibrations fit the scores the models give by default: loading a model with
    /// `LocalScorer::load` must not pair it with a calibration of the other arithmetic.
    #[test]
    fn shipped_calibrations_fit_the_default_arithmetic() {
        for cal in [builtin_calibration(), builtin_pair_calibration()] {
            assert_eq!(
                cal.arithmetic,
                llm::Arithmetic::default().name(),
                "{}",
                cal.version
            );
        }
    }
}
