//! With the real scoring model (fetched by `wenjian models fetch`; CI fetches it): windows cover
//! every token once, and detection gives figures in range or says the text is too short. Skips
//! with a clear message when the model files are absent.

use std::path::PathBuf;

fn scorer() -> Option<llm::LocalScorer> {
    model("qwen2.5-0.5b")
}

fn model(name: &str) -> Option<llm::LocalScorer> {
    let dir = std::env::var("WENJIAN_MODELS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/models"))
        .join(name);
    match llm::LocalScorer::load(&dir, name) {
        Ok(s) => Some(s),
        Err(e) => {
            eprintln!(
                "skipped: scoring model not available in {} ({e}); run `wenjian models fetch`",
                dir.display()
            );
            None
        }
    }
}

#[test]
fn real_model_scores_every_token_once_and_judges_in_range() {
    let Some(scorer) = scorer() else { return };
    // Longer than one window, so the windows' seams are crossed.
    let text = "近年来，随着信息技术的快速发展，高校教学管理模式发生了深刻变化。本文以某高校为例，分析了教学管理信息化建设中存在的问题，并提出了相应的改进建议。\n".repeat(20);
    let ids = scorer.tokenize(&text).unwrap().ids;
    assert!(ids.len() > llm::WINDOW, "{} tokens", ids.len());
    let scored = scorer.score(&text, None).unwrap();
    assert_eq!(scored.len(), ids.len() - 1);
    assert!(scored.windows(2).all(|w| w[0].start <= w[1].start));
    assert!(
        scored
            .iter()
            .all(|t| t.logprob <= 0.0 && t.rank >= 1 && t.entropy >= 0.0)
    );
    // Repeated text is very predictable the second time round.
    let first: f32 = scored[..40].iter().map(|t| t.logprob).sum::<f32>() / 40.0;
    let later: f32 = scored[scored.len() - 40..]
        .iter()
        .map(|t| t.logprob)
        .sum::<f32>()
        / 40.0;
    assert!(later > first, "{later} vs {first}");

    let detector = aidetect::Detector::new(std::sync::Arc::new(scorer), None);
    let d = detector.detect(&text).unwrap();
    let p = d.probability.unwrap();
    assert!((0.0..=1.0).contains(&p));
    assert!(!d.paragraphs.is_empty());
    assert!(d.calibration.starts_with("aigc-cal"), "{}", d.calibration);

    assert_eq!(d.model, "qwen2.5-0.5b");
    let short = detector.detect("太短的文本。").unwrap();
    assert!(short.probability.is_none());
    assert!(short.notice.unwrap().contains("文本过短，结果不可靠"));
}

#[test]
fn the_pair_scores_binoculars_terms_and_judges_with_its_own_calibration() {
    let (Some(scorer), Some(observer)) = (scorer(), model("qwen2.5-1.5b")) else {
        return;
    };
    let text = "近年来，随着信息技术的快速发展，高校教学管理模式发生了深刻变化。本文以某高校为例，分析了教学管理信息化建设中存在的问题，并提出了相应的改进建议。研究发现，制度建设与人员培训同样重要。";
    let alone = scorer.score(text, None).unwrap();
    let paired = scorer.score(text, Some(&observer)).unwrap();
    assert_eq!(alone.len(), paired.len());
    for (a, p) in alone.iter().zip(&paired) {
        // The scorer's own figures do not depend on the observer.
        assert_eq!((a.start, a.logprob, a.rank), (p.start, p.logprob, p.rank));
        let cross = p.cross_entropy.unwrap();
        let q = p.observer_logprob.unwrap();
        assert!(cross.is_finite() && cross >= 0.0 && q <= 0.0, "{p:?}");
    }
    let scorer = std::sync::Arc::new(scorer);
    let detector = aidetect::Detector::new(scorer, Some(std::sync::Arc::new(observer)));
    assert!(detector.calibration.is_pair());
    let paper = format!("{text}\n{text}\n{text}");
    let d = detector.detect(&paper).unwrap();
    assert_eq!(d.model, "qwen2.5-0.5b + qwen2.5-1.5b");
    assert!(d.criterion.contains("Binoculars"));
    assert!(
        d.calibration.contains("qwen2.5-0.5b + qwen2.5-1.5b"),
        "{}",
        d.calibration
    );
    let p = d.probability.unwrap();
    assert!((0.0..=1.0).contains(&p));
    let one = detector.paragraph_probability(text).unwrap().unwrap();
    assert!((one - d.paragraphs[0].probability).abs() < 1e-9);
}

/// The calibration is fitted on each text's mean hidden state (`eval::score_text`); reports read
/// the probe token by token. Both must give the same probability for the same text.
#[test]
fn the_probe_read_per_token_judges_as_the_mean_state_it_was_fitted_on() {
    let Some(scorer) = scorer() else { return };
    let cal = aidetect::builtin_calibration();
    let layer = cal
        .probe
        .as_ref()
        .expect("the shipped calibration has a probe")
        .layer;
    let first = "近年来，随着信息技术的快速发展，高校教学管理模式发生了深刻变化。本文以某高校为例，分析了教学管理信息化建设中存在的问题，梳理了数据标准不统一、业务系统分散和人员信息素养不足三类原因。";
    let second = "研究发现，制度建设与人员培训同样重要， 而且两者相互促进\u{200B}。调查覆盖了十二个院系的教学秘书和任课教师，访谈结果表明，流程再造比单纯购置软件更能提高效率。最后提出了相应的改进建议，供同类院校参考。";
    let third = "本研究的不足在于样本只来自一所综合性大学，后续将扩大到师范类和理工类院校，并结合教务系统日志做定量分析，以检验上述结论在不同类型院校中是否成立。";
    let text = &format!("{first}\n\n{second}\n{third}");
    assert!(aidetect::counted_chars(text) >= aidetect::MIN_CHARS);
    let scores = aidetect::eval::score_text(&scorer, None, Some(layer), text).unwrap();
    let features = scores.stats.values(text, cal.scored_features()).unwrap();
    let fitted_view = cal.sample_probability(&aidetect::Sample {
        features,
        hidden: scores.hidden,
        machine: false,
    });
    let detector = aidetect::Detector::new(std::sync::Arc::new(scorer), None);
    let d = detector.detect(text).unwrap();
    let report_view = d.probability.unwrap();
    assert!(
        (fitted_view - report_view).abs() < 1e-3,
        "{fitted_view} vs {report_view}"
    );
    assert!(d.criterion.contains("隐藏层探针"), "{}", d.criterion);
    // Paragraph offsets stay those of the original text, invisible characters and all.
    let len = text.chars().count();
    assert!(d.paragraphs.iter().all(|p| p.start < p.end && p.end <= len));
}
