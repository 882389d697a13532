//! The second instrument for rewriting: measures of `wenjian rewrite --json` output that the
//! rewrite review does not use, so that a review that passes broken text shows up here.
//!
//!   rewrite-review OUT.json KEYWORDS.json [--samples PATH.md]
//!
//! - the authors' own keywords (CSL records) kept, not the review's TF-IDF terms;
//! - every number and English word of the original kept;
//! - sentence coverage by shared character pairs, not sentence vectors;
//! - fluency under qwen2.5-1.5b, a larger model than the 0.5B the review scores with;
//! - the copy ratio after against before (target ≤ 0.3×).
//!
//! Prints JSON figures over all paragraphs and over the accepted ones; with `--samples`, writes
//! the first 20 paragraphs side by side for people to read. Figures, never pass/fail.

use regex::Regex;
use serde::Deserialize;
use std::fmt::Write as _;

#[derive(Deserialize)]
struct Output {
    model: String,
    strength: String,
    goal: String,
    paragraphs: Vec<Paragraph>,
}

#[derive(Deserialize)]
struct Paragraph {
    line: usize,
    original: String,
    rewritten: Option<String>,
    accepted: bool,
    reason: Option<String>,
    similarity_before: f64,
    similarity_after: Option<f64>,
    #[serde(default)]
    doubts: Vec<Doubt>,
    model: String,
}

#[derive(Deserialize)]
struct Doubt {
    label: String,
}

#[derive(Default)]
struct Sums {
    paragraphs: usize,
    keywords: usize,
    keywords_kept: usize,
    numbers_lost: usize,
    english_lost: usize,
    paragraphs_all_items_kept: usize,
    sentences: usize,
    sentences_covered: usize,
    fluency_delta: Vec<f64>,
    similarity_before: f64,
    similarity_after: f64,
}

