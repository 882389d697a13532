//! The detector's arithmetic on synthetic token scores (no model needed): paragraphs, features,
//! the fitted calibration and the report rules.

use aidetect::calibration::{auroc, tpr_at_fpr};
use aidetect::{Band, Detection, FEATURE_NAMES, Features, fit, judge, paragraphs};
use llm::ScoredToken;
use proptest::prelude::*;

/// Tokens of two characters each over `text`; "machine" text is predictable (high log-prob,
/// low entropy, rank 1), "human" text is not.
fn tokens(text: &str, machine: bool) -> Vec<ScoredToken> {
    let n = text.chars().count();
    (1..n / 2)
        .map(|i| ScoredToken {
            start: i * 2,
            end: i * 2 + 2,
            logprob: if machine { -0.4 } else { -3.5 } - (i % 3) as f32 * 0.1,
            rank: if machine { 1 } else { 5 + (i % 7) as u32 },
            entropy: if machine { 1.0 } else { 3.0 },
            logprob_variance: 2.0,
            cross_entropy: None,
            observer_logprob: None,
            probe: None,
        })
        .collect()
}

fn synthetic_samples() -> Vec<(Features, bool)> {
    (0..40)
        .map(|i| {
            let machine = i % 2 == 0;
            let jitter = (i % 5) as f64 * 0.1;
            // Style features alike in both classes: only the model's view separates them.
            let f: Features = if machine {
                vec![
                    -0.5 - jitter,
                    1.0 + jitter,
                    2.0 - jitter,
                    0.1,
                    0.5,
                    0.5,
                    jitter,
                ]
            } else {
                vec![
                    -3.0 - jitter,
                    3.0 + jitter,
                    -0.5 - jitter,
                    1.8,
                    0.5,
                    0.5,
                    jitter,
                ]
            };
            (f, machine)
        })
        .collect()
}

fn empty(calibration: &aidetect::Calibration) -> Detection {
    Detection {
        probability: None,
        ai_rate: None,
        paragraphs: vec![],
        chars: 0,
        notice: None,
        model: "test".into(),
        criterion: "test".into(),
        calibration: calibration.version.clone(),
        high_threshold: calibration.high_threshold,
        medium_threshold: calibration.medium_threshold,
        note: String::new(),
    }
}

#[test]
fn short_lines_join_the_next_paragraph() {
    let long = "这是一段足够长的段落。".repeat(8);
    let text = format!("标题\n{long}\n\n{long}\n尾");
    let ps = paragraphs(&text);
    assert_eq!(ps.len(), 2, "{ps:?}");
    let chars: Vec<char> = text.chars().collect();
    let first: String = chars[ps[0].0..ps[0].1].iter().collect();
    assert!(first.starts_with("标题\n"));
    let last: String = chars[ps[1].0..ps[1].1].iter().collect();
    assert!(last.ends_with('尾'));
}

#[test]
fn a_fitted_calibration_separates_and_is_stored_as_numbers() {
    let samples = synthetic_samples();
    let cal = fit(&samples, "test-model", "int8", "abc", "test-1");
    assert_eq!(cal.weights.len(), FEATURE_NAMES.len());
    let scores: Vec<f64> = samples.iter().map(|(f, _)| cal.probability(f)).collect();
    let labels: Vec<bool> = samples.iter().map(|(_, l)| *l).collect();
    assert!(auroc(&scores, &labels) > 0.99);
    assert!(tpr_at_fpr(&scores, &labels, 0.01) > 0.9);
    let json = serde_json::to_string(&cal).unwrap();
    let back: aidetect::Calibration = serde_json::from_str(&json).unwrap();
    for (a, b) in back.weights.iter().zip(&cal.weights) {
        assert!((a - b).abs() < 1e-12);
    }
    assert_eq!(back.version, cal.version);
}

#[test]
fn machine_like_paragraphs_are_banded_high_and_counted_in_the_rate() {
    let cal = fit(&synthetic_samples(), "test-model", "int8", "abc", "test-1");
    let para = "研究表明该方法在多个数据集上取得了较好的效果并且具有一定的推广价值。".repeat(3);
    let text = format!("{para}\n{para}\n");
    let n = text.chars().count();
    let half = para.chars().count() + 1;
    // First paragraph machine-like, second human-like.
    let mut toks: Vec<ScoredToken> = tokens(&text, true)
        .into_iter()
        .filter(|t| t.start < half)
        .collect();
    toks.extend(
        tokens(&text, false)
            .into_iter()
            .filter(|t| t.start >= half && t.end <= n),
    );
    let mut d = empty(&cal);
    d.chars = aidetect::counted_chars(&text);
    let d = judge(&text, &toks, &cal, d);
    assert_eq!(d.paragraphs.len(), 2);
    assert_eq!(d.paragraphs[0].band, Band::High, "{d:?}");
    assert_eq!(d.paragraphs[1].band, Band::Low, "{d:?}");
    let rate = d.ai_rate.unwrap();
    let expected = d.paragraphs[0].chars as f64 * 100.0 / d.chars as f64;
    assert!((rate - expected).abs() < 1e-9);
    assert!(d.probability.is_some());
}

