//! With the real scoring model (fetched by `wenjian models fetch`; CI fetches it): windows cover
//! every token once, and detection gives figures in range or says the text is too short. Skips
//! with a clear message when the model files are absent.

use std::path::PathBuf;

fn scorer() -> Option<llm::LocalScorer> {
    let dir = std::env::var("WENJIAN_MODELS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/models"))
        .join("qwen2.5-0.5b");
    match llm::LocalScorer::load(&dir, "qwen2.5-0.5b") {
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

    let cal = aidetect::builtin_calibration();
    let d = aidetect::detect(&text, &scorer, &cal).unwrap();
    let p = d.probability.unwrap();
    assert!((0.0..=1.0).contains(&p));
    assert!(!d.paragraphs.is_empty());
    assert!(d.calibration.starts_with("aigc-cal"), "{}", d.calibration);

    let short = aidetect::detect("太短的文本。", &scorer, &cal).unwrap();
    assert!(short.probability.is_none());
    assert!(short.notice.unwrap().contains("文本过短，结果不可靠"));
}