impl Sums {
    fn json(&self) -> serde_json::Value {
        let n = self.paragraphs.max(1) as f64;
        let mut delta = self.fluency_delta.clone();
        delta.sort_by(f64::total_cmp);
        serde_json::json!({
            "paragraphs": self.paragraphs,
            "author_keywords_kept": ratio(self.keywords_kept, self.keywords),
            "numbers_lost": self.numbers_lost,
            "english_lost": self.english_lost,
            "paragraphs_with_every_number_and_english_kept": self.paragraphs_all_items_kept,
            "sentence_coverage": ratio(self.sentences_covered, self.sentences),
            "fluency_delta_1_5b_mean": round(delta.iter().sum::<f64>() / delta.len().max(1) as f64),
            "fluency_delta_1_5b_median": round(wenjian_bench::percentile(&delta, 50.0)),
            "fluency_delta_1_5b_p90": round(wenjian_bench::percentile(&delta, 90.0)),
            "copy_ratio_before": round(self.similarity_before / n),
            "copy_ratio_after": round(self.similarity_after / n),
        })
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 {
        1.0
    } else {
        round(a as f64 / b as f64)
    }
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn bigram_dice(a: &str, b: &str) -> f64 {
    let grams = |s: &str| -> std::collections::HashSet<(char, char)> {
        let cs: Vec<char> = s.chars().filter(|c| c.is_alphanumeric()).collect();
        cs.windows(2).map(|w| (w[0], w[1])).collect()
    };
    let (x, y) = (grams(a), grams(b));
    if x.is_empty() || y.is_empty() {
        return if a == b { 1.0 } else { 0.0 };
    }
    2.0 * x.intersection(&y).count() as f64 / (x.len() + y.len()) as f64
}

fn sentences(text: &str) -> Vec<String> {
    text.split_inclusive(['。', '！', '？', '；'])
        .map(str::trim)
        .filter(|s| s.chars().any(char::is_alphanumeric))
        .map(str::to_string)
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(out_path), Some(keywords_path)) = (args.first(), args.get(1)) else {
        eprintln!("usage: rewrite-review OUT.json KEYWORDS.json [--samples PATH.md]");
        std::process::exit(2);
    };
    let samples = args
        .iter()
        .position(|a| a == "--samples")
        .and_then(|i| args.get(i + 1));
    let out: Output =
        serde_json::from_str(&std::fs::read_to_string(out_path).expect("output")).expect("json");
    let keywords: Vec<Vec<String>> =
        serde_json::from_str(&std::fs::read_to_string(keywords_path).expect("keywords"))
            .expect("keywords json");
    let models = wenjian_bench::models_dir();
    let larger = llm::LocalScorer::load(&models.join("qwen2.5-1.5b"), "qwen2.5-1.5b")
        .map_err(|e| eprintln!("qwen2.5-1.5b not loadable ({e}): no fluency figures"))
        .ok();
    let mean_surprisal = |text: &str| -> Option<f64> {
        let tokens = larger.as_ref()?.score(text, None).ok()?;
        (!tokens.is_empty())
            .then(|| -tokens.iter().map(|t| t.logprob as f64).sum::<f64>() / tokens.len() as f64)
    };
    let number = Regex::new(r"\d+(?:\.\d+)?%?").expect("regex");
    let english = Regex::new(r"[A-Za-z]{2,}").expect("regex");
    let (mut all, mut accepted) = (Sums::default(), Sums::default());
    let mut doc = String::new();
    let _ = writeln!(
        doc,
        "# Rewrites side by side\n\nModel `{}`, goal `{}`, strength `{}`; paragraphs are real abstracts of fields the review was not calibrated on. Written by `bench/scripts/rewrite-quality.sh` with `SAMPLES=`; the measures are `rewrite-review`'s, independent of the review.\n",
        out.model, out.goal, out.strength
    );
    for (i, p) in out.paragraphs.iter().enumerate() {
        let Some(new) = p.rewritten.as_deref() else {
            continue;
        };
        let kws: Vec<&String> = keywords
            .get(p.line)
            .map(|k| {
                k.iter()
                    .filter(|k| p.original.contains(k.as_str()))
                    .collect()
            })
            .unwrap_or_default();
        let kept = kws.iter().filter(|k| new.contains(k.as_str())).count();
        let lost_numbers: Vec<&str> = number
            .find_iter(&p.original)
            .map(|m| m.as_str())
            .filter(|n| !new.contains(n))
            .collect();
        let lower = new.to_lowercase();
        let lost_english: Vec<&str> = english
            .find_iter(&p.original)
            .map(|m| m.as_str())
            .filter(|w| !lower.contains(&w.to_lowercase()))
            .collect();
        let from = sentences(&p.original);
        let to = sentences(new);
        let covered = from
            .iter()
            .filter(|s| to.iter().any(|t| bigram_dice(s, t) >= 0.3))
            .count();
        let delta = mean_surprisal(new)
            .zip(mean_surprisal(&p.original))
            .map(|(a, b)| a - b);
        let targets: Vec<&mut Sums> = if p.accepted {
            vec![&mut all, &mut accepted]
        } else {
            vec![&mut all]
        };
        for sums in targets {
            sums.paragraphs += 1;
            sums.keywords += kws.len();
            sums.keywords_kept += kept;
            sums.numbers_lost += lost_numbers.len();
            sums.english_lost += lost_english.len();
            sums.paragraphs_all_items_kept +=
                (lost_numbers.is_empty() && lost_english.is_empty()) as usize;
            sums.sentences += from.len();
            sums.sentences_covered += covered;
            sums.fluency_delta.extend(delta);
            sums.similarity_before += p.similarity_before;
            sums.similarity_after += if p.accepted {
                p.similarity_after.unwrap_or(p.similarity_before)
            } else {
                p.similarity_before
            };
        }
        if i < 20 {
            let doubts: Vec<&str> = p.doubts.iter().map(|d| d.label.as_str()).collect();
            let _ = writeln!(
                doc,
                "## {}. {}{}\n\n- 复制比 {:.1}% → {}；作者关键词保留 {}/{}；数字、英文遗漏 {}；句子对应 {}/{}；1.5B 困惑度变化 {}；引擎 {}\n{}\n**原文**：{}\n\n**改写**：{}\n",
                i + 1,
                if p.accepted { "采用" } else { "保留原文" },
                if doubts.is_empty() {
                    String::new()
                } else {
                    format!("（{}）", doubts.join("、"))
                },
                p.similarity_before,
                p.similarity_after
                    .map_or("—".into(), |v| format!("{v:.1}%")),
                kept,
                kws.len(),
                lost_numbers.len() + lost_english.len(),
                covered,
                from.len(),
                delta.map_or("—".into(), |d| format!("{d:+.2}")),
                p.model,
                p.reason
                    .as_deref()
                    .map_or(String::new(), |r| format!("- {r}\n")),
                p.original,
                new
            );
        }
    }
    println!(
        "{}",
        serde_json::to_string_pretty(&serde_json::json!({
            "independent_measures_all": all.json(),
            "independent_measures_accepted": accepted.json(),
        }))
        .expect("json")
    );
    if let Some(path) = samples {
        std::fs::write(path, doc).expect("write samples");
        eprintln!("samples written to {path}");
    }
}