proptest! {
    /// Any text and any token scores: no panic, figures within their ranges.
    #[test]
    fn arbitrary_input_gives_figures_in_range(
        text in "\\PC{0,400}",
        scores in proptest::collection::vec((0usize..500, -20f32..0.0, 1u32..100_000, 0f32..12.0, 0f32..50.0), 0..200),
    ) {
        let cal = fit(&synthetic_samples(), "m", "int8", "h", "v");
        let toks: Vec<ScoredToken> = scores
            .into_iter()
            .map(|(s, lp, rank, h, v)| ScoredToken { start: s, end: s + 1, logprob: lp, rank, entropy: h, logprob_variance: v, cross_entropy: None, observer_logprob: None, probe: None })
            .collect();
        let mut d = empty(&cal);
        d.chars = aidetect::counted_chars(&text);
        let d = judge(&text, &toks, &cal, d);
        if let Some(p) = d.probability { prop_assert!((0.0..=1.0).contains(&p)); }
        if let Some(r) = d.ai_rate { prop_assert!((0.0..=100.0 + 1e-9).contains(&r)); }
        let len = text.chars().count();
        for p in &d.paragraphs { prop_assert!(p.start < p.end && p.end <= len); }
    }
}

/// Tokens as scored with an observer: the observer finds machine text as unsurprising as the
/// scorer's own predictions (Binoculars low), human text more surprising.
fn paired_tokens(text: &str, machine: bool) -> Vec<ScoredToken> {
    tokens(text, machine)
        .into_iter()
        .map(|mut t| {
            t.cross_entropy = Some(2.0);
            t.observer_logprob = Some(if machine { -1.0 } else { -4.0 });
            t
        })
        .collect()
}

#[test]
fn pair_statistics_give_the_binoculars_features() {
    let text = "这是一段用来检验双模型特征的文字，长度足够。".repeat(3);
    let n = text.chars().count();
    let stats = aidetect::TokenStats::of(&paired_tokens(&text, true), 0, n);
    let pair = stats.pair.expect("pair sums");
    assert!((pair.sum_cross_entropy - 2.0 * stats.tokens as f64).abs() < 1e-9);
    let alone = stats.features(&text, false).unwrap();
    let both = stats.features(&text, true).unwrap();
    assert_eq!(alone.len(), FEATURE_NAMES.len());
    assert_eq!(
        both.len(),
        FEATURE_NAMES.len() + aidetect::PAIR_FEATURE_NAMES.len()
    );
    assert_eq!(&both[..alone.len()], &alone[..]);
    // Binoculars: observer log-perplexity 1.0 over cross-entropy 2.0.
    assert!((both[7] - 0.5).abs() < 1e-9, "{both:?}");
    assert!((both[8] - -1.0).abs() < 1e-9);
    // Observer log p − scorer log p, per token.
    assert!((both[9] - (-1.0 - alone[0])).abs() < 1e-9);
    // Scored without the observer, there are no pair features to give.
    let single = aidetect::TokenStats::of(&tokens(&text, true), 0, n);
    assert!(single.pair.is_none());
    assert!(single.features(&text, true).is_none());
    // Old cache lines (no pair) still read.
    let old = r#"{"tokens":9,"sum_logprob":-1.0,"sum_entropy":2.0,"sum_variance":3.0,"sum_log_rank":4.0}"#;
    let read: aidetect::TokenStats = serde_json::from_str(old).unwrap();
    assert!(read.pair.is_none());
}

#[test]
fn a_pair_calibration_judges_with_the_observer_terms() {
    // Ten features: the seven alike in both classes, only Binoculars separates them.
    let samples: Vec<(Features, bool)> = (0..40)
        .map(|i| {
            let machine = i % 2 == 0;
            let jitter = (i % 5) as f64 * 0.05;
            let mut f = vec![-1.0, 2.0, 0.5, 0.5, 0.5, 0.5, 0.1];
            f.extend([if machine { 0.5 } else { 2.0 } + jitter, -2.0, -0.5]);
            (f, machine)
        })
        .collect();
    let cal = fit(&samples, "a + b", "int8", "abc", "pair-1");
    assert!(cal.is_pair());
    assert_eq!(cal.features[7], "binoculars");
    let machine =
        "这一段由测试构造，观察模型认为它毫不意外，因此应当判为机器生成的文字。".repeat(4);
    let human =
        "这一段同样由测试构造，但观察模型对它的每个词都相当意外，应当判为人工写作。".repeat(4);
    let text = format!("{machine}\n{human}");
    let split = machine.chars().count() + 1;
    let mut toks = paired_tokens(&machine, true);
    for mut t in paired_tokens(&human, false) {
        t.start += split;
        t.end += split;
        toks.push(t);
    }
    let d = judge(&text, &toks, &cal, empty(&cal));
    assert_eq!(d.paragraphs.len(), 2);
    assert!(d.paragraphs[0].probability > 0.9, "{:?}", d.paragraphs);
    assert!(d.paragraphs[1].probability < 0.1, "{:?}", d.paragraphs);
}

#[test]
fn scoring_text_drops_layout_and_maps_back() {
    let text = "第一句。 第二句\u{200B}。\n\n  GPT 4.5  模型\n";
    let (seen, from) = aidetect::scoring_text(text);
    assert_eq!(seen, "第一句。第二句。\nGPT 4.5 模型");
    let chars: Vec<char> = text.chars().collect();
    assert_eq!(from.len(), seen.chars().count());
    for (c, &i) in seen.chars().zip(&from) {
        // Every character maps to itself, or a layout run to where that run began.
        assert!(chars[i] == c || chars[i].is_whitespace(), "{c:?} from {i}");
    }
    assert_eq!(aidetect::scoring_text(" \n\u{FEFF} ").0, "");
}

#[test]
fn spread_and_probe_features_come_from_the_tokens() {
    let text = "这是一段用来检验分布特征与探针读数的文字，长度足够检验。".repeat(3);
    let n = text.chars().count();
    let toks: Vec<ScoredToken> = (0..40)
        .map(|i| ScoredToken {
            start: i,
            end: i + 1,
            logprob: if i % 2 == 0 { -1.0 } else { -3.0 },
            rank: if i % 4 == 0 { 1 } else { 20 },
            entropy: 2.0,
            logprob_variance: 1.0,
            cross_entropy: None,
            observer_logprob: None,
            probe: Some(0.5),
        })
        .collect();
    let names: Vec<String> = [
        "mean_logprob",
        "std_logprob",
        "top1_rate",
        "top10_rate",
        "window_logprob_std",
        "probe",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let f = aidetect::features_of(&text, &toks, 0, n, &names).unwrap();
    assert!((f[0] - -2.0).abs() < 1e-9, "{f:?}");
    assert!((f[1] - 1.0).abs() < 1e-9, "{f:?}");
    assert!((f[2] - 0.25).abs() < 1e-9, "{f:?}");
    assert!((f[3] - 0.25).abs() < 1e-9, "{f:?}");
    // Two 16-token windows with the same mean: no burstiness.
    assert!(f[4].abs() < 1e-9, "{f:?}");
    assert!((f[5] - 0.5).abs() < 1e-9, "{f:?}");
    // Tokens scored without a probe give no probe feature; an unknown name gives none either.
    let plain: Vec<ScoredToken> = toks
        .iter()
        .cloned()
        .map(|mut t| {
            t.probe = None;
            t
        })
        .collect();
    assert!(aidetect::features_of(&text, &plain, 0, n, &names).is_none());
    assert!(aidetect::features_of(&text, &toks, 0, n, &["nonsense".to_string()]).is_none());
}

#[test]
fn a_fitted_probe_separates_and_reads_per_token_as_on_the_mean_state() {
    // Hidden states of 6 dimensions: machine texts lean along the first, the scalar feature is
    // noise in both classes.
    let samples: Vec<aidetect::Sample> = (0..60)
        .map(|i| {
            let machine = i % 2 == 0;
            let jitter = (i % 7) as f32 * 0.1;
            let hidden = vec![
                if machine { 1.0 } else { -1.0 } + jitter,
                jitter,
                0.3,
                -jitter,
                0.0,
                1.0,
            ];
            aidetect::Sample {
                features: vec![(i % 5) as f64],
                hidden: Some(hidden),
                machine,
            }
        })
        .collect();
    let spec = aidetect::FitSpec {
        features: vec!["mean_logprob".into()],
        probe_layer: Some(3),
        l2: 1e-3,
        l2_hidden: 1e-2,
    };
    let cal = aidetect::fit_samples(&samples, &spec, "m", "int8", "h", "v");
    assert_eq!(cal.features, ["mean_logprob", "probe"]);
    let probe = cal.probe.clone().expect("a probe");
    assert_eq!((probe.layer, probe.weights.len()), (3, 6));
    let scores: Vec<f64> = samples.iter().map(|s| cal.sample_probability(s)).collect();
    let labels: Vec<bool> = samples.iter().map(|s| s.machine).collect();
    assert!(auroc(&scores, &labels) > 0.99);
    // Read per token and averaged, the probe gives the probability of the mean state.
    let s = &samples[0];
    let reading: f32 = probe
        .weights
        .iter()
        .zip(s.hidden.as_ref().unwrap())
        .map(|(w, h)| w * h)
        .sum();
    let direct = cal.probability(&[s.features[0], reading as f64]);
    assert!(
        (direct - scores[0]).abs() < 1e-6,
        "{direct} vs {}",
        scores[0]
    );
    // Stored and read back, it is the same calibration; a file without a probe still reads.
    let back: aidetect::Calibration =
        serde_json::from_str(&serde_json::to_string(&cal).unwrap()).unwrap();
    assert_eq!(back.probe, cal.probe);
    assert!(aidetect::builtin_pair_calibration().probe.is_none());
}
